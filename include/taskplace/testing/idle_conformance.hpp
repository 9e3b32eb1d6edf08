// taskplace/testing/idle_conformance.hpp: conformance checks for the
// newidle avg_idle estimators and the cache-hot reservation variants,
// usable from any test framework.
//
// Provides check_avg_idle_estimator<E>(), check_reservation_variant<V>()
// and check_attempt_policy<A>().
// Each returns the invariants the model breaks (concepts.hpp numbers them);
// an empty vector means it conforms. Kernel analogue: none; the invariants
// are what newidle_balance() (avg_idle against the balance cost, Low 2013)
// and SIS_CACHE's select_idle_cpu() filter (Chen 2023) rely on.
//
//   auto v = taskplace::testing::check_avg_idle_estimator<MyEstimator>();
//   assert(v.empty());
#pragma once

#include "taskplace/detail/config.hpp"

#include <array>
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "taskplace/concepts.hpp"
#include "taskplace/testing/violation.hpp"
#include "taskplace/types.hpp"

namespace taskplace::testing {

namespace detail {

// Durations worth probing, in ns: zero, the rounding edges of update_avg's
// /8, the scheduler's working range (1 us to 1 s around migration_cost =
// 500 us) and the top of the 64-bit range.
inline constexpr std::int64_t ns_max = INT64_MAX;
inline constexpr std::array<std::int64_t, 14> idle_samples{
    0, 1, 7, 8, 9, 1'000, 50'000, 499'999, 500'000, 1'000'000, 2'500'000,
    1'000'000'000, ns_max / 2, ns_max};

// Sleep lengths for reservation variants stay below 2^40 ns (about 18
// minutes) and the clock below 2^61, so now + sleep_avg is exact.
inline constexpr std::array<std::int64_t, 10> sleep_samples{
    0, 1, 7, 8, 50'000, 250'000, 499'999, 500'000, 10'000'000, std::int64_t{1} << 40};
inline constexpr std::array<std::int64_t, 4> clock_samples{
    0, 1, 1'000'000'000, std::int64_t{1} << 61};

inline std::string ns(std::int64_t v) { return std::to_string(v) + "ns"; }

}  // namespace detail

// Checks an AvgIdleEstimator over samples^3 of (avg_idle, delta, cap), all
// non-negative, from 0 to INT64_MAX:
//   I1 0 <= update(avg, delta, cap) <= max(cap, avg);
//   and update is deterministic (two calls agree).
// Returns: the violations, cpu = no_cpu. Complexity: 14^3 = 2744 calls.
// Thread-safety: pure.
template <AvgIdleEstimator E>
std::vector<Violation> check_avg_idle_estimator() {
  std::vector<Violation> out;
  for (const auto a : detail::idle_samples)
    for (const auto d : detail::idle_samples)
      for (const auto c : detail::idle_samples) {
        const Nanoseconds avg{a}, delta{d}, cap{c};
        const Nanoseconds r = E::update(avg, delta, cap);
        const Nanoseconds hi = cap > avg ? cap : avg;
        const std::string call = "update(" + detail::ns(a) + ", " + detail::ns(d) + ", " +
                                 detail::ns(c) + ") = " + detail::ns(r.count());
        if (r < Nanoseconds{0})
          out.push_back({no_cpu, "AvgIdleEstimator I1: result >= 0", call});
        if (r > hi)
          out.push_back({no_cpu, "AvgIdleEstimator I1: result <= max(cap, avg_idle)", call});
        if (E::update(avg, delta, cap) != r)
          out.push_back({no_cpu, "AvgIdleEstimator: update is deterministic",
                         call + ", then a different value"});
      }
  return out;
}

// Checks a SleepReservationVariant:
//   - averages are non-negative: update_sleep_avg(avg, sample, m) >= 0 for
//     non-negative inputs (avg, sample in sleep_samples, m in {1 ns, 500 us,
//     1 s});
//   I1 a fresh reservation never outlives now + sleep_avg:
//     reserve_until(h, now, s) <= now + s for every h <= now + s (h = 0,
//     now, now + s, and the clock's epoch);
//   - when nothing later is pending (h <= now), the reservation covers the
//     present: reserve_until(h, now, s) >= now;
//   - R4 scan_share_den >= 1.
// Returns: the violations, cpu = no_cpu. Complexity: a few hundred calls.
// Thread-safety: pure.
template <SleepReservationVariant V>
std::vector<Violation> check_reservation_variant() {
  using namespace std::chrono_literals;
  std::vector<Violation> out;
  if (static_cast<std::uint32_t>(V::scan_share_den) < 1u)
    out.push_back({no_cpu, "SleepReservationVariant R4: scan_share_den >= 1",
                   "scan_share_den = " + std::to_string(static_cast<std::uint32_t>(V::scan_share_den))});
  const std::array<Nanoseconds, 3> costs{Nanoseconds{1}, Nanoseconds{500us}, Nanoseconds{1s}};
  for (const auto a : detail::sleep_samples)
    for (const auto x : detail::sleep_samples)
      for (const auto m : costs) {
        const Nanoseconds r = V::update_sleep_avg(Nanoseconds{a}, Nanoseconds{x}, m);
        if (r < Nanoseconds{0})
          out.push_back({no_cpu, "SleepReservationVariant: sleep_avg >= 0",
                         "update_sleep_avg(" + detail::ns(a) + ", " + detail::ns(x) + ", " +
                             detail::ns(m.count()) + ") = " + detail::ns(r.count())});
      }
  for (const auto now_ns : detail::clock_samples)
    for (const auto s_ns : detail::sleep_samples) {
      const Nanoseconds now{now_ns}, s{s_ns};
      const Nanoseconds fresh = now + s;
      const std::array<Nanoseconds, 4> olds{Nanoseconds{0}, now, fresh, now - (now_ns > 0 ? Nanoseconds{1} : Nanoseconds{0})};
      for (const auto h : olds) {
        const Nanoseconds r = V::reserve_until(h, now, s);
        const std::string call = "reserve_until(" + detail::ns(h.count()) + ", " + detail::ns(now_ns) +
                                 ", " + detail::ns(s_ns) + ") = " + detail::ns(r.count());
        if (r > fresh)
          out.push_back({no_cpu, "SleepReservationVariant I1: reserve_until(h, now, s) <= now + s when h <= now + s",
                         call});
        if (h <= now && r < now)
          out.push_back({no_cpu, "SleepReservationVariant: a fresh reservation covers now", call});
      }
    }
  return out;
}

// Checks a NewidleAttemptPolicy over a fixed script: states for 1 and for
// max_levels levels, 65536 calls cycling through the levels, each level
// tried pulling on a fixed pattern (level 0 always finds work, the last
// never, the others every third try), the clock moving 10 us a call:
//   I1 with a given seed, the answers are a function of the calls made:
//      two states made alike and driven alike answer alike;
//   I2 no level is shut off for good: every level is tried at least once
//      in the second half of the script, long after the one that never
//      finds work has failed (the kernel's dice try even a level at ratio
//      0 twice in 1024 calls: about 8 times in the 4096 calls a level gets
//      there with 8 levels).
// Returns: the violations, cpu = no_cpu, the level in the detail.
// Complexity: 2 x 2 x 65536 roll calls. Thread-safety: as A.
template <NewidleAttemptPolicy A>
std::vector<Violation> check_attempt_policy(const A& policy = {}) {
  std::vector<Violation> out;
  constexpr std::uint32_t calls = 65536;
  for (const std::uint32_t levels : {1u, static_cast<std::uint32_t>(max_levels)}) {
    auto a = policy.make_state(levels, Nanoseconds{0}, 1);
    auto b = policy.make_state(levels, Nanoseconds{0}, 1);
    std::vector<std::uint32_t> tried(levels, 0), tried_late(levels, 0);
    bool diverged = false;
    for (std::uint32_t i = 0; i < calls; ++i) {
      const std::uint32_t level = i % levels;
      const Nanoseconds now{static_cast<std::int64_t>(i) * 10'000};
      const std::uint32_t wa = policy.roll(a, level, now);
      const std::uint32_t wb = policy.roll(b, level, now);
      if (wa != wb && !diverged) {
        diverged = true;
        out.push_back({no_cpu, "NewidleAttemptPolicy I1: the same seed and calls give the same answers",
                       "call " + std::to_string(i) + ", level " + std::to_string(level) + ": roll gave " +
                           std::to_string(wa) + " and " + std::to_string(wb)});
      }
      if (wa == 0) continue;
      ++tried[level];
      if (i >= calls / 2) ++tried_late[level];
      const bool pulled = level == 0 || (level + 1 < levels && tried[level] % 3 == 0);
      policy.record(a, level, pulled, wa, now);
      if (wb != 0) policy.record(b, level, pulled, wb, now);
    }
    for (std::uint32_t l = 0; l < levels; ++l)
      if (tried_late[l] == 0)
        out.push_back({no_cpu, "NewidleAttemptPolicy I2: no level is shut off for good",
                       "level " + std::to_string(l) + " of " + std::to_string(levels) + " not tried in the last " +
                           std::to_string(calls / 2) + " calls (" + std::to_string(tried[l]) + " tries before)"});
  }
  return out;
}

}  // namespace taskplace::testing
