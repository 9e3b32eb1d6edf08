// taskplace/placer/wake_on_current.hpp: keep a pair of short tasks that wake
// each other on the waking CPU (SIS_CURRENT).
//
// Provides WakeOnCurrent<Variant>, its variants sis_current::Granularity2023
// (v7) and MigrationCost2023 (v8), and NoWakeOnCurrent (today's kernel).
// Kernel analogue: wake_on_current() of Chen Yu's "sched/fair: Introduce
// SIS_CURRENT to wake up short task on current CPU" (v7 2023-04-22, v8
// 2023-04-29; SIS_SHORT up to v6), never merged. Its cover letter: a cross-CPU wake-up costs a pair of tasks that
// ping-pong (will-it-scale context_switch1, netperf, tbench) the transfer
// of their shared cache lines and races between wakers picking the same
// idle CPU; so when a waker and its wakee are both short-duration tasks
// that wake each other, the wakee is placed on the waking CPU, where the
// waker is about to sleep. The v7 function's tests, all needed:
//   1. the waker is the only task running on the waking CPU;
//   2. the waker is short: 0 < dur_avg, under the variant's threshold;
//   3. the wakee is short, likewise;
//   4. neither has flipped wakee lately: both flip counts are 0;
//   5. they wake each other: the waker's last wakee is the wakee and the
//      wakee's last wakee is the waker.
// No sync hint is needed. WakePlacer applies the rule after recording the
// wake-up in the waker's flips (so test 4 sees this wake-up) and before the
// wide and affine steps; a pair that passes lands on the waking CPU with no
// idle search (the patch's call site is not in the mails quoted by the
// thread; the cover letter says the wakee is placed on the waking CPU).
//
//   taskplace::WakeOnCurrent<> rule;   // v8 threshold
//   bool here = rule.decide(taskplace::WakeOnCurrentInput{...});
#pragma once

#include "taskplace/detail/config.hpp"

#include <cstddef>
#include <cstdint>

#include "taskplace/concepts.hpp"
#include "taskplace/fwd.hpp"
#include "taskplace/tunables.hpp"
#include "taskplace/types.hpp"

namespace taskplace {

// What the rule reads about one wake-up.
struct WakeOnCurrentInput {
  std::uint32_t waking_nr_running;  // tasks on the waking CPU, the waker included
  Nanoseconds waker_duration;       // the waker's average run between sleeps (0: unknown)
  Nanoseconds wakee_duration;
  std::uint32_t waker_flips;        // after this wake-up was recorded (CostGate: before it)
  std::uint32_t wakee_flips;
  TaskKey waker_last_wakee;         // after this wake-up was recorded
  TaskKey wakee_last_wakee;
  TaskKey waker;
  TaskKey wakee;
  std::size_t cpu_count;            // scales Granularity2023's threshold
  // Filled only for a rule with reads_costs (CostGate), else 0:
  Nanoseconds waker_overlap{0};     // the waker's average overlap (OverlapTracker)
  Nanoseconds move_cost{0};         // the least a move off the waking CPU costs (move_cost())
  bool wakee_ran_here = false;      // the wakee last ran on the waking CPU (prev == waking)
  // The wide step's factor (the LLC's size): CostGate leaves a waker or a
  // wakee with this many flips (before this wake-up's record) to the
  // kernel's pipeline. The most: never.
  std::uint32_t wide_factor = UINT32_MAX;
  // CostGate reads waker_last_wakee and wakee_last_wakee as they were
  // before this wake-up's record (WakeOnCurrent: after it).
};

namespace sis_current {
// v8 (2023-04-29), on Peter Zijlstra's suggestion that the time a task
// needs to build a cache footprint is what task_hot() uses: short means
// 0 < dur_avg < sysctl_sched_migration_cost (500 us). The cover letter
// says the v7 and v8 thresholds are "comparable", which is 375 us against
// 500 us on 8 CPUs or more.
struct MigrationCost2023 {
  static constexpr bool is_short(Nanoseconds dur, std::size_t) noexcept {
    return dur > Nanoseconds{0} && dur < tunables::migration_cost;
  }
};
// v7 (2023-04-22): 0 < dur_avg and dur_avg * 8 < sysctl_sched_min_granularity,
// the granularity being 0.75 ms * (1 + log2(min(CPUs, 8))): 93.75 us on one
// CPU, 187.5 us on 2, 281.25 us on 4 to 7, 375 us from 8 on. The product is
// not formed: dur * 8 < g is dur <= (g - 1) / 8 for integers, so no
// duration overflows.
struct Granularity2023 {
  static constexpr std::int64_t granularity_factor(std::size_t cpus) noexcept {
    const std::size_t n = cpus < 8 ? cpus : 8;
    std::int64_t log2 = 0;
    for (std::size_t v = n; v > 1; v >>= 1) ++log2;
    return 1 + log2;  // 0 CPUs reads as 1
  }
  static constexpr bool is_short(Nanoseconds dur, std::size_t cpus) noexcept {
    const std::int64_t g = tunables::min_granularity_base.count() * granularity_factor(cpus);
    return dur > Nanoseconds{0} && dur.count() <= (g - 1) / 8;
  }
};
}  // namespace sis_current
static_assert(ShortTaskVariant<sis_current::Granularity2023>);
static_assert(ShortTaskVariant<sis_current::MigrationCost2023>);

// The rule. Stateless; the durations come from a DurationTracker and the
// flips and last wakees from the FlipCounter, both in the tasks' state.
template <ShortTaskVariant Variant>  // default in fwd.hpp: sis_current::MigrationCost2023
struct WakeOnCurrent {
  static constexpr bool enabled = true;
  using variant_type = Variant;

  // Returns: whether the wakee goes to the waking CPU: the five tests above,
  //   all of them. A key of no_task matches nothing (a wake-up from outside
  //   any task, or a wakee that woke nobody yet, never passes test 5), and
  //   a task that wakes itself (waker == wakee, which no kernel task can:
  //   the waker is running) is no pair and never passes either.
  // Complexity: O(1). Thread-safety: pure.
  static constexpr bool decide(const WakeOnCurrentInput& in) noexcept {
    if (in.waking_nr_running > 1) return false;
    if (!Variant::is_short(in.waker_duration, in.cpu_count)) return false;
    if (!Variant::is_short(in.wakee_duration, in.cpu_count)) return false;
    if (in.waker_flips != 0 || in.wakee_flips != 0) return false;
    if (in.waker == no_task || in.wakee == no_task || in.waker == in.wakee) return false;
    return in.waker_last_wakee == in.wakee && in.wakee_last_wakee == in.waker;
  }
};
static_assert(OnCurrentRule<WakeOnCurrent<sis_current::Granularity2023>>);
static_assert(OnCurrentRule<WakeOnCurrent<sis_current::MigrationCost2023>>);

// Today's kernel: no such rule.
struct NoWakeOnCurrent {
  static constexpr bool enabled = false;
  static constexpr bool decide(const WakeOnCurrentInput&) noexcept { return false; }
};
static_assert(OnCurrentRule<NoWakeOnCurrent>);

}  // namespace taskplace
