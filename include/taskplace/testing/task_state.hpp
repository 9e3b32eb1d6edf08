// taskplace/testing/task_state.hpp: whether two tasks' placement states
// hold the same values, for tests that run one stream of events two ways
// (early and late sleep reports, a fast path and the full decision).
//
//   bool same = taskplace::testing::same_task_state<Placer>(a.task, b.task);
#pragma once

#include "taskplace/detail/config.hpp"

namespace taskplace::testing {

// Returns: whether x and y, task_states of placers with Placer's policies,
//   agree on every field a later decision or report reads: the recent
//   CPU, the sleep ledger, the flips and last wakee, and (as the policies
//   keep them) the overlap, the run duration and the reservation's sleep.
//   A stamp not in use (an overlap with no open wake-up) is not compared.
// Complexity: O(1). Thread-safety: reads only.
template <class Placer, class X, class Y>
bool same_task_state(const X& x, const Y& y) {
  if (x.recent_cpu != y.recent_cpu || !(x.ledger == y.ledger)) return false;
  if (x.flips.flips.load() != y.flips.flips.load() || x.flips.last_wakee.load() != y.flips.last_wakee.load())
    return false;
  if constexpr (Placer::tracking_overlap)
    if (x.overlap.avg != y.overlap.avg || x.overlap.woke != y.overlap.woke ||
        (x.overlap.woke && x.overlap.woke_at != y.overlap.woke_at))
      return false;
  if constexpr (Placer::tracking_duration)
    if (x.duration.avg != y.duration.avg || x.duration.ran != y.duration.ran ||
        x.duration.running != y.duration.running || x.duration.measured != y.duration.measured)
      return false;
  if constexpr (Placer::reserving)
    if (x.sleep.sleep_avg != y.sleep.sleep_avg || x.sleep.asleep != y.sleep.asleep ||
        x.sleep.last_dequeue != y.sleep.last_dequeue)
      return false;
  return true;
}

}  // namespace taskplace::testing
