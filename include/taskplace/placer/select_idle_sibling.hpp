// taskplace/placer/select_idle_sibling.hpp: from the affine step's target,
// find an idle CPU that shares its cache.
//
// Kernel analogue: select_idle_sibling() as of v6.x: target, prev,
// recent_used_cpu (v4.16), select_idle_smt on prev's core (v5.13),
// select_idle_core / select_idle_cpu over the target's allowed LLC CPUs
// with the SIS_UTIL scan budget (v6.0; the walk: detail/llc_walk.hpp), the
// target's cluster first and an idle prev or recent CPU outside it kept as
// the last resort (v6.8, cpus_share_resources()), the idle-core steps gated
// machine-wide (sched_smt_active()), plus SIS_CACHE's reservation filter
// (Chen 2023, never merged) when a CacheHotReservation is configured.
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
  waker_blocks,       // CostGate (a): the waker sleeps before a move pays, the waking CPU, no search
  short_work,         // CostGate (b): the wakee's work is shorter than a move costs, the waking CPU
  busy_short,         // CostGate (c): no idle CPU found and the wakee's run is shorter than a move:
                      // the waking CPU, not the busy target
  costly_idle,        // CostGate (d): the idle CPU found costs more to wake than the wakee waits on
                      // the waking CPU: the waking CPU
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
    case WakeReason::waker_blocks: return "waker_blocks";
    case WakeReason::short_work: return "short_work";
    case WakeReason::busy_short: return "busy_short";
    case WakeReason::costly_idle: return "costly_idle";
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

// What the search knows of the whole machine, fixed with the topology:
// computed once (WakePlacer does at construction), never per wake-up.
struct SearchFacts {
  bool smt_active = false;      // some core has two or more CPUs (kernel sched_smt_active())
  bool cluster_active = false;  // some CPU has a cluster level (kernel sched_cluster_active)
};

// Returns: the facts of topology t.
// Complexity: O(cpu_count * levels below the cluster level).
template <Topology T>
SearchFacts search_facts(const T& t) {
  SearchFacts f;
  const auto n = static_cast<CpuId>(t.cpu_count());
  for (CpuId c = 0; c < n && !(f.smt_active && f.cluster_active); ++c) {
    if (t.core_size(c) > 1) f.smt_active = true;
    if (!f.cluster_active && detail::cluster_level(t, c) != detail::no_level) f.cluster_active = true;
  }
  return f;
}

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
  // The topology's facts (search_facts(topology)); null: the search
  // computes them, O(cpu_count), in each call.
  const SearchFacts* facts = nullptr;
};

// The kernel's search (default). Kernel: select_idle_sibling(), v6.x, in
// its order: the target, prev, recent_used_cpu, select_idle_smt() on prev's
// core, then select_idle_cpu() over the target's LLC, its cluster first,
// then an idle prev or recent CPU that was outside the target's cluster
// (docs/placement.md).
struct IdleSiblingSearch {
  static constexpr bool enabled = true;
  bool use_recent_cpu = true;    // kernel: recent_used_cpu, v4.16
  bool search_idle_core = true;  // kernel: select_idle_core on SMT machines (sched_smt_active())
  bool use_idle_smt = true;      // kernel: select_idle_smt on prev's core, v5.13
  // kernel (v6.8, SIS with clusters): where some CPU has a cluster level,
  // an idle prev or recent CPU is taken at once only when it shares the
  // target's resources (cpus_share_resources()), else kept as the last
  // resort, and select_idle_cpu() walks the target's cluster first.
  // false: the search of v6.0-v6.7 (sis_cluster::LlcOnly2022).
  bool cluster_first = true;

  // Effects: looks for an idle, allowed CPU sharing the target's cache; sets
  // *in.recent to prev once past the prev check, as the kernel does. When
  // the idle-core hint sent the walk after a whole idle core and it found
  // none, clears the hint through the machine's clear_idle_core (O4), where
  // it has one (kernel: set_idle_cores(target, false)).
  // Returns: the CPU and the branch that found it; the target if none.
  // Complexity: O(1) fast paths and O(core size) for prev's siblings, then
  // a walk over the allowed CPUs of the LLC (O(LLC size) filter reads), of
  // at most `budget` steps (the SIS_UTIL budget, or every allowed CPU when
  // the machine hints an idle core), each of core_size reads in core mode;
  // O(levels) for the cluster steps. Never O(cpu_count) when in.facts is
  // given (without it, search_facts() is computed once in the call).
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

    const SearchFacts facts = in.facts != nullptr ? *in.facts : search_facts(t);
    // Kernel: sched_cluster_active and cpus_share_resources() (v6.8).
    const bool clustered = cluster_first && facts.cluster_active;
    auto near = [&](CpuId c) {
      return !clustered || detail::resource_id(t, c) == detail::resource_id(t, in.target);
    };
    const bool prev_shares = detail::shares_cache(t, in.prev, in.target);
    // An idle prev or recent CPU outside the target's cluster: the last
    // resort, after select_idle_cpu() (kernel: prev_aff, recent_used_cpu).
    CpuId prev_aff = no_cpu;
    if (in.prev != in.target && prev_shares && fast_ok(in.prev)) {
      if (near(in.prev)) return {in.prev, WakeReason::idle_prev};
      prev_aff = in.prev;
    }

    CpuId recent = *in.recent;
    *in.recent = in.prev;
    if (use_recent_cpu && recent < t.cpu_count() && recent != in.prev && recent != in.target &&
        detail::shares_cache(t, recent, in.target) && fast_ok(recent)) {
      if (near(recent)) return {recent, WakeReason::idle_recent};
    } else {
      recent = no_cpu;
    }
    auto last_resort = [&](SearchResult r) {
      if (r.reason != WakeReason::target_busy) return r;
      if (prev_aff != no_cpu) {
        r.cpu = prev_aff;
        r.reason = WakeReason::idle_prev;
      } else if (recent != no_cpu) {
        r.cpu = recent;
        r.reason = WakeReason::idle_recent;
      }
      return r;
    };

    // Kernel: sched_smt_active() (any core of the machine with siblings,
    // not the target's), then test_idle_cores(target). Without the hint
    // (MachineState O2) the core search runs, within the budget.
    const bool smt = search_idle_core && facts.smt_active;
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
    // an overloaded LLC and ends the walk before it starts, idle-core hint
    // or not; else it bounds the CPU walk, not the core walk.
    SearchResult out{in.target, WakeReason::target_busy};
    const auto size = static_cast<std::uint32_t>(std::ranges::size(t.llc_cpus(in.target)));
    std::uint32_t budget = size;
    if constexpr (HasLlcUtilization<M>) {
      budget = sis_util_budget(size, static_cast<std::uint32_t>(m.llc_utilization_pct(in.target)));
      if (budget == 0) return last_resort(out);
    }
    constexpr bool hinted = HasIdleCoreHint<M>;
    const std::uint32_t limit = has_idle_core && hinted ? size : budget;
    // The reservation guard covers the walk the budget allows (the whole
    // LLC when the hint widened it: Chen 2023 skips hot CPUs in the core
    // search and the CPU walk alike), HalveLong2023's share of it.
    std::uint32_t guarded = 0;
    if constexpr (reserving) guarded = R::scan_budget(limit);

    // Kernel (v6.8): the LLC domain's first group is the target's cluster
    // (SD_CLUSTER): walked first.
    const std::uint32_t cluster = clustered ? detail::cluster_level(t, in.target) : detail::no_level;
    const detail::LlcWalk w =
        detail::walk_llc(t, m, in.allowed, in.target, has_idle_core, limit, guarded, reserved, cluster);
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
    return last_resort(out);
  }
};

static_assert(SearchPolicy<IdleSiblingSearch, detail::TopologyArchetype>);

namespace sis_cluster {
// The search of v6.0-v6.7: SIS_UTIL, no cluster walk; an idle prev or
// recent CPU anywhere in the target's LLC is taken at once. A Search
// member for the traits of those kernels.
struct LlcOnly2022 : IdleSiblingSearch {
  constexpr LlcOnly2022() noexcept { cluster_first = false; }
};
}  // namespace sis_cluster
static_assert(SearchPolicy<sis_cluster::LlcOnly2022, detail::TopologyArchetype>);

// No search: the affine step's target is the answer (the 2.6.2x kernels).
struct NoSearch {
  static constexpr bool enabled = false;
};
static_assert(SearchPolicy<NoSearch, detail::TopologyArchetype>);

}  // namespace taskplace
