// tools/replay/replay.hpp: replays a `perf sched record` trace through
// taskplace's wake-placement decision and sets it beside the kernel's.
//
// For each sched_waking of the trace: who woke whom (the task running on
// the waking CPU), the waker's and the wakee's flips (FlipCounter, fed with
// every wake-up the kernel's select_task_rq_fair() would have seen), the
// machine as the switch, wake-up and migrate events leave it (which CPUs
// are idle, how many tasks each has queued), taskplace's decision
// (WakePlacer with traits::Current) and the CPU the kernel chose
// (sched_wakeup's target_cpu). What a trace cannot tell, and how the
// replay stands in for it, is in docs/replay.md.
//
//   auto trace = taskplace::replay::read_trace(std::cin);
//   auto result = taskplace::replay::run(trace, {});
//   taskplace::replay::print_table(std::cout, result, taskplace::replay::summarize(result));
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "chrome_trace.hpp"
#include "perf_trace.hpp"
#include "taskplace/taskplace.hpp"

namespace taskplace::replay {

// The WF_SYNC hint, which no tracepoint records.
enum class SyncMode : std::uint8_t {
  never,   // no wake-up is sync
  always,  // every wake-up is sync
  infer,   // sync when the waker's next switch on the waking CPU puts it to
           // sleep within Options::sync_window_ns (default)
};

struct Options {
  std::uint32_t cpus = 0;              // 0: the header's "nrcpus online", else the highest CPU seen + 1
  std::uint32_t threads_per_core = 1;  // SMT siblings per core (numbered next to each other)
  std::uint32_t llc_size = 0;          // CPUs per LLC; 0: all CPUs share one LLC
  std::string sysfs;                   // a sysfs root ("/sys/devices/system"): the topology from there instead
  SyncMode sync = SyncMode::infer;
  std::int64_t sync_window_ns = 100'000;
  std::int32_t tool_pid = -1;          // the recording perf process; -1: found in the trace, 0: none
  bool inherit_at_fork = true;         // a forked child starts with its parent's flips, as the kernel's does
  std::uint32_t initial_flips = 0;     // the flips of a task alive before the trace (unknown to it)
  // Weigh each task by its nice level (1024 at nice 0). Off: every task
  // weighs 1024, as a lone task does at the top level under autogroup or a
  // cgroup of its own, whatever its nice (see docs/replay.md).
  bool nice_weights = false;
  // A runtime's trace (Chrome trace JSON) says where tasks were placed and
  // ran, not when they slept (but for a sync waker): a CPU counts as busy
  // at most this long after its task was last seen (see docs/replay.md).
  std::int64_t busy_window_ns = 50'000;
};

// What the replay did with one sched_waking.
enum class Category : std::uint8_t {
  placed,    // a CFS wakee placed by select_task_rq_fair(): replayed and compared
  tool,      // as placed, but the waker or the wakee is the recording perf process: replayed, not compared
  not_fair,  // the wakee is not a CFS task (prio < 100): no fair placement, no flips
  pinned,    // a per-CPU kernel thread (name/N...): the kernel skips select_task_rq(), no flips
  queued,    // the wakee was still queued (kernel ttwu_runnable()): no placement, no flips
};
const char* to_string(Category c) noexcept;

// The key taskplace gets for a trace task: tid + 1; the idle task of each
// CPU (tid 0 on every CPU) its own key.
TaskKey task_key(std::int32_t tid, std::uint32_t cpu) noexcept;

struct WakeRecord {
  std::size_t line = 0;          // of the sched_waking
  std::int64_t time_ns = 0;
  std::uint32_t waking_cpu = 0;
  std::int32_t waker_tid = 0;    // 0: the CPU's idle task (an interrupt woke the task)
  std::int32_t wakee_tid = 0;
  std::string waker_comm;
  std::string wakee_comm;
  CpuId prev_cpu = no_cpu;       // sched_waking's target_cpu: where the wakee last ran
  Category category = Category::placed;
  bool sync = false;
  // placed and tool only:
  std::uint32_t waker_flips = 0;  // after this wake-up was recorded, as the wide rule read them
  std::uint32_t wakee_flips = 0;
  Placement placement{};
  // The kernel's CPU: sched_wakeup's target_cpu (else the last
  // sched_migrate_task's dest_cpu before it); no_cpu when the trace has
  // neither.
  CpuId kernel_cpu = no_cpu;
  // placed and tool only: the other policy sets' placements, in
  // perf_policy_sets() order after traits::Current (which is `placement`).
  std::vector<Placement> others;
};

// The policy sets a perf trace is replayed under: traits::Current (the
// main replay, WakeRecord::placement) first, then Linux2013, Linux2008<>,
// AlwaysAffine, PrevCpu (WakeRecord::others), each with its own flips.
const std::vector<std::string>& perf_policy_sets();

struct Result {
  std::uint32_t cpus = 0;
  std::string topology;      // in words, for the report
  std::int32_t tool_pid = 0; // 0: none
  SyncMode sync = SyncMode::infer;
  std::size_t events = 0;
  std::vector<WakeRecord> wakeups;  // one per sched_waking, in trace order
};

// Effects: replays `trace` (see the file comment).
// Throws: std::invalid_argument for options that describe no machine (an
//   LLC size that does not divide the CPU count, a CPU of the trace beyond
//   the given count, more than 65536 CPUs); SysfsError or TopologyError
//   for a sysfs tree that cannot be read.
Result run(const Trace& trace, const Options& options);

// What one policy set decided over the recorded wake-ups (or, for
// RuntimeResult::recorded, what the runtime did; for a perf trace's
// Summary::sets, against the kernel's CPU).
struct SetResult {
  std::string name;
  std::size_t wakeups = 0;
  std::size_t same_cpu = 0;  // chose the CPU the runtime (the kernel) chose
  std::size_t same_decision = 0;  // ... and its target, wide verdict, affine and final reasons
  std::size_t affine = 0;    // pulled to the waking CPU (waking != prev; WakeCounter::affine_pulled)
  std::size_t idle = 0;      // the final step found an idle CPU (idle_* reasons)
  std::size_t wide = 0;      // the wide rule said wide
  double agreement() const noexcept { return wakeups ? double(same_cpu) / double(wakeups) : 0.0; }
};

// The comparison, counted from a Result.
struct ReasonCount {
  std::string affine;  // taskplace's affine reason
  std::string reason;  // taskplace's final reason
  std::size_t total = 0;
  std::size_t agree = 0;
};
struct Summary {
  std::size_t sched_waking = 0;
  std::size_t by_category[5] = {};
  std::size_t compared = 0;         // placed, with a kernel CPU
  std::size_t agree = 0;
  std::size_t affine_compared = 0;  // of those, the affine policy decided (waking != prev, not wide)
  std::size_t affine_agree = 0;
  std::size_t wide = 0;
  std::size_t unmatched = 0;        // placed, but no sched_wakeup followed
  std::vector<ReasonCount> reasons; // every (affine, reason) pair among the compared
  // Each policy set over the compared wake-ups (perf_policy_sets() order),
  // after a first row for the kernel's own choices.
  std::vector<SetResult> sets;
  double agreement() const noexcept { return compared ? double(agree) / double(compared) : 0.0; }
  double affine_agreement() const noexcept {
    return affine_compared ? double(affine_agree) / double(affine_compared) : 0.0;
  }
};
Summary summarize(const Result& r);

// The readable report: the counts, the agreement, the breakdown by reason.
void print_table(std::ostream& out, const Result& r, const Summary& s);
// One line per sched_waking, with a header line.
void print_csv(std::ostream& out, const Result& r);

// --- A runtime's own trace (kit::ChromeTrace's JSON) -----------------------

struct RuntimeResult {
  std::uint32_t cpus = 0;
  std::string topology;  // in words
  std::string process;   // the trace's process name
  std::size_t balances = 0;
  std::size_t task_events = 0;  // runs, stops, sleeps
  std::uint64_t dropped = 0;
  std::int64_t busy_window_ns = 0;
  std::string not_replayed;     // the sets left out, and why (empty: none)
  std::size_t views = 0;   // wake events with the machine their placer read (kit::MachineView)
  std::size_t torn = 0;    // ... whose placer read two different answers for one CPU
  std::size_t beyond = 0;  // ... whose placer read what the view does not hold (a CPU >= 64)
  SetResult recorded;            // the runtime's own decisions
  std::vector<SetResult> sets;   // one per policy set, in policy_sets() order
  std::vector<std::pair<std::string, std::size_t>> reasons;  // the runtime's final reasons, most first
};

// The policy sets the replay runs, by name: traits::Current, Linux2013,
// Linux2008<>, AlwaysAffine, PrevCpu, and, where the trace has task events
// (runs, sleeps), SisCurrent<> and CacheHot<>.
const std::vector<std::string>& policy_sets();

// Effects: replays the recorded wake-ups, in time order, through a
// WakePlacer of each policy set (each with its own flips per task), on the
// machine each event's placer read (its MachineView), and where the event
// has none or the view lacks an answer, the machine the recorded decisions
// leave (Options::busy_window_ns).
// Throws: std::invalid_argument as run() does for the topology options.
RuntimeResult run_runtime(const ChromeTraceInput& trace, const Options& options);

// The report: the trace's counts, the runtime's reasons, and the table of
// what each policy set would have decided.
void print_runtime_table(std::ostream& out, const RuntimeResult& r);

namespace detail {
inline constexpr std::uint32_t max_cpus = 65536;
// The machine's topology: from sysfs, else uniform from the options.
TableTopology make_topology(const Options& o, std::uint32_t cpus, std::string& words);
// The reports' cells: "12.34%" ("-" of a whole of 0); s padded to w
// characters on the right (pad) or the left (lpad).
std::string pct(std::size_t part, std::size_t whole);
std::string pad(std::string s, std::size_t w);
std::string lpad(std::string s, std::size_t w);
}  // namespace detail

}  // namespace taskplace::replay
