// taskplace_pool/spawn.hpp: the pool's start and its spawns: the
// constructor that starts the workers, spawn's placement and its handshake
// with shutdown(), and the root frame of a spawned task.
// Definitions of Pool's members declared in pool.hpp (whose comments
// document them), which includes this file at its end.
#pragma once

#include "taskplace/detail/config.hpp"

#include <atomic>
#include <exception>
#include <memory>
#include <stdexcept>
#include <thread>
#include <type_traits>
#include <utility>

#include "taskplace_pool/pool.hpp"

namespace taskplace_pool {

template <taskplace::Topology Topo, class WakeTraits, class BalanceTraits>
Pool<Topo, WakeTraits, BalanceTraits>::Pool(Topo topology, PoolOptions options)
    : topo_(std::move(topology)), opts_(taskplace::kit::with_policy_steals<placer_type>(taskplace::kit::with_measured_costs<placer_type>(options))),
      placer_(topo_), n_(static_cast<CpuId>(topo_.cpu_count())) {
  if (n_ == 0) throw std::invalid_argument("taskplace_pool::Pool: the topology has no CPU");
  workers_.reserve(n_);
  const Nanoseconds now = clock_.now();
  for (CpuId c = 0; c < n_; ++c) {
    workers_.push_back(std::make_unique<Worker>(topo_, c, opts_));
    workers_.back()->cpu = c;
    workers_.back()->bstate = workers_.back()->balancer.make_state(c, now);
  }
  if (opts_.trace != nullptr) attach_trace(*opts_.trace);
  try {
    for (CpuId c = 0; c < n_; ++c)
      workers_[c]->thread = std::thread([this, c] { run_worker(c); });
  } catch (...) {
    // No destructor runs for a constructor that throws: the started
    // workers (nothing queued, so quiescent at once) must be gone
    // before the members they use, and no thread may be destroyed
    // joinable (std::terminate).
    stop_workers();
    throw;
  }
}

template <taskplace::Topology Topo, class WakeTraits, class BalanceTraits>
template <class T>
JoinHandle<T> Pool<Topo, WakeTraits, BalanceTraits>::spawn(task<T> t) {
  auto st = std::make_shared<detail::JoinState<T>>();
  auto root = root_body(*this, std::move(t), st);
  // Invariant (no task queued on a stopped pool): the task counts as
  // pending before the stop flag is read, both seq_cst, against
  // shutdown's raising of the flag before the workers read the counts
  // (quiescent): either this spawn sees the flag and backs out, or every
  // worker's quiescence check sees the task and waits for it. A task of
  // this pool spawning is itself counted (running), so the pool cannot
  // have stopped under it; it counts the child on its own worker.
  Worker* self = this_worker();
  count_pending(self);
  if (self == nullptr && pending_.stopping()) {
    pending_.back_out();
    // A worker may have found the count non-zero and parked: let it
    // check again (the same handshake as enqueue's).
    unpark_all();
    root.h.destroy();
    throw std::logic_error("taskplace_pool::Pool::spawn after shutdown");
  }
  record_type& r = root.h.promise().rec;
  r.ops = &ops_;
  r.pool = this;
  r.resume = root.h;
  r.root = root.h;
  live_.add(r);
  spawned_.fetch_add(1, std::memory_order_relaxed);
  push(idlest_worker(), &r);  // counted above
  return JoinHandle<T>{std::move(st)};
}

template <taskplace::Topology Topo, class WakeTraits, class BalanceTraits>
template <class T>
detail::Root<Pool<Topo, WakeTraits, BalanceTraits>> Pool<Topo, WakeTraits, BalanceTraits>::root_body(
    Pool& pool, task<T> t, std::shared_ptr<detail::JoinState<T>> st) {
  struct Unfinished {
    detail::JoinState<T>* st;
    ~Unfinished() {
      if (st != nullptr) st->abandon();
    }
  } unfinished{st.get()};
  std::exception_ptr err;
  {
    task<T> inner = std::move(t);
    try {
      if constexpr (std::is_void_v<T>) {
        co_await inner;
      } else {
        st->set_value(co_await inner);  // unpublished until finish()
      }
    } catch (...) {
      err = std::current_exception();
    }
  }
  if (err) pool.failed_.fetch_add(1, std::memory_order_relaxed);
  pool.completed_.fetch_add(1, std::memory_order_relaxed);
  unfinished.st = nullptr;
  st->finish(std::move(err));
}

}  // namespace taskplace_pool
