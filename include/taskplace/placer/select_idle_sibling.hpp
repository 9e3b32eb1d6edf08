// taskplace/placer/select_idle_sibling.hpp: from the affine step's target,
// find an idle CPU that shares its cache.
//
// Kernel analogue: select_idle_sibling() as of v6.x: target, prev,
// recent_used_cpu (v4.16), select_idle_core / select_idle_cpu over the
// target's LLC with the SIS_UTIL scan budget (v6.0), plus SIS_CACHE's
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
  std::uint32_t scanned = 0;            // CPUs the LLC scan looked at
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

// The kernel's search (default).
struct IdleSiblingSearch {
  static constexpr bool enabled = true;
  bool use_recent_cpu = true;    // kernel: recent_used_cpu, v4.16
  bool search_idle_core = true;  // kernel: select_idle_core on SMT machines

  // Effects: looks for an idle, allowed CPU sharing the target's cache; sets
  // *in.recent to prev once past the prev check, as the kernel does.
  // Returns: the CPU and the branch that found it; the target if none.
  // Complexity: O(1) fast paths, then at most `budget` CPUs (the SIS_UTIL
  // budget, or the whole LLC when the machine hints an idle core), each with
  // a core check of core_size reads on SMT machines. Never O(cpu_count).
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
    if (in.prev != in.target && detail::shares_cache(t, in.prev, in.target) && fast_ok(in.prev))
      return {in.prev, WakeReason::idle_prev};

    const CpuId recent = *in.recent;
    *in.recent = in.prev;
    if (use_recent_cpu && recent < t.cpu_count() && recent != in.prev && recent != in.target &&
        detail::shares_cache(t, recent, in.target) && fast_ok(recent))
      return {recent, WakeReason::idle_recent};

    const auto llc = t.llc_cpus(in.target);
    const auto size = static_cast<std::uint32_t>(std::ranges::size(llc));
    std::uint32_t budget = size;
    if constexpr (HasLlcUtilization<M>)
      budget = sis_util_budget(size, static_cast<std::uint32_t>(m.llc_utilization_pct(in.target)));

    bool core_mode = search_idle_core && t.core_size(in.target) > 1;
    std::uint32_t limit = budget;
    if constexpr (HasIdleCoreHint<M>) {
      // The hint says whether a whole idle core exists; if so the kernel
      // looks through the whole LLC for it, else it skips the core search.
      if (core_mode) {
        if (m.has_idle_core(in.target)) limit = size;
        else core_mode = false;
      }
    }
    // The reservation guard covers the scan actually made: the whole LLC
    // when the hint widened it (Chen 2023 skips hot CPUs in the core search
    // and the CPU scan alike), HalveLong2023's share of it.
    std::uint32_t reservation_limit = 0;
    if constexpr (reserving) reservation_limit = R::scan_budget(limit);

    SearchResult out{in.target, WakeReason::target_busy};
    if (limit == 0 || size == 0) return out;

    const auto begin = std::ranges::begin(llc);
    const std::uint32_t pos = detail::lower_bound_index(llc, static_cast<CpuId>(in.target));
    CpuId first_idle = no_cpu;
    CpuId first_hot = no_cpu;
    // Walk the LLC from the CPU after the target, wrapping (kernel
    // for_each_cpu_wrap), without a division per step.
    std::uint32_t at = pos + 1 >= size ? 0 : pos + 1;
    for (std::uint32_t i = 0; i < limit; ++i, at = at + 1 == size ? 0 : at + 1) {
      const CpuId c = static_cast<CpuId>(begin[at]);
      ++out.scanned;
      const bool guard = i < reservation_limit;
      if (core_mode) {
        const auto core = t.core_cpus(c);
        if (static_cast<CpuId>(*std::ranges::begin(core)) == c) {
          bool whole = true;
          for (auto s : core) {
            const auto sib = static_cast<CpuId>(s);
            if (!m.is_idle(sib) || !in.allowed(sib) || (guard && reserved(sib))) {
              whole = false;
              break;
            }
          }
          if (whole) {
            out.cpu = c;
            out.reason = WakeReason::idle_core;
            return out;
          }
        }
      }
      if (first_idle == no_cpu && m.is_idle(c) && in.allowed(c)) {
        if (guard && reserved(c)) {
          ++out.reservation_skips;
          if (first_hot == no_cpu) first_hot = c;
        } else {
          first_idle = c;
          if (!core_mode) break;
        }
      }
    }
    if (first_idle != no_cpu) {
      out.cpu = first_idle;
      out.reason = WakeReason::idle_scan;
    } else if constexpr (reserving) {
      if (R::fallback_to_hot_idle && first_hot != no_cpu) {
        out.cpu = first_hot;
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
