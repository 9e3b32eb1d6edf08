// taskplace_sim/search_2013.hpp: the idle-sibling search of the v3.10
// kernel that Wang 2013 measured against, as a Search policy for the
// library's WakePlacer (an example of a user-written policy).
//
// Kernel analogue: select_idle_sibling() of v3.9-v4.8 (the v3.9 form, after
// "sched: Fix select_idle_sibling() bouncing cow syndrome"): the target if
// it is idle; else prev if it is idle and shares the target's cache; else,
// level by level from the LLC down, the first group of the target's LLC
// that is wholly idle and does not hold the target (at the LLC level the
// groups are cores, at the SMT level the target's sibling threads), its
// first CPU; otherwise the target. The groups of a level form a ring in
// CPU order and the walk starts at the target's own group, so the first
// core looked at is the one after the target's. Unlike today's search,
// there is no recent_cpu and no utilisation budget: the walk may visit
// every core of the LLC.
//
//   struct base : taskplace::DefaultWakeTraits { using Search = taskplace_sim::SiblingSearch2013; };
#pragma once

#include <cstdint>
#include <ranges>

#include "taskplace/placer/select_idle_sibling.hpp"

namespace taskplace_sim {

struct SiblingSearch2013 {
  static constexpr bool enabled = true;

  // Effects/Returns: as IdleSiblingSearch::search, by the v3.10 rules.
  // Complexity: O(llc_size * core_size). Thread-safety: const.
  template <taskplace::Topology T, taskplace::MachineState M, taskplace::CpuFilter F, class R>
  taskplace::SearchResult search(const taskplace::SearchInput<T, M, F, R>& in) const {
    using taskplace::CpuId;
    using taskplace::WakeReason;
    const auto& t = in.topology;
    const auto& m = in.machine;
    if (m.is_idle(in.target) && in.allowed(in.target)) return {in.target, WakeReason::idle_target};
    // "If the previous cpu is cache affine and idle, don't be stupid."
    if (in.prev != in.target && t.llc_of(in.prev) == t.llc_of(in.target) && m.is_idle(in.prev) &&
        in.allowed(in.prev))
      return {in.prev, WakeReason::idle_prev};
    taskplace::SearchResult out{in.target, WakeReason::target_busy};
    // The LLC level: its groups are cores, named by their first CPU. The
    // ring starts at the target's core (skipped: it holds the target), so
    // the cores after it come first, then those before it.
    const auto first_of = [&](CpuId c) { return static_cast<CpuId>(*std::ranges::begin(t.core_cpus(c))); };
    const CpuId own = first_of(in.target);
    for (int pass = 0; pass < 2; ++pass) {
      for (auto x : t.llc_cpus(in.target)) {
        const auto c = static_cast<CpuId>(x);
        if (first_of(c) != c || c == own || (pass == 0) != (c > own)) continue;
        ++out.scanned;
        // A group qualifies when all its CPUs are idle and one is allowed;
        // the wakee goes to its first allowed CPU.
        bool whole = true;
        CpuId first_allowed = taskplace::no_cpu;
        for (auto s : t.core_cpus(c)) {
          const auto sib = static_cast<CpuId>(s);
          if (!m.is_idle(sib)) {
            whole = false;
            break;
          }
          if (first_allowed == taskplace::no_cpu && in.allowed(sib)) first_allowed = sib;
        }
        if (whole && first_allowed != taskplace::no_cpu) return {first_allowed, WakeReason::idle_core, out.scanned};
      }
    }
    // The SMT level: its groups are the target's sibling threads, the ring
    // again starting after the target.
    for (int pass = 0; pass < 2; ++pass) {
      for (auto x : t.core_cpus(in.target)) {
        const auto c = static_cast<CpuId>(x);
        if (c == in.target || (pass == 0) != (c > in.target)) continue;
        if (m.is_idle(c) && in.allowed(c)) return {c, WakeReason::idle_scan, out.scanned};
      }
    }
    return out;
  }
};

}  // namespace taskplace_sim
