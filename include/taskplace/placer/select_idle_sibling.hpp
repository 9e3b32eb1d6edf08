// taskplace/placer/select_idle_sibling.hpp: from the affine step's target,
// find an idle CPU that shares its cache.
//
// Kernel analogue: select_idle_sibling() as of v6.x: target, prev,
// recent_used_cpu (v4.16), select_idle_smt on prev's core (v5.13),
// select_idle_core / select_idle_cpu over the target's allowed LLC CPUs
// with the SIS_UTIL scan budget (v6.0; the walk: detail/llc_walk.hpp), plus SIS_CACHE's
// reservation filter (Chen 2023, never merged) when a CacheHotReservation is
// configured.
//
//   auto budget = taskplace::sis_util_budget(56, 50);   // 36 CPUs at 50% busy
//   SearchResult r = IdleSiblingSearch{}.search(input);
#pragma once

#include "taskplace/detail/config.hpp"

#include <algorithm>
#include <cstdint>
#include <ranges>
#include <type_traits>

#include "taskplace/concepts.hpp"
#include "taskplace/detail/llc_walk.hpp"
#include "taskplace/detail/topology_blocks.hpp"
#include "taskplace/placer/wake_affine.hpp"
#include "taskplace/tunables.hpp"
#include "taskplace/types.hpp"

namespace taskplace {

// Which branch produced the final CPU of a wake-up.
enum class WakeReason : std::uint8_t {
  idle_target,        // the target was idle
  idle_prev,          // prev was idle and shares cache with the target
  idle_recent,        // the recently used CPU was idle and shares cache
  idle_core,          // a whole idle core in the target's LLC
  idle_scan,          // an idle CPU found by the bounded LLC scan
  hot_fallback,       // every idle CPU seen was reserved: the first of them
  target_busy,        // nothing idle found within budget: the target
  no_search,          // the search is disabled: the target
  affinity_fallback,  // the CPU found was not allowed: first allowed CPU
  affinity_empty,     // the task allows no CPU: the target, mask ignored
  current_cpu,        // a hand-off (Wakeup::current_cpu): the waking CPU, no search
  wake_on_current,    // WakeOnCurrent: a short pair that wakes each other, the waking CPU, no search
  idle_smt_sibling,   // an idle SMT sibling of prev in the target's LLC (kernel select_idle_smt)
};

constexpr const char* to_string(WakeReason r) noexcept {
  switch (r) {
    case WakeReason::idle_target: return "idle_target";
    case WakeReason::idle_prev: return "idle_prev";
    case WakeReason::idle_recent: return "idle_recent";
    case WakeReason::idle_core: return "idle_core";
    case WakeReason::idle_scan: return "idle_scan";
    case WakeReason::hot_fallback: return "hot_fallback";
    case WakeReason::target_busy: return "target_busy";
    case WakeReason::no_search: return "no_search";
    case WakeReason::affinity_fallback: return "affinity_fallback";
    case WakeReason::affinity_empty: return "affinity_empty";
    case WakeReason::current_cpu: return "current_cpu";
    case WakeReason::wake_on_current: return "wake_on_current";
    case WakeReason::idle_smt_sibling: return "idle_smt_sibling";
  }
  return "unknown";
}

// Every CPU allowed (the default affinity).
struct AnyCpu {
  constexpr bool operator()(CpuId) const noexcept { return true; }
};
static_assert(CpuFilter<AnyCpu>);

// The SIS_UTIL budget: how many CPUs of an LLC of `llc_size` CPUs the scan
// may look at when the LLC is `util_pct` percent busy. The kernel's
// reasoning: the busier the LLC, the less likely a scan finds an idle CPU,
// so the cost of looking must shrink faster than linearly:
// llc_size * (1 - (1.17 u)^2), reaching zero at about 85%.
// Complexity: O(1), integer arithmetic only.
constexpr std::uint32_t sis_util_budget(std::uint32_t llc_size, std::uint32_t util_pct) noexcept {
  const std::uint64_t u = std::min<std::uint32_t>(util_pct, 100);
  const std::uint64_t x = tunables::sis_util_scale_pct * u;  // 1.17u in units of 1e-4
  const std::uint64_t x2 = x * x;                             // in units of 1e-8
  constexpr std::uint64_t one = 100'000'000;
  if (x2 >= one) return 0;
  return static_cast<std::uint32_t>(std::uint64_t{llc_size} * (one - x2) / one);
}

struct SearchResult {
  CpuId cpu;
  WakeReason reason;
  std::uint32_t scanned = 0;            // CPUs the LLC walk visited, as the kernel's budget counts
                                        // them: allowed ones only, one per core tested in core mode
  std::uint32_t reservation_skips = 0;  // idle CPUs skipped as reserved
};

namespace detail {
// True for a reservation policy that guards every path (records the owner).
template <class R>
constexpr bool reservation_owner_only() noexcept {
  if constexpr (requires { R::owner_only; }) {
    return R::owner_only;
  } else {
    return false;
  }
}
}  // namespace detail

// What the search reads. `Reservation` is void when none is configured;
// otherwise the machine state must provide reservation(c) (MachineState O3).
template <Topology T, MachineState M, CpuFilter F, class Reservation = void>
struct SearchInput {
  const T& topology;
  const M& machine;
  const F& allowed;
  const Reservation* reservation;  // nullptr iff Reservation is void
  TaskKey wakee;
  Nanoseconds now;
  CpuId target;
  CpuId prev;
  CpuId* recent;  // the wakee's recently used CPU: read, then set to prev
};

// The kernel's search (default). Kernel: select_idle_sibling(), v6.x, in
// its order: the target, prev, recent_used_cpu, select_idle_smt() on prev's
// core, then select_idle_cpu() over the target's LLC (docs/placement.md).
struct IdleSiblingSearch {
  static constexpr bool enabled = true;
  bool use_recent_cpu = true;    // kernel: recent_used_cpu, v4.16
  bool search_idle_core = true;  // kernel: select_idle_core on SMT machines
  bool use_idle_smt = true;      // kernel: select_idle_smt on prev's core, v5.13

  // Effects: looks for an idle, allowed CPU sharing the target's cache; sets
  // *in.recent to prev once past the prev check, as the kernel does. When
  // the idle-core hint sent the walk after a whole idle core and it found
  // none, clears the hint through the machine's clear_idle_core (O4), where
  // it has one (kernel: set_idle_cores(target, false)).
  // Returns: the CPU and the branch that found it; the target if none.
  // Complexity: O(1) fast paths and O(core size) for prev's siblings, then
  // a walk over the allowed CPUs of the LLC (O(LLC size) filter reads), of
  // at most `budget` steps (the SIS_UTIL budget, or every allowed CPU when
  // the machine hints an idle core), each of core_size reads in core mode.
  // Never O(cpu_count).
  // Thread-safety: const; machine-state reads may be stale.
  template <Topology T, MachineState M, CpuFilter F, class R>
  SearchResult search(const SearchInput<T, M, F, R>& in) const {
    const auto& t = in.topology;
    const auto& m = in.machine;
    constexpr bool reserving = !std::is_void_v<R>;
    auto reserved = [&](CpuId c) {
      if constexpr (reserving) {
        return in.reservation->reserved_against(m.reservation(c), in.wakee, in.now);
      } else {
        (void)c;
        return false;
      }
    };
    // Fast paths: the owner of a reservation reaches its CPU through prev;
    // only an owner-recording policy guards these paths as well.
    auto fast_ok = [&](CpuId c) {
      if (!m.is_idle(c) || !in.allowed(c)) return false;
      if constexpr (detail::reservation_owner_only<R>()) return !reserved(c);
      return true;
    };

    if (fast_ok(in.target)) return {in.target, WakeReason::idle_target};
    const bool prev_shares = detail::shares_cache(t, in.prev, in.target);
    if (in.prev != in.target && prev_shares && fast_ok(in.prev)) return {in.prev, WakeReason::idle_prev};

    const CpuId recent = *in.recent;
    *in.recent = in.prev;
    if (use_recent_cpu && recent < t.cpu_count() && recent != in.prev && recent != in.target &&
        detail::shares_cache(t, recent, in.target) && fast_ok(recent))
      return {recent, WakeReason::idle_recent};

    // Kernel: sched_smt_active(), then test_idle_cores(target). Without the
    // hint (MachineState O2) the core search runs, within the budget.
    const bool smt = search_idle_core && t.core_size(in.target) > 1;
    bool has_idle_core = smt;
    if constexpr (HasIdleCoreHint<M>) has_idle_core = smt && static_cast<bool>(m.has_idle_core(in.target));

    // Kernel: select_idle_smt(p, sd, prev): no idle core hinted and prev
    // shares the target's cache: an idle allowed sibling of prev in the
    // target's LLC, in ascending order, before the LLC walk and its budget.
    if (smt && use_idle_smt && !has_idle_core && prev_shares) {
      for (auto s : t.core_cpus(in.prev)) {
        const auto sib = static_cast<CpuId>(s);
        if (sib != in.prev && detail::shares_cache(t, sib, in.target) && fast_ok(sib))
          return {sib, WakeReason::idle_smt_sibling};
      }
    }

    // Kernel: select_idle_cpu(). SIS_UTIL's budget (nr_idle_scan): 0 means
    // an overloaded LLC and ends the search before any walk, idle-core hint
    // or not; else it bounds the CPU walk, not the core walk.
    SearchResult out{in.target, WakeReason::target_busy};
    const auto size = static_cast<std::uint32_t>(std::ranges::size(t.llc_cpus(in.target)));
    std::uint32_t budget = size;
    if constexpr (HasLlcUtilization<M>) {
      budget = sis_util_budget(size, static_cast<std::uint32_t>(m.llc_utilization_pct(in.target)));
      if (budget == 0) return out;
    }
    constexpr bool hinted = HasIdleCoreHint<M>;
    const std::uint32_t limit = has_idle_core && hinted ? size : budget;
    // The reservation guard covers the walk the budget allows (the whole
    // LLC when the hint widened it: Chen 2023 skips hot CPUs in the core
    // search and the CPU walk alike), HalveLong2023's share of it.
    std::uint32_t guarded = 0;
    if constexpr (reserving) guarded = R::scan_budget(limit);

    const detail::LlcWalk w = detail::walk_llc(t, m, in.allowed, in.target, has_idle_core, limit, guarded, reserved);
    out.scanned = w.walked;
    out.reservation_skips = w.skips;
    if (w.whole_core) {
      out.cpu = w.cpu;
      out.reason = WakeReason::idle_core;
      return out;
    }
    // Kernel: a hinted core walk that found no whole idle core clears the hint.
    if constexpr (HasIdleCoreClear<M>) {
      if (has_idle_core && hinted) m.clear_idle_core(in.target);
    }
    if (w.cpu != no_cpu) {
      out.cpu = w.cpu;
      out.reason = WakeReason::idle_scan;
    } else if constexpr (reserving) {
      if (R::fallback_to_hot_idle && w.hot != no_cpu) {
        out.cpu = w.hot;
        out.reason = WakeReason::hot_fallback;
      }
    }
    return out;
  }
};

static_assert(SearchPolicy<IdleSiblingSearch, detail::TopologyArchetype>);

// No search: the affine step's target is the answer (the 2.6.2x kernels).
struct NoSearch {
  static constexpr bool enabled = false;
};
static_assert(SearchPolicy<NoSearch, detail::TopologyArchetype>);

}  // namespace taskplace
