// taskplace/testing/builders.hpp: short ways to make topologies in tests.
//
// Provides table_from_string ("core llc node" per CPU, '|' between CPUs),
// to_table (any Topology as a TableTopology) and restrict_to (the
// sub-topology a cpuset or an offline CPU leaves). Kernel analogue: none;
// restrict_to is what an affinity mask does to the domains a task sees.
//
//   auto t = taskplace::testing::table_from_string("0 0 0 | 0 0 0 | 1 0 0 | 1 0 0");
//   auto half = taskplace::testing::restrict_to(taskplace::presets::q6600_2008(), {0, 1});
#pragma once

#include "taskplace/detail/config.hpp"

#include <algorithm>
#include <ranges>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "taskplace/concepts.hpp"
#include "taskplace/topology/table.hpp"
#include "taskplace/types.hpp"

namespace taskplace::testing {

// Effects: parses one "core llc node [os]" group of numbers per CPU,
//   CPUs separated by '|'; whitespace is free. The optional fourth number
//   is the CPU's OS number (all CPUs give it, or none).
// Returns: the TableTopology those rows describe.
// Throws: std::invalid_argument for text that is not such rows (naming
//   the row); TopologyError for rows that break a topology rule.
// Complexity: O(text size + n log n).
inline TableTopology table_from_string(std::string_view text) {
  std::vector<std::uint32_t> core, llc, node;
  std::vector<CpuId> os;
  std::size_t row = 0;
  while (true) {
    const std::size_t bar = text.find('|');
    const std::string_view part = text.substr(0, bar);
    std::vector<std::uint32_t> nums;
    std::size_t i = 0;
    while (i < part.size()) {
      if (part[i] == ' ' || part[i] == '\t' || part[i] == '\n') { ++i; continue; }
      if (part[i] < '0' || part[i] > '9')
        throw std::invalid_argument("table_from_string: row " + std::to_string(row) +
                                    ": unexpected '" + std::string(1, part[i]) + "'");
      std::uint64_t v = 0;
      while (i < part.size() && part[i] >= '0' && part[i] <= '9') {
        v = v * 10 + static_cast<std::uint64_t>(part[i++] - '0');
        if (v >= no_cpu)
          throw std::invalid_argument("table_from_string: row " + std::to_string(row) +
                                      ": number too large");
      }
      nums.push_back(static_cast<std::uint32_t>(v));
    }
    if (nums.size() != 3 && nums.size() != 4)
      throw std::invalid_argument("table_from_string: row " + std::to_string(row) + " has " +
                                  std::to_string(nums.size()) +
                                  " numbers; want \"core llc node\" or \"core llc node os\"");
    if (row > 0 && (nums.size() == 4) != !os.empty())
      throw std::invalid_argument("table_from_string: row " + std::to_string(row) +
                                  ": give the OS number for every CPU or for none");
    core.push_back(nums[0]);
    llc.push_back(nums[1]);
    node.push_back(nums[2]);
    if (nums.size() == 4) os.push_back(nums[3]);
    ++row;
    if (bar == std::string_view::npos) break;
    text.remove_prefix(bar + 1);
  }
  return TableTopology(std::move(core), std::move(llc), std::move(node), std::move(os));
}

namespace detail {
// A label for c's cluster: the lowest CPU of its cluster level if it has
// one, else the lowest CPU of its core (a core is its own cluster). Equal
// labels, same cluster.
template <Topology T>
std::uint32_t cluster_label(const T& t, CpuId c) {
  const auto levels = static_cast<std::uint32_t>(t.level_count(c));
  for (std::uint32_t i = 0; i < levels; ++i) {
    const LevelKind k = t.level_kind(c, i);
    if (k == LevelKind::cluster) return static_cast<std::uint32_t>(*std::ranges::begin(t.level_cpus(c, i)));
    if (k > LevelKind::cluster) break;
  }
  return static_cast<std::uint32_t>(*std::ranges::begin(t.core_cpus(c)));
}
}  // namespace detail

// Returns: t's CPUs, cores, clusters (from its cluster levels, if any),
//   LLCs and nodes as a TableTopology (its levels recomputed from those
//   groups). Complexity: O(n log n).
template <Topology T>
TableTopology to_table(const T& t) {
  const auto n = static_cast<std::uint32_t>(t.cpu_count());
  std::vector<std::uint32_t> core(n), cluster(n), llc(n), node(n);
  for (CpuId c = 0; c < n; ++c) {
    core[c] = static_cast<std::uint32_t>(t.core_of(c));
    cluster[c] = detail::cluster_label(t, c);
    llc[c] = static_cast<std::uint32_t>(t.llc_of(c));
    node[c] = static_cast<std::uint32_t>(t.node_of(c));
  }
  return TableTopology::with_clusters(std::move(core), std::move(cluster), std::move(llc), std::move(node));
}

// Returns: the topology of the CPUs `keep` of t (dense ids of t, any
//   order), renumbered 0..k-1 in ascending order; os_cpu(i) of the result
//   is the CPU's id in t. Groups (clusters included) lose the CPUs not
//   kept, as a cpuset or an offline sibling makes them smaller.
// Throws: TopologyError if keep is empty or names a CPU >= t.cpu_count().
template <Topology T>
TableTopology restrict_to(const T& t, std::vector<CpuId> keep) {
  std::sort(keep.begin(), keep.end());
  keep.erase(std::unique(keep.begin(), keep.end()), keep.end());
  std::vector<std::uint32_t> core, cluster, llc, node;
  for (CpuId c : keep) {
    if (c >= t.cpu_count())
      throw TopologyError("restrict_to: cpu " + std::to_string(c) + " >= cpu_count() " +
                          std::to_string(t.cpu_count()));
    core.push_back(static_cast<std::uint32_t>(t.core_of(c)));
    cluster.push_back(detail::cluster_label(t, c));
    llc.push_back(static_cast<std::uint32_t>(t.llc_of(c)));
    node.push_back(static_cast<std::uint32_t>(t.node_of(c)));
  }
  return TableTopology::with_clusters(std::move(core), std::move(cluster), std::move(llc), std::move(node),
                                      std::move(keep));
}

}  // namespace taskplace::testing
