// taskplace/policy/duration_tracker.hpp: how long a task runs between two
// sleeps ("dur_avg"), the measure of a short-duration task.
//
// Provides DurationTracker and NoDuration (today's kernel: none). Kernel
// analogue: se.dur_avg of Chen Yu's "sched/fair: Record the average duration
// of a task" (patch 1/2 of the SIS_SHORT / SIS_CURRENT series, 2022-2023,
// never in a released kernel): at each dequeue for a sleep, the CPU time
// the task consumed since its previous sleep (sum_exec_runtime minus the
// value saved at that sleep) is folded into dur_avg with update_avg().
// A preemption or a yield is not a sleep: the runs before and after it add
// up to one sample. WakeOnCurrent (placer/wake_on_current.hpp) reads the
// average of the waker and of the wakee.
//
//   taskplace::DurationTracker::on_run(task.duration, clock.now());    // switched in
//   taskplace::DurationTracker::on_stop(task.duration, clock.now());   // preempted or yields
//   taskplace::DurationTracker::on_sleep(task.duration, clock.now());  // blocks
#pragma once

#include "taskplace/detail/config.hpp"

#include <cstdint>

#include "taskplace/concepts.hpp"
#include "taskplace/detail/math.hpp"
#include "taskplace/fwd.hpp"
#include "taskplace/types.hpp"

namespace taskplace {

// The measurement. Stateless: the state lives in the embedder's task (or in
// WakePlacer's task_state, which holds one when Traits::Duration is this).
//
// The kernel counted the task's own run time; a task of a coroutine runtime
// runs from the moment its worker resumes it to its next suspension, so the
// embedder reports those two moments (on_run, then on_stop or on_sleep) and
// the time between them is the run.
struct DurationTracker {
  static constexpr bool enabled = true;

  // Invariant: avg >= 0 and ran >= 0; running says whether run_start holds
  // the start of a run not yet stopped; measured whether any run was
  // reported since the last sleep (ran may be 0 with a coarse clock).
  struct state {
    Nanoseconds avg{0};        // kernel se.dur_avg; 0: nothing measured yet
    Nanoseconds ran{0};        // run time since the last sleep, runs closed so far
    Nanoseconds run_start{0};  // the start of the current run
    Nanoseconds last{0};       // the latest sample (not the kernel's: CostGate reads it)
    std::uint8_t samples = 0;  // samples folded in, saturating at 255 (likewise)
    bool running = false;
    bool measured = false;
  };

  // Effects: the task starts (or resumes) running at `now`. A second call
  // without a stop in between restarts the run: the earlier start is
  // dropped, not counted.
  // Complexity: O(1). Thread-safety: writes s; the thread that runs the task.
  static constexpr void on_run(state& s, Nanoseconds now) noexcept {
    s.run_start = now;
    s.running = true;
    s.measured = true;
  }

  // Effects: the task stops running at `now` without sleeping (it yields or
  // is preempted): the run is added to `ran` (saturating; a clock that went
  // backwards adds 0). Without a run started, nothing happens.
  // Complexity: O(1). Thread-safety: writes s; the thread that runs the task.
  static constexpr void on_stop(state& s, Nanoseconds now) noexcept {
    if (!s.running) return;
    s.ran = detail::saturating_add(s.ran, detail::elapsed(s.run_start, now));
    s.running = false;
  }

  // Effects: the task goes to sleep at `now`: the current run closes as in
  // on_stop, and if any run was reported since the last sleep, avg =
  // update_avg(avg, ran) (weight 1/8) and ran starts again from 0. A sleep
  // with no run reported since the last one samples nothing (an embedder
  // that never calls on_run keeps every average at 0: no task is short).
  // Complexity: O(1). Thread-safety: writes s; the task's own thread.
  static constexpr void on_sleep(state& s, Nanoseconds now) noexcept {
    on_stop(s, now);
    if (!s.measured) return;
    s.avg = detail::update_avg(s.avg, s.ran);
    s.last = s.ran;
    if (s.samples < 255) ++s.samples;
    s.ran = Nanoseconds{0};
    s.measured = false;
  }

  // Returns: the average run between sleeps; 0 before the first sample
  // (the kernel's "no duration yet", which no rule counts as short).
  static constexpr Nanoseconds average(const state& s) noexcept { return s.avg; }
  // Returns: the latest sample; 0 before the first.
  static constexpr Nanoseconds latest(const state& s) noexcept { return s.last; }
  // Returns: how many samples the average holds, saturating at 255.
  static constexpr std::uint32_t samples(const state& s) noexcept { return s.samples; }
};
static_assert(DurationPolicy<DurationTracker>);

// Today's kernel: nothing measured. Empty state, every call a no-op; the
// average reads 0, which no rule counts as short.
struct NoDuration {
  static constexpr bool enabled = false;
  struct state {};
  static constexpr void on_run(state&, Nanoseconds) noexcept {}
  static constexpr void on_stop(state&, Nanoseconds) noexcept {}
  static constexpr void on_sleep(state&, Nanoseconds) noexcept {}
  static constexpr Nanoseconds average(const state&) noexcept { return Nanoseconds{0}; }
};
static_assert(DurationPolicy<NoDuration>);

}  // namespace taskplace
