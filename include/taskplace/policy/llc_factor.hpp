// taskplace/policy/llc_factor.hpp: the flip threshold `f` of the wide rules,
// a property of the waking CPU.
//
// Provides LlcFactor, NodeFactor, FixedFactor<N> and CoresPerLlcFactor.
// Kernel analogue: sd_llc_size, the per-CPU count of CPUs sharing the last
// level cache, read by wake_wide(). Follows Peter Zijlstra's "sched: reduce
// the overhead of obtain factor" (patch 2/2 of seed 000, v3.12); NodeFactor
// is the node size that patch 1/2 used before it.
//
//   const std::uint32_t f = taskplace::LlcFactor::factor(topology, waking_cpu);
//   const bool wide = taskplace::WideDetector<>::wide(w, e, f);
#pragma once

#include <cstdint>

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
// node-size factor too slow (seed 000, patch 2/2).
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

// Checked against the declaration-only archetype (concepts.hpp): any topology.
static_assert(FactorPolicy<LlcFactor, detail::TopologyArchetype>);
static_assert(FactorPolicy<NodeFactor, detail::TopologyArchetype>);
static_assert(FactorPolicy<FixedFactor<1>, detail::TopologyArchetype>);
static_assert(FactorPolicy<CoresPerLlcFactor, detail::TopologyArchetype>);

}  // namespace taskplace
