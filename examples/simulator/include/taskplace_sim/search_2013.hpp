// taskplace_sim/search_2013.hpp: the idle-sibling search of the v3.10
// kernel that seed 000 measured against, as a Search policy for the
// library's WakePlacer (an example of a user-written policy).
//
// Kernel analogue: select_idle_sibling() of v3.9-v3.12: the target if it is
// idle and is the waking CPU or prev; otherwise, level by level below the
// LLC, the first group (core, then CPU) of the target's LLC that is wholly
// idle; otherwise the target. Unlike today's search, prev is not looked at
// when the affine step picked the waking CPU, and there is no recent_cpu
// and no utilisation budget.
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
    taskplace::SearchResult out{in.target, WakeReason::target_busy};
    // Groups of the LLC level are cores: the first wholly idle one.
    for (auto x : t.llc_cpus(in.target)) {
      const auto c = static_cast<CpuId>(x);
      const auto core = t.core_cpus(c);
      if (static_cast<CpuId>(*std::ranges::begin(core)) != c) continue;
      ++out.scanned;
      bool whole = true;
      for (auto s : core) {
        const auto sib = static_cast<CpuId>(s);
        if (sib == in.target || !m.is_idle(sib) || !in.allowed(sib)) {
          whole = false;
          break;
        }
      }
      if (whole) return {c, WakeReason::idle_core, out.scanned};
    }
    // Groups of the SMT level are single CPUs of the target's core.
    for (auto x : t.core_cpus(in.target)) {
      const auto c = static_cast<CpuId>(x);
      if (c != in.target && m.is_idle(c) && in.allowed(c)) return {c, WakeReason::idle_scan, out.scanned};
    }
    return out;
  }
};

}  // namespace taskplace_sim
