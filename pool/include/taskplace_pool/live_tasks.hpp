// taskplace_pool/live_tasks.hpp: the pool's list of live tasks: every
// spawned task from its spawn until its root frame ends, so that shutdown()
// can destroy the ones still waiting on something nobody will signal.
// Internal to pool.hpp.
#pragma once

#include "taskplace/detail/config.hpp"

#include <coroutine>
#include <cstdint>
#include <mutex>
#include <vector>

#include "taskplace_pool/core.hpp"

namespace taskplace_pool::detail {

// A doubly linked list through TaskControl::live_prev / live_next, newest
// first, under one mutex (taken once per spawn and once per task's end).
// Thread-safety: every member from any thread.
class LiveTasks {
 public:
  // Effects: links t at the head and gives it the next id (1, 2, ...).
  void add(TaskControl& t) {
    std::lock_guard lk(m_);
    t.id = ++next_id_;
    t.live_prev = nullptr;
    t.live_next = head_;
    if (head_) head_->live_prev = &t;
    head_ = &t;
  }
  // Effects: unlinks t. Precondition: t was added and not yet removed or
  // taken.
  void remove(TaskControl& t) noexcept {
    std::lock_guard lk(m_);
    if (t.live_prev) t.live_prev->live_next = t.live_next;
    else head_ = t.live_next;
    if (t.live_next) t.live_next->live_prev = t.live_prev;
  }
  // Effects: empties the list. Returns: the root frames of the tasks it
  // held, newest first (the order shutdown() destroys them in).
  std::vector<std::coroutine_handle<>> take_all() {
    std::vector<std::coroutine_handle<>> roots;
    std::lock_guard lk(m_);
    for (auto* t = head_; t != nullptr; t = t->live_next) roots.push_back(t->root);
    head_ = nullptr;
    return roots;
  }

 private:
  std::mutex m_;
  TaskControl* head_ = nullptr;
  std::uint64_t next_id_ = 0;
};

}  // namespace taskplace_pool::detail
