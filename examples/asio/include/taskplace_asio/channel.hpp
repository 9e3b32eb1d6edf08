// taskplace_asio/channel.hpp: an unbounded channel between the Asio
// runtime's tasks. A send that finds a receiver waiting is a wake-up of the
// receiver's task (Runtime::post: the placer picks its worker); a receive
// that finds a value queued is a wake-up of its task by the caller (never
// inline: a receiver that asks again from its handler would recurse).
//
//   taskplace_asio::Channel<int, Rt> ch{rt};
//   ch.async_receive(&consumer, [](int v) { ... });  // once per value wanted
//   ch.send(42);                                     // from a handler or off the pool
//
// Kernel analogue: a pipe's write waking the reader blocked in read().
#pragma once

#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <utility>

#include "taskplace_asio/queue.hpp"

namespace taskplace_asio {

// Thread-safety: every member from any thread. Values go to receivers in
// send order; receivers are served in the order they asked. The runtime
// outlives it.
template <class T, class Rt>
class Channel {
 public:
  using handler_type = std::function<void(T)>;

  explicit Channel(Rt& rt) : rt_(&rt) {}

  // Effects: gives v to the receiver waiting longest (posted as a wake-up
  //   of its task, sync: the sender's handler ends next when `sync`), or
  //   queues it.
  void send(T v, bool sync = false) {
    std::unique_lock lk(m_);
    if (waiting_.empty()) {
      values_.push_back(std::move(v));
      return;
    }
    Waiter w = std::move(waiting_.front());
    waiting_.pop_front();
    lk.unlock();
    rt_->post(w.task, [h = std::move(w.handler), x = std::move(v)]() mutable { h(std::move(x)); }, sync);
  }
  // Effects: h(v) with the next value, posted as a wake-up of `task`: now
  //   when one is queued, else when a send brings one.
  void async_receive(Task task, handler_type h) {
    std::unique_lock lk(m_);
    if (values_.empty()) {
      waiting_.push_back({task, std::move(h)});
      return;
    }
    T v = std::move(values_.front());
    values_.pop_front();
    lk.unlock();
    rt_->post(task, [h = std::move(h), x = std::move(v)]() mutable { h(std::move(x)); });
  }
  std::size_t queued() const {
    std::lock_guard lk(m_);
    return values_.size();
  }

 private:
  struct Waiter {
    Task task;
    handler_type handler;
  };
  Rt* rt_;
  mutable std::mutex m_;
  std::deque<T> values_;
  std::deque<Waiter> waiting_;
};

}  // namespace taskplace_asio
