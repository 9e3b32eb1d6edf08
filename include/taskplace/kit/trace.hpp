// taskplace/kit/trace.hpp: a ready DecisionHook that records every wake-up
// placement and newidle balance as Chrome trace JSON (the "traceEvents"
// format that Perfetto and chrome://tracing open, and taskplace-replay
// reads back). Kernel analogue: the sched tracepoints (sched_waking,
// sched_wakeup's target_cpu) read by `perf sched record`; the library's
// own reasons stand in for what perf can only infer.
//
// A ChromeTrace is the sink: a fixed number of slots (the cap), claimed by
// one atomic add each, so any number of placers and balancers on any
// threads record into one trace without a lock; an event past the cap is
// counted as dropped. ChromeTraceHook is the hook (a DecisionHook for both
// events): default-constructible as the concept asks, it takes the sink
// installed when it is constructed (ChromeTrace::Install), or the one
// attach() gives it later; with none it records nothing.
//
//   taskplace::kit::ChromeTrace trace{1 << 16};
//   { taskplace::kit::ChromeTrace::Install on{trace};          // hooks built now record here
//     taskplace::WakePlacer<Topo, taskplace::kit::Traced<taskplace::traits::Current>> placer{topo}; ... }
//   trace.write_file("wakeups.json");
//
// The machine the placer read (kit/machine_view.hpp): pass the placer
// kit::observed<Placer>(machine, cpus) instead of the machine (the machine
// itself when the placer has no trace hook), and each wake event carries
// the answers it got (MachineView; taskplace-replay rebuilds the machine
// from them).
#pragma once

#include "taskplace/detail/config.hpp"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <fstream>
#include <memory>
#include <ostream>
#include <set>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include "taskplace/concepts.hpp"
#include "taskplace/idle_balancer.hpp"
#include "taskplace/kit/machine_view.hpp"
#include "taskplace/types.hpp"
#include "taskplace/wake_placer.hpp"

namespace taskplace::kit {

// A task's run, stop or sleep on a worker, as the runtime reports it to
// its placer (WakePlacer::task_runs, task_stops, task_sleeps): what the
// policies that read runs and sleeps (traits::SisCurrent's durations,
// traits::CacheHot's reservations) need for a replay. The runtime records
// them itself (ChromeTrace::record), whatever its placer's policies.
struct TaskEvent {
  enum class Kind : std::uint8_t { runs, stops, sleeps };
  TaskKey task = no_task;
  CpuId cpu = 0;
  Nanoseconds at{0};     // the moment it started (runs) or stopped (stops, sleeps)
  Kind kind = Kind::runs;
  bool cpu_idle = false; // sleeps: nothing else runnable on the CPU then
};
constexpr const char* to_string(TaskEvent::Kind k) noexcept {
  return k == TaskEvent::Kind::runs ? "runs" : k == TaskEvent::Kind::stops ? "stops" : "sleeps";
}

// The sink: bounded storage for wake and balance events, and their JSON.
// Why slots claimed by an atomic add, not per-worker buffers or a lock: a
// hook is told the waking CPU, not which thread calls it, and one placer
// may be shared by many threads (the Boost.Fiber group's, the pool's
// placer for wake-ups from off the pool): per-CPU buffers would need a
// lock for those. A lock would make every worker's placement wait behind
// the others'; the add never waits, and the cap bounds the memory up front
// (capacity() * sizeof(slot), allocated at construction).
class ChromeTrace {
 public:
  // Effects: room for `capacity` events (wake-ups and balances together);
  // `process` names the trace's process in the viewer.
  explicit ChromeTrace(std::size_t capacity = std::size_t{1} << 18, std::string process = "taskplace")
      : slots_(new slot[capacity]), cap_(capacity), process_(std::move(process)) {}
  ChromeTrace(const ChromeTrace&) = delete;
  ChromeTrace& operator=(const ChromeTrace&) = delete;

  // Effects: stores the event, or counts it dropped when the cap is reached.
  // Complexity: O(1), one atomic add and a release store.
  // Thread-safety: any number of threads at once, with write() too.
  // `view`: the machine the placer read (null: none recorded).
  void record(const WakeEvent& e, const MachineView* view = nullptr) noexcept {
    if (slot* s = claim()) {
      s->kind = kind_wake;
      s->wake = {e, view != nullptr ? *view : MachineView{}};
      s->ready.store(true, std::memory_order_release);
    }
  }
  void record(const BalanceEvent& e) noexcept {
    if (slot* s = claim()) {
      s->kind = kind_balance;
      s->balance = e;
      s->ready.store(true, std::memory_order_release);
    }
  }
  void record(const TaskEvent& e) noexcept {
    if (slot* s = claim()) {
      s->kind = kind_task;
      s->task = e;
      s->ready.store(true, std::memory_order_release);
    }
  }

  std::size_t capacity() const noexcept { return cap_; }
  // Returns: the events stored (at most capacity()).
  std::size_t recorded() const noexcept {
    const auto n = next_.load(std::memory_order_acquire);
    return n < cap_ ? static_cast<std::size_t>(n) : cap_;
  }
  // Returns: the events that came after the cap and were not stored.
  std::uint64_t dropped() const noexcept { return dropped_.load(std::memory_order_relaxed); }

  // Effects: writes the trace as one JSON object: "traceEvents" (one
  // instant event per decision, in the order they were claimed, then a
  // thread_name for each CPU seen and the process_name), and "otherData"
  // (recorded, dropped, capacity). An event claimed but not yet stored
  // by a recorder still running is left out. Always valid JSON: numbers
  // are integers or fixed-point, strings are escaped.
  // Timestamps: `ts` in microseconds, the event's `now` (the embedder's
  // clock) with its nanoseconds as three decimals.
  // Thread-safety: may run while recorders record.
  void write(std::ostream& out) const {
    const std::size_t n = recorded();
    std::set<CpuId> cpus;
    out << "{\"traceEvents\":[\n";
    bool first = true;
    for (std::size_t i = 0; i < n; ++i) {
      const slot& s = slots_[i];
      if (!s.ready.load(std::memory_order_acquire)) continue;
      if (!first) out << ",\n";
      first = false;
      if (s.kind == kind_wake) {
        write_wake(out, s.wake.event, s.wake.view);
        cpus.insert(s.wake.event.waking_cpu);
      } else if (s.kind == kind_balance) {
        write_balance(out, s.balance);
        cpus.insert(s.balance.cpu);
      } else {
        write_task(out, s.task);
        cpus.insert(s.task.cpu);
      }
    }
    for (CpuId c : cpus) {
      out << (first ? "" : ",\n") << R"({"name":"thread_name","ph":"M","pid":1,"tid":)" << c
          << R"(,"args":{"name":"cpu )" << c << "\"}}";
      first = false;
    }
    out << (first ? "" : ",\n") << R"({"name":"process_name","ph":"M","pid":1,"tid":0,"args":{"name":)";
    write_string(out, process_);
    out << "}}\n],\n\"displayTimeUnit\":\"ns\",\n\"otherData\":{\"producer\":\"taskplace\",\"recorded\":" << n
        << ",\"dropped\":" << dropped() << ",\"capacity\":" << cap_ << "}}\n";
  }
  // Effects: write() to the file at `path` (replaced). Returns: whether
  // the file was written completely.
  bool write_file(const std::string& path) const {
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    if (!f) return false;
    write(f);
    f.flush();
    return static_cast<bool>(f);
  }

  // The JSON string literal of `s` (quotes included): '"', '\\' and the
  // control characters escaped, other bytes as they are.
  static void write_string(std::ostream& out, std::string_view s) {
    static constexpr char hex[] = "0123456789abcdef";
    out << '"';
    for (char ch : s) {
      const auto u = static_cast<unsigned char>(ch);
      if (ch == '"' || ch == '\\') out << '\\' << ch;
      else if (ch == '\n') out << "\\n";
      else if (ch == '\t') out << "\\t";
      else if (u < 0x20) out << "\\u00" << hex[u >> 4] << hex[u & 15];
      else out << ch;
    }
    out << '"';
  }

  // The sink ChromeTraceHooks constructed from now on take (process-wide;
  // null: none), until the guard's end restores the one before it.
  // Thread-safety: install and construct hooks from one thread, or order
  // them yourself; a hook reads it once, at its construction.
  class Install {
   public:
    explicit Install(ChromeTrace& t) noexcept : before_(installed_.exchange(&t)) {}
    ~Install() { installed_.store(before_); }
    Install(const Install&) = delete;
    Install& operator=(const Install&) = delete;

   private:
    ChromeTrace* before_;
  };
  static ChromeTrace* installed() noexcept { return installed_.load(std::memory_order_acquire); }

 private:
  static constexpr std::uint8_t kind_wake = 0, kind_balance = 1, kind_task = 2;
  struct WakeRecord {
    WakeEvent event;
    MachineView view;
  };
  struct slot {
    std::atomic<bool> ready{false};
    std::uint8_t kind = kind_wake;
    union {
      WakeRecord wake;
      BalanceEvent balance;
      TaskEvent task;
    };
    slot() noexcept : wake{} {}
  };

  slot* claim() noexcept {
    // Invariant: next_ only grows (64 bits: it cannot wrap); slot i is
    // written by the one claimer of i, and read once its `ready` is set.
    const std::uint64_t i = next_.fetch_add(1, std::memory_order_relaxed);
    if (i >= cap_) {
      dropped_.fetch_add(1, std::memory_order_relaxed);
      return nullptr;
    }
    return &slots_[static_cast<std::size_t>(i)];
  }

  // `ns` as microseconds with three decimals.
  static void write_us(std::ostream& out, Nanoseconds ns) {
    const std::int64_t v = ns.count();
    const std::uint64_t a = v < 0 ? 0 - static_cast<std::uint64_t>(v) : static_cast<std::uint64_t>(v);
    const auto frac = static_cast<unsigned>(a % 1000);
    out << (v < 0 ? "-" : "") << a / 1000 << '.' << char('0' + frac / 100) << char('0' + frac / 10 % 10)
        << char('0' + frac % 10);
  }
  static void write_view(std::ostream& out, const MachineView& v) {
    out << R"(,"machine":{"cpus":)" << v.cpus << ",\"idle\":" << v.idle << ",\"known\":" << v.known
        << ",\"read\":" << v.read << ",\"torn\":" << v.torn << ",\"counts\":[";
    bool first = true;
    for (const MachineView::Count& k : v.counts) {
      if (k.cpu == no_cpu || !k.has_nr || !k.has_load) continue;
      out << (first ? "" : ",") << "{\"cpu\":" << k.cpu << ",\"nr_running\":" << k.nr_running
          << ",\"load\":" << k.load << '}';
      first = false;
    }
    out << ']';
    if (v.llc_cpu != no_cpu) out << R"(,"llc":{"cpu":)" << v.llc_cpu << ",\"pct\":" << v.llc_pct << '}';
    if (v.core_cpu != no_cpu)
      out << R"(,"idle_core":{"cpu":)" << v.core_cpu << ",\"hint\":" << (v.idle_core ? "true" : "false") << '}';
    if (v.wake_costs[0].cpu != no_cpu) {
      out << R"(,"wake_cost":[)";
      for (const MachineView::WakeCost& k : v.wake_costs)
        if (k.cpu != no_cpu) out << (&k == v.wake_costs ? "" : ",") << "{\"cpu\":" << k.cpu << ",\"ns\":" << k.ns << '}';
      out << ']';
    }
    if (v.has_crossing) out << R"(,"crossing_ns":)" << v.crossing.count();
    out << ",\"beyond\":" << (v.beyond ? "true" : "false") << ",\"has_llc\":" << (v.has_llc ? "true" : "false")
        << ",\"has_idle_core\":" << (v.has_core_hint ? "true" : "false") << '}';
  }
  static void write_wake(std::ostream& out, const WakeEvent& e, const MachineView& v) {
    const Placement& p = e.placement;
    out << R"({"name":")" << to_string(p.reason) << R"(","cat":"wake","ph":"i","s":"t","ts":)";
    write_us(out, e.now);
    out << R"(,"pid":1,"tid":)" << e.waking_cpu << R"(,"args":{"waker":)" << e.waker << ",\"wakee\":" << e.wakee
        << ",\"waking_cpu\":" << e.waking_cpu << ",\"prev_cpu\":" << e.prev_cpu << ",\"target\":" << p.target
        << ",\"cpu\":" << p.cpu << R"(,"affine":")" << to_string(p.affine) << "\",\"wide\":"
        << (p.wide ? "true" : "false") << ",\"sync\":" << (e.sync ? "true" : "false")
        << ",\"scanned\":" << p.scanned << ",\"reservation_skips\":" << p.reservation_skips;
    if (e.waker_by_key) out << R"(,"waker_by_key":true)";
    if (e.waker_by_key && e.waker_flips != 0) out << R"(,"waker_flips":)" << e.waker_flips;
    if (v.cpus != 0) write_view(out, v);
    out << "}}";
  }
  static void write_balance(std::ostream& out, const BalanceEvent& e) {
    const BalanceResult& r = e.result;
    out << R"({"name":")" << to_string(r.outcome) << R"(","cat":"balance","ph":"i","s":"t","ts":)";
    write_us(out, e.now);
    out << R"(,"pid":1,"tid":)" << e.cpu << R"(,"args":{"cpu":)" << e.cpu << ",\"avg_idle_ns\":"
        << e.avg_idle.count() << ",\"levels_visited\":" << r.levels_visited << ",\"levels_skipped\":"
        << r.levels_skipped << ",\"stopped_before\":" << r.stopped_before << ",\"pulled_level\":"
        << r.pulled_level << ",\"spent_ns\":" << r.spent.count() << "}}";
  }

  static void write_task(std::ostream& out, const TaskEvent& e) {
    out << R"({"name":")" << to_string(e.kind) << R"(","cat":"task","ph":"i","s":"t","ts":)";
    write_us(out, e.at);
    out << R"(,"pid":1,"tid":)" << e.cpu << R"(,"args":{"task":)" << e.task << ",\"cpu\":" << e.cpu;
    if (e.kind == TaskEvent::Kind::sleeps) out << ",\"cpu_idle\":" << (e.cpu_idle ? "true" : "false");
    out << "}}";
  }

  std::unique_ptr<slot[]> slots_;
  std::size_t cap_;
  std::string process_;
  std::atomic<std::uint64_t> next_{0};
  std::atomic<std::uint64_t> dropped_{0};
  static inline std::atomic<ChromeTrace*> installed_{nullptr};
};

// The hook: a DecisionHook for WakeEvent and BalanceEvent that records into
// its sink. Default-constructed, it takes ChromeTrace::installed(); the
// placer or balancer that holds it can point it elsewhere with
// hook().attach(&trace). Thread-safety: as ChromeTrace::record.
struct ChromeTraceHook {
  ChromeTrace* sink = ChromeTrace::installed();

  void attach(ChromeTrace* t) noexcept { sink = t; }
  // A wake event takes this thread's MachineView along (kit::observed).
  void operator()(const WakeEvent& e) const noexcept {
    if (sink != nullptr) sink->record(e, detail::take_view(e.waking_cpu, e.prev_cpu, e.placement.cpu));
  }
  void operator()(const BalanceEvent& e) const noexcept {
    if (sink != nullptr) sink->record(e);
  }
};
static_assert(DecisionHook<ChromeTraceHook, WakeEvent> && DecisionHook<ChromeTraceHook, BalanceEvent>);

// A traits set (WakePlacer's or IdleBalancer's) with the trace hook:
// taskplace::kit::Traced<taskplace::traits::Current>.
template <class Traits>
struct Traced : Traits {
  using Hook = ChromeTraceHook;
};

}  // namespace taskplace::kit
