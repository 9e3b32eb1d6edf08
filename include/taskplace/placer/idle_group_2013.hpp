// taskplace/placer/idle_group_2013.hpp: the idle-sibling search of v3.9 to
// v4.8 (the one v3.12 ran, Wang 2013's kernel): the first wholly idle group
// of the target's LLC domain, then of the domains below it.
//
// Kernel analogue: select_idle_sibling() after "sched: Fix
// select_idle_sibling() bouncing cow syndrome" (v3.9, Mike Galbraith)
// until select_idle_core()/select_idle_cpu() replaced it in v4.9; and
// select_task_rq_fair()'s rule of those releases that the search ran only
// under an affine domain, which needs the waking CPU allowed.
//
//   struct traits : taskplace::DefaultWakeTraits { using Search = taskplace::sis_walk::IdleGroup2013; };
#pragma once

#include "taskplace/detail/config.hpp"

#include <cstdint>
#include <ranges>

#include "taskplace/concepts.hpp"
#include "taskplace/placer/select_idle_sibling.hpp"
#include "taskplace/types.hpp"

namespace taskplace::sis_walk {

// The search of v3.12. In its order:
//   1. the target, if idle;
//   2. prev, if idle, not the target and sharing the target's LLC;
//   3. the LLC domain's groups (its child domains' spans: the cores, a
//      core being one CPU without SMT), as a ring in the order of each
//      group's lowest CPU, from the target's own group: the first group
//      that holds an allowed CPU, does not hold the target and whose CPUs
//      are all idle gives its lowest allowed CPU (reason idle_core);
//   4. then the SMT domain below it (the target's core, when it has
//      siblings): its groups are single CPUs, walked the same way, so the
//      first idle allowed sibling after the target, wrapping (idle_scan);
//   5. else the target (target_busy).
// No recent_used_cpu (v4.16), no idle-core hint or select_idle_smt(), no
// scan budget: the walk may look at every core of the LLC. The target and
// prev are taken only where allowed (the library's rule on every path:
// the kernel took them unchecked and select_fallback_rq() corrected it).
// `scanned` counts the groups whose CPUs the walk tested. A one-CPU LLC
// has no LLC domain (its domains are degenerate): the target.
// needs_waking_allowed: v3.12 searched only under an affine domain; a
// wake-up whose waking CPU the wakee may not use went to prev as it was
// (WakePlacer: reason no_search).
struct IdleGroup2013 {
  static constexpr bool enabled = true;
  static constexpr bool needs_waking_allowed = true;

  // Effects: none (v3.12 kept no recent CPU: *in.recent is left alone).
  // Returns: the CPU and the branch that found it; the target if none.
  // Complexity: O(LLC size * core size) machine reads at most.
  // Thread-safety: const; machine-state reads may be stale.
  template <Topology T, MachineState M, CpuFilter F, class R>
  SearchResult search(const SearchInput<T, M, F, R>& in) const {
    const auto& t = in.topology;
    const auto& m = in.machine;
    const CpuId target = in.target;
    if (m.is_idle(target) && in.allowed(target)) return {target, WakeReason::idle_target};
    if (in.prev != target && t.llc_of(in.prev) == t.llc_of(target) && m.is_idle(in.prev) && in.allowed(in.prev))
      return {in.prev, WakeReason::idle_prev};
    SearchResult out{target, WakeReason::target_busy};
    if (t.llc_size(target) <= 1) return out;
    // The lowest CPU of c's core (its group's first CPU).
    auto lowest = [&](CpuId c) {
      CpuId low = c;
      for (auto s : t.core_cpus(c)) low = std::min(low, static_cast<CpuId>(s));
      return low;
    };
    // Step 3: the cores of the LLC, each met once at its lowest CPU, in
    // ring order from the target's core: those above it, then below it
    // (the topology's ranges ascend, as the LLC walk's do).
    const CpuId own = lowest(target);
    for (int pass = 0; pass < 2; ++pass) {
      for (auto x : t.llc_cpus(target)) {
        const auto c = static_cast<CpuId>(x);
        if (c == own || (pass == 0) != (c > own) || lowest(c) != c) continue;
        CpuId first_allowed = no_cpu;
        for (auto s : t.core_cpus(c))
          if (in.allowed(static_cast<CpuId>(s)) && static_cast<CpuId>(s) < first_allowed)
            first_allowed = static_cast<CpuId>(s);
        if (first_allowed == no_cpu) continue;  // no allowed CPU: not looked at
        ++out.scanned;
        bool whole = true;
        for (auto s : t.core_cpus(c)) whole = whole && m.is_idle(static_cast<CpuId>(s));
        if (whole) return {first_allowed, WakeReason::idle_core, out.scanned};
      }
    }
    // Step 4: the target's siblings, from the one after it, wrapping (also
    // where the core is the whole LLC: the SMT domain is then sd_llc).
    if (t.core_size(target) > 1) {
      for (int pass = 0; pass < 2; ++pass) {
        for (auto s : t.core_cpus(target)) {
          const auto c = static_cast<CpuId>(s);
          if (c == target || (pass == 0) != (c > target) || !in.allowed(c)) continue;
          ++out.scanned;
          if (m.is_idle(c)) return {c, WakeReason::idle_scan, out.scanned};
        }
      }
    }
    return out;
  }
};
static_assert(SearchPolicy<IdleGroup2013, detail::TopologyArchetype>);

}  // namespace taskplace::sis_walk
