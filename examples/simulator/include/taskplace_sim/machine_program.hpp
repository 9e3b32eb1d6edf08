// taskplace_sim/machine_program.hpp: the simulated machine running the
// tasks' programs (workload.hpp): computes, messages, waits, sleeps and the
// wake-ups they cause, each placed by the library's WakePlacer. Part of
// Machine (machine.hpp includes it; include that).
//
// Kernel analogue: try_to_wake_up -> select_task_rq_fair (the placer call,
// with the machine seen through MachineView), the remote wake-up's IPI
// latency, and the sleep side's task_sleeps bookkeeping.
#pragma once

#include <cstdint>
#include <span>
#include <stdexcept>

#include "taskplace_sim/machine.hpp"

namespace taskplace_sim {

template <taskplace::Topology T, class W, class B>
void Machine<T, W, B>::begin_compute(Task& t, Nanoseconds d) {
  t.remaining = d + t.extra;
  t.work += t.remaining;
  t.extra = Nanoseconds{0};
  t.computing = true;
}

// Effects: runs `t`'s instant steps on `c` until it computes, blocks or
// exits. A step that woke another task leaves the waker its wake path to
// run (Costs::wake_path) before its next step, as a compute.
// Throws std::logic_error for a loop with no blocking or compute;
// SimulationDiverged when a mailbox without capacity overflows.
template <taskplace::Topology T, class W, class B>
auto Machine<T, W, B>::step(Task& t, CpuId c) -> StepResult {
  const std::span<const Step> prog = t.program;
  for (std::uint32_t guard = 0;; ++guard) {
    if (guard > 100'000) throw std::logic_error("task " + t.spec->name + " loops without computing or blocking");
    if (t.extra.count() > 0 && (t.pc >= prog.size() || (prog[t.pc].op != Op::compute && prog[t.pc].op != Op::compute_exp))) {
      // Costs owed (a wake path, a message taken) run before the next
      // instant step, a block included; before a compute they join it.
      begin_compute(t, Nanoseconds{0});
      return StepResult::compute;
    }
    if (t.pc >= prog.size()) return finish(t, c);
    const Step& s = prog[t.pc];
    switch (s.op) {
      case Op::compute:
      case Op::compute_exp: {
        ++t.pc;
        const Nanoseconds d = noisy(s.op == Op::compute ? s.d : rng_.exponential(s.d));
        if (d.count() <= 0) break;
        begin_compute(t, d);
        return StepResult::compute;
      }
      case Op::send:
        if (!send(t, s.target, c, now_, s.sync, s.bytes)) return StepResult::blocked;
        ++t.pc;
        break;
      case Op::send_rr: {
        const auto& g = w_.groups[s.target];
        const std::uint32_t to = g[t.rr[t.pc] % g.size()];
        if (to != t.id && !send(t, to, c, now_, s.sync, s.bytes)) return StepResult::blocked;
        ++t.rr[t.pc];
        ++t.pc;
        break;
      }
      case Op::reply:
      case Op::respond:
        if (t.has_last && !send(t, t.last.from, c, s.op == Op::respond ? t.last.stamp : now_, s.sync, s.bytes))
          return StepResult::blocked;
        ++t.pc;
        break;
      case Op::signal: {
        ++t.pc;
        Task& u = tasks_[s.target];
        if (u.state == TaskState::done) break;
        if (u.signal_pending) {
          if (measuring_) ++r_.signals_coalesced;
          break;
        }
        u.signal_pending = true;
        if (u.state == TaskState::waiting_signal) wake(u, &t, c, false);
        break;
      }
      case Op::wait_signal:
        if (t.signal_pending) {
          t.signal_pending = false;
          ++t.pc;
          break;
        }
        block(t, c, TaskState::waiting_signal);
        return StepResult::blocked;
      case Op::nudge: {
        ++t.pc;
        const auto& g = w_.groups[s.target];
        if (g.size() > 1 && rng_.chance(s.permille)) {
          const std::uint32_t to = g[rng_.below(static_cast<std::uint32_t>(g.size()))];
          Task& u = tasks_[to];
          if (to != t.id && u.state == TaskState::waiting) {
            u.spurious = true;
            wake(u, &t, c, false);
          }
        }
        break;
      }
      case Op::wait:
        if (!t.mailbox.empty()) {
          take_message(t, c);
          ++t.pc;
          break;
        }
        block(t, c, TaskState::waiting);
        return StepResult::blocked;
      case Op::sleep:
      case Op::sleep_exp: {
        ++t.pc;
        const Nanoseconds d = s.op == Op::sleep ? s.d : rng_.exponential(s.d);
        block(t, c, TaskState::sleeping);
        push(now_ + d, EventKind::timer, t.id, 0);
        return StepResult::blocked;
      }
      case Op::count:
        ++t.pc;
        ++completions_all_;
        if (measuring_) {
          ++r_.completions;
          const Nanoseconds from = t.has_last ? t.last.stamp : t.last_count;
          latencies_.record((now_ - from).count());
        }
        t.last_count = now_;
        break;
      case Op::loop:
        if (s.times == 0 || t.rr[t.pc] < s.times) {
          ++t.rr[t.pc];
          t.pc = s.target;
        } else {
          t.rr[t.pc] = 0;
          ++t.pc;
        }
        break;
      case Op::end: return finish(t, c);
    }
  }
}

template <taskplace::Topology T, class W, class B>
auto Machine<T, W, B>::finish(Task& t, CpuId c) -> StepResult {
  leave_cpu(t, c);
  rehome(t, ~0u);
  t.state = TaskState::done;
  ++done_;
  if (done_ == tasks_.size()) all_done_at_ = now_;
  return StepResult::done;
}

template <taskplace::Topology T, class W, class B>
void Machine<T, W, B>::block(Task& t, CpuId c, TaskState st) {
  leave_cpu(t, c);
  t.state = st;
  placer_.task_sleeps(t.ps, t.key, rst_[c], rq_.empty(c) && cpus_[c].pending == 0, now_);
}

// Effects: puts a message of `bytes` from `from` (running on c) into task
// `to`'s mailbox and wakes `to` if it waits for one. Returns: false, with
// `from` blocked (TaskState::blocked_send) and nothing sent, when the
// mailbox has a capacity and the message does not fit: the receiver wakes
// it once it takes a message, and it sends again.
// Throws: SimulationDiverged when a mailbox without capacity reaches
// max_unbounded_messages.
template <taskplace::Topology T, class W, class B>
bool Machine<T, W, B>::send(Task& from, std::uint32_t to, CpuId c, Nanoseconds stamp, bool sync, std::uint32_t bytes) {
  Task& u = tasks_[to];
  const std::uint64_t size = std::max(bytes, 1u);
  const std::uint64_t cap = u.mailbox_bytes;
  if (cap != 0 && u.mailbox_used + size > cap) {
    if (measuring_) ++r_.sends_blocked;
    u.blocked_senders.push_back(from.id);
    block(from, c, TaskState::blocked_send);
    return false;
  }
  if (cap == 0 && u.mailbox.size() >= max_unbounded_messages)
    throw SimulationDiverged("task " + from.spec->name + " has sent " + std::to_string(u.mailbox.size()) +
                             " messages that task " + u.spec->name +
                             " has not taken, at " + std::to_string(now_.count()) +
                             " ns: the sender outpaces its receiver and the mailbox has no capacity "
                             "(give it one: TaskSpec::mailbox_bytes)");
  u.mailbox.push_back({from.id, c, stamp, bytes});
  u.mailbox_used += size;
  if (u.state == TaskState::waiting) wake(u, &from, c, sync);
  return true;
}

// Effects: t, running on c, takes its oldest message: it owes the
// message's cache lines, and wakes every sender blocked on its full
// mailbox (with the sync hint, as pipe_read() wakes its writers).
template <taskplace::Topology T, class W, class B>
void Machine<T, W, B>::take_message(Task& t, CpuId c) {
  t.last = t.mailbox.pop_front();
  t.mailbox_used -= std::max(t.last.bytes, 1u);
  t.has_last = true;
  t.extra += cost_.message_cost(t.last.from_cpu, c, t.last.bytes);
  if (t.blocked_senders.empty()) return;
  std::vector<std::uint32_t> woken;
  woken.swap(t.blocked_senders);
  for (auto id : woken)
    if (tasks_[id].state == TaskState::blocked_send) wake(tasks_[id], &t, c, true);
  woken.clear();
  if (t.blocked_senders.empty()) t.blocked_senders.swap(woken);  // keep the capacity
}

// Effects: asks the placer where `u` runs and sends it there: at once on
// the waking CPU, after remote_wakeup elsewhere. The waker owes its wake
// path: wake_path, a line per CPU the search looked at, and ipi_send when
// the wakee goes to another CPU.
template <taskplace::Topology T, class W, class B>
void Machine<T, W, B>::wake(Task& u, Task* waker, CpuId c, bool sync) {
  static_assert(taskplace::MachineState<View>);
  typename Placer::Wakeup w;
  w.waker = waker != nullptr ? &waker->ps : nullptr;
  w.waker_key = waker != nullptr ? waker->key : taskplace::no_task;
  w.wakee = &u.ps;
  w.wakee_key = u.key;
  w.waking_cpu = c;
  w.prev_cpu = u.last_cpu;
  w.sync = sync;
  // load(c) counts runnable tasks only. Today's rule (WakeAffine) takes
  // the wakee off prev's PELT load, so wakee_load = 0 (affine input docs);
  // the 2008 rule adds the wakee's weight to the waking CPU's runnable load
  // (kernel: 100 * (tl + p->se.load.weight) against prev's), so it gets it.
  w.wakee_load = taskplace::runnable_only_wakee_load<typename Placer::affine_policy>;
  const taskplace::Placement p = placer_.place(w, View{this}, now_);
  if (trace_ != nullptr)
    trace_->wake(now_, u.spec->name, c, p.cpu, taskplace::to_string(p.affine),
                 taskplace::to_string(p.reason), p.wide, sync);
  // Onto another CPU: the kernel's IPI and remote wake-up, or (a runtime)
  // a line to a busy or spinning worker, the unpark to a parked one.
  const bool handoff = p.cpu != c && !parked(p.cpu);
  if (waker != nullptr) {
    const Nanoseconds send = p.cpu == c ? Nanoseconds{0} : handoff ? cost_.line(c, p.cpu) : costs_.ipi_send;
    const Nanoseconds cost = costs_.wake_path + costs_.line_llc * static_cast<std::int64_t>(p.scanned) + send;
    waker->extra += cost;
    if (measuring_) r_.wake_path_time += cost;
  }
  u.state = TaskState::in_flight;
  u.cpu = p.cpu;
  if (p.cpu == c) {
    enqueue(u, c, true);
  } else if (handoff) {
    // A line's latency differs by distance: not a fixed-delay lane.
    ++cpus_[p.cpu].pending;
    refresh(p.cpu);
    push(now_ + cost_.line(c, p.cpu), EventKind::arrival, u.id, 0);
  } else {
    ++cpus_[p.cpu].pending;
    refresh(p.cpu);
    events_.push_in_lane(arrival_lane, now_ + costs_.remote_wakeup, EventKind::arrival, u.id, 0);
  }
}

// Returns: whether a wake-up onto c pays the full remote wake-up: always
// under WakeModel::kernel; under WakeModel::runtime when c is idle (no
// task, none queued or on its way) and went idle spin_window or more ago.
template <taskplace::Topology T, class W, class B>
bool Machine<T, W, B>::parked(CpuId c) const {
  if (costs_.wake_model == WakeModel::kernel) return true;
  return idle_now(c) && now_ - cpus_[c].idle_at >= costs_.spin_window;
}

template <taskplace::Topology T, class W, class B>
void Machine<T, W, B>::on_arrival(Task& u) {
  Cpu& k = cpus_[u.cpu];
  --k.pending;
  enqueue(u, u.cpu, true);
}

template <taskplace::Topology T, class W, class B>
void Machine<T, W, B>::on_timer(Task& u) {
  if (u.state != TaskState::sleeping) return;
  wake(u, nullptr, u.last_cpu, false);
}

}  // namespace taskplace_sim
