// taskplace/policy/overlap_tracker.hpp: how long a task runs on after it
// wakes another ("avg_overlap"), the 2008 kernels' test of whether a sync
// wake-up's waker really is about to sleep.
//
// Provides OverlapTracker and NoOverlap (today's kernel: none). Kernel
// analogue: se.last_wakeup and se.avg_overlap, from 2.6.25 (2008) until
// their removal in 2010 as inaccurate (docs/provenance.md). A wake-up
// stamped the waker's clock in last_wakeup; a task going to sleep folded the
// time since that stamp into avg_overlap with update_avg(). (2.6.25 and
// 2.6.26 set the stamp in check_preempt_wakeup() on whatever ran on the
// wakee's CPU: the waker only when the wakee landed on its CPU; later
// kernels stamped the waker in try_to_wake_up(). taskplace stamps the
// waker, which is what the average is meant to measure.) wake_affine()
// pulled a sync wakee to the waker only while both averages were below
// sysctl_sched_migration_cost: two tasks that hand work back and forth and
// sleep at once share a CPU well (Smith 2008; WakeAffine2008 reads them).
//
//   taskplace::OverlapTracker::on_wake_other(waker.overlap, clock.now());
//   taskplace::OverlapTracker::on_sleep(task.overlap, clock.now());
//   bool brief = taskplace::OverlapTracker::average(task.overlap) < tunables::migration_cost;
#pragma once

#include "taskplace/detail/config.hpp"

#include <cstdint>

#include "taskplace/concepts.hpp"
#include "taskplace/detail/math.hpp"
#include "taskplace/types.hpp"

namespace taskplace {

// The measurement. Stateless: the state lives in the embedder's task (or in
// WakePlacer's task_state, which holds one when Traits::Overlap is this).
//
// The clock is the task's: the kernel took the task's own run time
// (sum_exec_runtime), so that time spent preempted between the wake-up and
// the sleep does not count. A task of a coroutine runtime runs without
// interruption from a wake-up to its next suspension unless its worker
// thread loses its CPU, so wall time serves there, and WakePlacer uses the
// `now` it is given.
struct OverlapTracker {
  static constexpr bool enabled = true;

  // Invariant: avg >= 0; woke says whether woke_at holds a wake-up that no
  // sleep has closed yet (the kernel used last_wakeup == 0 for "none", which
  // a clock that starts at zero would confuse).
  struct state {
    Nanoseconds avg{0};     // kernel se.avg_overlap
    Nanoseconds woke_at{0}; // kernel se.last_wakeup: this task's latest wake-up of another
    Nanoseconds last{0};    // the latest sample (not the kernel's: CostGate reads it)
    std::uint8_t samples = 0;  // samples folded in, saturating at 255 (likewise)
    bool woke = false;
  };

  // Effects: the task woke another task at `now`; a later wake-up before it
  // sleeps replaces the stamp, so the overlap runs from the last one.
  // Complexity: O(1). Thread-safety: writes s; the task's own thread.
  static constexpr void on_wake_other(state& s, Nanoseconds now) noexcept {
    s.woke_at = now;
    s.woke = true;
  }

  // Effects: the task goes to sleep at `now`. If it woke another since it
  // last slept, avg = update_avg(avg, now - woke_at) (weight 1/8); a task
  // that woke nobody keeps its average. A clock that went backwards gives a
  // sample of 0, and stamps at opposite ends of the 64-bit range give the
  // largest duration (detail::elapsed), so nothing overflows.
  // The kernel of 2008 shifted the signed difference (rounding toward minus
  // infinity); update_avg divides (toward zero): the two differ by at most
  // 1 ns per sample.
  // Complexity: O(1). Thread-safety: writes s; the task's own thread.
  static constexpr void on_sleep(state& s, Nanoseconds now) noexcept {
    if (!s.woke) return;
    s.last = detail::elapsed(s.woke_at, now);
    s.avg = detail::update_avg(s.avg, s.last);
    if (s.samples < 255) ++s.samples;
    s.woke = false;
  }

  // Returns: the average overlap; 0 for a task that never woke another.
  static constexpr Nanoseconds average(const state& s) noexcept { return s.avg; }
  // Returns: the latest sample; 0 before the first.
  static constexpr Nanoseconds latest(const state& s) noexcept { return s.last; }
  // Returns: how many samples the average holds, saturating at 255.
  static constexpr std::uint32_t samples(const state& s) noexcept { return s.samples; }
};
static_assert(OverlapPolicy<OverlapTracker>);

// Today's kernel: no overlap is measured. Empty state; every call is a
// no-op and the average reads as "unknown" (the largest duration), so a
// rule that reads it never takes a sync pull on its strength.
struct NoOverlap {
  static constexpr bool enabled = false;
  struct state {};
  static constexpr void on_wake_other(state&, Nanoseconds) noexcept {}
  static constexpr void on_sleep(state&, Nanoseconds) noexcept {}
  static constexpr Nanoseconds average(const state&) noexcept { return Nanoseconds::max(); }
};
static_assert(OverlapPolicy<NoOverlap>);

}  // namespace taskplace
