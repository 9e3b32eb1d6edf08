// taskplace_pool/root.hpp: a parked worker's futex, and the root coroutine
// of a spawned task (its record lives in the root's promise). Internal to
// pool.hpp.
#pragma once

#include "taskplace/detail/config.hpp"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <coroutine>
#include <cstdint>
#include <ctime>
#include <exception>

#include "taskplace/types.hpp"
#include "taskplace_pool/core.hpp"

namespace taskplace_pool::detail {

inline void futex_wait(std::atomic<std::uint32_t>& word, std::uint32_t expected, Nanoseconds timeout) {
  static_assert(sizeof(std::atomic<std::uint32_t>) == sizeof(std::uint32_t));
  timespec ts{};
  timespec* tp = nullptr;
  if (timeout > Nanoseconds{0}) {
    ts.tv_sec = static_cast<time_t>(timeout.count() / 1'000'000'000);
    ts.tv_nsec = static_cast<long>(timeout.count() % 1'000'000'000);
    tp = &ts;
  }
  ::syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), FUTEX_WAIT_PRIVATE, expected, tp,
            nullptr, 0);
}
inline void futex_wake(std::atomic<std::uint32_t>& word) {
  ::syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), FUTEX_WAKE_PRIVATE, 1, nullptr,
            nullptr, 0);
}
// The root coroutine of a spawned task: owns the task's record (in its
// promise) and destroys itself when the task ends.
template <class Pool>
struct Root {
  struct promise_type {
    typename Pool::record_type rec{};
    Pool* pool;
    template <class... A>
    explicit promise_type(Pool& owner, A&&...) noexcept : pool(&owner) {}
    Root get_return_object() noexcept {
      return Root{std::coroutine_handle<promise_type>::from_promise(*this)};
    }
    std::suspend_always initial_suspend() const noexcept { return {}; }
    struct final_awaiter {
      bool await_ready() const noexcept { return false; }
      void await_suspend(std::coroutine_handle<promise_type> self) const noexcept {
        auto& pr = self.promise();
        pr.pool->finished(pr.rec);
        self.destroy();
      }
      void await_resume() const noexcept {}
    };
    final_awaiter final_suspend() const noexcept { return {}; }
    void return_void() const noexcept {}
    void unhandled_exception() const noexcept { std::terminate(); }  // the body catches all
  };
  std::coroutine_handle<promise_type> h;
};

}  // namespace taskplace_pool::detail
