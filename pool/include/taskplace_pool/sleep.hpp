// taskplace_pool/sleep.hpp: sleep_for and yield: a task giving
// up its worker for a while (a timer on the worker; the wake-up that ends
// it is placed like any other, with no waker task) or until the tasks
// queued behind it ran.
#pragma once

#include "taskplace/detail/config.hpp"

#include <chrono>
#include <coroutine>
#include <cstdint>

#include "taskplace_pool/core.hpp"

namespace taskplace_pool {

namespace detail {
// Returns: `d` in nanoseconds, saturated (taskplace::saturating_ns): zero
// for a negative (or NaN) duration, Nanoseconds::max() for one at or past
// 2^62 ns (146 years) (which a plain duration_cast would overflow, e.g.
// hours::max()).
template <class Rep, class Period>
Nanoseconds saturating_ns(std::chrono::duration<Rep, Period> d) {
  const Nanoseconds ns = taskplace::saturating_ns(d);
  if (ns <= Nanoseconds{0}) return Nanoseconds{0};
  if (ns.count() >= (std::int64_t{1} << 62)) return Nanoseconds::max();
  return ns;
}
}  // namespace detail

// Awaitable: the task sleeps for `d` (a timer on its worker; the wake-up
// that ends it is placed like any other, with no waker task). A negative
// duration is zero: no sleep. One at or past 2^62 ns (146 years;
// nanoseconds::max(), hours::max()) is forever: the task waits until
// shutdown(), which destroys it and counts it abandoned (Pool::timer_task).
struct sleep_for {
  Nanoseconds d;
  template <class Rep, class Period>
  explicit sleep_for(std::chrono::duration<Rep, Period> dur) : d(detail::saturating_ns(dur)) {}
  bool await_ready() const noexcept { return d <= Nanoseconds{0}; }
  void await_suspend(std::coroutine_handle<> h) const {
    auto* self = detail::current_task();
    self->resume = h;
    detail::about_to_block(self);
    self->ops->timer(self->pool, self, d);
  }
  void await_resume() const noexcept {}
};

// Awaitable: requeue at the back of this worker's queue.
struct yield {
  bool await_ready() const noexcept { return false; }
  void await_suspend(std::coroutine_handle<> h) const {
    auto* self = detail::current_task();
    self->resume = h;
    self->ops->yield(self->pool, self);
  }
  void await_resume() const noexcept {}
};

}  // namespace taskplace_pool
