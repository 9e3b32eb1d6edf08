// taskplace_pool/report.hpp: the pool's shutdown and its report, and the counters summed over the
// workers.
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
auto Pool<Topo, WakeTraits, BalanceTraits>::shutdown() -> ShutdownReport {
  if (this_worker() != nullptr)
    throw std::logic_error(
        "taskplace_pool::Pool::shutdown called by one of the pool's own tasks; call it from a thread off "
        "the pool");
  std::lock_guard guard(shutdown_m_);
  if (!stopped_.exchange(true)) {
    stop_workers();
    const std::vector<std::coroutine_handle<>> abandoned = live_.take_all();
    for (auto h : abandoned) h.destroy();
    report_.abandoned = abandoned.size();
    report_.completed = completed_.load();
  }
  return report_;
}

template <taskplace::Topology Topo, class WakeTraits, class BalanceTraits>
auto Pool<Topo, WakeTraits, BalanceTraits>::stats() const noexcept -> PoolStats {
  PoolStats s;
  for (auto& w : workers_) {
    s.tasks_run += w->tasks_run.load(std::memory_order_relaxed);
    s.migrations += w->migrations.load(std::memory_order_relaxed);
    s.wakeups += w->wakeups.load(std::memory_order_relaxed);
    s.affine_wakeups += w->affine_wakeups.load(std::memory_order_relaxed);
    const taskplace::kit::StealCounts k = w->thief.counts();
    s.steal_attempts += k.attempts;
    s.steals += k.steals;
    s.hot_skips += k.hot_skips;
    s.parks += w->parks.load(std::memory_order_relaxed);
    s.kicks += w->kicks.load(std::memory_order_relaxed);
  }
  s.wakeups += external_wakeups_.load(std::memory_order_relaxed);
  s.spawned = spawned_.load(std::memory_order_relaxed);
  s.completed = completed_.load(std::memory_order_relaxed);
  s.failed = failed_.load(std::memory_order_relaxed);
  return s;
}

template <taskplace::Topology Topo, class WakeTraits, class BalanceTraits>
auto Pool<Topo, WakeTraits, BalanceTraits>::reset_stats() noexcept -> void {
  for (auto& w : workers_) {
    for (auto* a : {&w->tasks_run, &w->migrations, &w->wakeups, &w->affine_wakeups, &w->parks, &w->kicks})
      a->store(0, std::memory_order_relaxed);
    w->thief.reset_counts();
  }
  external_wakeups_.store(0, std::memory_order_relaxed);
  placer_.stats().reset();
  for (auto& w : workers_) {
    w->placer.stats().reset();
    w->balancer.stats().reset();
  }
}

template <taskplace::Topology Topo, class WakeTraits, class BalanceTraits>
auto Pool<Topo, WakeTraits, BalanceTraits>::placer_stats() const noexcept -> placer_stats_type {
  placer_stats_type out;
  taskplace::add_counters(out, placer_.stats());
  for (auto& w : workers_) taskplace::add_counters(out, w->placer.stats());
  return out;
}

template <taskplace::Topology Topo, class WakeTraits, class BalanceTraits>
auto Pool<Topo, WakeTraits, BalanceTraits>::balancer_stats() const noexcept -> balancer_stats_type {
  balancer_stats_type out;
  for (auto& w : workers_) taskplace::add_counters(out, w->balancer.stats());
  return out;
}

}  // namespace taskplace_pool
