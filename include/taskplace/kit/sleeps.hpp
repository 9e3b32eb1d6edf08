// taskplace/kit/sleeps.hpp: a worker's side of the sleep reports, the
// same whatever the placer's policies: the runtime reports every sleep
// through one call, and asks the kit (not the traits) whether to read the
// clock for it.
//
// Kernel analogue: the per-CPU runqueue field SIS_CACHE adds
// (rq->cache_hot_timeout), written at a task's dequeue for a sleep; and the
// dequeue itself (dequeue_task() with DEQUEUE_SLEEP), where avg_overlap
// (2008), dur_avg and SIS_CACHE's prev_sleep_time are updated.
//
//   taskplace::kit::SleepSlot<Placer> slot;                  // one per worker
//   slot.report(placer, task.state, key, queue_empty, at);   // the task stopped at `at`
//   machine: reservation(c) returns slots[c].reservation()   // MachineState O3
//
// A report may come late: `at` is the moment the task stopped, not the
// moment of the call, and a wake-up of the task may come before it
// (WakePlacer::task_sleeps, docs/embedding.md "Late sleep reports").
#pragma once

#include "taskplace/detail/config.hpp"

#include <mutex>
#include <type_traits>

#include "taskplace/types.hpp"

namespace taskplace::kit {

// Whether a sleep report's `at` must be a clock read of the moment the task
// stopped: the placer takes differences of such stamps (an overlap or a
// duration policy). Otherwise (a reservation policy alone, or none) the
// worker's time at the start of the run is precise enough, and a runtime
// that has one need not read the clock.
template <class Placer>
inline constexpr bool times_sleeps = Placer::tracking_overlap || Placer::tracking_duration;

// Whether a wake-up's `now` must be a clock read of its own moment: the
// placer stamps the waker with it and later takes the difference to the
// waker's sleep (an overlap policy). Otherwise a time read earlier in the
// worker's round serves.
template <class Placer>
inline constexpr bool times_wakeups = Placer::tracking_overlap;

// Whether a runtime's sleeps need reporting at all (task_runs at each run,
// the report at each sleep): some policy reads them.
template <class Placer>
inline constexpr bool reports_sleeps = Placer::reads_sleeps;

// One worker's slot for the sleeps of the tasks it runs: the reservation
// policy's per-CPU state behind its own lock when the placer has one,
// nothing otherwise. Thread-safety: report() from the worker's thread,
// reservation() from any (a copy under the lock).
template <class Placer>
class SleepSlot {
 public:
  using cpu_state = typename Placer::reservation_policy::cpu_state;

  // Effects: the task stopped running on this worker at `at` to sleep
  //   (WakePlacer::task_sleeps); `worker_idle`: nothing else runnable on
  //   the worker then (SIS_CACHE reserves only a CPU that goes idle). A
  //   report may be late, as WakePlacer::task_sleeps allows; one worker's
  //   reports come in the order of their `at`.
  void report(const Placer& p, typename Placer::task_state& task, TaskKey key, bool worker_idle,
              Nanoseconds at) noexcept {
    if constexpr (Placer::reserving) {
      std::lock_guard lk(m_);
      p.task_sleeps(task, key, s_, worker_idle, at);
    } else {
      p.task_sleeps(task, key, s_, worker_idle, at);
    }
  }

  // Returns: the reservation state (MachineState O3's reservation(c)),
  //   a copy taken under the lock; the empty state without a reservation
  //   policy (the placer then never asks).
  cpu_state reservation() const noexcept {
    if constexpr (Placer::reserving) {
      std::lock_guard lk(m_);
      return s_;
    } else {
      return s_;
    }
  }

 private:
  struct NoLock {};
  [[no_unique_address]] mutable std::conditional_t<Placer::reserving, std::mutex, NoLock> m_;
  [[no_unique_address]] cpu_state s_{};
};

}  // namespace taskplace::kit
