// taskplace/detail/sleep_ledger.hpp: what WakePlacer keeps per task so
// that a sleep reported late (after the moment the task stopped, even after
// a wake-up of the task) leaves the same state as one reported at once.
//
// Kernel analogue: none. The kernel dequeues a sleeping task in schedule()
// on the task's own CPU, so dequeue_task() (where avg_overlap, dur_avg and
// SIS_CACHE's prev_sleep_time are updated) always runs before the
// enqueue of its next wake-up. A user-space runtime may learn of a sleep
// only after the fact (the task marks itself waiting inside its own
// resume and the runtime sees it when the resume returns), so a waker can
// reach WakePlacer::place() first. The contract is in docs/embedding.md
// ("Late sleep reports").
#pragma once

#include "taskplace/detail/config.hpp"

#include "taskplace/types.hpp"

namespace taskplace::detail {

// Invariant: woken_early implies due. `due`: the task ran (task_runs)
// since its last sleep report, so a wake-up now comes before that report;
// `woken_early`, `woken_at`: the first such wake-up and its time, whose
// sleep-side effect (SIS_CACHE's sleep sample, on_wakeup) the report
// applies after the sleep's own, as an early report followed by that
// wake-up would have.
struct SleepLedger {
  Nanoseconds woken_at{0};
  bool due = false;
  bool woken_early = false;
  constexpr bool operator==(const SleepLedger&) const noexcept = default;
};

// A placer that reads no sleep (no overlap, duration or reservation
// policy) keeps nothing.
struct NoSleepLedger {
  constexpr bool operator==(const NoSleepLedger&) const noexcept = default;
};

}  // namespace taskplace::detail
