// Fault class: clocks that go backwards, jump forward by hours, or sit at
// the 64-bit extremes (a wrapped or uninitialised clock). Every policy
// reads a backwards step as no time passed and never overflows.
#include <catch2/catch.hpp>

#include <chrono>
#include <cstdint>
#include <limits>

#include "taskplace/clock.hpp"
#include "taskplace/detail/math.hpp"
#include "taskplace/idle_balancer.hpp"
#include "taskplace/policy/cache_hot_reservation.hpp"
#include "taskplace/policy/flip_counter.hpp"
#include "taskplace/policy/newidle_cost_tracker.hpp"
#include "taskplace/topology/uniform.hpp"

using namespace taskplace;
using namespace std::chrono_literals;

namespace {
constexpr Nanoseconds tmin = Nanoseconds::min();
constexpr Nanoseconds tmax = Nanoseconds::max();
}  // namespace

TEST_CASE("elapsed reads a backwards clock as zero and saturates across the whole range", "[faults][clock]") {
  CHECK(detail::elapsed(10s, 5s) == 0ns);
  CHECK(detail::elapsed(5s, 5s) == 0ns);
  CHECK(detail::elapsed(5s, 7s) == 2s);
  CHECK(detail::elapsed(tmin, tmax) == tmax);  // 2^64 - 1 does not fit: the largest duration
  CHECK(detail::elapsed(tmax, tmin) == 0ns);   // a wrap looks like a backwards step
  CHECK(detail::elapsed(-1ns, tmax) == tmax);
}

TEST_CASE("a flip counter does not decay when the clock goes backwards", "[faults][clock][flip_counter]") {
  FlipCounter<> f;
  FlipCounter<>::state s;
  f.record(s, 1, 10s);  // decays a zero count, stamps 10 s
  f.record(s, 2, 10s);
  f.record(s, 3, 10s);
  REQUIRE(f.flips(s) == 3);
  f.record(s, 4, 2s);  // back 8 s: no decay, the stamp is kept
  CHECK(f.flips(s) == 4);
  CHECK(s.decay_stamp_ns.load() == std::chrono::nanoseconds(10s).count());
  f.record(s, 5, 11s);  // exactly one period after the stamp: not yet (strictly after)
  CHECK(f.flips(s) == 5);
  f.record(s, 6, 11s + 1ns);  // 5 >> 1 = 2, then one flip
  CHECK(f.flips(s) == 3);
}

TEST_CASE("a flip counter jumped forward by hours decays once, not once per period", "[faults][clock][flip_counter]") {
  FlipCounter<> f;
  FlipCounter<>::state s;
  for (TaskKey k = 1; k <= 64; ++k) f.record(s, k, 5s);
  REQUIRE(f.flips(s) == 64);
  f.record(s, 64, 5s + 3h);  // same partner: only the lazy decay, 64 >> 1
  CHECK(f.flips(s) == 32);
}

TEST_CASE("a flip counter at the clock's extremes neither overflows nor decays spuriously",
          "[faults][clock][flip_counter]") {
  FlipCounter<> f;
  FlipCounter<>::state s;
  f.record(s, 1, tmax);  // far after the zero stamp: decay (of 0), stamp max
  f.record(s, 2, tmax);
  CHECK(f.flips(s) == 2);
  f.record(s, 3, tmin);  // a wrap to the minimum is backwards: no decay
  CHECK(f.flips(s) == 3);
  CHECK(s.decay_stamp_ns.load() == tmax.count());
  FlipCounter<> huge{.period = tmax};  // a period longer than any clock: never decays
  FlipCounter<>::state h;
  h.decay_stamp_ns.store(tmin.count());
  h.flips.store(10);
  huge.record(h, 1, tmax);  // tmax - tmin = 2^64 - 1 > period: exactly one decay
  CHECK(huge.flips(h) == 6);
}

TEST_CASE("avg_idle ignores a backwards idle period and caps a huge one", "[faults][clock][newidle_cost_tracker]") {
  NewidleCostTracker<> t;
  auto s = t.make_state(2, 0ns);
  REQUIRE(t.avg_idle(s) == 1000us);  // 2 * migration_cost
  t.idle_start(s, 10s);
  t.idle_end(s, 9s);  // backwards: delta 0, avg moves 1/8 toward 0
  CHECK(t.avg_idle(s) == 875us);
  t.idle_start(s, 10s);
  t.idle_end(s, 10s + 5h);  // hours idle: avg_idle::Clamp2014 clamps at 2 * max_idle_balance_cost = 1 ms
  CHECK(t.avg_idle(s) == 1000us);
  t.idle_start(s, tmin);
  t.idle_end(s, tmax);  // the largest possible period: still the cap
  CHECK(t.avg_idle(s) == 1000us);
}

TEST_CASE("level costs do not decay on a backwards clock and decay once after hours", "[faults][clock][newidle_cost_tracker]") {
  NewidleCostTracker<> t;
  auto s = t.make_state(1, 100s);
  t.record_cost(s, 0, 256us, 100s);
  t.decay(s, 50s);  // backwards
  CHECK(t.level_cost(s, 0) == 256us);
  t.decay(s, 100s + 4h);  // one step per call, however long it has been: 256 us * 253/256
  CHECK(t.level_cost(s, 0) == 253us);
  t.decay(s, tmin);
  CHECK(t.level_cost(s, 0) == 253us);
}

TEST_CASE("a sleep measured on a backwards clock is not sampled", "[faults][clock][cache_hot_reservation]") {
  CacheHotReservation<> r;
  CacheHotReservation<>::task_state task;
  CacheHotReservation<>::cpu_state cpu;
  r.on_sleep(task, cpu, true, 1, 10s);
  r.on_wakeup(task, 10s + 80us);  // 80 us sample: avg = 80/8 = 10 us
  REQUIRE(task.sleep_avg == 10us);
  r.on_sleep(task, cpu, true, 1, 20s);
  r.on_wakeup(task, 19s);  // backwards (the previous CPU's clock was reset)
  CHECK(task.sleep_avg == 10us);
  CHECK(task.last_dequeue == 0ns);
  r.on_sleep(task, cpu, true, 1, 30s);
  r.on_wakeup(task, 30s + 3h);  // hours: a long sleep, HalveLong2023 halves the average
  CHECK(task.sleep_avg == 5us);
}

TEST_CASE("a reservation made at the end of time saturates instead of wrapping", "[faults][clock][cache_hot_reservation]") {
  CacheHotReservation<> r;
  CacheHotReservation<>::task_state task{.last_dequeue = 0ns, .sleep_avg = 100us};
  CacheHotReservation<>::cpu_state cpu;
  r.on_sleep(task, cpu, true, 1, tmax - 1us);
  CHECK(cpu.hot_until == tmax);  // now + 100 us saturates
  CHECK(r.reserved_against(cpu, 2, tmax - 1ns));
  CHECK_FALSE(r.reserved_against(cpu, 2, tmax));
}

TEST_CASE("a fresh or released reservation is free while the clock is negative",
          "[faults][clock][cache_hot_reservation]") {
  // "No reservation" is hot_until == Nanoseconds::min(), so a clock whose
  // readings are negative (an offset ManualClock, a wrapped counter) never
  // sees a fresh or released CPU as reserved. (Found by the policies fuzz
  // target when the empty value was 0.)
  CacheHotReservation<> r;
  CacheHotReservation<>::cpu_state cpu;
  CHECK_FALSE(r.reserved_against(cpu, 1, -1s));
  r.release(cpu);
  CHECK_FALSE(r.reserved_against(cpu, 1, -1s));
}

TEST_CASE("an idle balancer survives a clock that runs backwards during a pull", "[faults][clock][idle_balancer]") {
  const UniformTopology topo{1, 1, 4, 2};  // SMT and LLC levels
  const IdleBalancer<UniformTopology> b(topo);
  ManualClock clock{10s};
  auto st = b.make_state(0, clock.now());
  const auto r = b.balance(0, st, [&](std::uint32_t, LevelKind, auto) {
    clock.advance(-5s);  // each pull "ends" before it started
    return false;
  }, clock);
  CHECK(r.outcome == BalanceOutcome::nothing_found);
  CHECK(r.levels_visited == 2);
  CHECK(r.spent == 0ns);  // backwards is no time
  CHECK(b.tracker().level_cost(st, 0) == 0ns);
  b.idle_end(st, clock.now());  // ends before the idle stamp: delta 0
  CHECK(b.tracker().avg_idle(st) == 875us);
}

TEST_CASE("ReadOnce reads its clock at the first call only, and keeps that value",
          "[faults][clock][settled_pair]") {
  ManualClock clock{5ms};
  const ReadOnce once{clock};
  CHECK_FALSE(once.read());
  CHECK(once() == 5ms);
  clock.advance(1ms);  // a later read would see 6 ms: the first value stays
  CHECK(once() == 5ms);
  CHECK(once.read());
}
