// taskplace_pool/pending.hpp: the counts of pending work that tell when a
// stopping pool may stop (quiescence), and the stop flag they are read
// against. Internal to pool.hpp.
#pragma once

#include "taskplace/detail/config.hpp"

#include <atomic>
#include <cstdint>

namespace taskplace_pool::detail {

// Units of work one worker's thread counted pending (tasks it queued
// anywhere, timers it armed) and done (runs it ended, timers it fired);
// written by that worker alone, read by PendingWork::quiescent. Only
// their sums over the workers mean anything: a task counted pending on
// one worker may run and be counted done on another.
struct alignas(64) WorkCounts {
  std::atomic<std::uint64_t> pending{0}, done{0};
};

// The pool's pending work: each worker's WorkCounts, the count of work
// queued from off the pool, and the flag shutdown() raises.
// A wake-up between two workers so touches no line but the waker's
// worker's own (one shared count moved its line at every such hop).
class PendingWork {
 public:
  // Effects: counts one unit of pending work (a task queued, or a timer
  // armed) on self, the calling worker's counts, or on the shared count
  // off the pool (self null).
  void count_pending(WorkCounts* self) noexcept {
    if (self != nullptr) self->pending.fetch_add(1, std::memory_order_seq_cst);
    else external_.fetch_add(1, std::memory_order_seq_cst);
  }
  // Effects: counts one unit of work done (a task's run ended, or a timer
  // fired) on the calling worker's counts.
  static void count_done(WorkCounts& self) noexcept { self.done.fetch_add(1, std::memory_order_seq_cst); }
  // Effects: takes back a unit counted off the pool whose work was never
  // queued (a spawn backing out of a shutdown).
  void back_out() noexcept { external_.fetch_sub(1, std::memory_order_seq_cst); }

  // Effects: from here on the pool stops once quiescent.
  void begin_stop() noexcept { stopping_.store(true, std::memory_order_seq_cst); }
  bool stopping() const noexcept { return stopping_.load(std::memory_order_seq_cst); }

  // Returns: whether shutdown began and no work is pending: every task
  // queued or running and every armed timer counted by count_pending has
  // been counted by count_done. `workers`: a range of pointers to the
  // workers, each with its WorkCounts `counts`.
  // Why the sums can be read one worker at a time: all of the counts'
  // operations are seq_cst, so they have one total order, and every unit
  // of work is counted pending by a unit still pending then (a running
  // task, or a timer that fires: counted done after the wake-up it
  // makes), or off the pool before stopping() is read (spawn). A task
  // woken into the hand-off slot holds its waker's unit instead of one of
  // its own (Pool::enqueue_next): that unit stays pending until the
  // task's run counts it done, which cannot come before the waker's run
  // ends (the slot's task runs on the waker's worker, after it; one moved
  // out of the slot while the waker runs takes a unit of its own first),
  // so the waker holds a pending unit for as long as it runs, as before.
  // The done counts are read first: a unit counted done was counted
  // pending before, so it is in the pending sums read after (pending >=
  // done). A unit still pending when its worker's pending count was read
  // but counted after that read was counted by a unit pending at that
  // read, whose own done comes later still, after every done count was
  // read; following these back reaches a unit counted in a pending sum
  // and in no done sum, so the sums differ. Equal sums therefore mean
  // that nothing was pending. Off the pool, a spawn that counts after the
  // read backs out (spawn's invariant); a wake-up from a thread off the
  // pool is the embedder's to order before shutdown() (its contract).
  template <class Workers>
  bool quiescent(const Workers& workers) const noexcept {
    if (!stopping()) return false;
    std::uint64_t done = 0, pending = 0;
    for (const auto& w : workers) done += w->counts.done.load(std::memory_order_seq_cst);
    for (const auto& w : workers) pending += w->counts.pending.load(std::memory_order_seq_cst);
    pending += external_.load(std::memory_order_seq_cst);
    return pending == done;
  }

 private:
  // Pending work counted off the pool (spawns from other threads, their
  // wake-ups), less the spawns that backed out of a shutdown.
  alignas(64) std::atomic<std::uint64_t> external_{0};
  std::atomic<bool> stopping_{false};
};

}  // namespace taskplace_pool::detail
