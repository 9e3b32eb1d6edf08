// taskplace_asio/queue.hpp: the Asio runtime's queued handler and its
// per-worker ready queue (a kit::WorkerQueue), and the flat topology of
// its workers. See runtime.hpp for why the queue is beside the io_context.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <utility>
#include <vector>

#include "taskplace/kit/machine.hpp"
#include "taskplace/stats.hpp"
#include "taskplace/topology/table.hpp"
#include "taskplace/types.hpp"

namespace taskplace_asio {

using Task = const void*;  // a task's handle; its address names it

namespace detail {
template <class W>
struct SharedTraits : W {
  using Stats = taskplace::AtomicStats;  // one placer, every thread
};

// A queued handler: its task, and whether the task is the handler's own
// (post without a task: erased from the store when it has run).
struct Node {
  Task task = nullptr;
  bool own = false;
  virtual void run() = 0;
  virtual ~Node() = default;
};
template <class F>
struct NodeOf final : Node {
  explicit NodeOf(F&& fn) : f(std::move(fn)) {}
  void run() override { f(); }
  F f;
};

// A task's lock, where its sleeps are reported (Runtime: a sleep-reading
// traits set): it orders the task's wake-ups (its placements) against its
// run and sleep reports. A test-and-test-and-set lock: taken free, one
// exchange; held for a placement or a report, a few hundred nanoseconds.
class TaskLock {
 public:
  void lock() noexcept {
    while (locked_.exchange(true, std::memory_order_acquire))
      while (locked_.load(std::memory_order_relaxed)) std::this_thread::yield();
  }
  void unlock() noexcept { locked_.store(false, std::memory_order_release); }

 private:
  std::atomic<bool> locked_{false};
};

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

// One worker's ready handlers as a thief sees them (kit::WorkerQueue). The
// owner takes the oldest; a thief too (the one waiting longest).
struct Queue {
  taskplace::kit::Machine* machine = nullptr;
  taskplace::CpuId owner = 0;
  std::mutex m;
  std::deque<Node*> q;
  std::atomic<std::size_t> n{0};

  std::size_t size() const noexcept { return n.load(std::memory_order_seq_cst); }
  template <class Pick>
  Node* try_steal(const Pick& pick) {
    std::lock_guard lk(m);
    if (q.empty()) return nullptr;
    const auto it = pick(q.begin(), q.end());
    if (it == q.end()) return nullptr;
    Node* x = *it;
    q.erase(it);
    n.fetch_sub(1, std::memory_order_relaxed);
    machine->dequeued(owner);
    return x;
  }
  Node* try_steal() {
    return try_steal([](auto first, auto) { return first; });
  }
  // Returns: whether the machine's overload flag was set by this push.
  bool push(Node* x) {
    {
      std::lock_guard lk(m);
      q.push_back(x);
      n.fetch_add(1, std::memory_order_seq_cst);
    }
    return machine->queued(owner);
  }
};

inline taskplace::TableTopology flat_topology(std::uint32_t workers) {
  if (workers == 0) throw std::invalid_argument("taskplace_asio::Runtime: workers must be >= 1");
  std::vector<std::uint32_t> cores(workers), same(workers, 0);
  for (std::uint32_t i = 0; i < workers; ++i) cores[i] = i;
  return taskplace::TableTopology(std::move(cores), same, same);
}
}  // namespace detail

}  // namespace taskplace_asio
