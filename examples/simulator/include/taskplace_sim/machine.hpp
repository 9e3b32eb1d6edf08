// taskplace_sim/machine.hpp: a deterministic, event-driven simulation of a
// machine of any Topology running a Workload, with wake placement decided
// by taskplace's WakePlacer and newidle balancing by its IdleBalancer.
//
// Kernel analogue: a caricature of kernel/sched/fair.c around the two
// decisions the library packages: per-CPU run queues ordered by vruntime,
// a base slice, wake-up preemption (a woken sleeper with a vruntime lead
// of more than the wake-up granularity preempts), the waker's own
// wake-path cost, remote wake-up latency, a cache-warmth model that makes
// migrations cost more the farther they go and L3s that hold only so
// much, periodic load balancing per level with NOHZ (idle CPUs do not
// tick; a busy one kicks their balance), and newidle balancing whose cost
// grows with the cache lines its walk reads and whose pulls hold the
// run-queue lock of the CPU they pull from.
//
//   taskplace_sim::Machine<taskplace::UniformTopology, taskplace::traits::Current> m{topo, workload};
//   taskplace_sim::Report r = m.run(10ms, 200ms);
//
// This header holds the class, its event loop, reporting and invariant
// checks; the member functions live by subject in:
//   machine_run_queues.hpp  the fair scheduler: enqueue, pick, preempt, slices, SMT speed
//   machine_program.hpp     the task programs' steps, messages and wake-ups (the placer call)
//   machine_balance.hpp     newidle and periodic balancing (the balancer call)
//   machine_prefetch.hpp    what the event loop asks the cache for ahead of use
// and the parts it is built from in machine_state.hpp (task / CPU records),
// event_queue.hpp, cost_model.hpp (distances, refills, message costs),
// span_index.hpp (per-span counts for the balancers) and placer_view.hpp
// (the MachineState the placer reads).
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "taskplace/concepts.hpp"
#include "taskplace/idle_balancer.hpp"
#include "taskplace/stats.hpp"
#include "taskplace/wake_placer.hpp"
#include "taskplace_sim/cost_model.hpp"
#include "taskplace_sim/costs.hpp"
#include "taskplace_sim/event_queue.hpp"
#include "taskplace_sim/latency_histogram.hpp"
#include "taskplace_sim/machine_state.hpp"
#include "taskplace_sim/placer_view.hpp"
#include "taskplace_sim/machine_spec.hpp"
#include "taskplace_sim/report.hpp"
#include "taskplace_sim/rng.hpp"
#include "taskplace_sim/run_queue.hpp"
#include "taskplace_sim/span_index.hpp"
#include "taskplace_sim/trace.hpp"
#include "taskplace_sim/workload.hpp"

namespace taskplace_sim {

// A scenario whose queues grow without bound (a sender outpacing its
// receiver into a mailbox with no capacity): the simulation stops with
// this rather than grow its memory.
class SimulationDiverged : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// How Machine::run_steady() finds the end of the warm-up: after `min`, it
// compares the completions of consecutive windows of `window`, and the
// state is steady once two in a row differ by at most `tolerance_pct`
// percent of the larger; it gives up at `max` (Report::steady false).
struct SteadyState {
  Nanoseconds min{10'000'000}, window{10'000'000}, max{500'000'000};
  std::uint32_t tolerance_pct = 3;
};

namespace detail {
// Whether newidle balancing with balance traits B is skipped while no CPU
// of the machine runs two or more tasks. Kernel analogue: the root
// domain's overload flag, tested on entry to newidle_balance since v3.16
// (2014); before it every newly idle CPU walked its domains. Traits of
// earlier kernels say `static constexpr bool newidle_overload_gate =
// false`; all others are gated.
template <class B>
constexpr bool newidle_overload_gate() noexcept {
  if constexpr (requires { B::newidle_overload_gate; }) {
    return B::newidle_overload_gate;
  } else {
    return true;
  }
}
}  // namespace detail

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
  using Task = TaskRecord<typename Placer::task_state>;
  using Cpu = CpuRecord;
  using View = MachineView<Machine>;

  // A mailbox without capacity that holds this many messages means the
  // scenario diverges (SimulationDiverged).
  static constexpr std::size_t max_unbounded_messages = std::size_t{1} << 16;

  // Effects: builds the machine; every task starts runnable on its
  // start_cpu at time 0 with its initial messages. `hw`: the hardware
  // under the topology (its L3s, memory nodes, L3 size; default: the
  // topology's LLCs and nodes, unlimited L3s).
  // Throws: std::invalid_argument for a start CPU, a message / signal /
  // group / loop target out of range, or a message larger than its
  // receiver's mailbox capacity.
  Machine(const T& topology, Workload workload, Costs costs = {}, std::uint64_t seed = 1, const Hardware& hw = {})
      : topo_(&topology), w_(std::move(workload)), costs_(costs), rng_(seed),
        hot_table_{.migration_cost = costs.migration_cost,
                   .cache_nice_tries = {costs.cache_nice_tries, costs.cache_nice_tries, costs.cache_nice_tries,
                                        costs.cache_nice_tries, costs.cache_nice_tries}},
        hot_kernel_{.migration_cost = costs.migration_cost},
        placer_(topology), balancer_(topology), cost_(topology, costs, hw), spans_(topology) {
    const auto n = static_cast<CpuId>(topology.cpu_count());
    cpus_.resize(n);
    pull_seen_.resize(n);
    for (CpuId c = 0; c < n; ++c) {
      bst_.push_back(balancer_.make_state(c, Nanoseconds{0}));
      rst_.emplace_back();
    }
    llc_idle_.assign(cost_.llc_count(), 0);
    llc_busy_.assign(cost_.llc_count(), 0);
    for (CpuId c = 0; c < n; ++c) ++llc_idle_[cost_.llc_of(c)];
    idle_count_ = n;
    idle_bits_.assign((n + 63) / 64, 0);
    for (CpuId c = 0; c < n; ++c) idle_bits_[c / 64] |= std::uint64_t{1} << (c % 64);
    resident_kb_.assign(cost_.l3_count(), 0);
    for (CpuId c = 0; c < n; ++c) smt_ = smt_ || topology.core_size(c) > 1;
    validate(n);
    build_walk_costs(n);
    tasks_.resize(w_.tasks.size());
    rq_ = RunQueues(n, tasks_.size());
    std::size_t steps = 0;
    for (const auto& s : w_.tasks) steps += s.program.size();
    rr_.assign(steps, 0);
    steps = 0;
    for (std::uint32_t i = 0; i < tasks_.size(); ++i) {
      Task& t = tasks_[i];
      t.spec = &w_.tasks[i];
      t.program = t.spec->program;
      t.footprint_kb = t.spec->footprint_kb;
      t.mailbox_bytes = t.spec->mailbox_bytes;
      t.id = i;
      t.key = TaskKey{i} + 1;
      t.rr = rr_.data() + steps;
      steps += t.program.size();
      for (std::uint32_t k = 0; k < t.spec->initial_messages; ++k) {
        t.mailbox.push_back({t.spec->initial_from, w_.tasks[t.spec->initial_from].start_cpu, Nanoseconds{0}, 0});
        t.mailbox_used += 1;
      }
    }
    for (auto& t : tasks_) enqueue(t, t.spec->start_cpu, false);
    for (CpuId c = 0; c < n; ++c) {
      events_.push_in_lane(tick_lane, tick_phase(c), EventKind::tick, c, 0);
      if (cpus_[c].mode == CpuMode::idle && !rq_.empty(c)) pick_next(c, false);
    }
  }
  Machine(const Machine&) = delete;
  Machine& operator=(const Machine&) = delete;

  // Effects: processes every event up to and including time `until`.
  // Complexity: O(events log events). Thread-safety: none.
  void run_until(Nanoseconds until) {
    while (const std::optional<Event> next = events_.pop_until(until)) {
      const Event& e = *next;
      prefetch_next_cpu();
      advance(Nanoseconds{e.t});
      ++event_count_;
      ++events_all_;
      switch (e.kind) {
        case EventKind::cpu:
          if (e.b == cpus_[e.a].gen) on_cpu_event(e.a);
          break;
        case EventKind::arrival: on_arrival(tasks_[e.a]); break;
        case EventKind::timer: on_timer(tasks_[e.a]); break;
        case EventKind::tick: on_tick(e.a); break;
        case EventKind::seen: on_pull_seen(e.a); break;
      }
      prefetch_next_task();
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

  // Effects: warms up until the completions of two consecutive windows
  // agree (SteadyState), resets every counter, runs `measure` more.
  // Returns: the report of the measured window, with Report::warmup and
  // Report::steady saying how the warm-up ended.
  Report run_steady(const SteadyState& s, Nanoseconds measure) {
    run_until(s.min);
    std::uint64_t before = completions_all_;
    run_until(now_ + s.window);
    std::uint64_t last = completions_all_ - before;
    bool steady = false;
    while (now_ < s.max) {
      before = completions_all_;
      run_until(now_ + s.window);
      const std::uint64_t cur = completions_all_ - before;
      const std::uint64_t hi = std::max(cur, last), lo = std::min(cur, last);
      last = cur;
      if ((hi - lo) * 100 <= hi * s.tolerance_pct) {
        steady = true;
        break;
      }
    }
    const Nanoseconds warm = now_;
    start_measuring();
    run_until(warm + measure);
    Report r = report();
    r.warmup = warm;
    r.steady = steady;
    return r;
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
    r.events_all = events_all_;
    r.all_done = done_ == tasks_.size() ? all_done_at_ : Nanoseconds{-1};
    const double secs = static_cast<double>(r.measured.count()) / 1e9;
    r.throughput = secs > 0 ? static_cast<double>(r.completions) / secs : 0.0;
    r.p50 = Nanoseconds{latencies_.quantile(0.50)};
    r.p90 = Nanoseconds{latencies_.quantile(0.90)};
    r.p99 = Nanoseconds{latencies_.quantile(0.99)};
    r.max_latency = Nanoseconds{latencies_.quantile(1.0)};
    for (std::size_t i = 0; i < wake_counter_count; ++i)
      r.wake[i] = placer_.stats().get(static_cast<taskplace::WakeCounter>(i));
    for (std::size_t i = 0; i < balance_counter_count; ++i)
      r.balance[i] = balancer_.stats().get(static_cast<taskplace::BalanceCounter>(i));
    return r;
  }

  // Returns: "" when every invariant holds, else the first violation: each
  // task is in exactly the place its state says (no task on two CPUs, none
  // lost), its CPU time plus what remains equals the work assigned, and the
  // incremental bookkeeping (idle flags, per-LLC idle counts, queued count,
  // overload flags and count, the span index's balancing counts and
  // candidates) matches a recount.
  std::string check_invariants() const {
    std::vector<int> seen(tasks_.size(), 0);
    std::vector<std::uint32_t> llc_idle(llc_idle_.size(), 0);
    std::uint64_t queued = 0, idle = 0, overloaded = 0;
    for (CpuId c = 0; c < cpus_.size(); ++c) {
      const Cpu& k = cpus_[c];
      if (k.curr >= 0) {
        const Task& t = tasks_[static_cast<std::uint32_t>(k.curr)];
        if (t.state != TaskState::running || t.cpu != c) return "cpu " + std::to_string(c) + " runs task " + t.spec->name + " whose state disagrees";
        ++seen[t.id];
      }
      for (const auto& e : rq_.entries(c)) {
        const Task& t = tasks_[e.id];
        if (t.state != TaskState::runnable || t.cpu != c) return "task " + t.spec->name + " queued on cpu " + std::to_string(c) + " but not runnable there";
        if (e.key != t.vruntime) return "task " + t.spec->name + " queued with a stale vruntime";
        ++seen[e.id];
        ++queued;
      }
      std::uint32_t listed = 0;
      for (std::uint32_t id = rq_.oldest(c); id != RunQueues::none; id = rq_.after(id)) ++listed;
      if (listed != rq_.size(c)) return "cpu " + std::to_string(c) + ": enqueue-order list disagrees with the queue";
      if (((idle_bits_[c / 64] >> (c % 64)) & 1u) != (idle_now(c) ? 1u : 0u)) return "cpu " + std::to_string(c) + ": stale idle bit";
      if (k.idle_flag != idle_now(c)) return "cpu " + std::to_string(c) + ": stale idle flag";
      if (k.overloaded != (nr_running(c) >= 2)) return "cpu " + std::to_string(c) + ": stale overload flag";
      if (k.overloaded) ++overloaded;
      if (idle_now(c)) {
        ++llc_idle[cost_.llc_of(c)];
        ++idle;
      }
      if (spans_.is_candidate(c) != (seen_load(c) != 0)) return "cpu " + std::to_string(c) + ": stale candidate flag";
      if (spans_.is_balancing(c) != k.balancing) return "cpu " + std::to_string(c) + ": stale balancing flag";
    }
    if (queued != queued_) return "queued count " + std::to_string(queued_) + " != recount " + std::to_string(queued);
    if (idle != idle_count_) return "idle count " + std::to_string(idle_count_) + " != recount " + std::to_string(idle);
    if (overloaded != overloaded_count_)
      return "overloaded count " + std::to_string(overloaded_count_) + " != recount " + std::to_string(overloaded);
    if (overloaded > 0 && !overload_flag_) return "overload flag clear while a CPU runs two or more";
    if (llc_idle != llc_idle_) return "per-LLC idle counts differ from a recount";
    std::vector<std::uint32_t> llc_busy(llc_busy_.size(), 0);
    for (CpuId c = 0; c < cpus_.size(); ++c) llc_busy[cost_.llc_of(c)] += busy_now(c) ? 1u : 0u;
    if (llc_busy != llc_busy_) return "per-LLC utilised counts differ from a recount";
    if (std::string s = spans_.check(); !s.empty()) return s;
    std::vector<std::uint64_t> resident(resident_kb_.size(), 0);
    for (const Task& t : tasks_)
      if (t.state != TaskState::done && t.home_l3 != ~0u) resident[t.home_l3] += t.footprint_kb;
    if (resident != resident_kb_) return "per-L3 resident working sets differ from a recount";
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
  // Whether some CPU ran two or more tasks since the last top-level
  // periodic balance that found none (the newidle overload gate).
  bool overload_flag() const noexcept { return overload_flag_; }
  static constexpr bool overload_gated = detail::newidle_overload_gate<BalanceTraits>();
  const Costs& costs() const noexcept { return costs_; }
  void set_trace(Trace* t) noexcept { trace_ = t; }
  // Events processed in the measured window (Report::events_all: since
  // construction).
  std::uint64_t events() const noexcept { return event_count_; }

 private:
  friend View;
  enum class StepResult : std::uint8_t { compute, blocked, done };

  void validate(CpuId n) const {
    for (const auto& s : w_.tasks) {
      if (s.start_cpu >= n) throw std::invalid_argument("task " + s.name + ": start_cpu out of range");
      if (s.initial_messages > 0 && s.initial_from >= w_.tasks.size())
        throw std::invalid_argument("task " + s.name + ": initial_from out of range");
      for (std::size_t i = 0; i < s.program.size(); ++i) {
        const Step& st = s.program[i];
        if ((st.op == Op::send || st.op == Op::signal) && st.target >= w_.tasks.size())
          throw std::invalid_argument("task " + s.name + ": send or signal target out of range");
        if ((st.op == Op::send_rr || st.op == Op::nudge) &&
            (st.target >= w_.groups.size() || w_.groups[st.target].empty()))
          throw std::invalid_argument("task " + s.name + ": group out of range or empty");
        if (st.op == Op::loop && st.target > i)
          throw std::invalid_argument("task " + s.name + ": a loop jumps forward (step " + std::to_string(i) +
                                      " to " + std::to_string(st.target) + ")");
        auto too_big = [&](std::uint32_t to) {
          const std::uint32_t cap = w_.tasks[to].mailbox_bytes;
          return cap != 0 && std::max(st.bytes, 1u) > cap;
        };
        bool big = st.op == Op::send && too_big(st.target);
        if (st.op == Op::send_rr)
          for (auto id : w_.groups[st.target]) big = big || (id < w_.tasks.size() && too_big(id));
        if (big)
          throw std::invalid_argument("task " + s.name + ": a " + std::to_string(st.bytes) +
                                      "-byte message exceeds its receiver's mailbox capacity");
      }
    }
    for (const auto& g : w_.groups)
      for (auto id : g)
        if (id >= w_.tasks.size()) throw std::invalid_argument("group member out of range");
  }

  void push(Nanoseconds t, EventKind k, std::uint32_t a, std::uint64_t b) { events_.push(t, k, a, b); }
  // --- machine_prefetch.hpp ---------------------------------------------------
  void prefetch_next_cpu() const noexcept;
  void prefetch_next_task() const noexcept;
  void prefetch_program(const Task& t) const noexcept;
  static void prefetch(const void* p) noexcept;
  // The event queue's lanes: remote wake-ups (a fixed latency after now)
  // and ticks (a fixed period after now) arrive in time order.
  static constexpr std::size_t arrival_lane = 0, tick_lane = 1;

  // --- bookkeeping ------------------------------------------------------------
  bool idle_now(CpuId c) const {
    const Cpu& k = cpus_[c];
    return k.mode == CpuMode::idle && rq_.empty(c) && k.pending == 0;
  }
  std::uint32_t nr_running(CpuId c) const {
    const Cpu& k = cpus_[c];
    return (k.curr >= 0 ? 1u : 0u) + rq_.size(c) + k.pending;
  }
  // Whether c counts as utilised for SIS_UTIL: it has a task (running,
  // queued or on its way). A CPU in a newidle balance does not: the
  // kernel's PELT util_avg is the tasks' utilisation, which a balance
  // does not raise (though idle_cpu() is false meanwhile).
  bool busy_now(CpuId c) const {
    const Cpu& k = cpus_[c];
    return k.curr >= 0 || !rq_.empty(c) || k.pending > 0;
  }
  // What a pull looks for: a queued task on a CPU running two or more.
  bool candidate_now(CpuId c) const { return !rq_.empty(c) && nr_running(c) >= 2; }
  // The load a balance reading c's figures now sees: what c runs, or, while
  // a pull from c is still inside its puller's walk (up to the instant it
  // ends), what c ran before that pull, if more (pull_seen_; 0: not a
  // candidate).
  std::uint32_t seen_load(CpuId c) const {
    const std::uint32_t n = candidate_now(c) ? nr_running(c) : 0;
    if (!cpus_[c].pull_shown) return n;  // the common case: no line of pull_seen_ read
    const PullSeen& p = pull_seen_[c];
    return now_ <= p.until ? std::max(n, p.load) : n;
  }
  // Effects: a pull from c whose walk ended now shows in the figures
  // (unless a later one's walk still runs).
  void on_pull_seen(CpuId c) {
    PullSeen& p = pull_seen_[c];
    if (now_ >= p.until) {
      p = PullSeen{};
      cpus_[c].pull_shown = false;
    }
    refresh(c);
  }
  // Effects: brings the idle flag, the idle counts, the overload count and
  // flag, and the span index up to date with c's queue, current task and
  // pending wake-ups. Called after every change of those, before anything
  // can look at them.
  void refresh(CpuId c) {
    Cpu& k = cpus_[c];
    const bool over = nr_running(c) >= 2;
    spans_.set_load(c, seen_load(c));
    if (over != k.overloaded) {
      k.overloaded = over;
      if (over) {
        ++overloaded_count_;
        overload_flag_ = true;  // kernel: add_nr_running sets it at once
      } else {
        --overloaded_count_;
      }
    }
    const bool busy = busy_now(c);
    if (busy != k.busy_flag) {
      k.busy_flag = busy;
      llc_busy_[cost_.llc_of(c)] += busy ? 1u : ~0u;
    }
    const bool idle = idle_now(c);
    if (idle == k.idle_flag) return;
    k.idle_flag = idle;
    idle_bits_[c / 64] ^= std::uint64_t{1} << (c % 64);
    auto& l = llc_idle_[cost_.llc_of(c)];
    if (idle) {
      ++l;
      ++idle_count_;
    } else {
      --l;
      --idle_count_;
    }
  }
  void set_balancing(CpuId c, bool on) {
    cpus_[c].balancing = on;
    spans_.set_balancing(c, on);
  }
  void advance(Nanoseconds t) {
    if (measuring_ && t > now_)
      r_.idle_while_runnable +=
          (t - now_) * static_cast<std::int64_t>(std::min<std::uint64_t>(idle_count_, queued_));
    if (t > now_) now_ = t;
  }
  // The refill `t` pays starting on c: the move's (CostModel::cache_penalty)
  // and, where it stays in its L3, what an over-full L3 evicted of it.
  Nanoseconds cache_penalty(const Task& t, CpuId c) const {
    if (t.last_cpu == taskplace::no_cpu) return Nanoseconds{0};
    Nanoseconds p = cost_.cache_penalty(t.last_cpu, c, cpus_[t.last_cpu].run_total - t.cool_mark, t.footprint_kb);
    if (t.home_l3 == cost_.l3_of(c)) p += cost_.capacity_penalty(resident_kb_[t.home_l3], t.footprint_kb);
    return p;
  }
  // Effects: t's working set now lives in c's L3 (or nowhere: done).
  void rehome(Task& t, std::uint32_t l3) {
    if (t.home_l3 == l3) return;
    if (t.home_l3 != ~0u) resident_kb_[t.home_l3] -= t.footprint_kb;
    t.home_l3 = l3;
    if (l3 != ~0u) resident_kb_[l3] += t.footprint_kb;
  }
  // The first tick of c: CPUs tick in turn across one period.
  Nanoseconds tick_phase(CpuId c) const {
    return costs_.tick + costs_.tick * c / static_cast<std::int64_t>(cpus_.size());
  }
  // Effects: the cost of a newidle attempt at each CPU's each level:
  // newidle_base plus balance_lines lines at each span CPU's distance.
  void build_walk_costs(CpuId n) {
    walk_levels_ = 0;
    for (CpuId c = 0; c < n; ++c)
      walk_levels_ = std::max(walk_levels_, static_cast<std::uint32_t>(topo_->level_count(c)));
    walk_cost_.assign(static_cast<std::size_t>(n) * walk_levels_, Nanoseconds{0});
    for (CpuId c = 0; c < n; ++c)
      for (std::uint32_t i = 0; i < topo_->level_count(c); ++i) {
        Nanoseconds sum{0};
        for (auto x : topo_->level_cpus(c, i)) sum += cost_.line(c, static_cast<CpuId>(x));
        walk_cost_[static_cast<std::size_t>(c) * walk_levels_ + i] = costs_.newidle_base + sum * costs_.balance_lines;
      }
  }
  Nanoseconds walk_cost(CpuId c, std::uint32_t level) const {
    return walk_cost_[static_cast<std::size_t>(c) * walk_levels_ + level];
  }
  // The compute step's length with timing noise (Costs::noise_pct).
  Nanoseconds noisy(Nanoseconds d) {
    if (costs_.noise_pct == 0 || d.count() <= 0) return d;
    const std::int64_t span = d.count() * static_cast<std::int64_t>(costs_.noise_pct) / 100;
    if (span == 0) return d;
    const auto u = static_cast<std::int64_t>(rng_.next() % static_cast<std::uint64_t>(2 * span + 1));
    return Nanoseconds{std::max<std::int64_t>(1, d.count() - span + u)};
  }

  // --- machine_run_queues.hpp -------------------------------------------------
  void update_min_vruntime(CpuId c);
  void queue_task(Task& t, CpuId c) {
    rq_.push(c, t.id, t.vruntime);
    ++queued_;
  }
  void restart_tick(CpuId c);
  void enqueue(Task& t, CpuId c, bool wakeup);
  void leave_cpu(Task& t, CpuId c);
  void requeue(CpuId c);
  void account(CpuId c);
  void start_segment(CpuId c, bool switched);
  bool runs_task(CpuId c) const { return cpus_[c].mode == CpuMode::running && cpus_[c].curr >= 0; }
  std::uint32_t speed(CpuId c) const;
  static Nanoseconds wall_time(Nanoseconds work, std::uint32_t rate);
  void smt_changed(CpuId c);
  void start_segment_at(CpuId s, Nanoseconds from, Nanoseconds slice_end);
  void pick_next(CpuId c, bool allow_balance);
  bool still_least(CpuId c) const;
  void on_cpu_event(CpuId c);

  // --- machine_program.hpp ----------------------------------------------------
  void begin_compute(Task& t, Nanoseconds d);
  StepResult step(Task& t, CpuId c);
  StepResult finish(Task& t, CpuId c);
  void block(Task& t, CpuId c, TaskState st);
  bool send(Task& from, std::uint32_t to, CpuId c, Nanoseconds stamp, bool sync, std::uint32_t bytes);
  void take_message(Task& t, CpuId c);
  void wake(Task& u, Task* waker, CpuId c, bool sync);
  bool parked(CpuId c) const;
  void on_arrival(Task& u);
  void on_timer(Task& u);

  // --- machine_balance.hpp ----------------------------------------------------
  std::int64_t pick_victim(CpuId src, const Cpu* thief, std::uint32_t level, taskplace::LevelKind kind) const;
  bool periodic_balance(CpuId c, bool all_levels);
  void nohz_kick();
  bool may_take(const Cpu& thief, std::uint32_t level, taskplace::LevelKind kind, Nanoseconds last_ran) const;
  void record_hot(Cpu& thief, std::uint32_t level, taskplace::BalanceKind kind, taskplace::PullOutcome o) const;
  template <class Span>
  CpuId busiest(const Span& span, std::uint32_t level, CpuId c) const;
  Task& detach(CpuId src, std::uint32_t id);
  void lock_for_pull(CpuId thief, CpuId src, Nanoseconds& clock);
  void show_pull_at(CpuId src, Nanoseconds at);
  bool newidle(CpuId c);
  void on_tick(CpuId c);

  const T* topo_;
  Workload w_;
  Costs costs_;
  Rng rng_;
  // The balances' cache-hot test (taskplace::TaskHot), from costs_, one per
  // CacheHotModel: table (one cache_nice_tries for every level, SMT moves
  // tested too) and kernel (today's defaults).
  taskplace::TaskHot<taskplace::task_hot::AllLevels2007> hot_table_;
  taskplace::TaskHot<> hot_kernel_;
  Placer placer_;
  Balancer balancer_;
  CostModel cost_;
  SpanIndex spans_;
  std::vector<Cpu> cpus_;
  // Per CPU: the load a pull from it left behind in the figures other
  // balancers read, until the puller's walk ends (seen_load).
  struct PullSeen {
    Nanoseconds until{0};
    std::uint32_t load = 0;
  };
  std::vector<PullSeen> pull_seen_;
  std::vector<typename Balancer::state> bst_;
  std::vector<reservation_cpu_state> rst_;
  std::vector<std::uint32_t> llc_idle_, llc_busy_;
  std::vector<std::uint64_t> idle_bits_;    // bit c: idle_now(c)
  std::vector<std::uint64_t> resident_kb_;  // per L3: working sets homed there
  std::vector<Nanoseconds> walk_cost_;      // [cpu * walk_levels_ + level]
  std::uint32_t walk_levels_ = 0;
  RunQueues rq_;
  std::vector<Task> tasks_;
  // Every task's per-step counters (TaskRecord::rr), task after task: a
  // task's are a few bytes, next to its neighbours' rather than in an
  // allocation of their own.
  std::vector<std::uint32_t> rr_;
  EventQueue events_;
  // event_count_: in the measured window; events_all_: since construction.
  std::uint64_t event_count_ = 0, events_all_ = 0, queued_ = 0, idle_count_ = 0;
  // CPUs running two or more, and the machine's overload flag: set as soon
  // as one does, cleared only by a top-level periodic balance that finds
  // none (kernel: rd->overloaded, add_nr_running / update_sd_lb_stats).
  std::uint64_t overloaded_count_ = 0;
  bool overload_flag_ = false;
  std::uint64_t completions_all_ = 0;     // count steps since construction
  Nanoseconds nohz_next_{0};              // the next nohz idle balance allowed
  std::size_t done_ = 0;
  Nanoseconds now_{0}, measure_start_{0}, all_done_at_{0};
  bool measuring_ = false, smt_ = false;
  Report r_{};
  LatencyHistogram latencies_;  // bounded: memory does not grow with the run
  Trace* trace_ = nullptr;
};

}  // namespace taskplace_sim

#include "taskplace_sim/machine_run_queues.hpp"
#include "taskplace_sim/machine_program.hpp"
#include "taskplace_sim/machine_balance.hpp"
#include "taskplace_sim/machine_prefetch.hpp"
