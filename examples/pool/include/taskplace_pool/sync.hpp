// taskplace_pool/sync.hpp: the blocking primitives of the example pool:
// Event, Channel<T> (bounded, unbounded, rendezvous), JoinHandle<T>,
// sleep_for and yield.
//
// Every wake-up of a waiting task goes through the pool's WakePlacer: the
// waker is the task running on this worker (none off the pool), the wakee
// the task woken, its prev CPU the worker it last ran on. Kernel analogue:
// try_to_wake_up() called from a pipe or futex wake. Channel wake-ups carry
// the sync hint by default (as pipe and UNIX socket wake-ups carry WF_SYNC),
// a finished task's wake of its joiner always (as an exiting task's wake of
// its parent does), Event::set only when asked (futex wake-ups do not).
//
//   taskplace_pool::Channel<int> ch{16};
//   co_await ch.send(1); std::optional<int> v = co_await ch.recv();
#pragma once

#include <chrono>
#include <condition_variable>
#include <coroutine>
#include <cstddef>
#include <deque>
#include <exception>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <ratio>
#include <stdexcept>
#include <utility>
#include <vector>

#include "taskplace_pool/core.hpp"

namespace taskplace_pool {

// Raised by send() on a closed channel.
class ChannelClosed : public std::runtime_error {
 public:
  ChannelClosed() : std::runtime_error("taskplace_pool::Channel: send on a closed channel") {}
};

namespace detail {
struct Waiter {
  TaskControl* task;
  std::coroutine_handle<> handle;
};

// A FIFO of waiting awaiters threaded through their `next_waiter` member,
// so a waker reaches the first waiter through the list's head, which lives
// beside the lock it holds, and the awaiter it is about to serve anyway; a
// std::deque of pointers costs one more cache line (its block) per wake-up
// across workers, and an allocation per channel. Nodes are the awaiters in
// the suspended tasks' frames: they stay put while queued, and a node is
// not touched once it has been popped and its task woken.
// Invariant: head_ == nullptr iff tail_ == nullptr; tail_->next_waiter ==
// nullptr. Not thread-safe: the owner's lock guards it.
template <class Node>
class WaitList {
 public:
  WaitList() = default;
  WaitList(const WaitList&) = delete;
  WaitList& operator=(const WaitList&) = delete;

  bool empty() const noexcept { return head_ == nullptr; }
  // Requires: !empty().
  Node* front() const noexcept { return head_; }
  void push_back(Node* n) noexcept {
    n->next_waiter = nullptr;
    if (tail_ != nullptr)
      tail_->next_waiter = n;
    else
      head_ = n;
    tail_ = n;
  }
  // Requires: !empty().
  void pop_front() noexcept {
    head_ = head_->next_waiter;
    if (head_ == nullptr) tail_ = nullptr;
  }
  // Effects: empties the list. Returns: its old head; the nodes stay
  // linked through next_waiter, in order.
  Node* take_all() noexcept {
    Node* h = head_;
    head_ = tail_ = nullptr;
    return h;
  }

 private:
  Node* head_ = nullptr;
  Node* tail_ = nullptr;
};
}  // namespace detail

// A manual-reset event. set() wakes every waiter, in the order they came.
// Thread-safety: every member may be called from any thread; waiting only
// inside a pool task.
class Event {
 public:
  // Effects: sets the event and wakes every waiting task (one placement
  // each; `hint` = sync if the caller blocks right after). Complexity:
  // O(waiters).
  void set(WakeHint hint = WakeHint::async) {
    std::vector<detail::Waiter> ws;
    {
      std::lock_guard lk(m_);
      set_ = true;
      ws.swap(waiters_);
    }
    for (auto& w : ws) detail::wake(w.task, w.handle, hint);
  }
  void reset() {
    std::lock_guard lk(m_);
    set_ = false;
  }
  bool is_set() const {
    std::lock_guard lk(m_);
    return set_;
  }

  struct wait_awaiter {
    Event& e;
    bool await_ready() const { return e.is_set(); }
    bool await_suspend(std::coroutine_handle<> h) {
      auto* self = detail::current_task();
      std::lock_guard lk(e.m_);
      if (e.set_) return false;
      detail::about_to_block(self);
      e.waiters_.push_back({self, h});
      return true;  // `this` may be resumed elsewhere from here: not touched again
    }
    void await_resume() const noexcept {}
  };
  // Returns: an awaitable that completes once the event is set.
  wait_awaiter wait() noexcept { return wait_awaiter{*this}; }

 private:
  mutable std::mutex m_;
  bool set_ = false;
  std::vector<detail::Waiter> waiters_;
};

// A FIFO channel of T. capacity == 0: rendezvous (a send waits for a
// receiver); Channel<T>::unbounded: never full. Its wake-ups (a send waking
// a receiver, a receive waking a sender) pass `hint` to the placer: sync by
// default, as a pipe's do, since a sender usually goes on to wait for the
// reply or for room; a producer that keeps running after each send (a
// fan-out, a stream) is better described with WakeHint::async, and a
// request/reply pair that should share a worker with WakeHint::handoff.
// Invariant: receivers wait only while the buffer is empty, senders only
// while it is full.
// Thread-safety: try_send / try_recv / close from any thread; send / recv
// awaited inside pool tasks.
template <class T>
class Channel {
 public:
  static constexpr std::size_t unbounded = std::numeric_limits<std::size_t>::max();

  explicit Channel(std::size_t capacity = unbounded, WakeHint hint = WakeHint::sync)
      : cap_(capacity), hint_(hint) {}
  Channel(const Channel&) = delete;
  Channel& operator=(const Channel&) = delete;

  struct send_awaiter;
  struct recv_awaiter;

  // Returns: awaitable; completes once `v` is in the buffer or handed to a
  // receiver; throws ChannelClosed if the channel is (or gets) closed.
  send_awaiter send(T v) { return send_awaiter{*this, std::move(v)}; }
  // Returns: awaitable yielding the next value, or nullopt once closed and
  // drained.
  recv_awaiter recv() noexcept { return recv_awaiter{*this}; }

  // Effects: non-blocking send. Returns: false if full; throws if closed.
  // Exception safety: strong for the channel; if T's move throws, the
  // receiver it was for stays queued (a later send or close() wakes it).
  bool try_send(T v) {
    std::unique_lock lk(m_);
    if (closed_) throw ChannelClosed{};
    if (!receivers_.empty()) {
      recv_awaiter* r = receivers_.front();
      r->value.emplace(std::move(v));  // may throw: r not dequeued yet
      receivers_.pop_front();
      const detail::Waiter w = r->waiter;
      lk.unlock();
      detail::wake(w.task, w.handle, hint_);
      return true;
    }
    if (buf_.size() >= cap_) return false;
    buf_.push_back(std::move(v));
    return true;
  }

  // Effects: non-blocking receive. Returns: a value, or nullopt if none.
  // Exception safety: see take_locked.
  std::optional<T> try_recv() {
    std::unique_lock lk(m_);
    std::optional<T> out;
    take_then_wake(lk, out);
    return out;
  }

  // Effects: closes; waiting receivers get nullopt, waiting senders throw.
  void close() {
    std::vector<detail::Waiter> ws;
    {
      std::lock_guard lk(m_);
      closed_ = true;
      // Every node is read here, under the lock, before any task is woken
      // (a woken task's frame, and the node in it, may be gone at once).
      for (auto* r = receivers_.take_all(); r != nullptr; r = r->next_waiter)
        ws.push_back(r->waiter);
      for (auto* s = senders_.take_all(); s != nullptr; s = s->next_waiter) {
        s->failed = true;
        ws.push_back(s->waiter);
      }
    }
    for (auto& w : ws) detail::wake(w.task, w.handle);
  }

  std::size_t size() const {
    std::lock_guard lk(m_);
    return buf_.size();
  }

  struct send_awaiter {
    Channel& ch;
    T v;
    detail::Waiter waiter{};
    send_awaiter* next_waiter = nullptr;  // the channel's senders_ link
    bool failed = false;

    bool await_ready() const noexcept { return false; }
    bool await_suspend(std::coroutine_handle<> h) {
      auto* self = detail::current_task();
      std::unique_lock lk(ch.m_);
      if (ch.closed_) {
        failed = true;
        return false;
      }
      if (!ch.receivers_.empty()) {
        recv_awaiter* r = ch.receivers_.front();
        r->value.emplace(std::move(v));  // may throw (to the sender): r stays queued
        ch.receivers_.pop_front();
        const detail::Waiter w = r->waiter;
        lk.unlock();
        detail::wake(w.task, w.handle, ch.hint_);
        return false;
      }
      if (ch.buf_.size() < ch.cap_) {
        ch.buf_.push_back(std::move(v));
        return false;
      }
      waiter = {self, h};
      detail::about_to_block(self);
      ch.senders_.push_back(this);
      return true;
    }
    void await_resume() const {
      if (failed) throw ChannelClosed{};
    }
  };

  struct recv_awaiter {
    Channel& ch;
    std::optional<T> value{};
    detail::Waiter waiter{};
    recv_awaiter* next_waiter = nullptr;  // the channel's receivers_ link

    bool await_ready() const noexcept { return false; }
    bool await_suspend(std::coroutine_handle<> h) {
      auto* self = detail::current_task();
      std::unique_lock lk(ch.m_);
      if (!ch.buf_.empty() || !ch.senders_.empty() || ch.closed_) {
        ch.take_then_wake(lk, value);  // may throw (to the receiver): see take_locked
        return false;
      }
      waiter = {self, h};
      detail::about_to_block(self);
      ch.receivers_.push_back(this);
      return true;
    }
    std::optional<T> await_resume() { return std::move(value); }
  };

 private:
  // Effects: takes the next value into `out` (if any); sets `w` to the
  // sender whose value it took or moved into the buffer, to be woken.
  // Every move of a T comes before the waiter it serves is dequeued, so a
  // throwing move loses no waiter. Exception safety: strong (nothing
  // changed, every waiter still queued), except when a blocked sender's
  // value went into the full buffer and moving the head out then threw:
  // basic, the sender is served (`w` set, to be woken all the same) and
  // the buffer holds one value over its capacity until the next receive
  // (the head as its failed move left it); nothing was received.
  void take_locked(std::optional<T>& out, detail::Waiter& w) {
    if (!buf_.empty()) {
      if (!senders_.empty()) {  // full: the first sender's value refills it
        send_awaiter* s = senders_.front();
        buf_.push_back(std::move(s->v));  // may throw: nothing changed
        senders_.pop_front();
        w = s->waiter;
      }
      out.emplace(std::move(buf_.front()));  // may throw: `w` still to wake
      buf_.pop_front();
    } else if (!senders_.empty()) {  // rendezvous
      send_awaiter* s = senders_.front();
      out.emplace(std::move(s->v));  // may throw: nothing changed
      senders_.pop_front();
      w = s->waiter;
    }
  }
  // Effects: take_locked under `lk`, then unlocks and wakes the sender it
  // served, also when it threw (then rethrows).
  void take_then_wake(std::unique_lock<std::mutex>& lk, std::optional<T>& out) {
    detail::Waiter w{};
    try {
      take_locked(out, w);
    } catch (...) {
      lk.unlock();
      if (w.task) detail::wake(w.task, w.handle, hint_);
      throw;
    }
    lk.unlock();
    if (w.task) detail::wake(w.task, w.handle, hint_);
  }

  mutable std::mutex m_;
  std::deque<T> buf_;
  detail::WaitList<recv_awaiter> receivers_;
  detail::WaitList<send_awaiter> senders_;
  std::size_t cap_;
  WakeHint hint_;
  bool closed_ = false;
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

template <class T>
struct JoinState {
  std::mutex m;
  std::condition_variable cv;  // for threads off the pool
  bool done = false;
  bool taken = false;  // the result was moved out (take)
  JoinResult<T> result{};
  std::exception_ptr error{};
  Waiter waiter{};

  // Effects: stores the task's value. By the task's root only, before
  // finish(): nobody reads the slot before `done` is published under `m`.
  // Throws what T's move (or copy) throws; nothing is published then.
  template <class U>
  void set_value(U&& v) { result.set(std::forward<U>(v)); }
  // Effects: stores `e` if any (else the value set_value stored stands),
  // marks done, wakes the awaiter.
  void finish(std::exception_ptr e) {
    Waiter w{};
    {
      std::lock_guard lk(m);
      if (e) error = std::move(e);
      done = true;
      w = std::exchange(waiter, Waiter{});
    }
    cv.notify_all();
    // The finishing task ends right after: a sync wake-up.
    if (w.task) wake(w.task, w.handle, WakeHint::sync);
  }
  // Effects: moves the result (or the exception) out: the reader then holds
  // the only reference to it. Call after `done` was seen under `m`.
  // Throws: std::logic_error if it was taken already (a second get() or
  // co_await), else what the task threw.
  T take() {
    {
      std::lock_guard lk(m);
      if (taken) throw std::logic_error("taskplace_pool::JoinHandle: the result was taken already");
      taken = true;
    }
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

  bool done() const {
    auto& s = state();
    std::lock_guard lk(s.m);
    return s.done;
  }
  // Effects: blocks this thread (not a worker) until the task finished, at
  // most `d`. Returns: whether it finished.
  template <class Rep, class Period>
  bool wait_for(std::chrono::duration<Rep, Period> d) const {
    check_off_pool();
    auto& s = state();
    std::unique_lock lk(s.m);
    return s.cv.wait_for(lk, d, [&] { return s.done; });
  }
  // Effects: blocks this thread until the task finished. Returns its value
  // or rethrows its exception. Throws std::logic_error on a worker thread
  // (it would stall the worker the task may need), on an empty handle, and
  // when the result was taken already.
  T get() {
    check_off_pool();
    auto& s = state();
    {
      std::unique_lock lk(s.m);
      s.cv.wait(lk, [&] { return s.done; });
    }
    return s.take();
  }

  struct awaiter {
    detail::JoinState<T>* s;
    bool await_ready() const {
      std::lock_guard lk(s->m);
      return s->done;
    }
    bool await_suspend(std::coroutine_handle<> h) {
      auto* self = detail::current_task();
      std::lock_guard lk(s->m);
      if (s->done) return false;
      if (s->waiter.task != nullptr)
        throw std::logic_error("taskplace_pool::JoinHandle: awaited by two tasks at once");
      detail::about_to_block(self);
      s->waiter = {self, h};
      return true;
    }
    T await_resume() { return s->take(); }
  };
  // Throws: std::logic_error on an empty handle.
  awaiter operator co_await() const { return awaiter{&state()}; }

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

namespace detail {
// Returns: `d` in nanoseconds, saturated: zero for a negative (or NaN)
// duration, Nanoseconds::max() for one at or past 2^62 ns (146 years)
// (which a plain duration_cast would overflow, e.g. hours::max()).
template <class Rep, class Period>
Nanoseconds saturating_ns(std::chrono::duration<Rep, Period> d) {
  using Wide = std::chrono::duration<long double, std::nano>;
  const long double ns = std::chrono::duration_cast<Wide>(d).count();
  if (!(ns > 0)) return Nanoseconds{0};
  if (ns >= 0x1p62L) return Nanoseconds::max();
  // duration_cast is exact and in range unless it multiplies and divides
  // (a period such as 1/3 s, where its product could overflow).
  using Factor = std::ratio_divide<Period, std::nano>;
  constexpr bool exact = !std::chrono::treat_as_floating_point_v<Rep> &&
                         (Factor::num == 1 || Factor::den == 1);
  if constexpr (exact)
    return std::chrono::duration_cast<Nanoseconds>(d);
  else
    return Nanoseconds{static_cast<Nanoseconds::rep>(ns)};
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
