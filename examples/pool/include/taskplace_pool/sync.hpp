// taskplace_pool/sync.hpp: the blocking primitives of the example pool:
// Event, Mutex (with Mutex::Guard), Semaphore, Latch, Channel<T> (bounded,
// unbounded, rendezvous), JoinHandle<T>, sleep_for and yield.
//
// Every wake-up of a waiting task goes through the pool's WakePlacer: the
// waker is the task running on this worker (none off the pool), the wakee
// the task woken, its prev CPU the worker it last ran on. Kernel analogue:
// try_to_wake_up() called from a pipe or futex wake. Channel wake-ups carry
// the sync hint by default (as pipe and UNIX socket wake-ups carry WF_SYNC),
// a finished task's wake of its joiner always (as an exiting task's wake of
// its parent does), Event::set, Mutex::unlock, Semaphore::release and
// Latch::count_down only when asked (futex wake-ups do not).
//
//   taskplace_pool::Channel<int> ch{16};
//   co_await ch.send(1); std::optional<int> v = co_await ch.recv();
//   { auto g = co_await mutex.scoped_lock(); /* ... */ }  // unlocked here
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <coroutine>
#include <cstddef>
#include <cstdint>
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

// Thrown by JoinHandle::get() and co_await on a handle whose task
// shutdown() destroyed unfinished (it waited on something nobody could
// signal any more); the task's value or exception never came.
class TaskAbandoned : public std::runtime_error {
 public:
  TaskAbandoned() : std::runtime_error("taskplace_pool::JoinHandle: the task was abandoned at shutdown") {}
};

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
// not touched once it has been taken off and its task woken.
// Each node's `queued` says whether it is in the list: set by push_back,
// cleared by whatever takes it off, both under the owner's lock. An
// awaiter reads it without the lock in its destructor, which runs either
// after its task was resumed (the wake-up orders the clear before the
// read) or when shutdown() destroys the task still waiting (the workers
// stopped); one destroyed while queued unlinks itself (remove), so that
// a primitive signalled afterwards never reaches into a freed frame.
// Node: `Node* next_waiter`, `bool queued`.
// Invariant: head_ == nullptr iff tail_ == nullptr; tail_->next_waiter ==
// nullptr; a node is queued iff it is linked from head_.
// Not thread-safe: the owner's lock guards it.
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
    n->queued = true;
    if (tail_ != nullptr)
      tail_->next_waiter = n;
    else
      head_ = n;
    tail_ = n;
  }
  // Requires: !empty().
  void pop_front() noexcept {
    head_->queued = false;
    head_ = head_->next_waiter;
    if (head_ == nullptr) tail_ = nullptr;
  }
  // Effects: unlinks the first `k` nodes (every node when there are fewer).
  // Returns: the first of them, null if none; they stay linked in order
  // through next_waiter, the last one's link null. Complexity: O(k).
  Node* take_front(std::size_t k) noexcept {
    if (k == 0 || head_ == nullptr) return nullptr;
    Node* first = head_;
    Node* last = head_;
    last->queued = false;
    for (std::size_t i = 1; i < k && last->next_waiter != nullptr; ++i) {
      last = last->next_waiter;
      last->queued = false;
    }
    head_ = last->next_waiter;
    if (head_ == nullptr) tail_ = nullptr;
    last->next_waiter = nullptr;
    return first;
  }
  // Effects: empties the list. Returns: its old head, the nodes linked in
  // order. Complexity: O(size).
  Node* take_all() noexcept { return take_front(std::numeric_limits<std::size_t>::max()); }
  // Effects: unlinks `n` if it is queued here. Returns: whether it was.
  // Complexity: O(1) for a node not queued, else O(its position).
  bool remove(Node* n) noexcept {
    if (!n->queued) return false;
    Node* prev = nullptr;
    for (Node* c = head_; c != nullptr; prev = c, c = c->next_waiter) {
      if (c != n) continue;
      (prev != nullptr ? prev->next_waiter : head_) = c->next_waiter;
      if (tail_ == c) tail_ = prev;
      c->next_waiter = nullptr;
      c->queued = false;
      return true;
    }
    return false;
  }

 private:
  Node* head_ = nullptr;
  Node* tail_ = nullptr;
};

// A waiting task as the primitives without a payload (Event, Mutex,
// Semaphore, Latch) and a JoinHandle queue it: the awaiter in its
// suspended frame derives from it. A task abandoned at shutdown while
// holding a Mutex::Guard unlocks as its frame goes, and must not hand the
// lock to a waiter destroyed before it: such a waiter unlinked itself
// (QueuedAwaiter). Not copyable: the list holds its address.
struct WaitNode {
  WaitNode() = default;
  WaitNode(const WaitNode&) = delete;
  WaitNode& operator=(const WaitNode&) = delete;

  Waiter waiter{};
  WaitNode* next_waiter = nullptr;
  bool queued = false;
};
using WaitNodeList = WaitList<WaitNode>;

// Effects: publishes the running task `self`, to resume at `h`, as `n` at
// the back of `list`, having told the pool it is about to block.
// Requires: the list's lock held, and the caller decided to block.
inline void enqueue_waiter(WaitNodeList& list, WaitNode& n, TaskControl* self, std::coroutine_handle<> h) {
  n.waiter = {self, h};
  about_to_block(self);
  list.push_back(&n);
}
// Effects: wakes each task of a chain take_front returned, in order, one
// placement each. Each node's link is read before its task is woken: a
// woken task may run at once and free its frame, and the node with it.
// Requires: no lock held.
inline void wake_all(WaitNode* n, WakeHint hint) {
  while (n != nullptr) {
    WaitNode* next = n->next_waiter;
    const Waiter w = n->waiter;
    wake(w.task, w.handle, hint);
    n = next;
  }
}

// The awaiter of a primitive whose waiting tasks queue on its wait list:
// under the primitive's lock it asks `must_wait()` (which takes what is
// free instead, and says whether the task must wait), queues the task if
// so, and unlinks itself if its frame goes while it is still queued.
// Owner (which befriends this template) provides `m_` (its lock),
// `waiters_` (a WaitNodeList), `bool must_wait()` (called with m_ held)
// and, if an unlinked waiter changes its state, `void waiter_left()
// noexcept` (called with m_ held, after the unlink).
template <class Owner>
struct QueuedAwaiter : WaitNode {
  Owner& owner;
  explicit QueuedAwaiter(Owner& o) noexcept : owner(o) {}
  QueuedAwaiter(const QueuedAwaiter&) = delete;
  QueuedAwaiter& operator=(const QueuedAwaiter&) = delete;
  ~QueuedAwaiter() {
    if (!queued) return;
    std::lock_guard lk(owner.m_);
    owner.waiters_.remove(this);
    if constexpr (requires { owner.waiter_left(); }) owner.waiter_left();
  }
  bool await_suspend(std::coroutine_handle<> h) {
    auto* self = current_task();
    std::lock_guard lk(owner.m_);
    if (!owner.must_wait()) return false;
    enqueue_waiter(owner.waiters_, *this, self, h);
    return true;  // resumed by whoever dequeues it: `this` not touched again
  }
};
}  // namespace detail

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
  mutable std::mutex m_;
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
  std::mutex m_;  // guards waiters_, and state_ out of contended
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
  mutable std::mutex m_;
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
  mutable std::mutex m_;
  std::size_t count_;
  detail::WaitNodeList waiters_;
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

  // The awaiters unlink themselves if their task is destroyed while they
  // are queued (shutdown), so a close() or a send/receive afterwards never
  // reaches into a freed frame (detail::WaitList). Not copyable: a queued
  // awaiter's address is in the channel.
  struct send_awaiter {
    send_awaiter(Channel& c, T value) : ch(c), v(std::move(value)) {}
    send_awaiter(const send_awaiter&) = delete;
    send_awaiter& operator=(const send_awaiter&) = delete;
    ~send_awaiter() { ch.unlink(ch.senders_, this); }

    Channel& ch;
    T v;
    detail::Waiter waiter{};
    send_awaiter* next_waiter = nullptr;  // the channel's senders_ link
    bool queued = false;
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
    explicit recv_awaiter(Channel& c) noexcept : ch(c) {}
    recv_awaiter(const recv_awaiter&) = delete;
    recv_awaiter& operator=(const recv_awaiter&) = delete;
    ~recv_awaiter() { ch.unlink(ch.receivers_, this); }

    Channel& ch;
    std::optional<T> value{};
    detail::Waiter waiter{};
    recv_awaiter* next_waiter = nullptr;  // the channel's receivers_ link
    bool queued = false;

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
  // Effects: unlinks `a` from `list` if it is still queued there (its
  // frame is going away).
  template <class Awaiter>
  void unlink(detail::WaitList<Awaiter>& list, Awaiter* a) noexcept {
    if (!a->queued) return;
    std::lock_guard lk(m_);
    list.remove(a);
  }

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
  // done()), at most `d`. Returns: whether it is.
  template <class Rep, class Period>
  bool wait_for(std::chrono::duration<Rep, Period> d) const {
    check_off_pool();
    auto& s = state();
    std::unique_lock lk(s.m_);
    return s.cv.wait_for(lk, d, [&] { return s.done; });
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
