// taskplace/placer/llc_utilization.hpp: the SIS_UTIL input of a runtime's
// machine state (MachineState O1, llc_utilization_pct), sampled at most
// once a period for a whole LLC.
//
// Kernel analogue: update_idle_cpu_scan() (v6.0, 2022, SIS_UTIL). The kernel
// does not count an LLC's busy CPUs at each wake-up: the LLC's periodic
// load balance writes the scan budget (sd_llc_shared->nr_idle_scan) and
// every wake-up that reaches select_idle_cpu() reads that one word. A
// runtime that counted its workers at each wake-up would read a remote
// cache line per CPU of the LLC, over a hundred on a large server, on its
// hottest path; with one sample per LLC it reads one line, written once a
// period.
//
//   taskplace::LlcUtilizationSample sample;  // one per LLC (on its first CPU's worker)
//   auto pct = sample.read(topo.llc_cpus(c), [&](CpuId x) { return !is_idle(x); }, now, 4ms);
#pragma once

#include "taskplace/detail/config.hpp"

#include <atomic>
#include <concepts>
#include <cstdint>
#include <limits>
#include <ranges>

#include "taskplace/detail/math.hpp"
#include "taskplace/types.hpp"

namespace taskplace {

// The busy share of one LLC, in percent, and when it was taken. On a cache
// line of its own: every wake-up that scans the LLC reads it, and only
// the wake-up that takes a new sample writes it.
// Invariant: pct() is in [0, 100].
class alignas(64) LlcUtilizationSample {
 public:
  // Effects: returns the sample taken less than `period` before `now`;
  //   otherwise (none yet, `period` passed, `now` before the sample, or
  //   `now == Nanoseconds::max()`, the value for "no time") counts the
  //   CPUs of `llc` for which `busy(c)` holds, stores busy * 100 / all
  //   with `now` as its time, and returns it. An empty `llc` returns 0 and
  //   stores nothing. A period of zero or less samples at every call; one
  //   past nanoseconds' range (hours::max()) saturates: a sample for good.
  // Returns: the busy share in percent, 0..100.
  // Complexity: O(1) with a current sample; else one busy(c) per CPU of llc.
  // Thread-safety: any thread. Two calls that sample at once both store
  //   theirs; either is the LLC's (each counted the LLC at its own time).
  template <std::ranges::input_range R, class Busy>
    requires std::predicate<Busy&, CpuId>
  std::uint32_t read(R&& llc, Busy&& busy, Nanoseconds now, SaturatingNanoseconds period) {
    const std::int64_t at = at_.load(std::memory_order_relaxed);
    if (now != Nanoseconds::max() && now.count() >= at &&
        detail::elapsed(Nanoseconds{at}, now) < period)
      return pct_.load(std::memory_order_relaxed);
    std::uint64_t n_busy = 0, all = 0;
    for (auto x : llc) {
      ++all;
      n_busy += busy(static_cast<CpuId>(x)) ? 1u : 0u;
    }
    if (all == 0) return 0;
    const auto pct = static_cast<std::uint32_t>(n_busy * 100 / all);
    // Leave the line shared when the share did not move: only the time
    // is written then.
    if (pct_.load(std::memory_order_relaxed) != pct) pct_.store(pct, std::memory_order_relaxed);
    at_.store(now.count(), std::memory_order_relaxed);
    return pct;
  }

  // Returns: the last sample and its time (Nanoseconds::min() before the first).
  std::uint32_t pct() const noexcept { return pct_.load(std::memory_order_relaxed); }
  Nanoseconds taken_at() const noexcept { return Nanoseconds{at_.load(std::memory_order_relaxed)}; }

 private:
  std::atomic<std::uint32_t> pct_{0};
  std::atomic<std::int64_t> at_{std::numeric_limits<std::int64_t>::min()};
};

}  // namespace taskplace
