// taskplace_pool/wakeups.hpp: the pool's wake-ups and a worker's next task: a woken task placed by the
// placer, its block, sleep and yield, the timers, and the hand-off slot.
// Definitions of Pool's members declared in pool.hpp (whose comments
// document them), which includes this file at its end.
#pragma once

#include "taskplace/detail/config.hpp"

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
void Pool<Topo, WakeTraits, BalanceTraits>::wake_task(detail::TaskControl* t, WakeHint hint) {
  auto* ctx = detail::current_context();
  const bool inside = ctx != nullptr && ctx->pool == this;
  const CpuId waking = inside ? ctx->cpu : (t->last_cpu < n_ ? t->last_cpu : 0);
  record_type* waker = inside && ctx->task ? rec(ctx->task) : nullptr;
  const placer_type& placer = inside ? workers_[waking]->placer : placer_;
  std::unique_lock<std::mutex> shared_placer;  // off the pool: several threads share placer_
  if (!inside) shared_placer = std::unique_lock<std::mutex>{external_m_};
  const taskplace::Placement p = placer.place(
      typename placer_type::Wakeup{
          .waker = waker ? &waker->placement : nullptr,
          .waker_key = waker ? key(waker) : taskplace::no_task,
          .wakee = &rec(t)->placement,
          .wakee_key = key(t),
          .waking_cpu = waking,
          .prev_cpu = t->last_cpu,
          .sync = waker != nullptr && hint != WakeHint::async,
          .current_cpu = waker != nullptr && hint == WakeHint::handoff,
          .wakee_load = taskplace::kit::wakee_load<placer_type>,
          .waker_load = 1024},
      // Traced: the answers it reads go with the wake event (kit::observed).
      taskplace::kit::observed<placer_type>(Machine{*this, inside ? workers_[waking]->now : clock_.now()}, n_),
      // The wake-up's time, read only when the placer needs it (not for a
      // settled pair's quiet replay).
      [&] { return inside && !taskplace::kit::times_wakeups<placer_type> ? workers_[waking]->now : clock_.now(); });
  if (shared_placer) shared_placer.unlock();
  if (inside) {
    Worker& w = *workers_[waking];
    bump(w.wakeups);
    if (p.cpu == waking) bump(w.affine_wakeups);
  } else {
    external_wakeups_.fetch_add(1, std::memory_order_relaxed);
  }
  if (inside && waker != nullptr && hint != WakeHint::async && p.cpu == waking)
    enqueue_next(*workers_[waking], t);
  else
    enqueue(inside ? workers_[waking].get() : nullptr, p.cpu, t);
}

template <taskplace::Topology Topo, class WakeTraits, class BalanceTraits>
void Pool<Topo, WakeTraits, BalanceTraits>::block_task(detail::TaskControl* t) {
  if (!hot_steals() && !taskplace::kit::reports_sleeps<placer_type> && opts_.trace == nullptr)
    return;  // nothing to record
  Worker* w = this_worker();
  // The moment t stops: a fresh clock read where the placer takes
  // differences of such stamps (kit::times_sleeps; traits::Linux2008's
  // overlap since t's last wake-up of another task, traits::SisCurrent's
  // run since run()'s task_runs), else the worker's time at the start of
  // the run.
  const Nanoseconds at = end_run(w, t);
  // The report, whatever the policies (kit::SleepSlot). Every sleep
  // passes here (sleep_for announces its block before it queues its
  // timer), on t's own thread, before t is published as a waiter (the
  // waker's reads are ordered after these writes by the waiter list's
  // lock): an early report, which the late-report contract (WakePlacer::
  // task_sleeps) also covers. A task blocks only on a worker.
  if (w != nullptr) w->sleeps.report(w->placer, rec(t)->placement, key(t), w->waiting() == 0, at);
  // Traced: the sleep as a task event, at a clock read of its moment
  // (for a replay under policies that time sleeps).
  if (opts_.trace != nullptr && w != nullptr)
    opts_.trace->record(taskplace::kit::TaskEvent{key(t), w->cpu, timed_sleeps || hot_steals() ? at : clock_.now(),
                                                  taskplace::kit::TaskEvent::Kind::sleeps, w->waiting() == 0});
}

template <taskplace::Topology Topo, class WakeTraits, class BalanceTraits>
void Pool<Topo, WakeTraits, BalanceTraits>::timer_task(detail::TaskControl* t, Nanoseconds delay) {
  Worker* self = this_worker();
  Worker& w = self != nullptr ? *self : *workers_[0];
  // sleep_for announced its block first (block_task): the clock read
  // that ended the run, if one was taken, is now.
  const Nanoseconds now = self != nullptr && self->run_ended_at ? *self->run_ended_at : clock_.now();
  if (hot_steals()) t->last_ran = now;
  delay = std::max(delay, Nanoseconds{0});
  // On the TSC the deadline is later by the bound of the clock's rate
  // error against steady_clock (TscClock::rate_error_inverse: 1/512, 2 ms
  // on a second's sleep), so that a sleep lasts its whole duration by
  // steady_clock too.
  if (clock_.uses_tsc()) {
    const Nanoseconds pad = delay / taskplace::TscClock::rate_error_inverse;
    delay = delay > Nanoseconds::max() - pad ? Nanoseconds::max() : delay + pad;
  }
  if (now >= Nanoseconds{0} && delay >= Nanoseconds::max() - now) return;  // forever
  const std::int64_t at = (now + delay).count();  // < INT64_MAX, next_deadline's "none"
  // The timer is pending work from here until it fires, counted while
  // t still runs (so before t's run ends), like a wake-up.
  count_pending(self);
  {
    std::lock_guard lk(w.m);
    w.timers.emplace_back(at, t);
    std::push_heap(w.timers.begin(), w.timers.end(), std::greater<>{});
    w.next_deadline.store(w.timers.front().first, std::memory_order_relaxed);
  }
}

template <taskplace::Topology Topo, class WakeTraits, class BalanceTraits>
void Pool<Topo, WakeTraits, BalanceTraits>::yield_task(detail::TaskControl* t) {
  Worker* w = this_worker();
  const Nanoseconds now = end_run(w, t);
  // A yield is no sleep: the run ends, the duration sample goes on.
  placer_.task_stops(rec(t)->placement, now);
  if (opts_.trace != nullptr)
    opts_.trace->record(taskplace::kit::TaskEvent{key(t), w != nullptr ? w->cpu : 0,
                                                  timed_sleeps || hot_steals() ? now : clock_.now(),
                                                  taskplace::kit::TaskEvent::Kind::stops});
  enqueue(w, w != nullptr ? w->cpu : idlest_worker(), t);
}

template <taskplace::Topology Topo, class WakeTraits, class BalanceTraits>
void Pool<Topo, WakeTraits, BalanceTraits>::fire_timers(Worker& w, std::int64_t now) {
  if (w.next_deadline.load(std::memory_order_relaxed) > now) return;
  std::vector<detail::TaskControl*> due;
  {
    std::lock_guard lk(w.m);
    while (!w.timers.empty() && w.timers.front().first <= now) {
      std::pop_heap(w.timers.begin(), w.timers.end(), std::greater<>{});
      due.push_back(w.timers.back().second);
      w.timers.pop_back();
    }
    w.next_deadline.store(w.timers.empty() ? INT64_MAX : w.timers.front().first,
                          std::memory_order_relaxed);
  }
  for (auto* t : due) {
    wake_task(t, WakeHint::async);  // waker: none (ctx->task is null between tasks)
    count_done(w);                  // the timer, after its wake-up counted t
  }
}

template <taskplace::Topology Topo, class WakeTraits, class BalanceTraits>
void Pool<Topo, WakeTraits, BalanceTraits>::enqueue_next(Worker& w, detail::TaskControl* t) {
  const bool moved = w.next != nullptr;
  if (moved) {  // counted in queued under the lock, before a thief can take it off
    if (w.run_donated) count_pending(&w);  // before a thief can run it and count it done
    std::lock_guard lk(w.m);
    w.q.push_back(w.next);
    w.queued.fetch_add(1, std::memory_order_relaxed);
  } else {
    w.handoff.store(1, std::memory_order_relaxed);
  }
  w.run_donated = true;
  w.next = t;
  if (moved) note_queued(w);  // a task in the slot is no thief's; one moved to q is
}

}  // namespace taskplace_pool
