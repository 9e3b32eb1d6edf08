// taskplace/topology/table.hpp: a topology built at run time from one row
// per CPU (which core, LLC and node it is in, and optionally which
// cluster), validated once.
//
// Kernel analogue: the per-CPU topology masks (cpu_smt_mask,
// cpu_clustergroup_mask, cpu_coregroup_mask, cpumask_of_node) and the
// sched-domain levels built from them (SMT, CLS since v5.16, MC, PKG/NUMA),
// with degenerate levels removed (build_sched_domains, sd_degenerate). The
// asymmetric machines live here: offline CPUs, cpuset masks, AMD multi-LLC
// sockets, Intel SNC, hybrid parts whose E-cores share an L2. SysfsTopology
// and HwlocTopology are built on it.
//
//   taskplace::TableTopology t({0, 0, 1, 1}, {0, 0, 0, 0}, {0, 0, 0, 0});  // 2 cores x 2 threads
//   t.llc_size(3);  // 4
#pragma once

#include "taskplace/detail/config.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "taskplace/concepts.hpp"
#include "taskplace/detail/assert.hpp"
#include "taskplace/types.hpp"

namespace taskplace {

// How a topology read from the machine (SysfsTopology, HwlocTopology)
// reports a last-level cache that several NUMA nodes share (Intel SNC:
// sysfs and hwloc list the L3 across the package).
enum class LlcView : std::uint8_t {
  // The scheduler's view (default): an LLC is cut at node boundaries, as
  // the kernel's MC domain never spans nodes (x86 match_llc() treats SNC
  // nodes as not sharing the LLC since 2018; the generic
  // cpu_coregroup_mask() starts from the node's CPUs).
  scheduler,
  // The caches as the hardware reports them: one LLC across the nodes.
  hardware,
};

namespace detail {
// Returns: per CPU, an LLC label in which CPUs of one hardware LLC but
// different nodes get different labels (dense, in order of first
// appearance). Requires: llc.size() == node.size().
// Complexity: O(n log n).
inline std::vector<std::uint32_t> split_llc_at_nodes(const std::vector<std::uint32_t>& llc,
                                                     const std::vector<std::uint32_t>& node) {
  std::vector<std::pair<std::uint64_t, std::uint32_t>> seen;  // (llc, node) key -> label, sorted
  std::vector<std::uint32_t> out;
  out.reserve(llc.size());
  for (std::size_t i = 0; i < llc.size(); ++i) {
    const std::uint64_t key = (std::uint64_t{llc[i]} << 32) | node[i];
    auto it = std::lower_bound(seen.begin(), seen.end(), key,
                               [](const auto& e, std::uint64_t k) { return e.first < k; });
    if (it == seen.end() || it->first != key)
      it = seen.insert(it, {key, static_cast<std::uint32_t>(seen.size())});
    out.push_back(it->second);
  }
  return out;
}
}  // namespace detail

// Invariant: after construction, I1-I8 of concepts.hpp hold (the
// constructor rejects any input that would break them).
// Invariant: group ids are dense, numbered in order of each group's lowest
// CPU: core_of(0) == cluster_of(0) == llc_of(0) == node_of(0) == 0.
// Invariant: a core lies in one cluster and a cluster in one LLC; without
// cluster ids every core is its own cluster.
class TableTopology {
 public:
  using cpu_range = std::span<const CpuId>;

  // Effects: builds the topology of CPUs 0..n-1 where CPU c is in core
  //   core_ids[c], LLC llc_ids[c] and node node_ids[c]. Ids are arbitrary
  //   labels (equal label, same group); they are renumbered densely.
  //   os_cpus[c], if given, is CPU c's operating-system number (default: c).
  //   Every core is its own cluster, so no CPU has a cluster level (see
  //   with_clusters()).
  // Throws: TopologyError naming the CPU and the rule, when there are no
  //   CPUs; the arrays differ in length; os_cpus repeats a number or uses
  //   no_cpu; SMT siblings sit in different LLCs or nodes (a core spans
  //   two); an LLC and a node overlap without one containing the other.
  // Complexity: O(n log n). Thread-safety: the object is immutable after.
  TableTopology(std::vector<std::uint32_t> core_ids, std::vector<std::uint32_t> llc_ids,
                std::vector<std::uint32_t> node_ids, std::vector<CpuId> os_cpus = {}) {
    init(core_ids, nullptr, llc_ids, node_ids, std::move(os_cpus));
  }

  // Effects: as the constructor, and CPU c is also in cluster
  //   cluster_ids[c]: the cores sharing a mid-level cache (an L2 shared by
  //   four E-cores on Intel hybrid parts; a Kunpeng 920 or Ampere cluster).
  //   A CPU whose cluster is strictly bigger than its core and strictly
  //   smaller than its LLC gets a cluster level between smt and llc (the
  //   kernel's CLS domain); elsewhere that level is degenerate and dropped,
  //   and the CPU's levels are those the constructor gives.
  // Throws: TopologyError as the constructor does, and when cluster_ids
  //   differs in length from core_ids, a core spans two clusters ("cpu 1: a
  //   core lies in one cluster (...)") or a cluster spans two LLCs ("cpu 2:
  //   a cluster lies in one LLC (...)").
  // Complexity: O(n log n). Thread-safety: the object is immutable after.
  //   auto t = TableTopology::with_clusters({0, 1, 2, 3}, {0, 0, 1, 1}, {0, 0, 0, 0}, {0, 0, 0, 0});
  //   t.level_kind(0, 0);  // LevelKind::cluster, spanning {0, 1}
  static TableTopology with_clusters(std::vector<std::uint32_t> core_ids,
                                     std::vector<std::uint32_t> cluster_ids,
                                     std::vector<std::uint32_t> llc_ids,
                                     std::vector<std::uint32_t> node_ids,
                                     std::vector<CpuId> os_cpus = {}) {
    TableTopology t;
    t.init(core_ids, &cluster_ids, llc_ids, node_ids, std::move(os_cpus));
    return t;
  }

  // --- Topology (R1-R7); ids checked with TASKPLACE_EXPECTS ---------------
  // Complexity: O(1) each. Thread-safety: const members, safe to share.
  std::uint32_t cpu_count() const noexcept { return cpus_; }
  std::uint32_t core_of(CpuId c) const TASKPLACE_NOEXCEPT { return id(core, c); }
  std::uint32_t llc_of(CpuId c) const TASKPLACE_NOEXCEPT { return id(llc, c); }
  std::uint32_t node_of(CpuId c) const TASKPLACE_NOEXCEPT { return id(node, c); }
  std::uint32_t core_size(CpuId c) const TASKPLACE_NOEXCEPT { return size(core, c); }
  std::uint32_t llc_size(CpuId c) const TASKPLACE_NOEXCEPT { return size(llc, c); }
  std::uint32_t node_size(CpuId c) const TASKPLACE_NOEXCEPT { return size(node, c); }
  cpu_range core_cpus(CpuId c) const TASKPLACE_NOEXCEPT { return span(core, c); }
  cpu_range llc_cpus(CpuId c) const TASKPLACE_NOEXCEPT { return span(llc, c); }
  cpu_range node_cpus(CpuId c) const TASKPLACE_NOEXCEPT { return span(node, c); }
  // Every CPU, 0..n-1 (the machine level's span).
  cpu_range all_cpus() const noexcept { return all_; }

  std::uint32_t level_count(CpuId c) const TASKPLACE_NOEXCEPT {
    TASKPLACE_EXPECTS(c < cpu_count(), "cpu must be < cpu_count()");
    return levels_[c].count;
  }
  LevelKind level_kind(CpuId c, std::uint32_t i) const TASKPLACE_NOEXCEPT {
    TASKPLACE_EXPECTS(c < cpu_count(), "cpu must be < cpu_count()");
    TASKPLACE_EXPECTS(i < levels_[c].count, "level index must be < level_count(cpu)");
    return levels_[c].kinds[i];
  }
  cpu_range level_cpus(CpuId c, std::uint32_t i) const TASKPLACE_NOEXCEPT {
    const LevelKind k = level_kind(c, i);
    switch (k) {
      case LevelKind::smt: return core_cpus(c);
      case LevelKind::cluster: return cluster_cpus(c);
      case LevelKind::llc: return llc_cpus(c);
      case LevelKind::node: return node_cpus(c);
      default: return all_;
    }
  }

  // --- clusters (not part of Topology) ------------------------------------
  // The cores sharing c's mid-level cache; without cluster ids, or with
  // ids that group no two cores, c's core. Whether they form a level: see
  // with_clusters().
  // Complexity: O(1) each. Thread-safety: const members, safe to share.
  // Returns (has_clusters): whether some cluster holds two or more cores.
  bool has_clusters() const noexcept { return has_clusters_; }
  std::uint32_t cluster_of(CpuId c) const TASKPLACE_NOEXCEPT { return id(cluster_kind(), c); }
  std::uint32_t cluster_size(CpuId c) const TASKPLACE_NOEXCEPT { return size(cluster_kind(), c); }
  cpu_range cluster_cpus(CpuId c) const TASKPLACE_NOEXCEPT { return span(cluster_kind(), c); }

  // --- counts and the OS mapping ------------------------------------------
  std::uint32_t core_count() const noexcept { return groups_[core].count(); }
  std::uint32_t cluster_count() const noexcept { return groups_[cluster_kind()].count(); }
  std::uint32_t llc_count() const noexcept { return groups_[llc].count(); }
  std::uint32_t node_count() const noexcept { return groups_[node].count(); }

  // Returns: the OS number of dense CPU c. Complexity: O(1).
  CpuId os_cpu(CpuId c) const TASKPLACE_NOEXCEPT {
    TASKPLACE_EXPECTS(c < cpu_count(), "cpu must be < cpu_count()");
    return os_.empty() ? c : os_[c];
  }
  // Returns: the dense CPU whose OS number is `os`, or no_cpu when no CPU
  //   of this topology has it. Complexity: O(log n).
  CpuId from_os_cpu(CpuId os) const noexcept {
    if (os_.empty()) return os < cpus_ ? os : no_cpu;
    auto it = std::lower_bound(by_os_.begin(), by_os_.end(), std::pair<CpuId, CpuId>{os, 0});
    return it != by_os_.end() && it->first == os ? it->second : no_cpu;
  }

 private:
  enum Kind : std::uint8_t { core, llc, node, cluster };

  // One partition of the CPUs: members of group g are
  // order[start[g] .. start[g+1]), ascending.
  struct Groups {
    std::vector<std::uint32_t> of;     // group of each CPU
    std::vector<CpuId> order;          // CPUs sorted by (group, cpu)
    std::vector<std::uint32_t> start;  // count() + 1 offsets into order
    std::uint32_t count() const noexcept { return static_cast<std::uint32_t>(start.size() - 1); }
    std::span<const CpuId> members(std::uint32_t g) const noexcept {
      return {order.data() + start[g], start[g + 1] - start[g]};
    }
  };
  struct Levels {
    std::uint32_t count = 0;
    std::array<LevelKind, 5> kinds{};
  };

  TableTopology() = default;  // for with_clusters(), which init()s it

  // Validates the arrays and builds every table; cluster_ids null: none.
  void init(const std::vector<std::uint32_t>& core_ids, const std::vector<std::uint32_t>* cluster_ids,
            const std::vector<std::uint32_t>& llc_ids, const std::vector<std::uint32_t>& node_ids,
            std::vector<CpuId> os_cpus) {
    const std::size_t n = core_ids.size();
    if (n == 0) throw TopologyError("TableTopology: no CPUs (the core id array is empty)");
    if (llc_ids.size() != n || node_ids.size() != n || (cluster_ids && cluster_ids->size() != n))
      throw TopologyError("TableTopology: arrays differ in length (" + std::to_string(n) +
                          " core ids, " +
                          (cluster_ids ? std::to_string(cluster_ids->size()) + " cluster ids, " : "") +
                          std::to_string(llc_ids.size()) + " llc ids, " +
                          std::to_string(node_ids.size()) + " node ids)");
    if (n >= no_cpu) throw TopologyError("TableTopology: more than 2^32 - 2 CPUs");
    if (!os_cpus.empty() && os_cpus.size() != n)
      throw TopologyError("TableTopology: " + std::to_string(os_cpus.size()) +
                          " OS cpu numbers for " + std::to_string(n) + " CPUs");
    cpus_ = static_cast<std::uint32_t>(n);
    build_group(groups_[core], core_ids);
    build_group(groups_[llc], llc_ids);
    build_group(groups_[node], node_ids);
    check_core_nesting(llc, "SMT siblings share an LLC", "llc");
    check_core_nesting(node, "a core lies in one node", "node");
    check_llc_node_nesting();
    if (cluster_ids) {
      build_group(groups_[cluster], *cluster_ids);
      check_core_nesting(cluster, "a core lies in one cluster", "cluster");
      check_cluster_llc_nesting();
      // Every core in one cluster: fewer clusters than cores means one
      // holds two or more; as many, and the clusters are the cores.
      has_clusters_ = groups_[cluster].count() < groups_[core].count();
    }
    build_os_map(std::move(os_cpus));
    build_levels();
  }

  // Without clusters of two or more cores the cluster table is the core
  // table.
  Kind cluster_kind() const noexcept { return has_clusters_ ? cluster : core; }

  std::uint32_t id(Kind k, CpuId c) const TASKPLACE_NOEXCEPT {
    TASKPLACE_EXPECTS(c < cpu_count(), "cpu must be < cpu_count()");
    return groups_[k].of[c];
  }
  std::uint32_t size(Kind k, CpuId c) const TASKPLACE_NOEXCEPT {
    return static_cast<std::uint32_t>(span(k, c).size());
  }
  cpu_range span(Kind k, CpuId c) const TASKPLACE_NOEXCEPT {
    TASKPLACE_EXPECTS(c < cpu_count(), "cpu must be < cpu_count()");
    return groups_[k].members(groups_[k].of[c]);
  }

  // Dense ids in order of first appearance: CPUs are scanned upwards, so a
  // group's id follows from its lowest CPU.
  void build_group(Groups& g, const std::vector<std::uint32_t>& labels) {
    std::vector<std::pair<std::uint32_t, std::uint32_t>> seen;  // (label, dense), sorted
    g.of.resize(cpus_);
    std::vector<std::uint32_t> sizes;
    for (CpuId c = 0; c < cpus_; ++c) {
      auto it = std::lower_bound(seen.begin(), seen.end(), std::pair{labels[c], 0u});
      if (it == seen.end() || it->first != labels[c]) {
        it = seen.insert(it, {labels[c], static_cast<std::uint32_t>(sizes.size())});
        sizes.push_back(0);
      }
      g.of[c] = it->second;
      ++sizes[it->second];
    }
    g.start.assign(sizes.size() + 1, 0);
    for (std::size_t i = 0; i < sizes.size(); ++i) g.start[i + 1] = g.start[i] + sizes[i];
    g.order.resize(cpus_);
    std::vector<std::uint32_t> fill(g.start.begin(), g.start.end() - 1);
    for (CpuId c = 0; c < cpus_; ++c) g.order[fill[g.of[c]]++] = c;
  }

  // Every sibling of a core must share its LLC (its node): the kernel's SMT
  // domain is a child of MC, so a core split across caches cannot be a
  // level at all.
  void check_core_nesting(Kind outer, const char* rule, const char* name) const {
    for (CpuId c = 0; c < cpus_; ++c) {
      const CpuId first = core_cpus(c)[0];
      if (groups_[outer].of[first] != groups_[outer].of[c])
        throw TopologyError("cpu " + std::to_string(c) + ": " + rule + " (sibling " +
                            std::to_string(first) + " is in " + name + " " +
                            std::to_string(groups_[outer].of[first]) + ", cpu " +
                            std::to_string(c) + " in " + name + " " +
                            std::to_string(groups_[outer].of[c]) + ")");
    }
  }

  // An LLC lies inside one node, or (Intel SNC) is a union of whole nodes.
  void check_llc_node_nesting() const {
    for (std::uint32_t l = 0; l < llc_count(); ++l) {
      const auto m = groups_[llc].members(l);
      const std::uint32_t n0 = groups_[node].of[m[0]];
      bool one_node = std::all_of(m.begin(), m.end(), [&](CpuId c) { return groups_[node].of[c] == n0; });
      if (one_node) continue;
      for (CpuId c : m)  // several nodes: each must lie inside this LLC
        for (CpuId d : node_cpus(c))
          if (groups_[llc].of[d] != l)
            throw TopologyError("cpu " + std::to_string(d) + ": LLCs and nodes nest (llc " +
                                std::to_string(l) + " spans nodes " + std::to_string(n0) +
                                " and " + std::to_string(groups_[node].of[c]) + ", but cpu " +
                                std::to_string(d) + " of node " +
                                std::to_string(groups_[node].of[d]) + " is in llc " +
                                std::to_string(groups_[llc].of[d]) + ")");
    }
  }

  // A cluster lies inside one LLC: the kernel's CLS domain is a child of
  // MC, and the cluster shares a cache level below the last one.
  void check_cluster_llc_nesting() const {
    for (CpuId c = 0; c < cpus_; ++c) {
      const CpuId first = span(cluster, c)[0];
      if (groups_[llc].of[first] != groups_[llc].of[c])
        throw TopologyError("cpu " + std::to_string(c) + ": a cluster lies in one LLC (cpu " +
                            std::to_string(first) + " of cluster " +
                            std::to_string(groups_[cluster].of[c]) + " is in llc " +
                            std::to_string(groups_[llc].of[first]) + ", cpu " +
                            std::to_string(c) + " in llc " +
                            std::to_string(groups_[llc].of[c]) + ")");
    }
  }

  void build_os_map(std::vector<CpuId> os) {
    all_.resize(cpus_);
    for (CpuId c = 0; c < cpus_; ++c) all_[c] = c;
    if (os.empty()) return;
    by_os_.resize(cpus_);
    for (CpuId c = 0; c < cpus_; ++c) {
      if (os[c] == no_cpu)
        throw TopologyError("cpu " + std::to_string(c) + ": OS cpu number is no_cpu");
      by_os_[c] = {os[c], c};
    }
    std::sort(by_os_.begin(), by_os_.end());
    for (std::size_t i = 1; i < by_os_.size(); ++i)
      if (by_os_[i].first == by_os_[i - 1].first)
        throw TopologyError("cpu " + std::to_string(by_os_[i].second) + ": OS cpu number " +
                            std::to_string(by_os_[i].first) + " is also cpu " +
                            std::to_string(by_os_[i - 1].second) + "'s");
    os_ = std::move(os);
  }

  // smt, cluster, llc, node, machine in that order, each kept only when it
  // spans more CPUs than the level below (sd_degenerate). A cluster as big
  // as its LLC is not a level either: the llc level covers it, and stays
  // the level that equals llc_cpus() (Topology I8). A node inside its LLC
  // (SNC) is not a level: kinds never decrease, and the LLC level already
  // covers it; node_cpus() still reports it.
  void build_levels() {
    levels_.resize(cpus_);
    for (CpuId c = 0; c < cpus_; ++c) {
      Levels& lv = levels_[c];
      std::size_t below = 1;
      auto add = [&](LevelKind k, std::size_t span_size) {
        if (span_size > below) {
          lv.kinds[lv.count++] = k;
          below = span_size;
        }
      };
      add(LevelKind::smt, core_cpus(c).size());
      if (has_clusters_ && cluster_cpus(c).size() < llc_cpus(c).size())
        add(LevelKind::cluster, cluster_cpus(c).size());
      add(LevelKind::llc, llc_cpus(c).size());
      if (node_cpus(c).size() > llc_cpus(c).size()) add(LevelKind::node, node_cpus(c).size());
      add(LevelKind::machine, cpus_);
    }
  }

  std::uint32_t cpus_ = 0;
  bool has_clusters_ = false;
  std::array<Groups, 4> groups_;  // indexed by Kind; [cluster] empty without cluster ids
  std::vector<Levels> levels_;
  std::vector<CpuId> all_;
  std::vector<CpuId> os_;                         // empty: identity
  std::vector<std::pair<CpuId, CpuId>> by_os_;    // (os, dense), sorted
};

static_assert(Topology<TableTopology>);

}  // namespace taskplace
