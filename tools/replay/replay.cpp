// tools/replay/replay.cpp: the replay of a decoded trace (see replay.hpp).
#include "replay.hpp"

#include <algorithm>
#include <cmath>
#include <memory>
#include <stdexcept>
#include <unordered_map>

namespace taskplace::replay {

const char* to_string(Category c) noexcept {
  switch (c) {
    case Category::placed: return "placed";
    case Category::tool: return "tool";
    case Category::not_fair: return "not_fair";
    case Category::pinned: return "pinned";
    case Category::queued: return "queued";
  }
  return "unknown";
}

TaskKey task_key(std::int32_t tid, std::uint32_t cpu) noexcept {
  if (tid != 0) return static_cast<TaskKey>(static_cast<std::uint32_t>(tid)) + 1;
  return (TaskKey{1} << 32) + cpu + 1;  // each CPU's idle task ("swapper/N", pid 0) is a task of its own
}

namespace {

using Placer = WakePlacer<TableTopology, traits::Current>;

// PELT's geometric average with its 32 ms half-life: `avg` as it reads
// `dt_ns` after it was last updated, having tracked `value` since.
double pelt(double avg, double value, std::int64_t dt_ns) {
  if (dt_ns <= 0) return avg;
  const double keep = std::exp2(-static_cast<double>(dt_ns) / 32e6);
  return avg * keep + value * (1.0 - keep);
}

// A CFS task's load weight from its prio (100 + nice + 20): 1024 at nice
// 0, 1.25 times less per nice level (kernel: sched_prio_to_weight, which
// rounds these to within 0.1%).
double prio_weight(std::int32_t prio) {
  const std::int32_t nice = std::clamp(prio, 100, 139) - 120;
  return std::round(1024.0 * std::pow(1.25, -nice));
}

// The machine as the trace leaves it. Loads stand in for PELT's: each CPU's
// load is the 32 ms average of its queued tasks' weights (1024 for a nice-0
// task), and a task's own load the average of its weight while queued, 0 asleep;
// a task that moves takes its load along (kernel: the load of a sleeping
// task decays on its CPU, and migrate_task_rq_fair() carries it).
// Utilisation: the 32 ms average of whether the CPU ran a task.
struct Machine {
  const TableTopology* topo = nullptr;
  std::vector<std::uint32_t> nr;
  std::vector<std::int32_t> curr;  // the running task; 0 idle; -1 not seen yet (read as idle)
  std::vector<double> util, rq_load, weight;  // weight: of the queued tasks
  std::vector<std::int64_t> util_at, load_at;
  std::int64_t now = 0;

  explicit Machine(const TableTopology& t)
      : topo(&t), nr(t.cpu_count()), curr(t.cpu_count(), -1), util(t.cpu_count()), rq_load(t.cpu_count()), weight(t.cpu_count()),
        util_at(t.cpu_count()), load_at(t.cpu_count()) {}

  bool is_idle(CpuId c) const { return curr[c] <= 0 && nr[c] == 0; }
  std::uint32_t nr_running(CpuId c) const { return nr[c]; }
  double load_now(CpuId c) const { return pelt(rq_load[c], weight[c], now - load_at[c]); }
  std::uint64_t load(CpuId c) const { return static_cast<std::uint64_t>(std::llround(load_now(c))); }
  double util_now(CpuId c) const { return pelt(util[c], curr[c] > 0 ? 1.0 : 0.0, now - util_at[c]); }
  std::uint32_t llc_utilization_pct(CpuId c) const {
    double sum = 0;
    std::size_t n = 0;
    for (auto x : topo->llc_cpus(c)) sum += util_now(static_cast<CpuId>(x)), ++n;
    return n ? static_cast<std::uint32_t>(std::lround(100.0 * sum / static_cast<double>(n))) : 0;
  }
  // The kernel's hint (has_idle_cores) is set when a core goes idle; here,
  // whether one is idle now.
  bool has_idle_core(CpuId c) const {
    for (auto x : topo->llc_cpus(c)) {
      bool all = true;
      for (auto s : topo->core_cpus(static_cast<CpuId>(x))) all = all && is_idle(static_cast<CpuId>(s));
      if (all) return true;
    }
    return false;
  }
  void set_curr(CpuId c, std::int32_t tid) {
    util[c] = util_now(c);
    util_at[c] = now;
    curr[c] = tid;
  }
  // Before nr[c] or rq_load[c] changes: the average up to now.
  void touch(CpuId c) {
    rq_load[c] = load_now(c);
    load_at[c] = now;
  }
};
static_assert(MachineState<Machine> && HasLlcUtilization<Machine> && HasIdleCoreHint<Machine>);

enum class RunState : std::uint8_t { sleeping, queued, running };

struct Task {
  Placer::task_state ts{};
  CpuId cpu = no_cpu;
  RunState st = RunState::sleeping;
  double weight = 1024;  // from the prio the trace shows
  double load = 0;       // PELT-like, see Machine
  std::int64_t load_at = 0;
  double load_now(std::int64_t now) const { return pelt(load, st == RunState::sleeping ? 0.0 : weight, now - load_at); }
};

// A per-CPU kernel thread, bound to its CPU: "ksoftirqd/0", "kworker/1:2",
// "migration/3" (a name, '/', a digit); not "kworker/u8:1" (unbound).
bool pinned_name(const std::string& comm) {
  const auto slash = comm.find('/');
  return slash != std::string::npos && slash > 0 && slash + 1 < comm.size() && comm[slash + 1] >= '0' &&
         comm[slash + 1] <= '9';
}

// The recording perf process: the parent of the task that becomes
// "perf-exec" (perf record forks the workload under that name), else the
// task that first wakes "perf-exec".
std::int32_t find_tool(const Trace& t) {
  std::unordered_map<std::int32_t, std::int32_t> parent;
  for (const Event& e : t.events) {
    if (e.kind == EventKind::fork) parent[e.pid] = e.prev_pid;
    const bool exec = e.task_comm == "perf-exec" || (e.comm == "perf-exec" && e.tid != 0);
    if (!exec) continue;
    const std::int32_t child = e.task_comm == "perf-exec" ? e.pid : e.tid;
    if (auto it = parent.find(child); it != parent.end()) return it->second;
    if (e.kind == EventKind::waking && e.task_comm == "perf-exec" && e.tid != 0) return e.tid;
  }
  return 0;
}

// What the replay needs to know about the future of each sched_waking.
struct Ahead {
  bool sync = false;          // the waker's next switch on the CPU puts it to sleep, soon
  bool off_cpu_first = false; // the wakee switches out asleep before its sched_wakeup
};

std::vector<Ahead> look_ahead(const Trace& t, const Options& o) {
  std::vector<Ahead> out(t.events.size());
  std::unordered_map<std::uint32_t, std::size_t> next_switch_on;  // cpu -> event
  std::unordered_map<std::int32_t, std::size_t> next_wakeup, next_switch_out;
  for (std::size_t i = t.events.size(); i-- > 0;) {
    const Event& e = t.events[i];
    if (e.kind == EventKind::waking) {
      if (auto s = next_switch_on.find(e.cpu); s != next_switch_on.end()) {
        const Event& sw = t.events[s->second];
        // A per-CPU kernel thread (ksoftirqd, a kworker) wakes from timers
        // and softirqs, which never pass WF_SYNC.
        out[i].sync = sw.prev_pid == e.tid && e.tid != 0 && !pinned_name(e.comm) && !sw.prev_runnable() &&
                      sw.time_ns - e.time_ns <= o.sync_window_ns;
      }
      const auto w = next_wakeup.find(e.pid);
      const auto so = next_switch_out.find(e.pid);
      if (so != next_switch_out.end() && (w == next_wakeup.end() || so->second < w->second))
        out[i].off_cpu_first = !t.events[so->second].prev_runnable();
    } else if (e.kind == EventKind::switch_to) {
      next_switch_on[e.cpu] = i;
      next_switch_out[e.prev_pid] = i;
    } else if (e.kind == EventKind::wakeup) {
      next_wakeup[e.pid] = i;
    }
  }
  return out;
}

// Another policy set's replay over the same machine: its own placer,
// and its own flips (and overlaps) per task, fed the same wake-ups, forks
// and sleeps as the main one.
class OtherSet {
 public:
  virtual ~OtherSet() = default;
  struct Input {
    std::int32_t waker_tid = 0, wakee_tid = 0;  // waker 0: the CPU's idle task
    TaskKey waker_key = no_task, wakee_key = no_task;
    CpuId waking = 0, prev = no_cpu;
    bool sync = false;
    std::uint64_t wakee_load = 0, waker_load = 0;
    std::int64_t now = 0;
  };
  virtual Placement place(const Input& in, const Machine& m) = 0;
  virtual void fork(std::int32_t parent, std::int32_t child, bool inherit) = 0;
  virtual void sleeps(std::int32_t tid, std::int64_t now) = 0;
};

template <class Traits>
class OtherSetReplay final : public OtherSet {
 public:
  using P = WakePlacer<TableTopology, Traits>;
  OtherSetReplay(const TableTopology& t, std::uint32_t initial_flips)
      : placer_(t), idle_(t.cpu_count()), initial_flips_(initial_flips) {}

  Placement place(const Input& in, const Machine& m) override {
    typename P::Wakeup up;
    up.waker = in.waker_tid == 0 ? &idle_[in.waking] : &task(in.waker_tid, in.now);
    up.waker_key = in.waker_key;
    up.wakee = &task(in.wakee_tid, in.now);
    up.wakee_key = in.wakee_key;
    up.waking_cpu = in.waking;
    up.prev_cpu = in.prev;
    up.sync = in.sync;
    up.wakee_load = in.wakee_load;
    up.waker_load = in.waker_load;
    return placer_.place(up, m, Nanoseconds{in.now});
  }
  void fork(std::int32_t parent, std::int32_t child, bool inherit) override {
    typename P::task_state& c = tasks_[child];
    c.flips = inherit && parent != 0 ? task(parent, 0).flips : decltype(c.flips){};
  }
  void sleeps(std::int32_t tid, std::int64_t now) override {
    if constexpr (P::tracking_overlap && !P::reserving) placer_.task_sleeps(task(tid, now), Nanoseconds{now});
  }

 private:
  typename P::task_state& task(std::int32_t tid, std::int64_t now) {
    // Not a structured binding: clang 14 cannot name one in a requires-expression.
    const auto emplaced = tasks_.try_emplace(tid);
    typename P::task_state& t = emplaced.first->second;
    if constexpr (requires { t.flips.flips.store(1u); t.flips.decay_stamp_ns.store(now); })
      if (emplaced.second && initial_flips_ != 0) {
        t.flips.flips.store(initial_flips_);
        t.flips.decay_stamp_ns.store(now);
      }
    return t;
  }
  P placer_;
  std::unordered_map<std::int32_t, typename P::task_state> tasks_;
  std::vector<typename P::task_state> idle_;
  std::uint32_t initial_flips_;
};

std::vector<std::unique_ptr<OtherSet>> other_sets(const TableTopology& t, std::uint32_t initial_flips) {
  std::vector<std::unique_ptr<OtherSet>> s;
  s.push_back(std::make_unique<OtherSetReplay<traits::Linux2013>>(t, initial_flips));
  s.push_back(std::make_unique<OtherSetReplay<traits::Linux2008<>>>(t, initial_flips));
  s.push_back(std::make_unique<OtherSetReplay<traits::AlwaysAffine>>(t, initial_flips));
  s.push_back(std::make_unique<OtherSetReplay<traits::PrevCpu>>(t, initial_flips));
  return s;
}

class Replayer {
 public:
  Replayer(const Trace& t, const Options& o, const TableTopology& topo, Result& r)
      : trace_(t), opt_(o), placer_(topo), machine_(topo), idle_(topo.cpu_count()),
        others_(other_sets(topo, o.initial_flips)), r_(r) {}

  void run() {
    const auto ahead = look_ahead(trace_, opt_);
    for (std::size_t i = 0; i < trace_.events.size(); ++i) {
      const Event& e = trace_.events[i];
      machine_.now = e.time_ns;
      if (machine_.curr[e.cpu] < 0) {  // the first event of a CPU says what it runs
        machine_.set_curr(e.cpu, e.tid);
        if (e.tid != 0) queue(task(e.tid), e.cpu, RunState::running);
      }
      switch (e.kind) {
        case EventKind::waking: waking(e, ahead[i]); break;
        case EventKind::wakeup:
        case EventKind::wakeup_new: {
          if (auto p = pending_.find(e.pid); p != pending_.end()) {
            r_.wakeups[p->second].kernel_cpu = e.target_cpu;
            pending_.erase(p);
          }
          Task& t = task(e.pid, e.prio);
          queue(t, e.target_cpu, t.st == RunState::running ? RunState::running : RunState::queued);
          break;
        }
        case EventKind::migrate: {
          if (auto p = pending_.find(e.pid); p != pending_.end()) r_.wakeups[p->second].kernel_cpu = e.target_cpu;
          Task& t = task(e.pid, e.prio);
          if (t.st == RunState::sleeping) {
            if (e.target_cpu < machine_.nr.size()) move_load(t, e.target_cpu);
            t.cpu = e.target_cpu;
          } else {
            queue(t, e.target_cpu, t.st);
          }
          break;
        }
        case EventKind::switch_to: {
          if (e.prev_pid != 0) {
            Task& p = task(e.prev_pid, e.prev_prio);
            if (e.prev_runnable()) {
              queue(p, e.cpu, RunState::queued);
            } else {
              dequeue(p);
              for (auto& o : others_) o->sleeps(e.prev_pid, e.time_ns);
            }
          }
          if (e.pid != 0) queue(task(e.pid, e.prio), e.cpu, RunState::running);
          machine_.set_curr(e.cpu, e.pid);
          break;
        }
        case EventKind::fork: {
          for (auto& o : others_) o->fork(e.prev_pid, e.pid, opt_.inherit_at_fork);
          Task& child = tasks_[e.pid];  // new: not a task from before the trace
          child.ts.flips = opt_.inherit_at_fork && e.prev_pid != 0 ? task(e.prev_pid).ts.flips
                                                                   : decltype(child.ts.flips){};
          // A new task starts with a full load (kernel: init_entity_runnable_average).
          child.cpu = e.cpu;
          child.weight = task(e.prev_pid).weight;
          child.load = child.weight;
          child.load_at = e.time_ns;
          machine_.touch(e.cpu);
          machine_.rq_load[e.cpu] += child.load;
          break;
        }
      }
    }
  }

 private:
  // The task; one first seen here (not at its fork) existed before the
  // trace began, with Options::initial_flips flips.
  Task& task(std::int32_t tid) {
    auto [it, added] = tasks_.try_emplace(tid);
    if (added && opt_.initial_flips != 0) {
      it->second.ts.flips.flips.store(opt_.initial_flips);
      it->second.ts.flips.decay_stamp_ns.store(machine_.now);
    }
    return it->second;
  }
  // The task as the trace shows it, its weight from `prio` (a change while
  // queued, a renice, moves its CPU's weight too).
  Task& task(std::int32_t tid, std::int32_t prio) {
    Task& t = task(tid);
    const double w = opt_.nice_weights ? prio_weight(prio) : 1024.0;
    if (w != t.weight) {
      t.load = t.load_now(machine_.now);
      t.load_at = machine_.now;
      if (t.st != RunState::sleeping && t.cpu < machine_.nr.size()) {
        machine_.touch(t.cpu);
        machine_.weight[t.cpu] = std::max(0.0, machine_.weight[t.cpu] - t.weight) + w;
      }
      t.weight = w;
    }
    return t;
  }

  // Effects: the task's load brought up to now, and carried to `cpu`.
  void move_load(Task& t, CpuId cpu) {
    t.load = t.load_now(machine_.now);
    t.load_at = machine_.now;
    if (t.cpu == cpu) return;
    if (t.cpu < machine_.nr.size()) {
      machine_.touch(t.cpu);
      machine_.rq_load[t.cpu] = std::max(0.0, machine_.rq_load[t.cpu] - t.load);
    }
    machine_.touch(cpu);
    machine_.rq_load[cpu] += t.load;
  }
  void take_off(Task& t) {
    if (t.st != RunState::sleeping && t.cpu < machine_.nr.size() && machine_.nr[t.cpu] > 0) {
      machine_.touch(t.cpu);
      --machine_.nr[t.cpu];
      machine_.weight[t.cpu] = std::max(0.0, machine_.weight[t.cpu] - t.weight);
    }
  }
  void queue(Task& t, CpuId cpu, RunState st) {
    if (cpu >= machine_.nr.size()) return;  // checked in run(): cannot happen
    move_load(t, cpu);
    take_off(t);
    machine_.touch(cpu);
    ++machine_.nr[cpu];
    machine_.weight[cpu] += t.weight;
    t.cpu = cpu;
    t.st = st;
  }
  void dequeue(Task& t) {
    if (t.cpu < machine_.nr.size()) move_load(t, t.cpu);
    take_off(t);
    t.st = RunState::sleeping;
  }

  void waking(const Event& e, const Ahead& a) {
    WakeRecord w;
    w.line = e.line;
    w.time_ns = e.time_ns;
    w.waking_cpu = e.cpu;
    w.waker_tid = e.tid;
    w.wakee_tid = e.pid;
    w.waker_comm = e.comm;
    w.wakee_comm = e.task_comm;
    w.prev_cpu = e.target_cpu;
    w.sync = opt_.sync == SyncMode::always || (opt_.sync == SyncMode::infer && a.sync);
    Task& wakee = task(e.pid, e.prio);
    const bool on_rq = wakee.st == RunState::queued || (wakee.st == RunState::running && !a.off_cpu_first);
    if (e.prio < 100 || e.prio > 139) w.category = Category::not_fair;
    else if (pinned_name(e.task_comm)) w.category = Category::pinned;
    else if (on_rq) w.category = Category::queued;
    else if (r_.tool_pid != 0 && (e.tid == r_.tool_pid || e.pid == r_.tool_pid)) w.category = Category::tool;
    else w.category = Category::placed;

    if (w.category == Category::placed || w.category == Category::tool) {
      Placer::task_state& waker = e.tid == 0 ? idle_[e.cpu] : task(e.tid).ts;
      Placer::Wakeup up;
      up.waker = &waker;
      up.waker_key = task_key(e.tid, e.cpu);
      up.wakee = &wakee.ts;
      up.wakee_key = task_key(e.pid, e.cpu);
      up.waking_cpu = e.cpu;
      up.prev_cpu = e.target_cpu;
      up.sync = w.sync;
      up.wakee_load = static_cast<std::uint64_t>(std::llround(wakee.load_now(e.time_ns)));
      up.waker_load = e.tid == 0 ? 0 : static_cast<std::uint64_t>(std::llround(task(e.tid).load_now(e.time_ns)));
      w.placement = placer_.place(up, machine_, Nanoseconds{e.time_ns});
      const OtherSet::Input in{e.tid, e.pid, up.waker_key, up.wakee_key, up.waking_cpu, up.prev_cpu,
                               up.sync, up.wakee_load, up.waker_load, e.time_ns};
      for (auto& o : others_) w.others.push_back(o->place(in, machine_));
      w.waker_flips = placer_.flips().flips(waker.flips);
      w.wakee_flips = placer_.flips().flips(wakee.ts.flips);
    }
    pending_[e.pid] = r_.wakeups.size();
    r_.wakeups.push_back(std::move(w));
  }

  const Trace& trace_;
  const Options& opt_;
  Placer placer_;
  Machine machine_;
  std::unordered_map<std::int32_t, Task> tasks_;
  std::vector<Placer::task_state> idle_;  // each CPU's idle task, a waker from interrupts
  std::unordered_map<std::int32_t, std::size_t> pending_;  // wakee -> its record, until sched_wakeup
  std::vector<std::unique_ptr<OtherSet>> others_;
  Result& r_;
};

}  // namespace

namespace detail {
TableTopology make_topology(const Options& o, std::uint32_t cpus, std::string& words) {
  if (!o.sysfs.empty()) {
    TableTopology t = SysfsTopology::all_online(o.sysfs);
    for (CpuId c = 0; c < t.cpu_count(); ++c)
      if (t.os_cpu(c) != c)
        throw std::invalid_argument("the sysfs tree has CPUs offline or out of order (CPU " + std::to_string(c) +
                                    " is OS CPU " + std::to_string(t.os_cpu(c)) + "): pass --cpus instead");
    words = std::to_string(t.cpu_count()) + " CPUs from " + o.sysfs + ": LLC of CPU 0: " +
            std::to_string(t.llc_size(0)) + " CPUs, core of CPU 0: " + std::to_string(t.core_size(0)) + " thread(s)";
    return t;
  }
  const std::uint32_t threads = o.threads_per_core == 0 ? 1 : o.threads_per_core;
  const std::uint32_t llc = o.llc_size == 0 ? cpus : o.llc_size;
  if (cpus % llc != 0 || llc % threads != 0)
    throw std::invalid_argument("an LLC of " + std::to_string(llc) + " CPUs and cores of " + std::to_string(threads) +
                                " threads do not divide " + std::to_string(cpus) + " CPUs");
  std::vector<std::uint32_t> core(cpus), llcs(cpus), node(cpus, 0);
  for (std::uint32_t c = 0; c < cpus; ++c) {
    core[c] = c / threads;
    llcs[c] = c / llc;
  }
  words = std::to_string(cpus) + " CPUs: " + std::to_string(cpus / llc) + " LLC(s) of " + std::to_string(llc) +
          " CPUs, " + std::to_string(threads) + " thread(s) per core";
  return TableTopology(std::move(core), std::move(llcs), std::move(node));
}
}  // namespace detail

const std::vector<std::string>& perf_policy_sets() {
  static const std::vector<std::string> names = {"traits::Current", "traits::Linux2013", "traits::Linux2008<>",
                                                 "traits::AlwaysAffine", "traits::PrevCpu"};
  return names;
}

Result run(const Trace& trace, const Options& o) {
  Result r;
  std::string words;
  const std::uint64_t wanted = o.cpus != 0 ? o.cpus
                               : trace.header.nr_cpus_online != 0 ? trace.header.nr_cpus_online
                                                                   : std::uint64_t{trace.max_cpu_seen} + 1;
  if (wanted > detail::max_cpus)
    throw std::invalid_argument("a machine of " + std::to_string(wanted) + " CPUs: the replay takes at most " +
                                std::to_string(detail::max_cpus));
  const TableTopology topo = detail::make_topology(o, static_cast<std::uint32_t>(wanted), words);
  r.cpus = static_cast<std::uint32_t>(topo.cpu_count());
  r.topology = words;
  std::uint32_t max_cpu = trace.max_cpu_seen;
  for (const Event& e : trace.events)
    if (e.kind != EventKind::fork) max_cpu = std::max({max_cpu, e.target_cpu, e.orig_cpu});
  if (max_cpu >= r.cpus)
    throw std::invalid_argument("the trace uses CPU " + std::to_string(max_cpu) + " but the machine has " +
                                std::to_string(r.cpus) + " CPUs (--cpus)");
  r.tool_pid = o.tool_pid >= 0 ? o.tool_pid : find_tool(trace);
  r.sync = o.sync;
  r.events = trace.events.size();
  Replayer(trace, o, topo, r).run();
  return r;
}

}  // namespace taskplace::replay
