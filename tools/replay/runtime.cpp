// tools/replay/runtime.cpp: a runtime's recorded wake-ups (the Chrome trace
// JSON of taskplace::kit::ChromeTrace) replayed under several policy sets,
// and the table of what each would have decided (see replay.hpp).
#include <algorithm>
#include <cstdio>
#include <limits>
#include <map>
#include <memory>
#include <ostream>
#include <stdexcept>
#include <unordered_map>

#include "replay.hpp"
#include "taskplace/kit/machine.hpp"

namespace taskplace::replay {

using detail::lpad;
using detail::pad;
using detail::pct;

namespace {

constexpr std::int64_t never = std::numeric_limits<std::int64_t>::min();

// The machine. Where the wake event carries the machine its placer read
// (kit::MachineView), that answers: the idle state of each CPU it holds,
// the counts of the CPUs it holds, the LLC utilisation for the LLC it was
// read for, the move costs (MachineState O5 for the CPU it holds, O6).
// What the view lacks (an event without one, from a trace
// written before the kit recorded it; a CPU >= 64) comes from the guess
// below.
//
// The guess, the machine as the recorded decisions leave it. The trace
// says where a task ran (a waker, on its waking CPU) and where it was
// placed (a wakee), and that a sync waker sleeps next (WF_SYNC); not when
// other tasks slept. So a CPU runs the task last seen there until that
// task sleeps (sync) or shows up elsewhere, and at most
// Options::busy_window_ns after it was last seen there: then it counts as
// idle. A busy CPU has one task, 1024 of load; the LLC's utilisation
// (SIS_UTIL's input) is its busy share; a move costs the library's floor
// (wake_cost and crossing_cost answer 0: tunables::crossing_cost).
struct WindowMachine {
  struct Occupant {
    TaskKey task = no_task;
    std::int64_t at = never;
  };
  const TableTopology* topo = nullptr;
  std::vector<Occupant> occ;
  std::unordered_map<TaskKey, CpuId> where;
  std::int64_t now = 0;
  std::int64_t window = 0;
  const kit::MachineView* view = nullptr;  // this event's, if any

  bool guessed_idle(CpuId c) const { return occ[c].at == never || now - occ[c].at > window; }
  bool is_idle(CpuId c) const {
    if (view != nullptr && view->has_idle(c)) return ((view->idle >> c) & 1u) != 0;
    return guessed_idle(c);
  }
  std::uint32_t nr_running(CpuId c) const {
    if (view != nullptr)
      if (const auto* k = view->find_count(c)) return k->nr_running;
    return guessed_idle(c) ? 0u : 1u;
  }
  std::uint64_t load(CpuId c) const {
    if (view != nullptr)
      if (const auto* k = view->find_count(c)) return k->load;
    return guessed_idle(c) ? 0u : 1024u;
  }
  std::uint32_t llc_utilization_pct(CpuId c) const {
    if (view != nullptr && !view->has_llc) return 0;  // the runtime's machine has none: the whole LLC is scanned
    if (view != nullptr && view->llc_cpu < topo->cpu_count() && topo->llc_of(c) == topo->llc_of(view->llc_cpu))
      return view->llc_pct;
    std::uint32_t busy = 0, n = 0;
    for (auto x : topo->llc_cpus(c)) busy += is_idle(static_cast<CpuId>(x)) ? 0u : 1u, ++n;
    return n ? 100u * busy / n : 0u;
  }
  // O5, O6 (traits::Runtime's CostGate): as recorded, else 0 (unknown:
  // the gate's floor, tunables::crossing_cost).
  Nanoseconds wake_cost(CpuId c) const {
    if (view != nullptr)
      if (const auto* k = view->find_wake_cost(c)) return Nanoseconds{k->ns};
    return Nanoseconds{0};
  }
  Nanoseconds crossing_cost() const {
    return view != nullptr && view->has_crossing ? view->crossing : Nanoseconds{0};
  }
  // Effects: task k runs on c from now (leaving the CPU it ran on).
  void runs(TaskKey k, CpuId c) {
    if (auto it = where.find(k); it != where.end() && it->second != c && occ[it->second].task == k)
      occ[it->second] = {};
    where[k] = c;
    occ[c] = {k, now};
  }
  // Effects: task k sleeps; its CPU, if it still runs there, is idle.
  void sleeps(TaskKey k) {
    if (auto it = where.find(k); it != where.end()) {
      if (occ[it->second].task == k) occ[it->second] = {};
      where.erase(it);
    }
  }
};
static_assert(MachineState<WindowMachine> && HasLlcUtilization<WindowMachine>);
static_assert(HasWakeCost<WindowMachine> && HasCrossingCost<WindowMachine>);

bool idle_reason(WakeReason r) {
  return r == WakeReason::idle_target || r == WakeReason::idle_prev || r == WakeReason::idle_recent ||
         r == WakeReason::idle_core || r == WakeReason::idle_scan || r == WakeReason::idle_smt_sibling;
}

class AnySet {
 public:
  virtual ~AnySet() = default;
  virtual void wake(const RecordedWake& w, const WindowMachine& m) = 0;
  virtual void task(const kit::TaskEvent& e) = 0;
  virtual const SetResult& result() const = 0;
};

// A set with a reservation (traits::CacheHot) reads each CPU's
// reservation state: its own, kept from the trace's sleeps.
template <class CpuState>
struct ReservingMachine {
  const WindowMachine& m;
  const std::vector<CpuState>& states;
  bool is_idle(CpuId c) const { return m.is_idle(c); }
  std::uint32_t nr_running(CpuId c) const { return m.nr_running(c); }
  std::uint64_t load(CpuId c) const { return m.load(c); }
  std::uint32_t llc_utilization_pct(CpuId c) const { return m.llc_utilization_pct(c); }
  const CpuState& reservation(CpuId c) const { return states[c]; }
};

// One policy set's replay: its own placer, and its own flips (and, for
// the sets that read runs and sleeps, durations, overlaps, reservations)
// per task.
template <class Traits>
class SetReplay final : public AnySet {
 public:
  using Placer = WakePlacer<TableTopology, Traits>;
  using cpu_state = typename Placer::reservation_policy::cpu_state;
  // `task_events`: the trace has the runtime's runs and sleeps, which
  // this set then takes; without them, the 2008 set's overlap closes at
  // each sync wake-up (the waker sleeps next).
  SetReplay(std::string name, const TableTopology& t, bool task_events)
      : placer_(t), states_(t.cpu_count()), task_events_(task_events) {
    r_.name = std::move(name);
  }

  void wake(const RecordedWake& w, const WindowMachine& m) override {
    auto& wakee = tasks_[w.wakee];
    // A waker the runtime named by its key alone (args.waker_by_key): its
    // placer read and wrote no state of it, nor does this one.
    typename Placer::task_state* waker = w.waker != no_task && !w.waker_by_key ? &tasks_[w.waker] : nullptr;
    typename Placer::Wakeup up;
    up.waker = waker;
    up.waker_key = w.waker;
    up.waker_flips = w.waker_flips;
    up.wakee = &wakee;
    up.wakee_key = w.wakee;
    up.waking_cpu = w.waking_cpu;
    up.prev_cpu = w.prev_cpu;
    up.sync = w.sync;
    up.current_cpu = w.reason == "current_cpu";  // the runtime's hand-off hint
    // The loads as the kit's runtimes pass them (the pool, the Asio
    // runtime): the waker 1024, the wakee its runnable-only load.
    up.waker_load = 1024;
    up.wakee_load = kit::wakee_load<Placer>;
    const Nanoseconds now{w.time_ns};
    Placement p;
    if constexpr (Placer::reserving) p = placer_.place(up, ReservingMachine<cpu_state>{m, states_}, now);
    else p = placer_.place(up, m, now);
    // A sync waker sleeps next (WF_SYNC): that closes its overlap.
    if constexpr (Placer::tracking_overlap && !Placer::reserving)
      if (!task_events_ && w.sync && waker != nullptr) placer_.task_sleeps(*waker, now);
    ++r_.wakeups;
    r_.same_cpu += p.cpu == w.cpu;
    r_.same_decision += p.cpu == w.cpu && p.target == w.target && p.wide == w.wide &&
                        w.reason == to_string(p.reason) && w.affine == to_string(p.affine);
    r_.affine += p.target == w.waking_cpu && w.waking_cpu != w.prev_cpu;
    r_.idle += idle_reason(p.reason);
    r_.wide += p.wide;
  }
  // The runtime's report, as it made it to its own placer.
  void task(const kit::TaskEvent& e) override {
    if constexpr (Placer::reads_sleeps) {
      auto& t = tasks_[e.task];
      switch (e.kind) {
        case kit::TaskEvent::Kind::runs: placer_.task_runs(t, e.at); break;
        case kit::TaskEvent::Kind::stops: placer_.task_stops(t, e.at); break;
        case kit::TaskEvent::Kind::sleeps:
          if (e.cpu < states_.size()) placer_.task_sleeps(t, e.task, states_[e.cpu], e.cpu_idle, e.at);
          break;
      }
    } else {
      (void)e;
    }
  }
  const SetResult& result() const override { return r_; }

 private:
  Placer placer_;
  std::unordered_map<TaskKey, typename Placer::task_state> tasks_;
  std::vector<cpu_state> states_;  // by CPU; empty states without a reservation
  bool task_events_;
  SetResult r_;
};


std::vector<std::unique_ptr<AnySet>> make_sets(const TableTopology& t, bool task_events) {
  std::vector<std::unique_ptr<AnySet>> s;
  s.push_back(std::make_unique<SetReplay<traits::Current>>("traits::Current", t, task_events));
  s.push_back(std::make_unique<SetReplay<traits::Linux2013>>("traits::Linux2013", t, task_events));
  s.push_back(std::make_unique<SetReplay<traits::Linux2008<>>>("traits::Linux2008<>", t, task_events));
  s.push_back(std::make_unique<SetReplay<traits::AlwaysAffine>>("traits::AlwaysAffine", t, task_events));
  s.push_back(std::make_unique<SetReplay<traits::PrevCpu>>("traits::PrevCpu", t, task_events));
  if (task_events) {
    s.push_back(std::make_unique<SetReplay<traits::SisCurrent<>>>("traits::SisCurrent<>", t, true));
    s.push_back(std::make_unique<SetReplay<traits::CacheHot<>>>("traits::CacheHot<>", t, true));
    s.push_back(std::make_unique<SetReplay<traits::Runtime>>("traits::Runtime", t, true));
  }
  return s;
}


}  // namespace

const std::vector<std::string>& policy_sets() {
  static const std::vector<std::string> names = {"traits::Current",      "traits::Linux2013",
                                                 "traits::Linux2008<>",  "traits::AlwaysAffine",
                                                 "traits::PrevCpu",      "traits::SisCurrent<>",
                                                 "traits::CacheHot<>",   "traits::Runtime"};
  return names;
}

RuntimeResult run_runtime(const ChromeTraceInput& trace, const Options& o) {
  RuntimeResult r;
  const std::uint64_t wanted = o.cpus != 0 ? o.cpus : std::uint64_t{trace.max_cpu_seen} + 1;
  if (wanted > detail::max_cpus)
    throw std::invalid_argument("a machine of " + std::to_string(wanted) + " CPUs: the replay takes at most " +
                                std::to_string(detail::max_cpus));
  std::string words;
  const TableTopology topo = detail::make_topology(o, static_cast<std::uint32_t>(wanted), words);
  r.cpus = static_cast<std::uint32_t>(topo.cpu_count());
  if (trace.max_cpu_seen >= r.cpus)
    throw std::invalid_argument("the trace uses CPU " + std::to_string(trace.max_cpu_seen) +
                                " but the machine has " + std::to_string(r.cpus) + " CPUs (--cpus)");
  r.topology = words;
  r.process = trace.process;
  r.balances = trace.balances;
  r.dropped = trace.dropped;
  r.busy_window_ns = o.busy_window_ns;

  // The file's order: the order in which the placers called the hook, at
  // the end of each decision, so the order in which they updated the
  // tasks' flips; the task events take their places among them, as the
  // runtime recorded them. Not the order of `ts`: a runtime may stamp a
  // wake-up with a time read earlier (the pool's worker round), so that
  // two workers' stamps interleave otherwise than their decisions.
  const bool task_events = !trace.tasks.empty();
  r.task_events = trace.tasks.size();
  // With task events a task holds its CPU from its run to its stop or
  // sleep, however long: no window.
  WindowMachine m{&topo, std::vector<WindowMachine::Occupant>(r.cpus), {}, 0,
                  task_events ? std::numeric_limits<std::int64_t>::max() : o.busy_window_ns, nullptr};
  auto sets = make_sets(topo, task_events);
  std::map<std::string, std::size_t> reasons;
  r.recorded.name = "recorded (the runtime)";
  auto wake = [&](const RecordedWake* w) {
    m.now = w->time_ns;
    m.view = w->view.cpus != 0 ? &w->view : nullptr;
    if (m.view != nullptr) {
      if (w->view.cpus != r.cpus)
        throw std::invalid_argument("a wake event's machine has " + std::to_string(w->view.cpus) +
                                    " CPUs but the replay's has " + std::to_string(r.cpus) + " (--cpus)");
      ++r.views;
      r.torn += w->view.torn != 0;
      r.beyond += w->view.beyond;
    }
    if (w->waker != no_task) m.runs(w->waker, w->waking_cpu);  // none: a thread off the runtime woke it
    for (auto& s : sets) s->wake(*w, m);
    if (!task_events && w->sync && w->waker != no_task) m.sleeps(w->waker);
    if (!task_events) m.runs(w->wakee, w->cpu);  // it runs there next
    ++r.recorded.wakeups;
    ++r.recorded.same_cpu;
    ++r.recorded.same_decision;
    r.recorded.affine += w->target == w->waking_cpu && w->waking_cpu != w->prev_cpu;
    r.recorded.idle += w->reason.rfind("idle_", 0) == 0;
    r.recorded.wide += w->wide;
    ++reasons[w->reason];
  };
  auto task = [&](const RecordedTask& t) {
    if (t.event.cpu >= r.cpus) return;
    m.now = t.event.at.count();
    if (t.event.kind == kit::TaskEvent::Kind::runs) m.runs(t.event.task, t.event.cpu);
    else m.sleeps(t.event.task);  // stops: off its CPU too, until it runs again
    for (auto& s : sets) s->task(t.event);
  };
  std::size_t i = 0, j = 0;
  while (i < trace.wakes.size() || j < trace.tasks.size()) {
    if (j == trace.tasks.size() || (i < trace.wakes.size() && trace.wakes[i].seq < trace.tasks[j].seq))
      wake(&trace.wakes[i++]);
    else
      task(trace.tasks[j++]);
  }
  for (auto& s : sets) r.sets.push_back(s->result());
  if (!task_events)
    r.not_replayed = "traits::SisCurrent<>, traits::CacheHot<> and traits::Runtime not replayed: the trace has no "
                     "task events (runs, sleeps), which their durations, overlaps and reservations need";
  r.reasons.assign(reasons.begin(), reasons.end());
  std::stable_sort(r.reasons.begin(), r.reasons.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  return r;
}

void print_runtime_table(std::ostream& out, const RuntimeResult& r) {
  out << "runtime trace" << (r.process.empty() ? std::string() : ": " + r.process) << "\n";
  out << "machine: " << r.topology << "; busy window: "
      << (r.task_events != 0 ? std::string("none (task events)") : std::to_string(r.busy_window_ns / 1000) + " us")
      << "\n";
  out << "the machine each placer read: " << r.views << " of " << r.recorded.wakeups << " wake events";
  if (r.views != 0) out << " (torn: " << r.torn << ", beyond the view: " << r.beyond << ")";
  out << (r.views < r.recorded.wakeups ? "; the others: modelled from the trace\n\n" : "\n\n");
  out << "wake events      " << lpad(std::to_string(r.recorded.wakeups), 10) << "\n";
  out << "balance events   " << lpad(std::to_string(r.balances), 10) << "\n";
  out << "task events      " << lpad(std::to_string(r.task_events), 10) << "\n";
  out << "dropped (the recorder's cap)" << lpad(std::to_string(r.dropped), 10) << "\n\n";
  out << "the runtime's final reasons:\n";
  for (const auto& [reason, n] : r.reasons)
    out << "  " << pad(reason, 20) << lpad(std::to_string(n), 10) << lpad(pct(n, r.recorded.wakeups), 9) << "\n";
  out << "\nwhat each policy set would have decided (same CPU: it picks the CPU the runtime chose):\n";
  out << pad("policy set", 24) << lpad("wake-ups", 10) << lpad("same CPU", 10) << lpad("same%", 9)
      << lpad("same dec.", 11) << lpad("affine", 9) << lpad("idle", 9) << lpad("wide", 9) << "\n";
  auto row = [&](const SetResult& s) {
    out << pad(s.name, 24) << lpad(std::to_string(s.wakeups), 10) << lpad(std::to_string(s.same_cpu), 10)
        << lpad(pct(s.same_cpu, s.wakeups), 9) << lpad(std::to_string(s.same_decision), 11)
        << lpad(std::to_string(s.affine), 9)
        << lpad(std::to_string(s.idle), 9) << lpad(std::to_string(s.wide), 9) << "\n";
  };
  row(r.recorded);
  for (const SetResult& s : r.sets) row(s);
  if (!r.not_replayed.empty()) out << r.not_replayed << "\n";
}

}  // namespace taskplace::replay
