// taskplace_sim/machine_run_queues.hpp: the simulated machine's fair
// scheduler: per-CPU run queues ordered by vruntime, wake-up placement of
// vruntime and wake-up preemption, slices, CPU time accounting and the
// SMT slowdown. Part of Machine (machine.hpp includes it; include that).
//
// Kernel analogue: enqueue_entity / place_entity, check_preempt_wakeup,
// pick_next_entity, update_curr and the tick's slice check, much
// simplified: the least vruntime runs (an O(log n) pick from RunQueues),
// a woken sleeper is placed at most sleeper_credit behind min_vruntime and
// preempts the running task when it leads by more than the wake-up
// granularity.
#pragma once

#include <algorithm>
#include <cstdint>

#include "taskplace_sim/machine.hpp"

namespace taskplace_sim {

// Effects: raises c's min_vruntime to the least vruntime it holds, the
// running task's time since its last account included (kernel
// update_curr, then update_min_vruntime).
template <taskplace::Topology T, class W, class B>
void Machine<T, W, B>::update_min_vruntime(CpuId c) {
  Cpu& k = cpus_[c];
  std::int64_t m = INT64_MAX;
  if (k.curr >= 0) {
    m = tasks_[static_cast<std::uint32_t>(k.curr)].vruntime;
    if (k.mode == CpuMode::running) m += std::max<std::int64_t>(0, (now_ - k.seg_start).count());
  }
  if (!rq_.empty(c)) m = std::min(m, rq_.top_key(c));
  if (m != INT64_MAX && m > k.min_vruntime) k.min_vruntime = m;
}

// Effects: queues `t` on `c`. A woken sleeper keeps its lag relative to
// its old CPU's min_vruntime but is placed no more than sleeper_credit
// behind (kernel place_entity); it preempts the running task when it
// leads by more than the wake-up granularity (check_preempt_wakeup).
template <taskplace::Topology T, class W, class B>
void Machine<T, W, B>::enqueue(Task& t, CpuId c, bool wakeup) {
  Cpu& k = cpus_[c];
  // min_vruntime as of now (kernel: update_curr before place_entity);
  // otherwise a sleeper could be placed up to a slice further behind than
  // the credit.
  if (k.mode == CpuMode::running && k.curr >= 0) update_min_vruntime(c);
  if (t.vr_cpu != taskplace::no_cpu) {
    const std::int64_t rel = t.vruntime - cpus_[t.vr_cpu].min_vruntime;
    t.vruntime = k.min_vruntime + rel;
  } else {
    t.vruntime = k.min_vruntime;
  }
  t.vr_cpu = c;
  if (wakeup) t.vruntime = std::max(t.vruntime, k.min_vruntime - costs_.sleeper_credit.count());
  t.state = TaskState::runnable;
  t.cpu = c;
  prefetch_program(t);
  queue_task(t, c);
  refresh(c);
  if (k.mode == CpuMode::idle) {
    pick_next(c, false);
  } else if (k.mode == CpuMode::running && wakeup) {
    const Task& cur = tasks_[static_cast<std::uint32_t>(k.curr)];
    const std::int64_t ran = std::max<std::int64_t>(0, (now_ - k.seg_start).count());
    if (cur.vruntime + ran - t.vruntime > costs_.wakeup_granularity.count()) {
      if (k.in_step) {
        k.need_resched = true;
      } else {
        ++r_.preemptions;
        account(c);
        requeue(c);
        pick_next(c, false);
      }
    }
  }
}

template <taskplace::Topology T, class W, class B>
void Machine<T, W, B>::leave_cpu(Task& t, CpuId c) {
  t.last_cpu = c;
  rehome(t, cost_.l3_of(c));
  t.cool_mark = cpus_[c].run_total;
  t.last_ran = now_;
  cpus_[c].curr = -1;
  refresh(c);
}

template <taskplace::Topology T, class W, class B>
void Machine<T, W, B>::requeue(CpuId c) {
  Task& t = tasks_[static_cast<std::uint32_t>(cpus_[c].curr)];
  placer_.task_stops(t.ps, now_);  // preempted, not asleep: its run goes on (traits::SisCurrent)
  leave_cpu(t, c);
  t.state = TaskState::runnable;
  queue_task(t, c);
  refresh(c);
}

// Effects: restarts c's stopped tick at its next tick time (NOHZ: a CPU
// stops ticking when a tick finds it idle).
template <taskplace::Topology T, class W, class B>
void Machine<T, W, B>::restart_tick(CpuId c) {
  Cpu& k = cpus_[c];
  if (k.tick_on) return;
  k.tick_on = true;
  const Nanoseconds phase = tick_phase(c);
  const std::int64_t periods = now_ < phase ? 0 : (now_ - phase) / costs_.tick + 1;
  events_.push_in_lane(tick_lane, phase + costs_.tick * periods, EventKind::tick, c, 0);
}

// Effects: charges the running task's time since seg_start.
template <taskplace::Topology T, class W, class B>
void Machine<T, W, B>::account(CpuId c) {
  Cpu& k = cpus_[c];
  Task& t = tasks_[static_cast<std::uint32_t>(k.curr)];
  if (now_ > k.seg_start) {
    const Nanoseconds ran = now_ - k.seg_start;
    if (trace_ != nullptr) trace_->slice(c, t.spec->name, k.seg_start, now_);
    const Nanoseconds done = std::min(t.remaining, k.rate == 100 ? ran : ran * k.rate / 100);
    t.remaining -= done;
    t.cpu_time += done;
    t.vruntime += ran.count();
    k.run_total += ran.count();
    if (measuring_) r_.busy_cpu_time += ran;
    k.seg_start = now_;
  }
  update_min_vruntime(c);
}

template <taskplace::Topology T, class W, class B>
void Machine<T, W, B>::start_segment(CpuId c, bool switched) {
  Cpu& k = cpus_[c];
  const Task& t = tasks_[static_cast<std::uint32_t>(k.curr)];
  if (switched) {
    k.seg_start = now_ + costs_.context_switch;
    k.slice_end = k.seg_start + costs_.base_slice;
  } else {
    k.seg_start = now_;
    if (k.slice_end <= now_) k.slice_end = now_ + costs_.base_slice;
  }
  k.rate = speed(c);
  const Nanoseconds wall = wall_time(t.remaining, k.rate);
  const Nanoseconds len = std::min(wall, k.slice_end - k.seg_start);
  k.mode = CpuMode::running;
  push(k.seg_start + len, EventKind::cpu, c, ++k.gen);
  if (smt_) smt_changed(c);
}

// --- SMT: a thread runs at smt_speed_pct while a sibling runs a task ---------
// The wall time `work` takes at `rate` percent speed, rounded up (at full
// speed the work itself, without the division).
template <taskplace::Topology T, class W, class B>
Nanoseconds Machine<T, W, B>::wall_time(Nanoseconds work, std::uint32_t rate) {
  if (rate == 100) return work;
  return (work * 100 + Nanoseconds{rate - 1}) / rate;
}

template <taskplace::Topology T, class W, class B>
std::uint32_t Machine<T, W, B>::speed(CpuId c) const {
  if (!smt_) return 100;
  for (const CpuId x : cost_.siblings(c))
    if (runs_task(x)) return costs_.smt_speed_pct;
  return 100;
}

// Effects: siblings of c whose speed changed re-plan their segment.
template <taskplace::Topology T, class W, class B>
void Machine<T, W, B>::smt_changed(CpuId c) {
  for (const CpuId s : cost_.siblings(c)) {
    if (!runs_task(s) || cpus_[s].in_step) continue;
    if (speed(s) == cpus_[s].rate) continue;
    account(s);
    const Nanoseconds keep = cpus_[s].slice_end;
    const bool in_prefix = cpus_[s].seg_start > now_;
    const Nanoseconds start = cpus_[s].seg_start;
    start_segment_at(s, in_prefix ? start : now_, keep);
  }
}

template <taskplace::Topology T, class W, class B>
void Machine<T, W, B>::start_segment_at(CpuId s, Nanoseconds from, Nanoseconds slice_end) {
  Cpu& k = cpus_[s];
  const Task& t = tasks_[static_cast<std::uint32_t>(k.curr)];
  k.seg_start = from;
  k.slice_end = slice_end;
  k.rate = speed(s);
  const Nanoseconds wall = wall_time(t.remaining, k.rate);
  push(from + std::min(wall, std::max(slice_end - from, Nanoseconds{0})), EventKind::cpu, s, ++k.gen);
}

// Effects: picks the queued task of least vruntime and runs it; with an
// empty queue, newidle-balances (if `allow_balance`) or goes idle.
template <taskplace::Topology T, class W, class B>
void Machine<T, W, B>::pick_next(CpuId c, bool allow_balance) {
  Cpu& k = cpus_[c];
  for (;;) {
    if (rq_.empty(c)) {
      if (allow_balance && newidle(c)) return;
      k.idle_at = now_;  // its spin window starts (WakeModel::runtime)
      k.mode = CpuMode::idle;
      k.curr = -1;
      ++k.gen;
      refresh(c);
      if (smt_) smt_changed(c);
      return;
    }
    Task& t = tasks_[rq_.pop(c)];
    --queued_;
    restart_tick(c);
    if (k.idle_stamped) {
      balancer_.idle_end(bst_[c], now_);
      k.idle_stamped = false;
    }
    k.curr = static_cast<std::int32_t>(t.id);
    k.mode = CpuMode::running;
    t.state = TaskState::running;
    t.cpu = c;
    placer_.task_runs(t.ps, now_);  // a placer that times runs (traits::SisCurrent); else nothing
    refresh(c);
    if (measuring_) {
      ++r_.context_switches;
      if (t.last_cpu != taskplace::no_cpu && t.last_cpu != c)
        ++r_.migrations[static_cast<std::size_t>(cost_.distance(t.last_cpu, c))];
    }
    const Nanoseconds penalty = cache_penalty(t, c);
    if (measuring_ && t.home_l3 == cost_.l3_of(c))
      r_.capacity_time += cost_.capacity_penalty(resident_kb_[t.home_l3], t.footprint_kb);
    StepResult res = StepResult::compute;
    k.need_resched = false;
    if (t.spurious) {
      t.spurious = false;
      begin_compute(t, costs_.spurious_run);
    } else if (!t.computing) {
      k.in_step = true;
      res = step(t, c);
      k.in_step = false;
    }
    if (res == StepResult::compute && k.need_resched) {
      // Its first steps woke a task onto this CPU that leads it by more
      // than the wake-up granularity: preempted at once, as a kernel task
      // is when its wake-up sets need-resched. It has not run, so it pays
      // no cache refill yet; the wakee is picked next.
      k.need_resched = false;
      ++r_.preemptions;
      requeue(c);
      continue;
    }
    k.need_resched = false;
    if (res == StepResult::compute) {
      t.remaining += penalty;
      t.work += penalty;
      start_segment(c, true);
      return;
    }
    allow_balance = true;  // it blocked at once; look again
  }
}

// Returns: whether c's running task has a smaller vruntime than every
// queued one, so that a pick would choose it again (ties go to the queue,
// where it would be last).
template <taskplace::Topology T, class W, class B>
bool Machine<T, W, B>::still_least(CpuId c) const {
  const Cpu& k = cpus_[c];
  const std::int64_t v = tasks_[static_cast<std::uint32_t>(k.curr)].vruntime;
  return rq_.empty(c) || rq_.top_key(c) > v;
}

template <taskplace::Topology T, class W, class B>
void Machine<T, W, B>::on_cpu_event(CpuId c) {
  Cpu& k = cpus_[c];
  if (k.mode == CpuMode::overhead) {
    set_balancing(c, false);
    k.mode = CpuMode::idle;
    pick_next(c, false);
    return;
  }
  account(c);
  Task& t = tasks_[static_cast<std::uint32_t>(k.curr)];
  StepResult res = StepResult::compute;
  if (t.remaining.count() <= 0) {
    t.computing = false;
    k.in_step = true;
    res = step(t, c);
    k.in_step = false;
  }
  if (res == StepResult::compute) {
    const bool slice_over = now_ >= k.slice_end && !rq_.empty(c);
    if (slice_over && !k.need_resched && still_least(c)) {
      // The pick would choose it again: the kernel's pick_next_task
      // returns prev, no switch happens and a new slice begins.
      start_segment(c, false);
      return;
    }
    if (k.need_resched || slice_over) {
      if (k.need_resched) ++r_.preemptions;
      k.need_resched = false;
      requeue(c);
      pick_next(c, false);
    } else {
      start_segment(c, false);
    }
    return;
  }
  k.need_resched = false;
  pick_next(c, true);
}

}  // namespace taskplace_sim
