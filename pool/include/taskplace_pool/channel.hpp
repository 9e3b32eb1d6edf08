// taskplace_pool/channel.hpp: Channel<T>, the pool's FIFO channel
// (rendezvous, bounded, unbounded), and ChannelClosed. Its wake-ups carry
// the sync hint by default, as a pipe's and a UNIX socket's carry WF_SYNC.
//
//   taskplace_pool::Channel<int> ch{16};
//   co_await ch.send(1); std::optional<int> v = co_await ch.recv();
#pragma once

#include "taskplace/detail/config.hpp"

#include <cstddef>
#include <deque>
#include <limits>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <utility>
#include <vector>

#include "taskplace_pool/core.hpp"
#include "taskplace_pool/spin_lock.hpp"
#include "taskplace_pool/wait_list.hpp"

namespace taskplace_pool {

// Raised by send() on a closed channel.
class ChannelClosed : public std::runtime_error {
 public:
  ChannelClosed() : std::runtime_error("taskplace_pool::Channel: send on a closed channel") {}
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
  void take_then_wake(std::unique_lock<detail::SpinLock>& lk, std::optional<T>& out) {
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

  mutable detail::SpinLock m_;  // sections of a few dozen instructions
  std::deque<T> buf_;
  detail::WaitList<recv_awaiter> receivers_;
  detail::WaitList<send_awaiter> senders_;
  std::size_t cap_;
  WakeHint hint_;
  bool closed_ = false;
};

}  // namespace taskplace_pool
