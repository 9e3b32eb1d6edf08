// taskplace_pool/wait_list.hpp: how the pool's blocking primitives
// queue their waiting tasks: an intrusive FIFO through the awaiters in the
// suspended frames (detail::WaitList), the node of a waiter without a
// payload (detail::WaitNode) and the awaiter that queues one under its
// primitive's lock and unlinks itself if its frame goes while queued
// (detail::QueuedAwaiter). Internal to the pool's headers.
#pragma once

#include "taskplace/detail/config.hpp"

#include <coroutine>
#include <cstddef>
#include <limits>
#include <mutex>

#include "taskplace_pool/core.hpp"

namespace taskplace_pool {

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

}  // namespace taskplace_pool
