// Fault class: counters and durations at their limits. Flips saturate at
// UINT32_MAX, the wide rules compute exact 64-bit products, costs near
// INT64 max saturate instead of overflowing; a std::chrono duration that
// does not fit nanoseconds saturates wherever a user sets one.
#include <catch2/catch.hpp>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <limits>
#include <ratio>

#include "taskplace/clock.hpp"
#include "taskplace/placer/wake_affine.hpp"
#include "taskplace/policy/cache_hot_reservation.hpp"
#include "taskplace/policy/flip_counter.hpp"
#include "taskplace/policy/llc_factor.hpp"
#include "taskplace/policy/newidle_cost_tracker.hpp"
#include "taskplace/policy/task_hot.hpp"
#include "taskplace/policy/wide_detector.hpp"

using namespace taskplace;
using namespace std::chrono_literals;

namespace {
constexpr std::uint32_t u32max = std::numeric_limits<std::uint32_t>::max();
constexpr Nanoseconds tmax = Nanoseconds::max();
constexpr Nanoseconds tmin = Nanoseconds::min();
constexpr std::int64_t i64max = std::numeric_limits<std::int64_t>::max();
constexpr std::int64_t i64min = std::numeric_limits<std::int64_t>::min();
using std::chrono::duration;
using std::chrono::hours;
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
  CacheHotReservation<sis_cache::EverySleep2023>::task_state task{
      .last_dequeue = Nanoseconds::min() + 1ns, .sleep_avg = 0ns, .asleep = true};
  r.on_wakeup(task, tmax);  // 2^64 - 2 ns saturates to tmax: avg = tmax / 8
  CHECK(task.sleep_avg == Nanoseconds{tmax.count() / 8});
}

// --- std::chrono durations that do not fit nanoseconds ---------------------

TEST_CASE("saturating_ns converts every duration, saturating at the ends of the range",
          "[faults][limits][types]") {
  // hours::max() is 2^63 - 1 hours: 3.6e12 times too many nanoseconds.
  static_assert(saturating_ns(hours::max()) == tmax);
  static_assert(saturating_ns(hours::min()) == tmin);
  static_assert(saturating_ns(hours{2'562'047}) == hours{2'562'047});  // fits: 9.22e18 ns
  static_assert(saturating_ns(hours{2'562'048}) == tmax);              // 2^63 ns is 2'562'047.79 h
  static_assert(saturating_ns(std::chrono::seconds{-3}) == -3s);
  static_assert(saturating_ns(Nanoseconds::max()) == tmax);
  // A period of 1/3 s: 10^9 / 3 ns a tick, rounded toward zero as duration_cast does.
  static_assert(saturating_ns(duration<std::int64_t, std::ratio<1, 3>>{1}) == 333'333'333ns);
  static_assert(saturating_ns(duration<std::int64_t, std::ratio<1, 3>>{-1}) == -333'333'333ns);
  static_assert(saturating_ns(duration<std::int64_t, std::ratio<1, 3>>{i64max}) == tmax);
  // Finer than nanoseconds, and unsigned counts.
  static_assert(saturating_ns(duration<std::int64_t, std::pico>{1'999}) == 1ns);
  constexpr auto u64max = std::numeric_limits<std::uint64_t>::max();
  static_assert(saturating_ns(duration<std::uint64_t, std::nano>{u64max}) == tmax);
  // Floating point: 1e300 s, infinities, NaN (0: a NaN says nothing).
  CHECK(saturating_ns(duration<double>{1e300}) == tmax);
  CHECK(saturating_ns(duration<double>{-1e300}) == tmin);
  CHECK(saturating_ns(duration<double>{INFINITY}) == tmax);
  CHECK(saturating_ns(duration<double>{-INFINITY}) == tmin);
  CHECK(saturating_ns(duration<double>{NAN}) == 0ns);
  CHECK(saturating_ns(duration<double>{1.5}) == 1'500'000'000ns);
  CHECK(saturating_ns(duration<double, std::milli>{-0.0000015}) == -1ns);  // -1.5 ns, toward zero
}

TEST_CASE("saturating_add adds a duration to a time, saturating at the ends of the range",
          "[faults][limits][types]") {
  // Inside the range: the exact sum, either sign.
  static_assert(saturating_add(5s, 3ms) == 5'003'000'000ns);
  static_assert(saturating_add(5s, -7s) == -2s);
  static_assert(saturating_add(tmax - 1ns, 1ns) == tmax);  // the top itself is no overflow
  // Past the top: max(), however far ("never" as a setting: a spin or a
  // timeout of Nanoseconds::max() from any now).
  static_assert(saturating_add(tmax, 1ns) == tmax);
  static_assert(saturating_add(1ns, tmax) == tmax);
  static_assert(saturating_add(tmax, tmax) == tmax);
  // Below the bottom: min().
  static_assert(saturating_add(tmin, -1ns) == tmin);
  static_assert(saturating_add(tmin + 1ns, tmin) == tmin);
  static_assert(saturating_add(tmax, tmin) == -1ns);  // 2^63 - 1 - 2^63: fits
  // At run time too, from a clock's now (std::chrono's now + max()
  // wraps to a time in the past there).
  ManualClock clock{Nanoseconds{1'000'000}};
  const Nanoseconds never = saturating_add(clock.now(), Nanoseconds::max());
  CHECK(never == tmax);
  CHECK(never > clock.now());
  clock.advance(10ms);
  CHECK(saturating_add(clock.now(), 2ms) == 13ms);
}

TEST_CASE("a non-negative duration's compound assignments clamp instead of overflowing",
          "[faults][limits][types]") {
  // Found by hand: p *= INT64_MAX became 0 (a wrapped product).
  NonNegativeNanoseconds p = 1h;
  p *= i64max;
  CHECK(p == tmax);
  p = 1h;
  p *= i64min;  // negative: 0, as every negative value
  CHECK(p == 0ns);
  p = tmax;
  p += 1ns;
  CHECK(p == tmax);
  p -= tmin;  // max - min overflows upward
  CHECK(p == tmax);
  p = 5s;
  p -= tmax;
  CHECK(p == 0ns);
  p = 5s;
  p /= 0;  // as long as it gets, not a trap
  CHECK(p == tmax);
  p = 0ns;
  p /= 0;
  CHECK(p == 0ns);
  NonNegativeNanoseconds q = hours::max();
  CHECK(q == tmax);
  q = hours::min();
  CHECK(q == 0ns);
}

TEST_CASE("a saturating duration's compound assignments saturate at both ends", "[faults][limits][types]") {
  SaturatingNanoseconds d = hours::max();
  CHECK(d == tmax);
  d = hours::min();
  CHECK(d == tmin);
  d -= 1ns;
  CHECK(d == tmin);
  d *= -1;  // -min does not fit: max
  CHECK(d == tmax);
  d = tmin;
  d /= -1;
  CHECK(d == tmax);
  d = -1s;
  d /= 0;
  CHECK(d == tmin);
  d = -1s;
  d *= i64max;
  CHECK(d == tmin);
  d = 3s;
  d += 2s;
  d *= 2;
  d /= 5;
  CHECK(d == 2s);  // in range, plain arithmetic
  static_assert(std::is_trivially_copyable_v<SaturatingNanoseconds>);
  static_assert(sizeof(SaturatingNanoseconds) == sizeof(Nanoseconds));
}

TEST_CASE("every duration setting saturates when set from a duration past nanoseconds' range",
          "[faults][limits][tunables]") {
  // FlipCounter{.period = hours::max()} ("never decay") used to be a 0 ns
  // period: every record decayed.
  const FlipCounter<> never{.period = hours::max()};
  CHECK(never.period == tmax);
  FlipCounter<>::state s;
  never.record(s, 1, 1s);
  never.record(s, 2, tmax);  // 2^63 - 1 ns later: still not strictly past the period
  CHECK(never.flips(s) == 2);

  const NewidleCostTracker<> cost{.migration_cost = hours::max(), .decay_period = hours::max()};
  CHECK(cost.migration_cost == tmax);
  CHECK(cost.decay_period == tmax);
  auto st = cost.make_state(1, 0ns);
  CHECK(st.avg_idle == tmax);  // 2 x migration_cost, saturating

  const CacheHotReservation<> res{.migration_cost = hours::max()};
  CHECK(res.migration_cost == tmax);

  // TaskHot's negative migration_cost means "every task is hot" (the
  // kernel's -1): hours::min() saturates to min() and keeps that meaning.
  const TaskHot<> always_hot{.migration_cost = hours::min()};
  CHECK(always_hot.migration_cost == tmin);
  CHECK(always_hot.is_hot(Move{.last_ran = 0ns}, 10h));
  const TaskHot<> hot_forever{.migration_cost = hours::max()};
  CHECK(hot_forever.migration_cost == tmax);

  const WakeAffine2008<> affine{.migration_cost = hours::max()};
  CHECK(affine.migration_cost == tmax);
}

TEST_CASE("a manual clock saturates at the end of time instead of wrapping", "[faults][limits][clock]") {
  ManualClock at_end{tmax};
  at_end.advance(1ns);  // used to wrap to the minimum: a clock gone back 584 years
  CHECK(at_end.now() == tmax);
  at_end.advance(hours::max());
  CHECK(at_end.now() == tmax);
  ManualClock at_start{tmin};
  at_start.advance(-1ns);
  CHECK(at_start.now() == tmin);
  ManualClock c{hours::max()};
  CHECK(c.now() == tmax);
  c.set(hours::min());
  CHECK(c.now() == tmin);
  c.set(0ns);
  c.advance(hours::min());
  CHECK(c.now() == tmin);
  c.set(5s);
  c.advance(-2s);  // backwards on purpose still works
  CHECK(c.now() == 3s);
}

TEST_CASE("a sleep that starts at clock reading 0 is sampled", "[faults][limits][cache_hot_reservation]") {
  // 0 used to mean "not asleep": a task that went to sleep at the clock's
  // epoch (a pool whose clock starts at 0) was never sampled.
  const CacheHotReservation<> r;
  CacheHotReservation<>::task_state task;
  CacheHotReservation<>::cpu_state cpu;
  r.on_sleep(task, cpu, true, 1, 0ns);
  CHECK(task.asleep);
  r.on_wakeup(task, 80us);
  CHECK(task.sleep_avg == 10us);  // update_avg(0, 80 us) = 80 / 8
  CHECK_FALSE(task.asleep);
  r.on_wakeup(task, 90us);  // awake: nothing more to sample
  CHECK(task.sleep_avg == 10us);
}
