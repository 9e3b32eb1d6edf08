// taskplace_pool/task.hpp: the coroutine task type of the pool.
//
// Provides task<T>, a lazily started coroutine whose result (or exception)
// reaches the coroutine that awaits it. Awaiting a task runs it on the same
// worker by symmetric transfer: it is a call, not a wake-up, so the placer
// never sees it. Kernel analogue: none (a function call inside one thread).
//
//   taskplace_pool::task<int> answer() { co_return 42; }
//   taskplace_pool::task<void> caller() { int x = co_await answer(); (void)x; }
#pragma once

#include "taskplace/detail/config.hpp"

#include <coroutine>
#include <exception>
#include <optional>
#include <stdexcept>
#include <type_traits>
#include <utility>

namespace taskplace_pool {

template <class T = void>
class task;

namespace detail {

struct promise_base {
  std::coroutine_handle<> continuation{};
  std::exception_ptr error{};

  struct final_awaiter {
    bool await_ready() const noexcept { return false; }
    template <class P>
    std::coroutine_handle<> await_suspend(std::coroutine_handle<P> h) const noexcept {
      // Invariant: a task is awaited before it runs, so a continuation is
      // always set when it finishes; noop_coroutine only for safety.
      auto c = h.promise().continuation;
      return c ? c : std::noop_coroutine();
    }
    void await_resume() const noexcept {}
  };

  std::suspend_always initial_suspend() const noexcept { return {}; }
  final_awaiter final_suspend() const noexcept { return {}; }
  void unhandled_exception() noexcept { error = std::current_exception(); }
};

template <class T>
struct promise final : promise_base {
  std::optional<T> value{};
  task<T> get_return_object() noexcept;
  template <class U>
    requires std::is_convertible_v<U&&, T>
  void return_value(U&& v) { value.emplace(std::forward<U>(v)); }
  T take() {
    if (error) std::rethrow_exception(error);
    return std::move(*value);
  }
};

template <>
struct promise<void> final : promise_base {
  task<void> get_return_object() noexcept;
  void return_void() const noexcept {}
  void take() const {
    if (error) std::rethrow_exception(error);
  }
};

}  // namespace detail

// A lazily started coroutine returning T. Move-only; owns its frame.
// Effects of `co_await t`: runs t to completion on the awaiting worker
// (t may itself block on channels and events and resume elsewhere), then
// returns its value or rethrows its exception.
// Thread-safety: a task is awaited once, by one coroutine.
template <class T>
class [[nodiscard]] task {
 public:
  using promise_type = detail::promise<T>;
  using value_type = T;

  task() noexcept = default;
  explicit task(std::coroutine_handle<promise_type> h) noexcept : h_(h) {}
  task(task&& o) noexcept : h_(std::exchange(o.h_, {})) {}
  task& operator=(task&& o) noexcept {
    if (this != &o) {
      reset();
      h_ = std::exchange(o.h_, {});
    }
    return *this;
  }
  task(const task&) = delete;
  task& operator=(const task&) = delete;
  ~task() { reset(); }

  bool valid() const noexcept { return static_cast<bool>(h_); }

  struct awaiter {
    std::coroutine_handle<promise_type> h;
    bool await_ready() const noexcept { return !h || h.done(); }
    std::coroutine_handle<> await_suspend(std::coroutine_handle<> parent) const noexcept {
      h.promise().continuation = parent;
      return h;
    }
    T await_resume() const {
      if (!h) throw std::logic_error("taskplace_pool::task: awaiting an empty task");
      return h.promise().take();
    }
  };
  // Precondition: valid(); awaiting an empty (moved-from) task throws
  // std::logic_error in the awaiter.
  awaiter operator co_await() const& noexcept { return awaiter{h_}; }
  awaiter operator co_await() const&& noexcept { return awaiter{h_}; }

  // For the pool's root coroutine only.
  std::coroutine_handle<promise_type> handle() const noexcept { return h_; }

 private:
  void reset() noexcept {
    if (h_) h_.destroy();
    h_ = {};
  }
  std::coroutine_handle<promise_type> h_{};
};

namespace detail {
template <class T>
task<T> promise<T>::get_return_object() noexcept {
  return task<T>{std::coroutine_handle<promise<T>>::from_promise(*this)};
}
inline task<void> promise<void>::get_return_object() noexcept {
  return task<void>{std::coroutine_handle<promise<void>>::from_promise(*this)};
}
}  // namespace detail

}  // namespace taskplace_pool
