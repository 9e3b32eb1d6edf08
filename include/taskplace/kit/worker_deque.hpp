// taskplace/kit/worker_deque.hpp: WorkerDeque<T>, one worker's ready queue
// as the Boost.Fiber group and the Asio runtime keep it (CountedWorkerDeque:
// the same, counted in a kit::Machine): a deque under a
// SpinLock (held for one deque operation), its length readable without the
// lock, the owner taking the oldest, a thief the oldest or the one its pick
// chooses. Models kit::WorkerQueue (kit/idle.hpp), so kit::Stealer steals
// from it as it is.
//
// Kernel analogue: a runqueue's cfs_rq list under rq->lock, and
// rq->nr_running, which other CPUs read without the lock.
//
//   taskplace::kit::WorkerDeque<Job*> q;
//   q.push(job);                       // any thread; then read the owner's sleeping flag (below)
//   q.push_owned(job);                 // the owner's thread (it sleeps not)
//   Job* next = q.pop();               // the owner: the oldest, or null
//   Job* got = q.try_steal();          // a thief (kit::Stealer)
//
// A sleeping owner: a pusher stores the length seq_cst (push) and then
// reads the owner's sleeping flag seq_cst; the owner stores that flag
// seq_cst and then reads size(std::memory_order_seq_cst): one of the two
// sees the other, so no wake-up is lost.
#pragma once

#include "taskplace/detail/config.hpp"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>

#include "taskplace/kit/machine.hpp"
#include "taskplace/kit/spin_lock.hpp"
#include "taskplace/types.hpp"

namespace taskplace::kit {

// T: a pointer-like item (the null T{} means "none").
// Thread-safety: push, try_steal, size, drains from any thread; pop and
// push_owned from the owner's thread alone (the drain count has one
// writer).
template <class T>
class WorkerDeque {
 public:
  // Returns: how many items are queued (exact when no push or pop runs).
  std::size_t size(std::memory_order order = std::memory_order_relaxed) const noexcept { return n_.load(order); }
  // Returns: the pops that took the last item queued (WorkerQueue O1).
  std::uint64_t drains() const noexcept { return drained_.load(std::memory_order_relaxed); }

  // Effects: queues x behind the others; the length is stored seq_cst.
  void push(T x) { push_ordered(x, std::memory_order_seq_cst); }
  // Effects: as push(x), from the owner's thread, which then reads no
  //   sleeping flag (its owner is awake: the caller): the length is
  //   stored relaxed, published to thieves by the lock's release.
  void push_owned(T x) { push_ordered(x, std::memory_order_relaxed); }
  // Returns: the oldest item, or T{} when none is queued (then without
  //   taking the lock). `drains`: a pop that takes the last item counts
  //   as a drain; not when the caller queues one again at once (a yield).
  T pop(bool drains = true) {
    if (n_.load(std::memory_order_relaxed) == 0) return T{};
    std::lock_guard lk(lock_);
    if (q_.empty()) return T{};
    T x = q_.front();
    q_.pop_front();
    n_.store(n_.load(std::memory_order_relaxed) - 1, std::memory_order_relaxed);
    if (drains && q_.empty()) drained_.store(drained_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    return x;
  }
  // Returns: under the lock, the item pick(first, last) chooses (an
  //   iterator; last: none), removed; T{} when none.
  template <class Pick>
  T try_steal(const Pick& pick) {
    std::lock_guard lk(lock_);
    if (q_.empty()) return T{};
    const auto it = pick(q_.begin(), q_.end());
    if (it == q_.end()) return T{};
    T x = *it;
    q_.erase(it);
    n_.store(n_.load(std::memory_order_relaxed) - 1, std::memory_order_relaxed);
    return x;
  }
  // Returns: the oldest item, removed; T{} when none.
  T try_steal() {
    return try_steal([](auto first, auto) { return first; });
  }

 private:
  void push_ordered(T x, std::memory_order length_order) {
    std::lock_guard lk(lock_);
    q_.push_back(x);
    n_.store(n_.load(std::memory_order_relaxed) + 1, length_order);
  }
  SpinLock lock_;
  std::deque<T> q_;                   // guarded by lock_
  std::atomic<std::size_t> n_{0};     // q_'s length, written under lock_
  std::atomic<std::uint64_t> drained_{0};
};

// A WorkerDeque whose pushes and removals are also counted in a
// kit::Machine, as worker `owner`'s queued work (Machine::queued,
// Machine::dequeued): the queue of a runtime that keeps its machine state
// in the kit's Machine (the Asio runtime). A kit::WorkerQueue as it is.
template <class T>
struct CountedWorkerDeque {
  Machine* machine = nullptr;
  CpuId owner = 0;
  WorkerDeque<T> d;

  std::size_t size(std::memory_order order = std::memory_order_relaxed) const noexcept { return d.size(order); }
  std::uint64_t drains() const noexcept { return d.drains(); }
  // Returns: whether the machine's overload flag was set by this push.
  // Inlined: a call costs a push more than its body (the caller's live
  // registers saved around it).
  TASKPLACE_ALWAYS_INLINE bool push(T x) {
    d.push(x);
    return machine->queued(owner);
  }
  // Effects: as push(x), from the owner's thread (WorkerDeque::push_owned).
  TASKPLACE_ALWAYS_INLINE bool push_owned(T x) {
    d.push_owned(x);
    return machine->queued(owner);
  }
  T pop(bool drains = true) { return dequeued(d.pop(drains)); }
  template <class Pick>
  T try_steal(const Pick& pick) {
    return dequeued(d.try_steal(pick));
  }
  T try_steal() { return dequeued(d.try_steal()); }

 private:
  T dequeued(T x) {
    if (x != T{}) machine->dequeued(owner);
    return x;
  }
};

}  // namespace taskplace::kit
