// taskplace_pool/core.hpp: what a suspended task and a worker look like to
// the synchronisation primitives (channels, events, join handles, timers).
//
// A spawned task is one TaskControl: the handle to resume, the worker it
// last ran on (the kernel's task_cpu(p), the placer's prev_cpu) and a table
// of the owning pool's entry points. Primitives are not templated on the
// pool: they reach it through that table.
//
//   auto* self = taskplace_pool::detail::current_task();   // on a worker
//   taskplace_pool::detail::wake(self, handle, WakeHint::sync);  // queue it again
#pragma once

#include "taskplace/detail/config.hpp"

#include <coroutine>
#include <cstdint>
#include <stdexcept>

#include "taskplace/types.hpp"

namespace taskplace_pool {

using taskplace::CpuId;
using taskplace::Nanoseconds;
using taskplace::no_cpu;

// What the waker tells the placer about itself (WakePlacer::Wakeup::sync).
// sync: the waking task is about to block, so its worker is about to run
// nothing else (kernel WF_SYNC, which pipes and UNIX sockets pass on every
// read and write wake-up, and an exiting task passes to its parent). It is
// a hint: the waker may still run on. async: nothing is known (kernel
// futex wake-ups). handoff: sync, and more: the waker blocks at once and
// gives its worker to the wakee, which runs there whenever it may, with no
// affine step and no search (the placer's Wakeup::current_cpu, kernel
// WF_CURRENT_CPU); for a request/reply pair that should stay on one worker.
enum class WakeHint : std::uint8_t { async, sync, handoff };

namespace detail {

struct TaskControl;

// The pool's entry points, one static table per pool type. No virtuals:
// plain function pointers, so a TaskControl stays a standard-layout record.
struct PoolOps {
  void (*wake)(void* pool, TaskControl* task, WakeHint hint);  // queue via WakePlacer::place
  void (*block)(void* pool, TaskControl* task);       // about to sleep (reservations)
  void (*timer)(void* pool, TaskControl* task, Nanoseconds delay);     // sleep on this worker
  void (*yield)(void* pool, TaskControl* task);       // back of this worker's queue
};

// One spawned task. Invariant: `resume` is only written by the thread that
// suspended the task or by the one waker that dequeued it from a wait list;
// the wait list's mutex orders the two.
struct TaskControl {
  const PoolOps* ops = nullptr;
  void* pool = nullptr;
  std::coroutine_handle<> resume{};  // innermost suspended coroutine
  std::coroutine_handle<> root{};    // the spawned frame (destroyed if abandoned)
  CpuId last_cpu = no_cpu;           // kernel task_cpu(p); no_cpu before first run
  // When it last ran (kernel se.exec_start): the start of its last run,
  // moved to the moment it blocks or yields when the pool tests steals for
  // cache hotness; never ran: the clock's minimum (cold). Written by the
  // worker running the task, read by a thief under the victim's queue lock.
  Nanoseconds last_ran = Nanoseconds::min();
  std::uint64_t id = 0;
  TaskControl* live_prev = nullptr;  // the pool's list of live tasks
  TaskControl* live_next = nullptr;
  // The link of a worker's inbox (Pool::push); meaningful only while the
  // task is in one, written by its pusher, read by whoever drains it.
  TaskControl* inbox_next = nullptr;
};

// What a worker thread publishes about itself.
struct WorkerContext {
  void* pool = nullptr;
  CpuId cpu = no_cpu;
  TaskControl* task = nullptr;  // the task being resumed, null between tasks
};

inline thread_local WorkerContext* tl_context = nullptr;

// Returns: the context of the worker thread calling, or null off the pool.
inline WorkerContext* current_context() noexcept { return tl_context; }

// Returns: the task running on this thread. Throws std::logic_error when
// called outside a pool task (primitives must be awaited inside one).
inline TaskControl* current_task() {
  auto* c = tl_context;
  if (c == nullptr || c->task == nullptr)
    throw std::logic_error("taskplace_pool: must be awaited from a task running on a pool");
  return c->task;
}

// Effects: records where to resume and hands the task to its pool, which
// asks WakePlacer::place where it runs, passing `hint` as its sync flag
// when the caller is a task on that pool. Called without locks held.
inline void wake(TaskControl* t, std::coroutine_handle<> h, WakeHint hint = WakeHint::async) {
  t->resume = h;
  t->ops->wake(t->pool, t, hint);
}

// Effects: tells the pool the task is about to sleep on its current worker
// (cache-hot reservations). Call before the task is published as a waiter.
inline void about_to_block(TaskControl* t) { t->ops->block(t->pool, t); }

}  // namespace detail
}  // namespace taskplace_pool
