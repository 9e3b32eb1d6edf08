// OverlapTracker (policy/overlap_tracker.hpp): the 2008 kernels'
// se.avg_overlap. Golden values follow from the update rule avg += (sample
// - avg) / 8 (kernel update_avg) by hand.
#include <catch2/catch.hpp>

#include <chrono>
#include <type_traits>

#include "taskplace/policy/overlap_tracker.hpp"
#include "taskplace/tunables.hpp"

using namespace taskplace;
using namespace std::chrono_literals;
using T = OverlapTracker;

namespace {
// One cycle: the task wakes another at `woke`, sleeps at `slept`.
void cycle(T::state& s, Nanoseconds woke, Nanoseconds slept) {
  T::on_wake_other(s, woke);
  T::on_sleep(s, slept);
}
}  // namespace

TEST_CASE("a task that never woke another has an overlap of 0 and keeps it", "[overlap_tracker]") {
  T::state s;
  CHECK(T::average(s) == 0ns);
  T::on_sleep(s, 5ms);  // a sleep with no wake-up before it: no sample
  CHECK(T::average(s) == 0ns);
  CHECK_FALSE(s.woke);
}

TEST_CASE("each sleep after a wake-up folds the overlap in with weight 1/8", "[overlap_tracker]") {
  T::state s;
  cycle(s, 1000ns, 9000ns);  // sample 8000: 0 + 8000 / 8
  CHECK(T::average(s) == 1000ns);
  cycle(s, 20000ns, 28000ns);  // 1000 + (8000 - 1000) / 8 = 1000 + 875
  CHECK(T::average(s) == 1875ns);
  // A later sleep without a new wake-up changes nothing.
  T::on_sleep(s, 100000ns);
  CHECK(T::average(s) == 1875ns);
}

TEST_CASE("the overlap runs from the last wake-up before the sleep", "[overlap_tracker]") {
  T::state s;
  T::on_wake_other(s, 0ns);
  T::on_wake_other(s, 5000ns);  // replaces the stamp (kernel: last_wakeup overwritten)
  T::on_sleep(s, 6000ns);       // sample 1000, not 6000
  CHECK(T::average(s) == 125ns);
}

TEST_CASE("a steady overlap converges, truncating toward zero", "[overlap_tracker]") {
  T::state s;
  for (int i = 0; i < 200; ++i) cycle(s, Nanoseconds{i * 100000}, Nanoseconds{i * 100000 + 8000});
  // update_avg stops moving once |sample - avg| < 8: the fixpoint from below is 7993.
  CHECK(T::average(s) == 7993ns);
}

TEST_CASE("a waker that runs on 600 us after each wake-up turns long at the 14th sleep", "[overlap_tracker]") {
  // 600 us * (1 - (7/8)^k) with truncation: k = 13 gives 494,253 ns, k = 14
  // 507,471 ns, the first at or above sysctl_sched_migration_cost (500 us).
  T::state s;
  for (int k = 1; k <= 13; ++k) cycle(s, Nanoseconds{k * 1'000'000LL}, Nanoseconds{k * 1'000'000LL} + 600us);
  CHECK(T::average(s) == 494253ns);
  CHECK(T::average(s) < tunables::migration_cost);
  cycle(s, 14ms, 14ms + 600us);
  CHECK(T::average(s) == 507471ns);
  CHECK_FALSE(T::average(s) < tunables::migration_cost);
}

TEST_CASE("a clock that goes backwards gives a sample of 0", "[overlap_tracker]") {
  T::state s;
  cycle(s, 1000ns, 9000ns);
  cycle(s, 20000ns, 28000ns);
  REQUIRE(T::average(s) == 1875ns);
  cycle(s, 10000ns, 5000ns);  // 1875 + (0 - 1875) / 8 = 1875 - 234
  CHECK(T::average(s) == 1641ns);
}

TEST_CASE("stamps at the ends of the 64-bit range do not overflow", "[overlap_tracker]") {
  T::state s;
  cycle(s, Nanoseconds::min(), Nanoseconds::max());  // elapsed saturates at max
  CHECK(T::average(s) == Nanoseconds{Nanoseconds::max().count() / 8});
  for (int i = 0; i < 100; ++i) cycle(s, Nanoseconds::min(), Nanoseconds::max());
  // max * (1 - (7/8)^101), less the truncations: above half of max, and
  // never max itself (each step adds (max - avg) / 8, less than the gap).
  CHECK(T::average(s) > Nanoseconds{Nanoseconds::max().count() / 2});
  CHECK(T::average(s) < Nanoseconds::max());
}

TEST_CASE("NoOverlap measures nothing and reads as unknown", "[overlap_tracker]") {
  static_assert(std::is_empty_v<NoOverlap::state>);
  static_assert(!NoOverlap::enabled && OverlapTracker::enabled);
  NoOverlap::state s;
  NoOverlap::on_wake_other(s, 1ns);
  NoOverlap::on_sleep(s, 2ns);
  CHECK(NoOverlap::average(s) == Nanoseconds::max());
}
