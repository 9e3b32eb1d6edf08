// taskplace_asio/sleeps.hpp: what the Asio runtime keeps per task to report
// its handlers' runs and its sleeps, late, for the traits sets whose
// policies read them (Runtime, runtime.hpp: "Sleeps").
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <thread>
#include <type_traits>

#include "taskplace/kit/task_store.hpp"

namespace taskplace_asio::detail {

// The lock of a task's sleep bookkeeping (when the runtime's traits read
// sleeps): it orders the task's wake-ups (its placements) against its run
// and sleep reports; held a few hundred nanoseconds.
using TaskLock = taskplace::kit::SpinLock;

// One task's handlers as its sleep reports see them (Runtime, where the
// traits read sleeps): how many are queued or running (`active`), how many
// of those were posted after a handler of the task returned and before
// its report (`after_return`), and how many handlers returned and are
// not reported yet (`returning`). A handler's end is a sleep when every
// other handler of the task came after its return (the task was asleep
// when they were posted), else a stop (it was runnable). Members under
// the task's lock, but returned() (before the lock) and report_outstanding().
// Assignment (the store's reset of a reused entry) copies the counts and
// leaves the lock as it is (free).
struct TaskSleeps {
  TaskLock lock;
  std::uint32_t active = 0;
  std::uint32_t after_return = 0;
  std::atomic<std::uint32_t> returning{0};

  TaskSleeps() = default;
  TaskSleeps& operator=(const TaskSleeps& o) noexcept {
    active = o.active;
    after_return = o.after_return;
    returning.store(o.returning.load(std::memory_order_relaxed), std::memory_order_relaxed);
    return *this;
  }
  // Effects: a handler of the task was posted (its placement made).
  void posted() noexcept {
    ++active;
    if (returning.load(std::memory_order_seq_cst) > 0) ++after_return;
  }
  // Effects: a handler of the task returned; its report follows. Before
  // the lock: a post from here on counts as after the return.
  void returned() noexcept { returning.fetch_add(1, std::memory_order_seq_cst); }
  // Returns: whether the returned handler's end is a sleep (else a stop).
  // Call reported() once the report is made.
  bool ends_in_sleep() noexcept {
    if (active > 0) --active;
    const bool slept = active <= after_return;
    after_return = 0;
    return slept;
  }
  void reported() noexcept { returning.fetch_sub(1, std::memory_order_seq_cst); }
  // Returns: whether a handler returned and its report is not made yet:
  // the task's next handler waits for it.
  bool report_outstanding() const noexcept { return returning.load(std::memory_order_seq_cst) > 0; }
};

struct NoSleeps {};
struct NoLock {};

// A task's entry in the runtime's kit::TaskStore: the placer's state
// (`Placement`, WakePlacer::task_state) and, where sleeps are reported
// (`Reports`), its lock and its handlers' count; nothing more otherwise.
template <class Placement, bool Reports>
struct TaskState {
  Placement placement{};
  // The end of its last handler (ns on the runtime's clock; INT64_MIN:
  // never ran, or no cache-hot test reads it), written by the worker
  // that ran it, read by its wakers: through std::atomic_ref, relaxed
  // (the store resets an entry by assignment).
  alignas(8) std::int64_t last_ran = INT64_MIN;
  [[no_unique_address]] std::conditional_t<Reports, TaskSleeps, NoSleeps> sleeps{};
};

// Returns: the task's lock, held, where sleeps are reported; else nothing
// (no lock: the other traits sets pay nothing).
template <class Placement, bool Reports>
auto lock_task(TaskState<Placement, Reports>& s) noexcept {
  if constexpr (Reports) return std::unique_lock<TaskLock>{s.sleeps.lock};
  else return NoLock{};
}

}  // namespace taskplace_asio::detail
