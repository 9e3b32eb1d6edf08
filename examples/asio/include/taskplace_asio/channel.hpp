// taskplace_asio/channel.hpp: an unbounded channel between the Asio
// runtime's tasks. A send that finds a receiver waiting is a wake-up of the
// receiver's task (Runtime::post: the placer picks its worker); a receive
// that finds a value queued is a wake-up of its task by the caller (never
// inline: a receiver that asks again from its handler would recurse).
//
//   taskplace_asio::Channel<int, Rt> ch{rt};
//   ch.async_receive(&consumer, [](int v) { ... });  // once per value wanted
//   ch.send(42);                                     // from a handler or off the pool
//   int v = co_await ch.async_receive(boost::asio::use_awaitable);  // in a coroutine
//
// Kernel analogue: a pipe's write waking the reader blocked in read().
#pragma once

#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <utility>

#include <boost/asio/associated_executor.hpp>
#include <boost/asio/async_result.hpp>

#include "taskplace_asio/executor.hpp"
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
  // Effects: as async_receive(task, h), for an Asio completion token
  //   (use_awaitable: `co_await ch.async_receive(use_awaitable)`; a
  //   handler; bind_executor(ex, h)). The task woken is the one the
  //   handler's associated executor names (a TaskExecutor, or an
  //   any_io_executor holding one: a coroutine co_spawned on it), else the
  //   task whose handler calls, else the channel's own.
  template <class Token>
  auto async_receive(Token&& token) {
    return boost::asio::async_initiate<Token, void(T)>(
        [this](auto handler) {
          Task task = task_of<Rt>(boost::asio::get_associated_executor(handler));
          if (task == nullptr) task = rt_->current_task();
          if (task == nullptr) task = this;
          // handler_type is copyable; the handler (a coroutine's) may not be.
          auto h = std::make_shared<decltype(handler)>(std::move(handler));
          async_receive(task, [h](T v) { std::move (*h)(std::move(v)); });
        },
        token);
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
