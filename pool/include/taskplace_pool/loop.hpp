// taskplace_pool/loop.hpp: the pool's worker loop: pinning, the rounds of a worker (timers, its own queue, the
// newidle balance, the spin and the park, the tick), the run of one task
// and the periodic steal of a kicked worker.
// Definitions of Pool's members declared in pool.hpp (whose comments
// document them), which includes this file at its end.
#pragma once

#include "taskplace/detail/config.hpp"

#include <pthread.h>
#include <sched.h>
#include <sys/prctl.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <utility>
#include <vector>

#include "taskplace_pool/pool.hpp"

namespace taskplace_pool {

template <taskplace::Topology Topo, class WakeTraits, class BalanceTraits>
void Pool<Topo, WakeTraits, BalanceTraits>::pin(CpuId c) {
  if (opts_.pinning == Pinning::off || opts_.pinning == Pinning::simulate_failure) return;
  std::uint32_t os = c;
  if constexpr (requires(const Topo& t) { t.os_cpu(c); }) os = static_cast<std::uint32_t>(topo_.os_cpu(c));
  if (os >= CPU_SETSIZE) return;
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(os, &set);
  if (::pthread_setaffinity_np(::pthread_self(), sizeof(set), &set) == 0)
    pinned_.fetch_add(1, std::memory_order_relaxed);
}

template <taskplace::Topology Topo, class WakeTraits, class BalanceTraits>
void Pool<Topo, WakeTraits, BalanceTraits>::run_worker(CpuId c) {
  Worker& w = *workers_[c];
  detail::WorkerContext ctx{this, c, nullptr};
  detail::tl_context = &ctx;
  pin(c);
  if (opts_.timer_slack > Nanoseconds{0})
    (void)::prctl(PR_SET_TIMERSLACK, static_cast<unsigned long>(opts_.timer_slack.count()), 0, 0, 0);
  started_.fetch_add(1);
  bool idle = false;
  Nanoseconds last_tick = clock_.now();
  for (;;) {
    // One clock read per task while busy: it serves the timers, the
    // tick and the placements the task makes.
    Nanoseconds now = round_time(w);
    w.now = now;
    fire_timers(w, now.count());
    detail::TaskControl* t = pop_local(w);
    if (t == nullptr) {
      // Newly idle: pull from the levels the cost budget allows.
      Queues queues{&workers_};
      taskplace::BalanceResult r{};
      if (auto* got = w.thief.newidle(w.balancer, w.bstate, queues, LastRan{}, clock_, overload(),
                                      w.nr_running(), &r))
        w.accept(got);
      idle = idle || r.outcome != taskplace::BalanceOutcome::pulled;
      t = pop_local(w);
    }
    if (t == nullptr) {
      t = spin_then_park(w);
      if (t == nullptr) {
        if (exit_.load(std::memory_order_acquire)) break;
        continue;
      }
      now = clock_.now();
      w.now = now;
    }
    if (idle) {
      w.balancer.idle_end(w.bstate, now);
      idle = false;
    }
    run(w, ctx, t);
    if (now - last_tick >= opts_.tick) {
      last_tick = now;
      w.balancer.tick(w.bstate, now);
      if (opts_.overload_gate) refresh_overload();
      if (opts_.kick_idle_on_tick && w.queued.load(std::memory_order_relaxed) > 0) kick_one(w);
    }
  }
  detail::tl_context = nullptr;
}

template <taskplace::Topology Topo, class WakeTraits, class BalanceTraits>
void Pool<Topo, WakeTraits, BalanceTraits>::run(Worker& w, detail::WorkerContext& ctx, detail::TaskControl* t) {
  w.running.store(1, std::memory_order_relaxed);
  if (t->last_cpu != no_cpu && t->last_cpu != w.cpu)
    bump(w.migrations);
  t->last_cpu = w.cpu;
  t->last_ran = w.now;
  // traits::SisCurrent: the run starts at the worker's time, read just
  // before it popped t (one clock read per task, as for everything else).
  // The placer's task_runs (nothing without a policy that reads sleeps)
  // also marks t's next sleep report due.
  w.placer.task_runs(rec(t)->placement, w.now);
  if (opts_.trace != nullptr)  // traced: the run as a task event, for a replay
    opts_.trace->record(taskplace::kit::TaskEvent{key(t), w.cpu, w.now, taskplace::kit::TaskEvent::Kind::runs});
  ctx.task = t;
  // From here on t may finish (and free itself) or be woken and resumed
  // on another worker: it is not touched after resume() returns.
  t->resume.resume();
  ctx.task = nullptr;
  w.running.store(0, std::memory_order_relaxed);
  bump(w.tasks_run);
  if (!std::exchange(w.run_donated, false)) count_done(w);  // else the slot's task counts it
}

template <taskplace::Topology Topo, class WakeTraits, class BalanceTraits>
detail::TaskControl* Pool<Topo, WakeTraits, BalanceTraits>::spin_then_park(Worker& w) {
  Nanoseconds last = clock_.now();
  // Saturating: a spin_before_park of Nanoseconds::max() spins until work comes.
  const Nanoseconds until = taskplace::saturating_add(last, opts_.spin_before_park);
  for (std::uint32_t i = 0;; ++i) {
    if (w.queued.load(std::memory_order_relaxed) > 0) return pop_local(w);
    if ((i & 63) == 63) {
      const Nanoseconds now = clock_.now();
      note_gap(w, now - last, now);  // 64 pauses take a few us, unless descheduled
      last = now;
      if (w.next_deadline.load(std::memory_order_relaxed) <= now.count()) return nullptr;
      if (now >= until) break;
    }
    taskplace::kit::spin_pause();
  }
  if (quiescent()) {
    exit_.store(true, std::memory_order_release);
    unpark_all();
    return nullptr;
  }
  // Whether some worker holds two or more tasks, brought up to date (a
  // tick clears the flag, and a pool whose workers all went idle has no
  // ticks: a stale flag would make the next overload set nothing and
  // so kick no one).
  bool overload_seen = false;
  if (opts_.kick_idle_on_tick) {
    refresh_overload();
    overload_seen = overload_.set();
  }
  w.park.store(park_parked, std::memory_order_seq_cst);
  if (w.queued.load(std::memory_order_seq_cst) > 0 || exit_.load(std::memory_order_seq_cst) ||
      quiescent()) {
    w.park.store(park_awake, std::memory_order_seq_cst);
    return pop_local(w);
  }
  const std::int64_t dl = w.next_deadline.load(std::memory_order_relaxed);
  Nanoseconds timeout{0};
  if (dl != INT64_MAX) timeout = std::max(Nanoseconds{dl} - clock_.now(), Nanoseconds{1000});
  // With a worker overloaded, sleep one tick at most: the overloaded
  // worker may be stuck in a long task, which neither ticks nor kicks,
  // so this worker wakes when that tick would have kicked it.
  // (A tick under 1 us counts as 1 us: a zero timeout is no timeout.)
  const Nanoseconds tick = std::max<Nanoseconds>(opts_.tick, Nanoseconds{1000});
  if (overload_seen && (timeout == Nanoseconds{0} || timeout > tick)) timeout = tick;
  bump(w.parks);
  detail::futex_wait(w.park, park_parked, timeout);
  const std::uint32_t why = w.park.exchange(park_awake, std::memory_order_seq_cst);
  if (why == park_woken || why == park_kicked) {
    const Nanoseconds now = clock_.now();
    note_gap(w, now - Nanoseconds{w.unparked_at.load(std::memory_order_relaxed)}, now);
  }
  // Kicked, or woken by the tick it stood in for with the overload still
  // there: a periodic balance on behalf of the busy worker.
  if (why == park_kicked ||
      (why == park_parked && overload_seen && overload_.set())) {
    bump(w.kicks);
    steal_as_kicked(w);
  }
  return pop_local(w);
}

template <taskplace::Topology Topo, class WakeTraits, class BalanceTraits>
bool Pool<Topo, WakeTraits, BalanceTraits>::steal_as_kicked(Worker& w) {
  Queues queues{&workers_};
  detail::TaskControl* t = w.thief.periodic(queues, LastRan{}, clock_, w.nr_running());
  if (t != nullptr) w.accept(t);
  return t != nullptr;
}

}  // namespace taskplace_pool
