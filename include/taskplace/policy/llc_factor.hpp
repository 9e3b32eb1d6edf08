// taskplace/policy/llc_factor.hpp: the flip threshold `f` of the wide rules,
// a property of the waking CPU.
//
// Provides LlcFactor, NodeFactor, FixedFactor<N>, CoresPerLlcFactor and
// ClusterFactor.
// Kernel analogue: sd_llc_size, the per-CPU count of CPUs sharing the last
// level cache, read by wake_wide(). Follows Peter Zijlstra's "sched: reduce
// the overhead of obtain factor" (patch 2/2 of Wang 2013, v3.12); NodeFactor
// is the node size that patch 1/2 used before it. ClusterFactor reads the
// span of the CLS domain (v5.16) instead; no kernel feeds it to wake_wide().
//
//   const std::uint32_t f = taskplace::LlcFactor::factor(topology, waking_cpu);
//   const bool wide = taskplace::WideDetector<>::wide(w, e, f);
#pragma once

#include "taskplace/detail/config.hpp"

#include <cstdint>
#include <ranges>

#include "taskplace/concepts.hpp"
#include "taskplace/fwd.hpp"
#include "taskplace/types.hpp"

namespace taskplace {

// Every factor below is at least 1 (FactorPolicy I1), even on a topology
// that breaks its own invariants and reports a size of 0. A topology whose
// sizes are >= 1 by construction can tell the compiler so
// (UniformTopology does, with TASKPLACE_ASSUME), and the test then
// compiles away: the factor costs what reading sd_llc_size costs.
//
// Each factor() reads one or two cached sizes of the topology, never a mask:
// counting the bits of a CPU mask on every wake-up is what made the 2013
// node-size factor too slow (Wang 2013, patch 2/2). ClusterFactor also reads
// the kinds of the CPU's lowest levels (at most the two below the LLC) and
// the size of one level's range, which a CpuRange knows (sized_range).
// Preconditions: waking_cpu < t.cpu_count(); shipped topologies check it in
// checked builds and throw PreconditionError.

// Current kernel. The bigger the shared cache, the more partners one task
// may wake before pulling them all next to it stops paying: a bigger LLC
// leads to more pulls.
struct LlcFactor {
  // Returns: max(1, t.llc_size(waking_cpu)).
  // Complexity: O(1) on shipped topologies. Thread-safety: as t's const members.
  template <Topology T>
  static constexpr std::uint32_t factor(const T& t, CpuId waking_cpu) {
    const auto n = static_cast<std::uint32_t>(t.llc_size(waking_cpu));
    return n == 0 ? 1u : n;
  }
};

// v3.12 patch 1/2 (2013): the waking CPU's NUMA node. Larger than the LLC on
// multi-LLC parts (AMD), smaller under Intel sub-NUMA clustering.
struct NodeFactor {
  // Returns: max(1, t.node_size(waking_cpu)).
  // Complexity: O(1) on shipped topologies. Thread-safety: as t's const members.
  template <Topology T>
  static constexpr std::uint32_t factor(const T& t, CpuId waking_cpu) {
    const auto n = static_cast<std::uint32_t>(t.node_size(waking_cpu));
    return n == 0 ? 1u : n;
  }
};

// A constant threshold, the same on every CPU: for machines whose reported
// cache topology is wrong (VMs) or for experiments.
template <std::uint32_t N>
struct FixedFactor {
  static_assert(N >= 1, "FixedFactor<N>: N must be at least 1 (FactorPolicy I1)");
  static constexpr std::uint32_t value = N;

  // Returns: N. Complexity: O(1). Thread-safety: pure.
  template <Topology T>
  static constexpr std::uint32_t factor(const T&, CpuId) noexcept {
    return N;
  }
};

// Physical cores sharing the waking CPU's LLC: llc_size / core_size. SMT
// siblings double sd_llc_size, and with it the flips a waker needs before
// it counts as wide, though the siblings add far less than a core's worth
// of capacity; this factor does not count them.
// Hybrid parts (SMT and non-SMT cores in one LLC) get an estimate from the
// waking CPU's own core size, rounded down: exact counting would walk the
// LLC on every wake-up.
struct CoresPerLlcFactor {
  // Returns: max(1, t.llc_size(c) / t.core_size(c)); a core size of 0 is
  //   read as 1 (no division by zero).
  // Complexity: O(1) on shipped topologies. Thread-safety: as t's const members.
  template <Topology T>
  static constexpr std::uint32_t factor(const T& t, CpuId waking_cpu) {
    const auto llc = static_cast<std::uint32_t>(t.llc_size(waking_cpu));
    const auto core = static_cast<std::uint32_t>(t.core_size(waking_cpu));
    const std::uint32_t cores = llc / (core == 0 ? 1u : core);
    return cores == 0 ? 1u : cores;
  }
};

// The cores sharing the waking CPU's mid-level cache: the CPUs of its
// cluster level (kernel CLS domain, v5.16): four E-cores sharing an L2 on
// Intel hybrid parts, four Kunpeng 920 cores sharing an L3 tag partition,
// an Ampere cluster. The factor asks how many partners one waker can keep
// close before pulling them stops paying. LlcFactor answers with the LLC;
// where the LLC is large and far (a mesh L3, a system-level cache), the
// near cache is the cluster's, and a waker with more partners than the
// cluster holds cannot keep them in it. So the threshold is the cluster's
// size: such a waker becomes wide sooner, and its partners are spread over
// the LLC instead of stacked near it.
// A CPU without a cluster level (no clusters, or a cluster as big as its
// core or its LLC, which the topology drops as degenerate) falls back to
// the LLC size: there ClusterFactor and LlcFactor agree.
struct ClusterFactor {
  // Returns: max(1, size of level_cpus(c, i)) for the level i of kind
  //   cluster, if c has one; else LlcFactor::factor(t, c).
  // Complexity: O(levels below the cluster level), at most max_levels
  //   kind reads (two on shipped topologies: smt, then cluster or llc);
  //   the range's size is read, its CPUs are never counted. Thread-safety:
  //   as t's const members.
  template <Topology T>
  static constexpr std::uint32_t factor(const T& t, CpuId waking_cpu) {
    const auto levels = static_cast<std::uint32_t>(t.level_count(waking_cpu));
    for (std::uint32_t i = 0; i < levels && i < max_levels; ++i) {
      const LevelKind k = t.level_kind(waking_cpu, i);
      if (k == LevelKind::cluster) {
        const auto n = static_cast<std::uint32_t>(std::ranges::size(t.level_cpus(waking_cpu, i)));
        return n == 0 ? 1u : n;
      }
      if (k > LevelKind::cluster) break;  // kinds never decrease (Topology I6)
    }
    return LlcFactor::factor(t, waking_cpu);
  }
};

// Checked against the declaration-only archetype (concepts.hpp): any topology.
static_assert(FactorPolicy<LlcFactor, detail::TopologyArchetype>);
static_assert(FactorPolicy<NodeFactor, detail::TopologyArchetype>);
static_assert(FactorPolicy<FixedFactor<1>, detail::TopologyArchetype>);
static_assert(FactorPolicy<CoresPerLlcFactor, detail::TopologyArchetype>);
static_assert(FactorPolicy<ClusterFactor, detail::TopologyArchetype>);

}  // namespace taskplace
