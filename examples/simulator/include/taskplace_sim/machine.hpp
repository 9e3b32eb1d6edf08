// taskplace_sim/machine.hpp: a deterministic, event-driven simulation of a
// machine of any Topology running a Workload, with wake placement decided
// by taskplace's WakePlacer and newidle balancing by its IdleBalancer.
//
// Kernel analogue: a caricature of kernel/sched/fair.c around the two
// decisions the library packages: per-CPU run queues ordered by vruntime,
// a base slice, wake-up preemption (a woken sleeper with a vruntime lead
// of more than the wake-up granularity preempts), remote wake-up latency,
// a cache-warmth model that makes migrations cost more the farther they
// go, periodic load balancing per level and newidle balancing whose cost
// grows with the level's span and with concurrent balancers.
//
//   taskplace_sim::Machine<taskplace::UniformTopology, taskplace::traits::Current> m{topo, workload};
//   taskplace_sim::Report r = m.run(10ms, 200ms);
#pragma once

#include <algorithm>
#include <cstdint>
#include <deque>
#include <queue>
#include <ranges>
#include <stdexcept>
#include <string>
#include <vector>

#include "taskplace/concepts.hpp"
#include "taskplace/idle_balancer.hpp"
#include "taskplace/stats.hpp"
#include "taskplace/wake_placer.hpp"
#include "taskplace_sim/costs.hpp"
#include "taskplace_sim/report.hpp"
#include "taskplace_sim/rng.hpp"
#include "taskplace_sim/trace.hpp"
#include "taskplace_sim/workload.hpp"

namespace taskplace_sim {

using taskplace::TaskKey;

enum class TaskState : std::uint8_t { runnable, running, waiting, sleeping, in_flight, done };
enum class CpuMode : std::uint8_t { idle, running, overhead };

// A Clock whose time the simulator moves (the balancer times its pulls).
struct SimClock {
  const Nanoseconds* t;
  Nanoseconds now() const noexcept { return *t; }
};

template <taskplace::Topology T, class WakeTraits = taskplace::DefaultWakeTraits,
          class BalanceTraits = taskplace::DefaultBalanceTraits>
class Machine {
 public:
  // The configured traits with counters switched on.
  struct wake_traits : WakeTraits {
    using Stats = taskplace::PlainStats;
  };
  struct balance_traits : BalanceTraits {
    using Stats = taskplace::PlainStats;
  };
  using Placer = taskplace::WakePlacer<T, wake_traits>;
  using Balancer = taskplace::IdleBalancer<T, balance_traits>;
  using reservation_cpu_state = typename Placer::reservation_policy::cpu_state;

  struct Msg {
    std::uint32_t from = 0;
    CpuId from_cpu = taskplace::no_cpu;
    Nanoseconds stamp{0};
  };

  struct Task {
    const TaskSpec* spec = nullptr;
    std::uint32_t id = 0;
    TaskKey key = 0;
    TaskState state = TaskState::runnable;
    std::uint32_t pc = 0;
    CpuId cpu = 0;                     // queue / running / destination CPU
    CpuId last_cpu = taskplace::no_cpu;  // where it last ran
    std::int64_t vruntime = 0;
    CpuId vr_cpu = taskplace::no_cpu;  // whose min_vruntime frame vruntime is in
    Nanoseconds remaining{0};          // of the current compute (with penalties)
    Nanoseconds extra{0};              // message costs owed to the next compute
    bool computing = false;
    bool spurious = false;             // woken without a message
    std::deque<Msg> mailbox;
    Msg last{};
    bool has_last = false;
    Nanoseconds last_count{0};
    Nanoseconds cpu_time{0};           // Invariant: cpu_time + remaining == work
    Nanoseconds work{0};               // every compute, penalty and cost assigned
    Nanoseconds last_ran{0};
    std::int64_t cool_mark = 0;
    std::uint32_t loops = 0;
    std::vector<std::uint32_t> rr;
    typename Placer::task_state ps{};
  };

  struct Cpu {
    CpuMode mode = CpuMode::idle;
    std::int32_t curr = -1;
    std::vector<std::uint32_t> queue;
    std::uint32_t pending = 0;  // wake-ups in flight towards this CPU
    Nanoseconds seg_start{0}, slice_end{0};
    std::uint64_t gen = 0;
    std::int64_t min_vruntime = 0;
    std::int64_t run_total = 0;  // task run time on this CPU, ns
    bool balancing = false, in_step = false, need_resched = false, idle_stamped = false;
    bool idle_flag = true;
    std::uint64_t ticks = 0;
    std::uint32_t rate = 100;          // percent speed of the current segment
    std::uint32_t balance_failed = 0;  // periodic balances that found only hot tasks
  };

  // The MachineState the placer reads (concepts.hpp R1-R3, O1, O3).
  struct View {
    const Machine* m;
    bool is_idle(CpuId c) const { return m->idle_now(c); }
    std::uint32_t nr_running(CpuId c) const { return m->nr_running(c); }
    std::uint64_t load(CpuId c) const { return std::uint64_t{1024} * m->nr_running(c); }
    std::uint32_t llc_utilization_pct(CpuId c) const {
      const auto llc = m->topo_->llc_of(c);
      const auto size = m->topo_->llc_size(c);
      return 100u * (size - m->llc_idle_[llc]) / size;
    }
    const reservation_cpu_state& reservation(CpuId c) const { return m->rst_[c]; }
  };
  static_assert(taskplace::MachineState<View>);

  // Effects: builds the machine; every task starts runnable on its
  // start_cpu at time 0 with its initial messages.
  // Throws: std::invalid_argument for a start CPU or a message / group
  // target out of range.
  Machine(const T& topology, Workload workload, Costs costs = {}, std::uint64_t seed = 1)
      : topo_(&topology), w_(std::move(workload)), costs_(costs), rng_(seed),
        placer_(topology), balancer_(topology) {
    const auto n = static_cast<CpuId>(topology.cpu_count());
    cpus_.resize(n);
    for (CpuId c = 0; c < n; ++c) {
      bst_.push_back(balancer_.make_state(c, Nanoseconds{0}));
      rst_.emplace_back();
    }
    std::uint32_t llcs = 0;
    for (CpuId c = 0; c < n; ++c) llcs = std::max(llcs, static_cast<std::uint32_t>(topology.llc_of(c)) + 1);
    llc_idle_.assign(llcs, 0);
    for (CpuId c = 0; c < n; ++c) ++llc_idle_[topology.llc_of(c)];
    idle_count_ = n;
    for (CpuId c = 0; c < n; ++c) smt_ = smt_ || topology.core_size(c) > 1;
    validate(n);
    tasks_.resize(w_.tasks.size());
    for (std::uint32_t i = 0; i < tasks_.size(); ++i) {
      Task& t = tasks_[i];
      t.spec = &w_.tasks[i];
      t.id = i;
      t.key = TaskKey{i} + 1;
      t.rr.assign(t.spec->program.size(), 0);
      for (std::uint32_t k = 0; k < t.spec->initial_messages; ++k)
        t.mailbox.push_back({t.spec->initial_from, w_.tasks[t.spec->initial_from].start_cpu, Nanoseconds{0}});
    }
    for (auto& t : tasks_) enqueue(t, t.spec->start_cpu, false);
    for (CpuId c = 0; c < n; ++c) {
      push(costs_.tick + costs_.tick * c / n, Kind::tick, c, 0);
      if (cpus_[c].mode == CpuMode::idle && !cpus_[c].queue.empty()) pick_next(c, false);
    }
  }
  Machine(const Machine&) = delete;
  Machine& operator=(const Machine&) = delete;

  // Effects: processes every event up to and including time `until`.
  // Complexity: O(events log events). Thread-safety: none.
  void run_until(Nanoseconds until) {
    while (!events_.empty() && events_.top().t <= until.count()) {
      const Event e = events_.top();
      events_.pop();
      advance(Nanoseconds{e.t});
      ++event_count_;
      switch (e.kind) {
        case Kind::cpu:
          if (e.b == cpus_[e.a].gen) on_cpu_event(e.a);
          break;
        case Kind::arrival: on_arrival(tasks_[e.a]); break;
        case Kind::timer: on_timer(tasks_[e.a]); break;
        case Kind::tick: on_tick(e.a); break;
      }
    }
    if (until > now_) advance(until);
  }

  // Effects: runs `warmup`, resets every counter, runs `measure` more.
  // Returns: the report of the measured window.
  Report run(Nanoseconds warmup, Nanoseconds measure) {
    run_until(warmup);
    start_measuring();
    run_until(warmup + measure);
    return report();
  }

  // Effects: runs until every task has exited or `limit` passed.
  Report run_to_completion(Nanoseconds limit, Nanoseconds step = Nanoseconds{1'000'000}) {
    start_measuring();
    while (done_ < tasks_.size() && now_ < limit) run_until(std::min(limit, now_ + step));
    return report();
  }

  void start_measuring() {
    measuring_ = true;
    measure_start_ = now_;
    r_ = Report{};
    latencies_.clear();
    placer_.stats().reset();
    balancer_.stats().reset();
    event_count_ = 0;
  }

  Report report() {
    Report r = r_;
    r.unit = w_.unit;
    r.measured = now_ - measure_start_;
    r.end_time = now_;
    r.events = event_count_;
    r.all_done = done_ == tasks_.size() ? all_done_at_ : Nanoseconds{-1};
    const double secs = static_cast<double>(r.measured.count()) / 1e9;
    r.throughput = secs > 0 ? static_cast<double>(r.completions) / secs : 0.0;
    r.p50 = quantile(latencies_, 0.50);
    r.p90 = quantile(latencies_, 0.90);
    r.p99 = quantile(latencies_, 0.99);
    r.max_latency = quantile(latencies_, 1.0);
    for (std::size_t i = 0; i < wake_counter_count; ++i)
      r.wake[i] = placer_.stats().get(static_cast<taskplace::WakeCounter>(i));
    for (std::size_t i = 0; i < balance_counter_count; ++i)
      r.balance[i] = balancer_.stats().get(static_cast<taskplace::BalanceCounter>(i));
    return r;
  }

  // Returns: "" when every invariant holds, else the first violation: each
  // task is in exactly the place its state says (no task on two CPUs, none
  // lost), its CPU time plus what remains equals the work assigned, and the
  // idle/queued bookkeeping matches a recount.
  std::string check_invariants() const {
    std::vector<int> seen(tasks_.size(), 0);
    std::uint64_t queued = 0;
    for (CpuId c = 0; c < cpus_.size(); ++c) {
      const Cpu& k = cpus_[c];
      if (k.curr >= 0) {
        const Task& t = tasks_[static_cast<std::uint32_t>(k.curr)];
        if (t.state != TaskState::running || t.cpu != c) return "cpu " + std::to_string(c) + " runs task " + t.spec->name + " whose state disagrees";
        ++seen[t.id];
      }
      for (auto id : k.queue) {
        const Task& t = tasks_[id];
        if (t.state != TaskState::runnable || t.cpu != c) return "task " + t.spec->name + " queued on cpu " + std::to_string(c) + " but not runnable there";
        ++seen[id];
        ++queued;
      }
      if (k.idle_flag != idle_now(c)) return "cpu " + std::to_string(c) + ": stale idle flag";
    }
    if (queued != queued_) return "queued count " + std::to_string(queued_) + " != recount " + std::to_string(queued);
    for (const Task& t : tasks_) {
      const bool placed = t.state == TaskState::running || t.state == TaskState::runnable;
      if (seen[t.id] != (placed ? 1 : 0)) return "task " + t.spec->name + " is on " + std::to_string(seen[t.id]) + " CPUs/queues";
      if (t.remaining.count() < 0) return "task " + t.spec->name + ": negative remaining work";
      if (t.cpu_time + t.remaining != t.work) return "task " + t.spec->name + ": cpu time + remaining != work";
    }
    return {};
  }

  Nanoseconds now() const noexcept { return now_; }
  const Task& task(std::uint32_t i) const { return tasks_[i]; }
  std::size_t task_count() const noexcept { return tasks_.size(); }
  const Cpu& cpu(CpuId c) const { return cpus_[c]; }
  const Placer& placer() const noexcept { return placer_; }
  const Costs& costs() const noexcept { return costs_; }
  void set_trace(Trace* t) noexcept { trace_ = t; }
  std::uint64_t events() const noexcept { return event_count_; }

 private:
  enum class Kind : std::uint8_t { cpu, arrival, timer, tick };
  struct Event {
    std::int64_t t;
    std::uint64_t seq;
    Kind kind;
    std::uint32_t a;
    std::uint64_t b;
    bool operator>(const Event& o) const noexcept { return t != o.t ? t > o.t : seq > o.seq; }
  };
  enum class StepResult : std::uint8_t { compute, blocked, done };

  void validate(CpuId n) const {
    for (const auto& s : w_.tasks) {
      if (s.start_cpu >= n) throw std::invalid_argument("task " + s.name + ": start_cpu out of range");
      if (s.initial_messages > 0 && s.initial_from >= w_.tasks.size())
        throw std::invalid_argument("task " + s.name + ": initial_from out of range");
      for (const auto& st : s.program) {
        if (st.op == Op::send && st.target >= w_.tasks.size())
          throw std::invalid_argument("task " + s.name + ": send target out of range");
        if ((st.op == Op::send_rr || st.op == Op::nudge) &&
            (st.target >= w_.groups.size() || w_.groups[st.target].empty()))
          throw std::invalid_argument("task " + s.name + ": group out of range or empty");
      }
    }
    for (const auto& g : w_.groups)
      for (auto id : g)
        if (id >= w_.tasks.size()) throw std::invalid_argument("group member out of range");
  }

  void push(Nanoseconds t, Kind k, std::uint32_t a, std::uint64_t b) {
    events_.push(Event{t.count(), seq_++, k, a, b});
  }

  // --- bookkeeping ------------------------------------------------------------
  bool idle_now(CpuId c) const {
    const Cpu& k = cpus_[c];
    return k.mode == CpuMode::idle && k.queue.empty() && k.pending == 0;
  }
  std::uint32_t nr_running(CpuId c) const {
    const Cpu& k = cpus_[c];
    return (k.curr >= 0 ? 1u : 0u) + static_cast<std::uint32_t>(k.queue.size()) + k.pending;
  }
  void refresh_idle(CpuId c) {
    const bool idle = idle_now(c);
    Cpu& k = cpus_[c];
    if (idle == k.idle_flag) return;
    k.idle_flag = idle;
    auto& l = llc_idle_[topo_->llc_of(c)];
    if (idle) {
      ++l;
      ++idle_count_;
    } else {
      --l;
      --idle_count_;
    }
  }
  void advance(Nanoseconds t) {
    if (measuring_ && t > now_)
      r_.idle_while_runnable +=
          (t - now_) * static_cast<std::int64_t>(std::min<std::uint64_t>(idle_count_, queued_));
    if (t > now_) now_ = t;
  }
  Distance distance(CpuId a, CpuId b) const {
    if (a == b) return Distance::same_cpu;
    if (topo_->core_of(a) == topo_->core_of(b)) return Distance::smt;
    if (topo_->llc_of(a) == topo_->llc_of(b)) return Distance::llc;
    if (topo_->node_of(a) == topo_->node_of(b)) return Distance::other_llc;
    return Distance::other_node;
  }
  Nanoseconds scaled(Nanoseconds d, std::uint32_t permille) const { return d * permille / 1000; }

  // The refill a task pays starting on `c`: a cooled share of its private
  // caches on its own core, the whole of them elsewhere, plus the LLC and
  // node shares when those change.
  Nanoseconds cache_penalty(const Task& t, CpuId c) const {
    if (t.last_cpu == taskplace::no_cpu) return Nanoseconds{0};
    const Distance d = distance(t.last_cpu, c);
    Nanoseconds p{0};
    if (d == Distance::same_cpu || d == Distance::smt) {
      const std::int64_t other = cpus_[t.last_cpu].run_total - t.cool_mark;
      const std::int64_t cool = std::max<std::int64_t>(costs_.cache_cool.count(), 1);
      p = Nanoseconds{costs_.refill_core.count() * std::min(other, cool) / cool};
    } else {
      p = costs_.refill_core;
      if (d == Distance::other_llc || d == Distance::other_node) p += costs_.refill_llc;
      if (d == Distance::other_node) p += costs_.refill_node;
    }
    return scaled(p, t.spec->footprint_permille);
  }
  Nanoseconds message_cost(CpuId from, CpuId to) const {
    if (from == taskplace::no_cpu) return Nanoseconds{0};
    switch (distance(from, to)) {
      case Distance::same_cpu: return Nanoseconds{0};
      case Distance::smt:
      case Distance::llc: return costs_.message_llc;
      case Distance::other_llc: return costs_.message_other_llc;
      default: return costs_.message_node;
    }
  }

  // --- run queues ---------------------------------------------------------------
  void update_min_vruntime(CpuId c) {
    Cpu& k = cpus_[c];
    std::int64_t m = INT64_MAX;
    if (k.curr >= 0) m = tasks_[static_cast<std::uint32_t>(k.curr)].vruntime;
    for (auto id : k.queue) m = std::min(m, tasks_[id].vruntime);
    if (m != INT64_MAX && m > k.min_vruntime) k.min_vruntime = m;
  }

  // Effects: queues `t` on `c`. A woken sleeper keeps its lag relative to
  // its old CPU's min_vruntime but is placed no more than sleeper_credit
  // behind (kernel place_entity); it preempts the running task when it
  // leads by more than the wake-up granularity (check_preempt_wakeup).
  void enqueue(Task& t, CpuId c, bool wakeup) {
    Cpu& k = cpus_[c];
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
    k.queue.push_back(t.id);
    ++queued_;
    refresh_idle(c);
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

  void leave_cpu(Task& t, CpuId c) {
    t.last_cpu = c;
    t.cool_mark = cpus_[c].run_total;
    t.last_ran = now_;
    cpus_[c].curr = -1;
  }
  void requeue(CpuId c) {
    Task& t = tasks_[static_cast<std::uint32_t>(cpus_[c].curr)];
    leave_cpu(t, c);
    t.state = TaskState::runnable;
    cpus_[c].queue.push_back(t.id);
    ++queued_;
  }

  // Effects: charges the running task's time since seg_start.
  void account(CpuId c) {
    Cpu& k = cpus_[c];
    Task& t = tasks_[static_cast<std::uint32_t>(k.curr)];
    if (now_ > k.seg_start) {
      const Nanoseconds ran = now_ - k.seg_start;
      if (trace_ != nullptr) trace_->slice(c, t.spec->name, k.seg_start, now_);
      const Nanoseconds done = std::min(t.remaining, ran * k.rate / 100);
      t.remaining -= done;
      t.cpu_time += done;
      t.vruntime += ran.count();
      k.run_total += ran.count();
      if (measuring_) r_.busy_cpu_time += ran;
      k.seg_start = now_;
    }
    update_min_vruntime(c);
  }

  void start_segment(CpuId c, bool switched) {
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
    const Nanoseconds wall = (t.remaining * 100 + Nanoseconds{k.rate - 1}) / k.rate;
    const Nanoseconds len = std::min(wall, k.slice_end - k.seg_start);
    k.mode = CpuMode::running;
    push(k.seg_start + len, Kind::cpu, c, ++k.gen);
    if (smt_) smt_changed(c);
  }

  // --- SMT: a thread runs at smt_speed_pct while a sibling runs a task ---------
  bool runs_task(CpuId c) const { return cpus_[c].mode == CpuMode::running && cpus_[c].curr >= 0; }
  std::uint32_t speed(CpuId c) const {
    if (!smt_) return 100;
    for (auto x : topo_->core_cpus(c))
      if (static_cast<CpuId>(x) != c && runs_task(static_cast<CpuId>(x))) return costs_.smt_speed_pct;
    return 100;
  }
  // Effects: siblings of c whose speed changed re-plan their segment.
  void smt_changed(CpuId c) {
    for (auto x : topo_->core_cpus(c)) {
      const auto s = static_cast<CpuId>(x);
      if (s == c || !runs_task(s) || cpus_[s].in_step) continue;
      if (speed(s) == cpus_[s].rate) continue;
      account(s);
      const Nanoseconds keep = cpus_[s].slice_end;
      const bool in_prefix = cpus_[s].seg_start > now_;
      const Nanoseconds start = cpus_[s].seg_start;
      start_segment_at(s, in_prefix ? start : now_, keep);
    }
  }
  void start_segment_at(CpuId s, Nanoseconds from, Nanoseconds slice_end) {
    Cpu& k = cpus_[s];
    const Task& t = tasks_[static_cast<std::uint32_t>(k.curr)];
    k.seg_start = from;
    k.slice_end = slice_end;
    k.rate = speed(s);
    const Nanoseconds wall = (t.remaining * 100 + Nanoseconds{k.rate - 1}) / k.rate;
    push(from + std::min(wall, std::max(slice_end - from, Nanoseconds{0})), Kind::cpu, s, ++k.gen);
  }

  // Effects: picks the queued task of least vruntime and runs it; with an
  // empty queue, newidle-balances (if `allow_balance`) or goes idle.
  void pick_next(CpuId c, bool allow_balance) {
    Cpu& k = cpus_[c];
    for (;;) {
      if (k.queue.empty()) {
        if (allow_balance && newidle(c)) return;
        k.mode = CpuMode::idle;
        k.curr = -1;
        ++k.gen;
        refresh_idle(c);
        if (smt_) smt_changed(c);
        return;
      }
      std::size_t best = 0;
      for (std::size_t i = 1; i < k.queue.size(); ++i)
        if (tasks_[k.queue[i]].vruntime < tasks_[k.queue[best]].vruntime) best = i;
      Task& t = tasks_[k.queue[best]];
      k.queue.erase(k.queue.begin() + static_cast<std::ptrdiff_t>(best));
      --queued_;
      if (k.idle_stamped) {
        balancer_.idle_end(bst_[c], now_);
        k.idle_stamped = false;
      }
      k.curr = static_cast<std::int32_t>(t.id);
      k.mode = CpuMode::running;
      t.state = TaskState::running;
      t.cpu = c;
      refresh_idle(c);
      if (measuring_) {
        ++r_.context_switches;
        if (t.last_cpu != taskplace::no_cpu && t.last_cpu != c)
          ++r_.migrations[static_cast<std::size_t>(distance(t.last_cpu, c))];
      }
      const Nanoseconds penalty = cache_penalty(t, c);
      StepResult res = StepResult::compute;
      if (t.spurious) {
        t.spurious = false;
        begin_compute(t, costs_.spurious_run);
      } else if (!t.computing) {
        k.in_step = true;
        res = step(t, c);
        k.in_step = false;
      }
      k.need_resched = false;  // the newly picked task keeps the CPU for now
      if (res == StepResult::compute) {
        t.remaining += penalty;
        t.work += penalty;
        start_segment(c, true);
        return;
      }
      allow_balance = true;  // it blocked at once; look again
    }
  }

  void on_cpu_event(CpuId c) {
    Cpu& k = cpus_[c];
    if (k.mode == CpuMode::overhead) {
      k.balancing = false;
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
      const bool slice_over = now_ >= k.slice_end && !k.queue.empty();
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

  void begin_compute(Task& t, Nanoseconds d) {
    t.remaining = d + t.extra;
    t.work += t.remaining;
    t.extra = Nanoseconds{0};
    t.computing = true;
  }

  // Effects: runs `t`'s instant steps on `c` until it computes, blocks or
  // exits. Throws std::logic_error for a loop with no blocking or compute.
  StepResult step(Task& t, CpuId c) {
    const auto& prog = t.spec->program;
    for (std::uint32_t guard = 0;; ++guard) {
      if (guard > 100'000) throw std::logic_error("task " + t.spec->name + " loops without computing or blocking");
      if (t.pc >= prog.size()) return finish(t, c);
      const Step& s = prog[t.pc];
      switch (s.op) {
        case Op::compute:
        case Op::compute_exp: {
          ++t.pc;
          const Nanoseconds d = s.op == Op::compute ? s.d : rng_.exponential(s.d);
          if (d.count() <= 0) break;
          begin_compute(t, d);
          return StepResult::compute;
        }
        case Op::send: send(t, s.target, c, now_, s.sync); ++t.pc; break;
        case Op::send_rr: {
          const auto& g = w_.groups[s.target];
          const std::uint32_t to = g[t.rr[t.pc]++ % g.size()];
          ++t.pc;
          if (to != t.id) send(t, to, c, now_, s.sync);
          break;
        }
        case Op::reply:
        case Op::respond:
          ++t.pc;
          if (t.has_last) send(t, t.last.from, c, s.op == Op::respond ? t.last.stamp : now_, s.sync);
          break;
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
            t.last = t.mailbox.front();
            t.mailbox.pop_front();
            t.has_last = true;
            t.extra += message_cost(t.last.from_cpu, c);
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
          push(now_ + d, Kind::timer, t.id, 0);
          return StepResult::blocked;
        }
        case Op::count:
          ++t.pc;
          if (measuring_) {
            ++r_.completions;
            const Nanoseconds from = t.has_last ? t.last.stamp : t.last_count;
            latencies_.push_back((now_ - from).count());
          }
          t.last_count = now_;
          break;
        case Op::loop:
          if (s.times == 0 || t.loops < s.times) {
            ++t.loops;
            t.pc = 0;
          } else {
            ++t.pc;
          }
          break;
        case Op::end: return finish(t, c);
      }
    }
  }

  StepResult finish(Task& t, CpuId c) {
    leave_cpu(t, c);
    t.state = TaskState::done;
    ++done_;
    if (done_ == tasks_.size()) all_done_at_ = now_;
    return StepResult::done;
  }

  void block(Task& t, CpuId c, TaskState st) {
    leave_cpu(t, c);
    t.state = st;
    const Cpu& k = cpus_[c];
    placer_.task_sleeps(t.ps, t.key, rst_[c], k.queue.empty() && k.pending == 0, now_);
  }

  void send(Task& from, std::uint32_t to, CpuId c, Nanoseconds stamp, bool sync) {
    Task& u = tasks_[to];
    u.mailbox.push_back({from.id, c, stamp});
    if (u.state == TaskState::waiting) wake(u, &from, c, sync);
  }

  // Effects: asks the placer where `u` runs and sends it there: at once on
  // the waking CPU, after remote_wakeup elsewhere.
  void wake(Task& u, Task* waker, CpuId c, bool sync) {
    typename Placer::Wakeup w;
    w.waker = waker != nullptr ? &waker->ps : nullptr;
    w.waker_key = waker != nullptr ? waker->key : taskplace::no_task;
    w.wakee = &u.ps;
    w.wakee_key = u.key;
    w.waking_cpu = c;
    w.prev_cpu = u.last_cpu;
    w.sync = sync;
    w.wakee_load = 0;  // load(c) counts runnable tasks only (affine input docs)
    const taskplace::Placement p = placer_.place(w, View{this}, now_);
    if (trace_ != nullptr)
      trace_->wake(now_, u.spec->name, c, p.cpu, taskplace::to_string(p.affine),
                   taskplace::to_string(p.reason), p.wide, sync);
    u.state = TaskState::in_flight;
    u.cpu = p.cpu;
    if (p.cpu == c) {
      enqueue(u, c, true);
    } else {
      ++cpus_[p.cpu].pending;
      refresh_idle(p.cpu);
      push(now_ + costs_.remote_wakeup, Kind::arrival, u.id, 0);
    }
  }

  void on_arrival(Task& u) {
    Cpu& k = cpus_[u.cpu];
    --k.pending;
    enqueue(u, u.cpu, true);
  }

  void on_timer(Task& u) {
    if (u.state != TaskState::sleeping) return;
    wake(u, nullptr, u.last_cpu, false);
  }

  // The least recently run queued task of `src`, skipping cache-hot ones
  // (ran within migration_cost) when `respect_hot`; -1 if none.
  std::int64_t pick_victim(CpuId src, bool respect_hot) const {
    const Cpu& k = cpus_[src];
    std::int64_t best = -1;
    for (std::size_t i = 0; i < k.queue.size(); ++i) {
      const Task& t = tasks_[k.queue[i]];
      if (respect_hot && now_ - t.last_ran < costs_.migration_cost) continue;
      if (best < 0 || t.last_ran < tasks_[k.queue[static_cast<std::size_t>(best)]].last_ran)
        best = static_cast<std::int64_t>(i);
    }
    return best;
  }
  // The CPU of `span` (other than c) with the most tasks and one queued.
  template <class Span>
  CpuId busiest(const Span& span, CpuId c) const {
    CpuId best = taskplace::no_cpu;
    std::uint32_t most = 0;
    for (auto x : span) {
      const auto s = static_cast<CpuId>(x);
      if (s == c || cpus_[s].queue.empty()) continue;
      const std::uint32_t n = nr_running(s);
      if (n >= 2 && n > most) {
        most = n;
        best = s;
      }
    }
    return best;
  }
  // Moves queued task at `idx` of src's queue onto c's queue (not started).
  Task& detach(CpuId src, std::size_t idx, CpuId c) {
    Cpu& s = cpus_[src];
    Task& t = tasks_[s.queue[idx]];
    s.queue.erase(s.queue.begin() + static_cast<std::ptrdiff_t>(idx));
    (void)c;
    refresh_idle(src);
    return t;
  }

  // Effects: the newidle balance of c through the library's IdleBalancer.
  // Returns: true if the CPU is now busy balancing (overhead mode).
  bool newidle(CpuId c) {
    Cpu& k = cpus_[c];
    Nanoseconds clock_now = now_;
    const SimClock clock{&clock_now};
    auto pull = [&](std::uint32_t, taskplace::LevelKind, const auto& span) {
      std::uint32_t others = 0, n = 0;
      for (auto x : span) {
        ++n;
        if (static_cast<CpuId>(x) != c && cpus_[static_cast<CpuId>(x)].balancing) ++others;
      }
      const Nanoseconds base = costs_.newidle_base + costs_.newidle_per_cpu * n;
      clock_now += base * (100 + costs_.contention_pct * others) / 100;
      const CpuId src = busiest(span, c);
      if (src == taskplace::no_cpu) return false;
      const std::int64_t v = pick_victim(src, false);
      if (v < 0) return false;
      Task& t = detach(src, static_cast<std::size_t>(v), c);
      t.vruntime = t.vruntime - cpus_[src].min_vruntime + k.min_vruntime;
      t.vr_cpu = c;
      t.cpu = c;
      k.queue.push_back(t.id);
      return true;
    };
    const taskplace::BalanceResult r = balancer_.balance(c, bst_[c], pull, clock);
    if (measuring_) {
      ++r_.newidle_runs;
      r_.newidle_time += r.spent;
      if (r.outcome == taskplace::BalanceOutcome::pulled) ++r_.newidle_pulls;
      if (r.outcome == taskplace::BalanceOutcome::entry_gate || r.outcome == taskplace::BalanceOutcome::budget)
        ++r_.newidle_skipped;
    }
    k.idle_stamped = r.outcome != taskplace::BalanceOutcome::pulled;
    if (r.spent.count() <= 0 && r.outcome != taskplace::BalanceOutcome::pulled) return false;
    k.mode = CpuMode::overhead;
    k.balancing = true;
    k.curr = -1;
    refresh_idle(c);
    if (smt_) smt_changed(c);
    push(now_ + r.spent, Kind::cpu, c, ++k.gen);
    return true;
  }

  // Effects: the periodic tick of c: cost decay, then for each level whose
  // interval (tick x (level + 1)) is due, pull one task that is not cache
  // hot from the busiest CPU when it runs at least two more than c.
  void on_tick(CpuId c) {
    Cpu& k = cpus_[c];
    balancer_.tick(bst_[c], now_);
    ++k.ticks;
    const auto levels = static_cast<std::uint32_t>(topo_->level_count(c));
    for (std::uint32_t i = 0; i < levels; ++i) {
      if (k.ticks % (i + 1) != 0) continue;
      const auto span = topo_->level_cpus(c, i);
      if (measuring_) r_.periodic_time += costs_.periodic_per_cpu * static_cast<std::int64_t>(std::ranges::size(span));
      const CpuId src = busiest(span, c);
      if (src == taskplace::no_cpu || nr_running(src) < nr_running(c) + 2) continue;
      const std::int64_t v = pick_victim(src, k.balance_failed <= costs_.cache_nice_tries);
      if (v < 0) {
        ++k.balance_failed;
        continue;
      }
      k.balance_failed = 0;
      Task& t = detach(src, static_cast<std::size_t>(v), c);
      --queued_;
      if (measuring_) ++r_.periodic_pulls;
      enqueue(t, c, false);
      break;
    }
    push(now_ + costs_.tick, Kind::tick, c, 0);
  }

  const T* topo_;
  Workload w_;
  Costs costs_;
  Rng rng_;
  Placer placer_;
  Balancer balancer_;
  std::vector<Cpu> cpus_;
  std::vector<typename Balancer::state> bst_;
  std::vector<reservation_cpu_state> rst_;
  std::vector<std::uint32_t> llc_idle_;
  std::vector<Task> tasks_;
  std::priority_queue<Event, std::vector<Event>, std::greater<>> events_;
  std::uint64_t seq_ = 0, event_count_ = 0, queued_ = 0, idle_count_ = 0;
  std::size_t done_ = 0;
  Nanoseconds now_{0}, measure_start_{0}, all_done_at_{0};
  bool measuring_ = false, smt_ = false;
  Report r_{};
  std::vector<std::int64_t> latencies_;
  Trace* trace_ = nullptr;
};

}  // namespace taskplace_sim
