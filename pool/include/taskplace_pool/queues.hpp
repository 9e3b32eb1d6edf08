// taskplace_pool/queues.hpp: the pool's queueings: spawn's spread, a
// queueing onto a worker's inbox, unparking, preemptions, and the stop of
// the workers.
// Definitions of Pool's members declared in pool.hpp (whose comments
// document them), which includes this file at its end.
#pragma once

#include "taskplace/detail/config.hpp"

#include <atomic>
#include <coroutine>
#include <cstdint>
#include <mutex>
#include <vector>

#include "taskplace_pool/pool.hpp"

namespace taskplace_pool {

template <taskplace::Topology Topo, class WakeTraits, class BalanceTraits>
auto Pool<Topo, WakeTraits, BalanceTraits>::idlest_worker() const noexcept -> CpuId {
  auto* ctx = detail::current_context();
  const CpuId start = (ctx && ctx->pool == this) ? ctx->cpu
                      : static_cast<CpuId>(rr_.fetch_add(1, std::memory_order_relaxed) % n_);
  Machine m{*this};
  CpuId best = start;
  std::uint32_t best_n = m.nr_running(start);
  for (CpuId i = 1; i < n_ && best_n > 0; ++i) {
    const CpuId c = (start + i) % n_;
    const std::uint32_t k = m.nr_running(c);
    if (k < best_n) best = c, best_n = k;
  }
  return best;
}

template <taskplace::Topology Topo, class WakeTraits, class BalanceTraits>
auto Pool<Topo, WakeTraits, BalanceTraits>::push(CpuId c, detail::TaskControl* t) -> void {
  Worker& w = *workers_[c];
  detail::TaskControl* head = w.inbox.load(std::memory_order_relaxed);
  do {
    t->inbox_next = head;
  } while (!w.inbox.compare_exchange_weak(head, t, std::memory_order_release, std::memory_order_relaxed));
  w.queued.fetch_add(1, std::memory_order_seq_cst);
  note_queued(w);
  unpark(w, park_woken);
}

template <taskplace::Topology Topo, class WakeTraits, class BalanceTraits>
auto Pool<Topo, WakeTraits, BalanceTraits>::unpark(Worker& w, std::uint32_t why) -> bool {
  if (w.park.load(std::memory_order_seq_cst) != park_parked) return false;
  w.unparked_at.store(clock_.now().count(), std::memory_order_relaxed);
  std::uint32_t expect = park_parked;
  if (!w.park.compare_exchange_strong(expect, why, std::memory_order_seq_cst)) return false;
  detail::futex_wake(w.park);
  return true;
}

template <taskplace::Topology Topo, class WakeTraits, class BalanceTraits>
auto Pool<Topo, WakeTraits, BalanceTraits>::note_gap(Worker& w, Nanoseconds gap, Nanoseconds now) const noexcept -> void {
  if (gap > opts_.preempt_gap && opts_.preempted_for > Nanoseconds{0})
    w.preempted_until.store(taskplace::saturating_add(now, opts_.preempted_for).count(), std::memory_order_relaxed);
}

template <taskplace::Topology Topo, class WakeTraits, class BalanceTraits>
auto Pool<Topo, WakeTraits, BalanceTraits>::stop_workers() -> void {
  pending_.begin_stop();
  unpark_all();
  for (auto& w : workers_)
    if (w->thread.joinable()) w->thread.join();
}

}  // namespace taskplace_pool
