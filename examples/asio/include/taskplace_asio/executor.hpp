// taskplace_asio/executor.hpp: an Asio executor that names a task, so that
// Asio's own operations wake it through the runtime's placement:
// boost::asio::post(ex, f), boost::asio::defer(ex, f), and a completion
// handler bound to it (boost::asio::bind_executor(ex, h)): a timer's, a
// socket's. Each is Runtime::post(task, f): the placer picks the worker.
// defer() says the caller's handler ends right after (a continuation):
// the wake-up is sync (kernel WF_SYNC); post() and dispatch() are not.
//
//   taskplace_asio::TaskExecutor ex{rt, &session};
//   timer.async_wait(boost::asio::bind_executor(ex, [&](auto ec) { ... }));
#pragma once

#include <utility>

#include <boost/asio/execution_context.hpp>

#include "taskplace_asio/runtime.hpp"

namespace taskplace_asio {

// A Networking TS executor (Asio's `Executor` requirements). Cheap to
// copy; the runtime outlives it. Work counts are not tracked: join()
// waits for handlers posted, not for operations outstanding (keep a
// post_after or a posted handler pending for those).
template <class Rt>
class TaskExecutor {
 public:
  TaskExecutor(Rt& rt, Task task) noexcept : rt_(&rt), task_(task) {}

  // The io_context of the calling worker, else the first worker's: where
  // Asio's I/O objects made from this executor live.
  boost::asio::execution_context& context() const noexcept {
    return rt_->context(rt_->current_worker().value_or(0));
  }
  void on_work_started() const noexcept {}
  void on_work_finished() const noexcept {}

  template <class F, class A>
  void dispatch(F&& f, const A&) const {
    rt_->post(task_, std::forward<F>(f));
  }
  template <class F, class A>
  void post(F&& f, const A&) const {
    rt_->post(task_, std::forward<F>(f));
  }
  template <class F, class A>
  void defer(F&& f, const A&) const {
    rt_->post(task_, std::forward<F>(f), /*sync=*/true);
  }

  Task task() const noexcept { return task_; }
  Rt& runtime() const noexcept { return *rt_; }
  friend bool operator==(const TaskExecutor& a, const TaskExecutor& b) noexcept {
    return a.rt_ == b.rt_ && a.task_ == b.task_;
  }
  friend bool operator!=(const TaskExecutor& a, const TaskExecutor& b) noexcept { return !(a == b); }

 private:
  Rt* rt_;
  Task task_;
};

template <class Rt>
TaskExecutor(Rt&, Task) -> TaskExecutor<Rt>;

}  // namespace taskplace_asio
