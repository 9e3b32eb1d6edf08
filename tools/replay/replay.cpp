// tools/replay/replay.cpp: the replay of a decoded trace (see replay.hpp).
#include "replay.hpp"

#include <cmath>
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

using Placer = WakePlacer<UniformTopology, traits::Current>;

// The machine as the trace leaves it. Loads: one nice-0 task (1024) per
// queued task; a sleeping task is in no CPU's load, so the placer is told
// wakee_load = 0 (runnable_only_wakee_load). Utilisation: the share of time
// each CPU ran a task, averaged with PELT's 32 ms half-life.
struct Machine {
  const UniformTopology* topo = nullptr;
  std::vector<std::uint32_t> nr;
  std::vector<std::int32_t> curr;  // the running task; 0 idle; -1 not seen yet (read as idle)
  std::vector<double> util;
  std::vector<std::int64_t> util_at;
  std::int64_t now = 0;

  explicit Machine(const UniformTopology& t)
      : topo(&t), nr(t.cpu_count()), curr(t.cpu_count(), -1), util(t.cpu_count()), util_at(t.cpu_count()) {}

  bool is_idle(CpuId c) const { return curr[c] <= 0 && nr[c] == 0; }
  std::uint32_t nr_running(CpuId c) const { return nr[c]; }
  std::uint64_t load(CpuId c) const { return std::uint64_t{nr[c]} * 1024; }
  double util_now(CpuId c) const {
    const double dt = static_cast<double>(now - util_at[c]);
    if (dt <= 0) return util[c];
    const double keep = std::exp2(-dt / 32e6);
    return util[c] * keep + (curr[c] > 0 ? 1.0 - keep : 0.0);
  }
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
};
static_assert(MachineState<Machine> && HasLlcUtilization<Machine> && HasIdleCoreHint<Machine>);

enum class RunState : std::uint8_t { sleeping, queued, running };

struct Task {
  Placer::task_state ts{};
  CpuId cpu = no_cpu;
  RunState st = RunState::sleeping;
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
        out[i].sync = sw.prev_pid == e.tid && e.tid != 0 && !sw.prev_runnable() &&
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

class Replayer {
 public:
  Replayer(const Trace& t, const Options& o, const UniformTopology& topo, Result& r)
      : trace_(t), opt_(o), placer_(topo), machine_(topo), idle_(topo.cpu_count()), r_(r) {}

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
          Task& t = task(e.pid);
          queue(t, e.target_cpu, t.st == RunState::running ? RunState::running : RunState::queued);
          break;
        }
        case EventKind::migrate: {
          if (auto p = pending_.find(e.pid); p != pending_.end()) r_.wakeups[p->second].kernel_cpu = e.target_cpu;
          Task& t = task(e.pid);
          if (t.st == RunState::sleeping) t.cpu = e.target_cpu;
          else queue(t, e.target_cpu, t.st);
          break;
        }
        case EventKind::switch_to: {
          if (e.prev_pid != 0) {
            Task& p = task(e.prev_pid);
            if (e.prev_runnable()) queue(p, e.cpu, RunState::queued);
            else dequeue(p);
          }
          if (e.pid != 0) queue(task(e.pid), e.cpu, RunState::running);
          machine_.set_curr(e.cpu, e.pid);
          break;
        }
        case EventKind::fork: {
          Task& child = task(e.pid);
          if (opt_.inherit_at_fork && e.prev_pid != 0) child.ts.flips = task(e.prev_pid).ts.flips;
          child.cpu = e.cpu;
          break;
        }
      }
    }
  }

 private:
  Task& task(std::int32_t tid) { return tasks_[tid]; }

  void take_off(Task& t) {
    if (t.st != RunState::sleeping && t.cpu < machine_.nr.size() && machine_.nr[t.cpu] > 0) --machine_.nr[t.cpu];
  }
  void queue(Task& t, CpuId cpu, RunState st) {
    if (cpu >= machine_.nr.size()) return;  // checked in run(): cannot happen
    take_off(t);
    ++machine_.nr[cpu];
    t.cpu = cpu;
    t.st = st;
  }
  void dequeue(Task& t) {
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
    Task& wakee = task(e.pid);
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
      up.wakee_load = runnable_only_wakee_load<WakeAffine>;
      up.waker_load = 1024;
      w.placement = placer_.place(up, machine_, Nanoseconds{e.time_ns});
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
  Result& r_;
};

}  // namespace

Result run(const Trace& trace, const Options& o) {
  Result r;
  r.cpus = o.cpus != 0 ? o.cpus : trace.header.nr_cpus_online != 0 ? trace.header.nr_cpus_online
                                                                      : trace.max_cpu_seen + 1;
  std::uint32_t max_cpu = trace.max_cpu_seen;
  for (const Event& e : trace.events)
    if (e.kind != EventKind::fork) max_cpu = std::max({max_cpu, e.target_cpu, e.orig_cpu});
  if (max_cpu >= r.cpus)
    throw std::invalid_argument("the trace uses CPU " + std::to_string(max_cpu) + " but the machine has " +
                                std::to_string(r.cpus) + " CPUs (--cpus)");
  const std::uint32_t threads = o.threads_per_core == 0 ? 1 : o.threads_per_core;
  const std::uint32_t llc = o.llc_size == 0 ? r.cpus : o.llc_size;
  if (r.cpus % llc != 0 || llc % threads != 0)
    throw std::invalid_argument("an LLC of " + std::to_string(llc) + " CPUs and cores of " + std::to_string(threads) +
                                " threads do not divide " + std::to_string(r.cpus) + " CPUs");
  const UniformTopology topo(1, r.cpus / llc, llc / threads, threads);
  r.topology = std::to_string(r.cpus) + " CPUs: " + std::to_string(r.cpus / llc) + " LLC(s) of " +
               std::to_string(llc) + " CPUs, " + std::to_string(threads) + " thread(s) per core";
  r.tool_pid = o.tool_pid >= 0 ? o.tool_pid : find_tool(trace);
  r.sync = o.sync;
  r.events = trace.events.size();
  Replayer(trace, o, topo, r).run();
  return r;
}

}  // namespace taskplace::replay
