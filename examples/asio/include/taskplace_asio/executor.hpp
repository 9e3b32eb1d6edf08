// taskplace_asio/executor.hpp: an Asio executor that names a task, so that
// Asio's own operations wake it through the runtime's placement:
// boost::asio::post(ex, f), boost::asio::defer(ex, f), a completion
// handler bound to it (boost::asio::bind_executor(ex, h)): a timer's, a
// socket's; and C++20 coroutines spawned on it (boost::asio::co_spawn with
// use_awaitable), each of whose resumptions is a handler of the task. Every
// one is Runtime::post(task, f): the placer picks the worker, with the
// handler running on the calling worker as the waker.
//
//   taskplace_asio::TaskExecutor ex{rt, &session};
//   timer.async_wait(boost::asio::bind_executor(ex, [&](auto ec) { ... }));
//   boost::asio::co_spawn(ex, serve(), boost::asio::detached);
//
// An executor in the standard form (Asio's execution::executor), so that
// boost::asio::any_io_executor, the executor of awaitable<T>, holds one:
//   execute(f)                        Runtime::post(task, f); never inline
//   query(execution::context)         the calling worker's io_context, else
//                                     the first worker's: where Asio's I/O
//                                     objects made from it live
//   query(execution::blocking)        blocking.never
//   require(outstanding_work.tracked) a copy that keeps join() waiting while
//                                     it lives (an operation in flight: a
//                                     timer's wait, a coroutine suspended on
//                                     one); untracked (the default) does not
//   require(relationship.continuation) a copy whose wake-ups are sync (kernel
//                                     WF_SYNC: the caller's handler ends
//                                     right after, as defer() says); fork
//                                     (the default) is not
// The runtime outlives every copy.
#pragma once

#include <type_traits>
#include <utility>

#include <boost/asio/execution.hpp>
#include <boost/asio/execution_context.hpp>

#include "taskplace_asio/runtime.hpp"

namespace taskplace_asio {

template <class Rt>
class TaskExecutor {
 public:
  TaskExecutor(Rt& rt, Task task) noexcept : rt_(&rt), task_(task) {}
  TaskExecutor(const TaskExecutor& o) noexcept : rt_(o.rt_), task_(o.task_), tracked_(o.tracked_), sync_(o.sync_) {
    if (tracked_) rt_->work_started();
  }
  TaskExecutor(TaskExecutor&& o) noexcept : rt_(o.rt_), task_(o.task_), tracked_(o.tracked_), sync_(o.sync_) {
    o.tracked_ = false;
  }
  TaskExecutor& operator=(const TaskExecutor& o) noexcept {
    if (this != &o) *this = TaskExecutor(o);
    return *this;
  }
  TaskExecutor& operator=(TaskExecutor&& o) noexcept {
    if (this == &o) return *this;
    if (tracked_) rt_->work_finished();
    rt_ = o.rt_, task_ = o.task_, tracked_ = o.tracked_, sync_ = o.sync_;
    o.tracked_ = false;
    return *this;
  }
  ~TaskExecutor() {
    if (tracked_) rt_->work_finished();
  }

  // Effects: f as a wake-up of the task (Runtime::post); after stop(), f
  //   is destroyed unrun (a coroutine's frame with it).
  template <class F>
  void execute(F&& f) const {
    rt_->post(task_, std::forward<F>(f), sync_);
  }

  boost::asio::execution_context& query(boost::asio::execution::context_t) const noexcept {
    return rt_->context(rt_->current_worker().value_or(0));
  }
  static constexpr boost::asio::execution::blocking_t query(boost::asio::execution::blocking_t) noexcept {
    return boost::asio::execution::blocking.never;
  }
  boost::asio::execution::outstanding_work_t query(boost::asio::execution::outstanding_work_t) const noexcept {
    if (tracked_) return boost::asio::execution::outstanding_work.tracked;
    return boost::asio::execution::outstanding_work.untracked;
  }
  boost::asio::execution::relationship_t query(boost::asio::execution::relationship_t) const noexcept {
    if (sync_) return boost::asio::execution::relationship.continuation;
    return boost::asio::execution::relationship.fork;
  }

  TaskExecutor require(boost::asio::execution::blocking_t::never_t) const noexcept { return *this; }
  TaskExecutor require(boost::asio::execution::outstanding_work_t::tracked_t) const noexcept {
    return with(true, sync_);
  }
  TaskExecutor require(boost::asio::execution::outstanding_work_t::untracked_t) const noexcept {
    return with(false, sync_);
  }
  TaskExecutor require(boost::asio::execution::relationship_t::continuation_t) const noexcept {
    return with(tracked_, true);
  }
  TaskExecutor require(boost::asio::execution::relationship_t::fork_t) const noexcept { return with(tracked_, false); }

  Task task() const noexcept { return task_; }
  Rt& runtime() const noexcept { return *rt_; }
  friend bool operator==(const TaskExecutor& a, const TaskExecutor& b) noexcept {
    return a.rt_ == b.rt_ && a.task_ == b.task_ && a.tracked_ == b.tracked_ && a.sync_ == b.sync_;
  }
  friend bool operator!=(const TaskExecutor& a, const TaskExecutor& b) noexcept { return !(a == b); }

 private:
  TaskExecutor with(bool tracked, bool sync) const noexcept {
    TaskExecutor e{*rt_, task_};
    e.sync_ = sync;
    if (tracked) rt_->work_started();
    e.tracked_ = tracked;
    return e;
  }

  Rt* rt_;
  Task task_;
  bool tracked_ = false;
  bool sync_ = false;
};

template <class Rt>
TaskExecutor(Rt&, Task) -> TaskExecutor<Rt>;

// Returns: the task `ex` names when it is a TaskExecutor<Rt> or holds one
//   (an any_io_executor: a coroutine's), else null.
template <class Rt, class Ex>
Task task_of(const Ex& ex) noexcept {
  if constexpr (std::is_same_v<Ex, TaskExecutor<Rt>>) {
    return ex.task();
  } else if constexpr (requires { ex.template target<TaskExecutor<Rt>>(); }) {
    const auto* t = ex.template target<TaskExecutor<Rt>>();
    return t != nullptr ? t->task() : nullptr;
  } else {
    return nullptr;
  }
}

}  // namespace taskplace_asio
