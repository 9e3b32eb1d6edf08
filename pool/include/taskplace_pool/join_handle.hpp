// taskplace_pool/join_handle.hpp: JoinHandle<T>, what Pool::spawn
// returns: the task's value or exception, once, to one task (co_await) or
// one thread off the pool (get, wait_for); TaskAbandoned for a task that
// shutdown() destroyed unfinished. A finished task's wake of its joiner
// carries the sync hint, as an exiting task's wake of its parent does.
#pragma once

#include "taskplace/detail/config.hpp"

#include <chrono>
#include <condition_variable>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <utility>

#include "taskplace_pool/core.hpp"
#include "taskplace_pool/wait_list.hpp"

namespace taskplace_pool {

// Thrown by JoinHandle::get() and co_await on a handle whose task
// shutdown() destroyed unfinished (it waited on something nobody could
// signal any more); the task's value or exception never came.
class TaskAbandoned : public std::runtime_error {
 public:
  TaskAbandoned() : std::runtime_error("taskplace_pool::JoinHandle: the task was abandoned at shutdown") {}
};

namespace detail {
// The result slot of a spawned task, shared by the task and its handle.
template <class T>
struct JoinResult {
  std::optional<T> value{};
  template <class U>
  void set(U&& v) { value.emplace(std::forward<U>(v)); }
  T get() { return std::move(*value); }
};
template <>
struct JoinResult<void> {
  void get() const noexcept {}
};

// Invariant: waiters_ holds at most one task, and none once done.
template <class T>
struct JoinState {
  std::mutex m_;
  std::condition_variable cv;  // for threads off the pool
  bool done = false;
  bool abandoned = false;  // shutdown destroyed the task unfinished
  bool taken = false;      // the result was moved out (take)
  JoinResult<T> result{};
  std::exception_ptr error{};
  WaitNodeList waiters_;  // the task awaiting the handle, if one does

  // Returns: whether a task awaiting the handle must wait. Throws:
  // std::logic_error if another task awaits it already. Requires: m_ held.
  bool must_wait() const {
    if (done) return false;
    if (!waiters_.empty()) throw std::logic_error("taskplace_pool::JoinHandle: awaited by two tasks at once");
    return true;
  }

  // Effects: stores the task's value. By the task's root only, before
  // finish(): nobody reads the slot before `done` is published under `m`.
  // Throws what T's move (or copy) throws; nothing is published then.
  template <class U>
  void set_value(U&& v) { result.set(std::forward<U>(v)); }
  // Effects: stores `e` if any (else the value set_value stored stands),
  // marks done, wakes the awaiter.
  void finish(std::exception_ptr e) {
    WaitNode* w = nullptr;
    {
      std::lock_guard lk(m_);
      if (e) error = std::move(e);
      done = true;
      w = waiters_.take_all();
    }
    cv.notify_all();
    // The finishing task ends right after: a sync wake-up.
    wake_all(w, WakeHint::sync);
  }
  // Effects: marks the task done and abandoned (shutdown destroyed it
  // unfinished), so that take() throws TaskAbandoned, and releases the
  // threads blocked in get() or wait_for(). A task awaiting the handle is
  // not woken: it waits on the stopped pool, and shutdown destroys it too.
  void abandon() noexcept {
    {
      std::lock_guard lk(m_);
      abandoned = done = true;
      (void)waiters_.take_all();
    }
    cv.notify_all();
  }
  // Effects: moves the result (or the exception) out: the reader then holds
  // the only reference to it. Call after `done` was seen under `m`.
  // Throws: std::logic_error if it was taken already (a second get() or
  // co_await), TaskAbandoned if shutdown destroyed the task unfinished,
  // else what the task threw.
  T take() {
    {
      std::lock_guard lk(m_);
      if (taken) throw std::logic_error("taskplace_pool::JoinHandle: the result was taken already");
      taken = true;
    }
    if (abandoned) throw TaskAbandoned{};
    if (error) std::rethrow_exception(std::exchange(error, nullptr));
    return result.get();
  }
};
}  // namespace detail

// The handle spawn() returns. `co_await h` inside a task, or h.get() /
// h.wait_for() on a thread off the pool, yields the task's value or
// rethrows its exception, once. Dropping the handle detaches the task.
// Move-only: the result is taken once and one task at a time may await
// it (one waiter slot), so one owner joins.
// Thread-safety: done / wait_for from any thread; get / co_await by the
// owner, once; a second take throws std::logic_error.
template <class T>
class JoinHandle {
 public:
  JoinHandle() = default;
  explicit JoinHandle(std::shared_ptr<detail::JoinState<T>> s) : s_(std::move(s)) {}
  JoinHandle(JoinHandle&&) noexcept = default;
  JoinHandle& operator=(JoinHandle&&) noexcept = default;
  JoinHandle(const JoinHandle&) = delete;
  JoinHandle& operator=(const JoinHandle&) = delete;

  // Returns: whether the handle refers to a task (not default-constructed
  // or moved from).
  bool valid() const noexcept { return static_cast<bool>(s_); }

  // Returns: whether the task finished, or was abandoned by shutdown()
  // (then get() and co_await throw TaskAbandoned).
  bool done() const {
    auto& s = state();
    std::lock_guard lk(s.m_);
    return s.done;
  }
  // Effects: blocks this thread (not a worker) until the task is done (see
  // done()), at most `d`. `d` saturates (taskplace::saturating_ns); a wait
  // of 2^62 ns (146 years) or more has no timeout, as sleep_for's, since
  // the condition variable would add it to steady_clock::now() and
  // overflow (hours::max()). Returns: whether it is.
  template <class Rep, class Period>
  bool wait_for(std::chrono::duration<Rep, Period> d) const {
    check_off_pool();
    auto& s = state();
    std::unique_lock lk(s.m_);
    const auto done = [&] { return s.done; };
    const Nanoseconds ns = taskplace::saturating_ns(d);
    if (ns.count() >= (std::int64_t{1} << 62)) {
      s.cv.wait(lk, done);
      return true;
    }
    return s.cv.wait_for(lk, ns, done);
  }
  // Effects: blocks this thread until the task finished. Returns its value
  // or rethrows its exception. Throws std::logic_error on a worker thread
  // (it would stall the worker the task may need), on an empty handle, and
  // when the result was taken already; TaskAbandoned when shutdown()
  // destroyed the task unfinished (a thread blocked here then returns).
  T get() {
    check_off_pool();
    auto& s = state();
    {
      std::unique_lock lk(s.m_);
      s.cv.wait(lk, [&] { return s.done; });
    }
    return s.take();
  }

  struct awaiter : detail::QueuedAwaiter<detail::JoinState<T>> {
    using detail::QueuedAwaiter<detail::JoinState<T>>::QueuedAwaiter;
    bool await_ready() const {
      std::lock_guard lk(this->owner.m_);
      return this->owner.done;
    }
    T await_resume() { return this->owner.take(); }
  };
  // Throws: std::logic_error on an empty handle; the awaiter throws it
  // when another task awaits the handle already.
  awaiter operator co_await() const { return awaiter{state()}; }

 private:
  static void check_off_pool() {
    if (detail::current_context() != nullptr)
      throw std::logic_error("taskplace_pool::JoinHandle: blocking wait on a worker thread; co_await it");
  }
  detail::JoinState<T>& state() const {
    if (!s_) throw std::logic_error("taskplace_pool::JoinHandle: empty handle");
    return *s_;
  }
  std::shared_ptr<detail::JoinState<T>> s_;
};

}  // namespace taskplace_pool
