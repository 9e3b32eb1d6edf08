// Fault class: counters and durations at their limits. Flips saturate at
// UINT32_MAX, the wide rules compute exact 64-bit products, costs near
// INT64 max saturate instead of overflowing.
#include <catch2/catch.hpp>

#include <chrono>
#include <cstdint>
#include <limits>

#include "taskplace/policy/cache_hot_reservation.hpp"
#include "taskplace/policy/flip_counter.hpp"
#include "taskplace/policy/llc_factor.hpp"
#include "taskplace/policy/newidle_cost_tracker.hpp"
#include "taskplace/policy/wide_detector.hpp"

using namespace taskplace;
using namespace std::chrono_literals;

namespace {
constexpr std::uint32_t u32max = std::numeric_limits<std::uint32_t>::max();
constexpr Nanoseconds tmax = Nanoseconds::max();
}  // namespace

TEMPLATE_TEST_CASE("flips saturate at UINT32_MAX instead of wrapping", "[faults][limits][flip_counter]",
                   flip_storage::Plain, flip_storage::RelaxedAtomic) {
  FlipCounter<flip_decay::Halve2014, TestType> f;
  typename FlipCounter<flip_decay::Halve2014, TestType>::state s;
  s.flips.store(u32max - 1);
  f.record(s, 1, 0ns);
  CHECK(f.flips(s) == u32max);
  f.record(s, 2, 0ns);
  f.record(s, 3, 0ns);
  CHECK(f.flips(s) == u32max);  // stays until a decay
  f.record(s, 3, 2s);           // one decay: UINT32_MAX >> 1
  CHECK(f.flips(s) == u32max / 2);
}

TEST_CASE("the wide rules stay exact for 32-bit extremes", "[faults][limits][wide_detector]") {
  // f * lo = UINT32_MAX^2 needs 64 bits; in 32 it would wrap to 1 and say wide.
  CHECK_FALSE(wide::Symmetric2015::wide(u32max, u32max, u32max));
  CHECK_FALSE(wide::Symmetric2015::wide(u32max, 1, u32max));  // lo = 1 < f = UINT32_MAX
  CHECK_FALSE(wide::Symmetric2015::wide(u32max, 1, 2));  // lo = 1 < f = 2
  CHECK(wide::Symmetric2015::wide(u32max, 2, 2));
  CHECK_FALSE(wide::OneSided2013::wide(u32max, u32max, 2));  // w > 2 * e is false
  CHECK(wide::MasterOnly2017::wide(0, 0, u32max));       // Fleming 2017 caveat: 0 >= f * 0
  CHECK(wide::OneSided2013::wide(100, 2, 0) == wide::OneSided2013::wide(100, 2, 1));  // factor 0 reads as 1
}

TEST_CASE("costs near INT64 max saturate the CPU-wide cost", "[faults][limits][newidle_cost_tracker]") {
  NewidleCostTracker<> t;
  auto s = t.make_state(3, 0ns);
  t.record_cost(s, 0, tmax - 1ns, 0ns);
  t.record_cost(s, 1, tmax - 1ns, 0ns);
  t.record_cost(s, 2, -5s, 0ns);  // negative reads as zero
  CHECK(t.level_cost(s, 2) == 0ns);
  CHECK(t.cpu_cost(s) == tmax);  // the sum saturates
  t.idle_start(s, 0ns);
  t.idle_end(s, tmax);  // cap = 2 * tmax saturates to tmax
  // avg_idle starts at 2 * 500 us and moves an eighth of the way to the
  // capped sample: 1 ms + (tmax - 1 ms) / 8.
  CHECK(t.avg_idle(s) == 1'000'000ns + (tmax - 1'000'000ns) / 8);
  CHECK_FALSE(t.should_balance(s));  // about tmax / 8 against level 0's tmax - 1 ns
  CHECK(t.may_visit_level(s, 1, tmax) == false);  // spent + cost saturates above avg_idle
}

TEST_CASE("a migration cost near INT64 max does not overflow the initial state", "[faults][limits][newidle_cost_tracker]") {
  NewidleCostTracker<> t{.migration_cost = tmax};
  const auto s = t.make_state(1, 0ns);
  CHECK(t.avg_idle(s) == tmax);  // 2 * tmax saturates
  CHECK(t.cpu_cost(s) == tmax);
  NewidleCostTracker<> neg{.migration_cost = -1s};
  const auto n = neg.make_state(1, 0ns);
  CHECK(neg.avg_idle(n) == 0ns);  // negative reads as zero
  CHECK(neg.cpu_cost(n) == 0ns);
}

TEST_CASE("too many levels is a checked precondition", "[faults][limits][newidle_cost_tracker]") {
  NewidleCostTracker<> t;
  CHECK_THROWS_AS(t.make_state(max_levels + 1, 0ns), PreconditionError);
  auto s = t.make_state(2, 0ns);
  CHECK_THROWS_AS(t.record_cost(s, 2, 1us, 0ns), PreconditionError);
  CHECK_THROWS_AS(t.may_visit_level(s, 2, 0ns), PreconditionError);
  CHECK(t.level_cost(s, 7) == 0ns);  // reading past the levels is defined: zero
}

TEST_CASE("a sleep of INT64 max is a long sleep, not a negative one", "[faults][limits][cache_hot_reservation]") {
  CacheHotReservation<sis_cache::EverySleep2023> r;  // averages every sleep
  CacheHotReservation<sis_cache::EverySleep2023>::task_state task{.last_dequeue = Nanoseconds::min() + 1ns,
                                                           .sleep_avg = 0ns};
  r.on_wakeup(task, tmax);  // 2^64 - 2 ns saturates to tmax: avg = tmax / 8
  CHECK(task.sleep_avg == Nanoseconds{tmax.count() / 8});
}
