// taskplace_pool/sync.hpp: the pool's locks and events:
// Event, Mutex (with Mutex::Guard), Semaphore and Latch. Channels, join
// handles and sleeps have headers of their own (channel.hpp,
// join_handle.hpp, sleep.hpp); pool.hpp includes them all.
//
// Every wake-up of a waiting task goes through the pool's WakePlacer: the
// waker is the task running on this worker (none off the pool), the wakee
// the task woken, its prev CPU the worker it last ran on. Kernel analogue:
// try_to_wake_up() called from a futex wake. Event::set, Mutex::unlock,
// Semaphore::release and Latch::count_down pass the sync hint only when
// asked (futex wake-ups do not carry it).
//
//   { auto g = co_await mutex.scoped_lock(); /* ... */ }  // unlocked here
#pragma once

#include "taskplace/detail/config.hpp"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <mutex>
#include <stdexcept>
#include <utility>

#include "taskplace_pool/core.hpp"
#include "taskplace_pool/spin_lock.hpp"
#include "taskplace_pool/wait_list.hpp"

namespace taskplace_pool {

// A manual-reset event. set() wakes every waiter, in the order they came.
// Kernel analogue: struct completion with complete_all().
// Thread-safety: every member may be called from any thread; waiting only
// inside a pool task.
class Event {
 public:
  Event() = default;
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;

  // Effects: sets the event and wakes every waiting task (one placement
  // each; `hint` = sync if the caller blocks right after). Complexity:
  // O(waiters).
  void set(WakeHint hint = WakeHint::async) {
    detail::WaitNode* ws = nullptr;
    {
      std::lock_guard lk(m_);
      set_ = true;
      ws = waiters_.take_all();
    }
    detail::wake_all(ws, hint);
  }
  void reset() {
    std::lock_guard lk(m_);
    set_ = false;
  }
  bool is_set() const {
    std::lock_guard lk(m_);
    return set_;
  }

  struct wait_awaiter : detail::QueuedAwaiter<Event> {
    using QueuedAwaiter::QueuedAwaiter;
    bool await_ready() const { return owner.is_set(); }
    void await_resume() const noexcept {}
  };
  // Returns: an awaitable that completes once the event is set.
  wait_awaiter wait() noexcept { return wait_awaiter{*this}; }

 private:
  template <class>
  friend struct detail::QueuedAwaiter;
  bool must_wait() const noexcept { return !set_; }
  mutable detail::SpinLock m_;
  bool set_ = false;
  detail::WaitNodeList waiters_;
};

// An asynchronous mutex for pool tasks: a task that finds it locked
// suspends (its worker runs other tasks) until the lock is handed to it.
// FIFO with hand-off: an unlock that finds waiters passes ownership to the
// first of them and wakes it, so the lock is never free while a task waits
// for it: no newcomer barges ahead (no starvation) and no wake-up can find
// the lock taken again (none is lost). The uncontended lock and unlock are
// one compare-and-swap each and take no std::mutex. Kernel analogue:
// struct mutex (kernel/locking/mutex.c): an atomic fast path, a FIFO wait
// list under wait_lock, and since v4.10 a hand-off to the first waiter
// (MUTEX_FLAG_HANDOFF), which the kernel uses only for a waiter that
// starved and this mutex uses at every contended unlock.
// Not owned by a task: unlock by another task than the one that locked is
// not detected (only an unlock of an unlocked mutex is). Not a Lockable:
// lock() returns an awaitable, so std::lock_guard on a Mutex would not
// wait; use scoped_lock().
// Invariant: state_ == contended iff waiters_ is non-empty (under m_);
// while state_ != unlocked some task owns the lock.
// Thread-safety: try_lock / unlock from any thread; lock / scoped_lock
// awaited inside pool tasks. Requires: no task waits on it or holds it
// when it is destroyed.
class Mutex {
 public:
  Mutex() = default;
  Mutex(const Mutex&) = delete;
  Mutex& operator=(const Mutex&) = delete;

  class Guard;
  struct lock_awaiter;
  struct scoped_lock_awaiter;

  // Returns: an awaitable that completes once the calling task owns the
  // lock (at once if it is free).
  [[nodiscard]] lock_awaiter lock() noexcept;
  // Returns: an awaitable yielding a Guard that owns the lock.
  [[nodiscard]] scoped_lock_awaiter scoped_lock() noexcept;

  // Effects: takes the lock if it is free; never waits. A lock with
  // waiters is never free (hand-off), so this never overtakes them.
  // Returns: whether the caller now owns it.
  bool try_lock() noexcept {
    std::uint32_t s = unlocked;
    return state_.compare_exchange_strong(s, locked, std::memory_order_acquire, std::memory_order_relaxed);
  }

  // Effects: releases the lock; with tasks waiting, hands it to the first
  // of them and wakes it (one placement; `hint` = sync if the caller
  // blocks right after, handoff if it gives its worker to the wakee).
  // Throws: std::logic_error if the mutex is not locked (nothing changes).
  void unlock(WakeHint hint = WakeHint::async) {
    std::uint32_t s = locked;
    if (state_.compare_exchange_strong(s, unlocked, std::memory_order_release, std::memory_order_relaxed))
      return;
    if (s == unlocked) throw std::logic_error("taskplace_pool::Mutex: unlock of a mutex that is not locked");
    detail::WaitNode* next = nullptr;
    {
      std::lock_guard lk(m_);
      // contended, and it stays so until changed under m_ (by this owner,
      // or by a queued waiter's destruction at shutdown).
      next = waiters_.take_front(1);
      if (next == nullptr) {
        state_.store(unlocked, std::memory_order_release);
        return;
      }
      if (waiters_.empty()) state_.store(locked, std::memory_order_relaxed);
    }
    detail::wake_all(next, hint);  // it owns the lock from here
  }

  // Resumed by the unlock that hands the lock over.
  struct lock_awaiter : detail::QueuedAwaiter<Mutex> {
    using QueuedAwaiter::QueuedAwaiter;
    bool await_ready() noexcept { return owner.try_lock(); }
    void await_resume() const noexcept {}
  };

  // Owns a locked Mutex and unlocks it when destroyed (asynchronously:
  // WakeHint::async). Move-only. Requires: the mutex stays locked while a
  // guard owns it (unlocking it by hand first makes the destructor's
  // unlock throw, which ends the program).
  class [[nodiscard]] Guard {
   public:
    Guard() noexcept = default;
    // Effects: takes over `m`, which the caller has locked.
    Guard(Mutex& m, std::adopt_lock_t) noexcept : m_(&m) {}
    Guard(Guard&& o) noexcept : m_(std::exchange(o.m_, nullptr)) {}
    Guard& operator=(Guard&& o) {
      if (this != &o) {
        if (m_ != nullptr) std::exchange(m_, nullptr)->unlock();
        m_ = std::exchange(o.m_, nullptr);
      }
      return *this;
    }
    Guard(const Guard&) = delete;
    Guard& operator=(const Guard&) = delete;
    ~Guard() {
      if (m_ != nullptr) m_->unlock();
    }

    bool owns_lock() const noexcept { return m_ != nullptr; }
    // Effects: unlocks now (see Mutex::unlock); the guard then owns
    // nothing. Throws: std::logic_error if it owns nothing.
    void unlock(WakeHint hint = WakeHint::async) {
      if (m_ == nullptr) throw std::logic_error("taskplace_pool::Mutex::Guard: unlock of a guard that owns no lock");
      std::exchange(m_, nullptr)->unlock(hint);
    }

   private:
    Mutex* m_ = nullptr;
  };

  struct scoped_lock_awaiter : lock_awaiter {
    using lock_awaiter::lock_awaiter;
    Guard await_resume() const noexcept { return Guard{owner, std::adopt_lock}; }
  };

 private:
  template <class>
  friend struct detail::QueuedAwaiter;
  static constexpr std::uint32_t unlocked = 0, locked = 1, contended = 2;

  // Effects: takes the lock if free, else marks it contended (the caller
  // then queues before it releases m_, which an unlock that sees the mark
  // takes before it looks at the queue). Returns: whether the caller must
  // wait. Requires: m_ held.
  bool must_wait() noexcept {
    std::uint32_t s = state_.load(std::memory_order_relaxed);
    for (;;) {
      if (s == contended) return true;
      const std::uint32_t want = s == unlocked ? locked : contended;
      if (state_.compare_exchange_weak(s, want, std::memory_order_acquire, std::memory_order_relaxed))
        return want == contended;
    }
  }
  // A waiter destroyed while queued (shutdown) leaves the lock contended
  // with nobody left to hand it to: back to plain locked.
  void waiter_left() noexcept {
    if (waiters_.empty() && state_.load(std::memory_order_relaxed) == contended)
      state_.store(locked, std::memory_order_relaxed);
  }

  std::atomic<std::uint32_t> state_{unlocked};
  detail::SpinLock m_;  // guards waiters_, and state_ out of contended
  detail::WaitNodeList waiters_;
};

inline Mutex::lock_awaiter Mutex::lock() noexcept { return lock_awaiter{*this}; }
inline Mutex::scoped_lock_awaiter Mutex::scoped_lock() noexcept { return scoped_lock_awaiter{*this}; }

// A counting semaphore for pool tasks. FIFO with hand-off: a release that
// finds waiters gives its permits to the first of them directly (they
// never go through the count, so a newcomer's try_acquire cannot take a
// permit a waiter was owed), and the rest to the count.
// Kernel analogue: struct semaphore (kernel/locking/semaphore.c), whose
// up() hands the count to the first waiter of its FIFO list.
// Invariant: waiters only while available() == 0; available() <=
// max_permits().
// Thread-safety: try_acquire / release / available from any thread;
// acquire awaited inside pool tasks. Requires: no task waits on it when it
// is destroyed.
class Semaphore {
 public:
  // Effects: `permits` available, at most `max_permits` at any time.
  // Throws: std::invalid_argument if permits > max_permits.
  explicit Semaphore(std::size_t permits, std::size_t max_permits = std::numeric_limits<std::size_t>::max())
      : count_(permits), max_(max_permits) {
    if (permits > max_permits) throw std::invalid_argument("taskplace_pool::Semaphore: more permits than its maximum");
  }
  Semaphore(const Semaphore&) = delete;
  Semaphore& operator=(const Semaphore&) = delete;

  // Resumed by the release that hands it a permit.
  struct acquire_awaiter : detail::QueuedAwaiter<Semaphore> {
    using QueuedAwaiter::QueuedAwaiter;
    bool await_ready() const noexcept { return false; }
    void await_resume() const noexcept {}
  };
  // Returns: an awaitable that completes once the calling task holds one
  // permit (at once if one is available).
  [[nodiscard]] acquire_awaiter acquire() noexcept { return acquire_awaiter{*this}; }

  // Effects: takes a permit if one is available; never waits.
  // Returns: whether it took one.
  bool try_acquire() {
    std::lock_guard lk(m_);
    if (count_ == 0) return false;
    --count_;
    return true;
  }

  // Effects: returns `n` permits: one to each of the first n waiting
  // tasks, which it wakes in order (one placement each, with `hint`), the
  // rest to the count. Complexity: O(min(n, waiters)).
  // Throws: std::overflow_error, changing nothing and waking no one, if
  // the count would exceed max_permits().
  void release(std::size_t n = 1, WakeHint hint = WakeHint::async) {
    detail::WaitNode* ws = nullptr;
    {
      std::lock_guard lk(m_);
      std::size_t served = 0;
      for (auto* w = waiters_.empty() ? nullptr : waiters_.front(); w != nullptr && served < n; w = w->next_waiter)
        ++served;
      if (n - served > max_ - count_)
        throw std::overflow_error("taskplace_pool::Semaphore: release past its maximum count");
      ws = waiters_.take_front(served);
      count_ += n - served;
    }
    detail::wake_all(ws, hint);
  }

  // Returns: the permits available now (a snapshot).
  std::size_t available() const {
    std::lock_guard lk(m_);
    return count_;
  }
  std::size_t max_permits() const noexcept { return max_; }

 private:
  template <class>
  friend struct detail::QueuedAwaiter;
  bool must_wait() noexcept {
    if (count_ == 0) return true;
    --count_;
    return false;
  }
  mutable detail::SpinLock m_;
  std::size_t count_;
  const std::size_t max_;
  detail::WaitNodeList waiters_;
};

// A single-use countdown: wait() completes once count_down() has been
// called for the whole count; the fan-in after spawning N tasks that each
// count down once. The last count_down wakes every waiter, in the order
// they came. Kernel analogue: none as one object; the pattern of a
// refcount's atomic_dec_and_test() followed by complete_all().
// Thread-safety: count_down / try_wait from any thread; wait awaited
// inside pool tasks. Requires: no task waits on it when it is destroyed.
class Latch {
 public:
  explicit Latch(std::size_t count) : count_(count) {}
  Latch(const Latch&) = delete;
  Latch& operator=(const Latch&) = delete;

  // Effects: lowers the count by `n`; when it reaches zero, wakes every
  // waiting task (one placement each, with `hint`). Complexity:
  // O(waiters) for the last one.
  // Throws: std::logic_error, changing nothing, if n exceeds the count
  // left (counting down below zero, also once it is zero).
  void count_down(std::size_t n = 1, WakeHint hint = WakeHint::async) {
    detail::WaitNode* ws = nullptr;
    {
      std::lock_guard lk(m_);
      if (n > count_) throw std::logic_error("taskplace_pool::Latch: count_down below zero");
      count_ -= n;
      if (count_ != 0) return;
      ws = waiters_.take_all();
    }
    detail::wake_all(ws, hint);
  }

  // Returns: whether the count has reached zero.
  bool try_wait() const {
    std::lock_guard lk(m_);
    return count_ == 0;
  }

  // Resumed by the last count_down.
  struct wait_awaiter : detail::QueuedAwaiter<Latch> {
    using QueuedAwaiter::QueuedAwaiter;
    bool await_ready() const noexcept { return false; }
    void await_resume() const noexcept {}
  };
  // Returns: an awaitable that completes once the count is zero (at once
  // if it is).
  [[nodiscard]] wait_awaiter wait() noexcept { return wait_awaiter{*this}; }

 private:
  template <class>
  friend struct detail::QueuedAwaiter;
  bool must_wait() const noexcept { return count_ != 0; }
  mutable detail::SpinLock m_;
  std::size_t count_;
  detail::WaitNodeList waiters_;
};

}  // namespace taskplace_pool
