// taskplace/topology/sysfs.hpp: the running machine's topology, read from
// Linux sysfs (or from a copy of it), restricted to the CPUs the process
// may run on.
//
// Kernel analogue: the masks the scheduler builds its domains from, as
// sysfs exports them (drivers/base/topology.c, cacheinfo.c, node.c): the
// SMT siblings, the cluster (the CLS domain's mask), the CPUs sharing the
// last-level cache (sd_llc), the NUMA node. Follows the layout of Linux
// 5.x/6.x (core_cpus_list since v5.4, thread_siblings_list before;
// cluster_cpus_list since v5.16).
//
//   taskplace::SysfsTopology t;                       // /sys, this process's affinity
//   taskplace::SysfsTopology fake{"tests/data/sysfs/vm2", {0, 1}};
#pragma once

#include "taskplace/detail/config.hpp"

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#if defined(__linux__)
#include <sched.h>
#endif

#include "taskplace/concepts.hpp"
#include "taskplace/detail/cpulist.hpp"
#include "taskplace/topology/table.hpp"
#include "taskplace/types.hpp"

namespace taskplace {

namespace detail {

// Returns: the whole file. Throws: SysfsError naming it when it cannot be
// opened or read.
inline std::string sysfs_read(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw SysfsError(file.string(), "cannot open");
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) throw SysfsError(file.string(), "read error");
  return ss.str();
}

// Returns: the cpulist in `file`. Throws: SysfsError naming the file.
inline std::vector<CpuId> sysfs_cpulist(const std::filesystem::path& file) {
  const std::string text = sysfs_read(file);
  try {
    return parse_cpulist(text);
  } catch (const CpulistError& e) {
    throw SysfsError(file.string(), e.what());
  }
}

// Returns: the file's text without surrounding whitespace.
inline std::string sysfs_word(const std::filesystem::path& file) {
  const std::string text = sysfs_read(file);
  const auto b = text.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return {};
  return text.substr(b, text.find_last_not_of(" \t\r\n") - b + 1);
}

// Returns: the process's allowed OS CPUs (sched_getaffinity), ascending;
// nullopt off Linux or when the call fails (then nothing is restricted).
inline std::optional<std::vector<CpuId>> sysfs_affinity() {
#if defined(__linux__)
  for (std::size_t ncpu = 1024; ncpu <= (std::size_t{1} << 20); ncpu *= 2) {
    cpu_set_t* set = CPU_ALLOC(ncpu);
    if (set == nullptr) return std::nullopt;
    const std::size_t bytes = CPU_ALLOC_SIZE(ncpu);
    CPU_ZERO_S(bytes, set);
    if (::sched_getaffinity(0, bytes, set) == 0) {
      std::vector<CpuId> out;
      for (std::size_t c = 0; c < ncpu; ++c)
        if (CPU_ISSET_S(c, bytes, set)) out.push_back(static_cast<CpuId>(c));
      CPU_FREE(set);
      return out;
    }
    CPU_FREE(set);  // EINVAL: the kernel's mask is larger; try a larger one
  }
#endif
  return std::nullopt;
}

}  // namespace detail

// Topology from sysfs: CPU `cpu/online`, intersected with the allowed set,
// densely numbered 0..n-1 in OS order.
//   core: cpu/cpuN/topology/core_cpus_list (thread_siblings_list before
//         v5.4);
//   cluster: cpu/cpuN/topology/cluster_cpus_list (v5.16+), when present;
//         a CPU without it is a cluster of its own core. A cluster bigger
//         than the core and smaller than the LLC is a balance level (see
//         TableTopology::with_clusters); one equal to the core, as x86
//         parts with a private L2 per core report, is not;
//   LLC:  the cpu/cpuN/cache/indexK of the highest level whose type is
//         Unified or Data (L3, or L2 on a machine without L3); a CPU with
//         no cache information falls back to its package
//         (topology/package_cpus_list, then core_siblings_list), which is
//         what x86 does when CPUID reports no caches;
//   node: node/online and node/nodeN/cpulist; no node directory = one node.
// Invariant: the CPUs are those online and allowed; the topology those CPUs
// see (masks are intersected, so an offline sibling makes a 1-thread core).
// The topology is a TableTopology (every Topology member, os_cpu and
// from_os_cpu come from it); this class only knows how to read one.
class SysfsTopology : public TableTopology {
 public:

  static constexpr const char* default_root = "/sys/devices/system";

  // Effects: reads `root` (the directory holding cpu/ and node/), keeping
  //   the online CPUs this process may run on (sched_getaffinity).
  // Throws: SysfsError naming the file when one is missing or malformed;
  //   TopologyError when no CPU is left or the masks contradict each other.
  // Complexity: O(CPUs x cache levels) file reads.
  explicit SysfsTopology(const std::filesystem::path& root = default_root)
      : SysfsTopology(root, detail::sysfs_affinity()) {}

  // Effects: as above, keeping the online CPUs among `allowed_os_cpus`
  //   (OS numbers; those not online are ignored).
  SysfsTopology(const std::filesystem::path& root, std::vector<CpuId> allowed_os_cpus)
      : SysfsTopology(root, std::optional<std::vector<CpuId>>(std::move(allowed_os_cpus))) {}

  // Effects: as above, keeping every online CPU, whatever the affinity.
  static SysfsTopology all_online(const std::filesystem::path& root = default_root) {
    return SysfsTopology(root, std::optional<std::vector<CpuId>>{});
  }

  // Returns: the table this topology is, for code that wants its counts.
  const TableTopology& table() const noexcept { return *this; }

 private:
  SysfsTopology(const std::filesystem::path& root, std::optional<std::vector<CpuId>> allowed)
      : TableTopology(read(root, allowed)) {}

  static TableTopology read(const std::filesystem::path& root,
                            const std::optional<std::vector<CpuId>>& allowed) {
    namespace fs = std::filesystem;
    const fs::path cpu_dir = root / "cpu";
    const std::vector<CpuId> online = detail::sysfs_cpulist(cpu_dir / "online");
    std::vector<CpuId> ok;
    if (allowed) {
      ok = *allowed;
      std::sort(ok.begin(), ok.end());
    }
    std::vector<CpuId> cpus;  // OS numbers, ascending
    for (CpuId os : online)
      if (!allowed || std::binary_search(ok.begin(), ok.end(), os)) cpus.push_back(os);
    if (cpus.empty())
      throw TopologyError("sysfs " + root.string() + ": no usable CPU (online " +
                          detail::format_cpulist(online) + ", none of them allowed)");

    // Node of each OS CPU: the node whose cpulist names it.
    std::vector<std::pair<CpuId, std::uint32_t>> node_of_os;  // (os, node)
    const fs::path node_dir = root / "node";
    if (fs::exists(node_dir / "online")) {
      for (CpuId n : detail::sysfs_cpulist(node_dir / "online"))
        for (CpuId os : detail::sysfs_cpulist(node_dir / ("node" + std::to_string(n)) / "cpulist"))
          node_of_os.emplace_back(os, n);
      std::sort(node_of_os.begin(), node_of_os.end());
    }

    std::vector<std::uint32_t> core, cluster, llc, node;
    for (CpuId os : cpus) {
      const fs::path dir = cpu_dir / ("cpu" + std::to_string(os));
      core.push_back(label(first_existing(dir / "topology", {"core_cpus_list", "thread_siblings_list"}), os));
      // No file (before v5.16): the CPU's cluster is its core, labelled as
      // the core is (clusters that are the cores are no clusters).
      const fs::path cluster_file = dir / "topology" / "cluster_cpus_list";
      cluster.push_back(fs::exists(cluster_file) ? label(cluster_file, os) : core.back());
      llc.push_back(llc_label(dir, os));
      if (node_of_os.empty()) {
        node.push_back(0);
      } else {
        auto it = std::lower_bound(node_of_os.begin(), node_of_os.end(), std::pair<CpuId, std::uint32_t>{os, 0});
        if (it == node_of_os.end() || it->first != os)
          throw SysfsError((node_dir / "online").string(),
                           "cpu" + std::to_string(os) + " is in no online node's cpulist");
        node.push_back(it->second);
      }
    }
    try {
      return TableTopology::with_clusters(std::move(core), std::move(cluster), std::move(llc), std::move(node),
                                          cpus);
    } catch (const TopologyError& e) {
      throw TopologyError("sysfs " + root.string() + " (dense cpu numbers): " + e.what());
    }
  }

  static std::filesystem::path first_existing(const std::filesystem::path& dir,
                                              std::initializer_list<const char*> names) {
    for (const char* n : names)
      if (std::filesystem::exists(dir / n)) return dir / n;
    return dir / *names.begin();  // reading it reports the missing file
  }

  // A group's label is its lowest OS CPU: every member's file names the
  // same set, so every member computes the same label.
  static std::uint32_t label(const std::filesystem::path& file, CpuId os) {
    const std::vector<CpuId> list = detail::sysfs_cpulist(file);
    if (!std::binary_search(list.begin(), list.end(), os))
      throw SysfsError(file.string(), "does not contain cpu" + std::to_string(os) + " itself");
    return list.front();
  }

  // The last-level cache: among cache/index*, the highest level that holds
  // data (type Unified or Data; instruction caches never count).
  static std::uint32_t llc_label(const std::filesystem::path& dir, CpuId os) {
    namespace fs = std::filesystem;
    const fs::path cache = dir / "cache";
    std::optional<fs::path> best;
    unsigned long best_level = 0;
    if (fs::is_directory(cache)) {
      for (const auto& entry : fs::directory_iterator(cache)) {
        const std::string name = entry.path().filename().string();
        if (name.rfind("index", 0) != 0 || !entry.is_directory()) continue;
        const std::string type = detail::sysfs_word(entry.path() / "type");
        if (type != "Unified" && type != "Data") continue;
        const fs::path level_file = entry.path() / "level";
        const std::string level = detail::sysfs_word(level_file);
        if (level.empty() || level.size() > 2 || level.find_first_not_of("0123456789") != std::string::npos)
          throw SysfsError(level_file.string(), "expected a cache level number, found \"" + level + "\"");
        const unsigned long lv = std::stoul(level);
        if (!best || lv > best_level) {
          best = entry.path() / "shared_cpu_list";
          best_level = lv;
        }
      }
    }
    if (best) return label(*best, os);
    // No cache information (some VMs, some arm64 firmware): the package.
    return label(first_existing(dir / "topology", {"package_cpus_list", "core_siblings_list"}), os);
  }

};

static_assert(Topology<SysfsTopology>);

}  // namespace taskplace
