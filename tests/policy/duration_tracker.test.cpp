// DurationTracker (policy/duration_tracker.hpp): se.dur_avg of the 2023
// SIS_CURRENT series (Chen Yu, patch 1/2). At each sleep the run time since
// the previous sleep is folded in with the kernel's update_avg:
//   avg += (sample - avg) / 8, the division truncating toward zero
// (detail/math.hpp). Every golden value below is that rule worked by hand.
#include <catch2/catch.hpp>

#include <chrono>
#include <type_traits>

#include "taskplace/policy/duration_tracker.hpp"

using namespace taskplace;
using namespace std::chrono_literals;
using T = DurationTracker;

namespace {
// One run from `start` to a sleep at `stop`.
constexpr void run_then_sleep(T::state& s, Nanoseconds start, Nanoseconds stop) {
  T::on_run(s, start);
  T::on_sleep(s, stop);
}

constexpr Nanoseconds max_ns = Nanoseconds::max();

// The saturation case at compile time: a signed overflow anywhere in it
// would make this not a constant expression, so the static_assert below
// proves there is none.
constexpr Nanoseconds extremes_twice() {
  T::state s;
  T::on_run(s, Nanoseconds::min());
  T::on_stop(s, 0ns);  // true length 2^63: clamps at max
  T::on_run(s, 0ns);
  T::on_sleep(s, max_ns);  // max + max: clamps at max
  run_then_sleep(s, Nanoseconds::min(), max_ns);
  return T::average(s);
}
// First sleep: 0 + max / 8 = 1,152,921,504,606,846,975 (max = 2^63 - 1).
// Second: + (max - 1,152,921,504,606,846,975) / 8 = + 1,008,806,316,530,991,104
//       = 2,161,727,821,137,838,079.
static_assert(extremes_twice() == Nanoseconds{2'161'727'821'137'838'079});
}  // namespace

TEST_CASE("a first run of 80 us folds in as 10 us", "[duration_tracker]") {
  T::state s;
  CHECK(T::average(s) == 0ns);  // nothing measured yet
  run_then_sleep(s, 1000ns, 81000ns);  // sample 80,000: 0 + 80,000 / 8
  CHECK(T::average(s) == 10000ns);
  CHECK(s.ran == 0ns);  // the sleep starts the next sample from 0
  CHECK_FALSE(s.running);
  CHECK_FALSE(s.measured);
  run_then_sleep(s, 100000ns, 116000ns);  // sample 16,000: 10,000 + 6,000 / 8
  CHECK(T::average(s) == 10750ns);
  run_then_sleep(s, 200000ns, 200000ns + 4001ns);  // 10,750 + (4,001 - 10,750) / 8 = 10,750 - 843
  CHECK(T::average(s) == 9907ns);
}

TEST_CASE("a run split by a yield adds up to one sample", "[duration_tracker]") {
  T::state s;
  T::on_run(s, 0ns);
  T::on_stop(s, 30000ns);  // yields after 30 us: no sample yet
  CHECK(s.ran == 30000ns);
  CHECK_FALSE(s.running);
  CHECK(T::average(s) == 0ns);
  T::on_stop(s, 40000ns);  // a stop without a run started: nothing
  CHECK(s.ran == 30000ns);
  T::on_run(s, 50000ns);  // the 20 us off the CPU are not run time
  T::on_sleep(s, 100000ns);  // 30,000 + 50,000 = 80,000: 0 + 80,000 / 8
  CHECK(T::average(s) == 10000ns);
  // Two yields before the next sleep: 3 runs of 8 us are one 24 us sample,
  // 10,000 + (24,000 - 10,000) / 8 = 11,750, not three samples of 8 us
  // (which would give 10,000 -> 9,750 -> 9,532 -> 9,341).
  T::on_run(s, 200000ns);
  T::on_stop(s, 208000ns);
  T::on_run(s, 300000ns);
  T::on_stop(s, 308000ns);
  T::on_run(s, 400000ns);
  T::on_sleep(s, 408000ns);
  CHECK(T::average(s) == 11750ns);
}

TEST_CASE("a sleep with no run since the last sleep samples nothing", "[duration_tracker]") {
  T::state s;
  T::on_sleep(s, 5ms);  // never ran: no sample (not even one of 0)
  CHECK(T::average(s) == 0ns);
  CHECK_FALSE(s.measured);
  run_then_sleep(s, 10ms, 10ms + 80us);  // 0 + 80,000 / 8
  REQUIRE(T::average(s) == 10000ns);
  // A second sleep with no run in between: a sample of 0 would give
  // 10,000 - 1,250 = 8,750; nothing is folded, the average stays.
  T::on_sleep(s, 20ms);
  CHECK(T::average(s) == 10000ns);
  T::on_sleep(s, 30ms);
  CHECK(T::average(s) == 10000ns);
}

TEST_CASE("a second on_run without a stop restarts the run", "[duration_tracker]") {
  T::state s;
  T::on_run(s, 0ns);
  T::on_run(s, 70000ns);  // the start at 0 is dropped, not counted
  T::on_sleep(s, 150000ns);  // sample 80,000 (150,000 from 0 would give 18,750)
  CHECK(T::average(s) == 10000ns);
  // A run closed by on_stop is kept when a new one starts.
  T::on_run(s, 200000ns);
  T::on_stop(s, 216000ns);  // ran 16,000
  T::on_run(s, 300000ns);
  T::on_run(s, 350000ns);   // restarts: 300,000..350,000 dropped
  T::on_sleep(s, 366000ns); // 16,000 + 16,000 = 32,000: 10,000 + 22,000 / 8
  CHECK(T::average(s) == 12750ns);
}

TEST_CASE("a clock that goes backwards gives a run of 0, which still counts as a sample", "[duration_tracker]") {
  T::state s;
  run_then_sleep(s, 1000ns, 81000ns);
  REQUIRE(T::average(s) == 10000ns);
  run_then_sleep(s, 100000ns, 50000ns);  // sample 0: 10,000 + (0 - 10,000) / 8 = 8,750
  CHECK(T::average(s) == 8750ns);
  // A coarse clock (stop == start) is a run of 0 too: 8,750 - 1,093 = 7,657
  // (-8,750 / 8 = -1,093.75, truncated toward zero).
  run_then_sleep(s, 200000ns, 200000ns);
  CHECK(T::average(s) == 7657ns);
  // Backwards inside a split run: the 5 us before the yield count, the
  // backwards part adds 0. Sample 5,000: 7,657 + (5,000 - 7,657) / 8 = 7,657 - 332.
  T::on_run(s, 300000ns);
  T::on_stop(s, 305000ns);
  T::on_run(s, 400000ns);
  T::on_sleep(s, 390000ns);
  CHECK(T::average(s) == 7325ns);
}

TEST_CASE("stamps at the ends of the 64-bit range saturate the run time", "[duration_tracker]") {
  T::state s;
  T::on_run(s, Nanoseconds::min());
  T::on_stop(s, max_ns);  // true length 2^64 - 1: clamps at max
  CHECK(s.ran == max_ns);
  T::on_run(s, Nanoseconds::min());
  T::on_stop(s, max_ns);  // max + max: stays max, no wrap
  CHECK(s.ran == max_ns);
  T::on_run(s, 0ns);
  T::on_sleep(s, 1ns);  // max + 1: still max
  // 0 + max / 8 = 9,223,372,036,854,775,807 / 8 = 1,152,921,504,606,846,975.
  CHECK(T::average(s) == Nanoseconds{1'152'921'504'606'846'975});
  CHECK(s.ran == 0ns);
  // The same sequence at compile time (see extremes_twice above).
  CHECK(extremes_twice() == Nanoseconds{2'161'727'821'137'838'079});
  // Many samples of max: the average climbs toward max, never past it.
  for (int i = 0; i < 200; ++i) run_then_sleep(s, Nanoseconds::min(), max_ns);
  CHECK(T::average(s) > Nanoseconds{max_ns.count() / 2});
  CHECK(T::average(s) < max_ns);
  // A run from max back to min is a clock going backwards: a sample of 0.
  const Nanoseconds before = T::average(s);
  run_then_sleep(s, max_ns, Nanoseconds::min());
  CHECK(T::average(s) == before - before / 8);
}

TEST_CASE("a steady 8 us run converges to 7,993 ns at the 57th sleep", "[duration_tracker]") {
  // avg_k = avg_{k-1} + (8,000 - avg_{k-1}) / 8 with truncation, from 0:
  // 1,000, 1,875, 2,640, 3,310, 3,896, 4,409, 4,857, 5,249, 5,592, 5,893 (k = 10),
  // ..., 7,442 (k = 20), ..., 7,958 (k = 40), ..., 7,992 (k = 56), 7,993 (k = 57).
  // It stops there: (8,000 - 7,993) / 8 = 0, so 7,993 is the fixpoint
  // from below, 7 ns short of the run (exact value 8,000 * (1 - (7/8)^k)).
  T::state s;
  Nanoseconds now = 0ns;
  auto cycle = [&] {
    run_then_sleep(s, now, now + 8000ns);
    now += 100us;
  };
  const Nanoseconds first[] = {1000ns, 1875ns, 2640ns, 3310ns, 3896ns,
                               4409ns, 4857ns, 5249ns, 5592ns, 5893ns};
  for (Nanoseconds expected : first) {
    cycle();
    CHECK(T::average(s) == expected);
  }
  for (int k = 11; k <= 20; ++k) cycle();
  CHECK(T::average(s) == 7442ns);
  for (int k = 21; k <= 40; ++k) cycle();
  CHECK(T::average(s) == 7958ns);
  for (int k = 41; k <= 56; ++k) cycle();
  CHECK(T::average(s) == 7992ns);
  cycle();  // k = 57
  CHECK(T::average(s) == 7993ns);
  for (int k = 58; k <= 200; ++k) cycle();
  CHECK(T::average(s) == 7993ns);
}

TEST_CASE("NoDuration measures nothing and reads 0", "[duration_tracker]") {
  static_assert(std::is_empty_v<NoDuration::state>);
  static_assert(!NoDuration::enabled && DurationTracker::enabled);
  NoDuration::state s;
  NoDuration::on_run(s, 0ns);
  NoDuration::on_stop(s, 40us);
  NoDuration::on_run(s, 50us);
  NoDuration::on_sleep(s, 100us);  // DurationTracker would read 90,000 / 8 = 11,250 ns
  CHECK(NoDuration::average(s) == 0ns);
  NoDuration::on_run(s, Nanoseconds::min());
  NoDuration::on_sleep(s, max_ns);
  CHECK(NoDuration::average(s) == 0ns);
}
