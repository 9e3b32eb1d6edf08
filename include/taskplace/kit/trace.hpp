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
// The machine the placer read: pass the placer kit::observed<Placer>(machine,
// cpus) instead of the machine (the machine itself when the placer has no
// trace hook), and each wake event carries the answers it got (MachineView;
// taskplace-replay rebuilds the machine from them).
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
#include "taskplace/types.hpp"
#include "taskplace/wake_placer.hpp"

namespace taskplace::kit {

// The machine as one placement read it, recorded with its wake event so
// that a replay can answer the placer's questions as the runtime did.
// Bounded (104 bytes): CPUs 0-63 by bit masks; the counts (nr_running, load)
// of two CPUs (the placer reads them for the waking and the previous CPU
// only); the LLC utilisation and the idle-core hint, each for the one CPU
// it was asked for. An answer the placer read twice and got two different
// ones (the machine changed under it) keeps the first, and its CPU's bit in
// `torn`. After the decision, the hook completes the view (`known`): the
// idle state of every CPU below 64 the placer did not ask about, and the
// counts of the waking and the previous CPU, read then (a moment later).
// It also says which optional members the machine has (O1, O2): a placer
// without them scans the whole LLC, with no idle-core hint.
struct MachineView {
  static constexpr std::uint32_t max_cpus = 64;
  struct Count {
    CpuId cpu = no_cpu;  // no_cpu: an empty entry
    std::uint32_t nr_running = 0;
    std::uint64_t load = 0;
    bool has_nr = false, has_load = false;
  };
  std::uint64_t idle = 0;   // bit c: CPU c idle (meaningful where `known` has c)
  std::uint64_t known = 0;  // bit c: CPU c's idle state recorded
  std::uint64_t read = 0;   // bit c: ... by the placer itself (else by the hook, after it)
  std::uint64_t torn = 0;   // bit c: two reads of c (idle state or counts) disagreed
  Count counts[2];
  CpuId llc_cpu = no_cpu;   // llc_utilization_pct(llc_cpu) read: llc_pct
  std::uint32_t llc_pct = 0;
  CpuId core_cpu = no_cpu;  // has_idle_core(core_cpu) read: idle_core
  std::uint32_t cpus = 0;   // the machine's CPU count; 0: no view recorded
  bool idle_core = false;
  bool beyond = false;      // the placer read a CPU >= max_cpus (not recorded) or a third count
  bool has_llc = false;     // the machine has llc_utilization_pct (MachineState O1)
  bool has_core_hint = false;  // ... has_idle_core (O2)

  bool has_idle(CpuId c) const noexcept { return c < max_cpus && ((known >> c) & 1u) != 0; }
  // Effects: records is_idle(c)'s answer (the first stays; a different one marks c torn).
  void note_idle(CpuId c, bool v, bool by_placer) noexcept {
    if (c >= max_cpus) {
      beyond = beyond || by_placer;
      return;
    }
    const std::uint64_t bit = std::uint64_t{1} << c;
    if (known & bit) {
      if (((idle & bit) != 0) != v) torn |= bit;
    } else {
      known |= bit;
      if (v) idle |= bit;
    }
    if (by_placer) read |= bit;
  }
  // Returns: c's entry, a new one if there is room, else null (and, for
  // the placer's read, `beyond`).
  Count* count(CpuId c, bool by_placer = true) noexcept {
    for (Count& k : counts)
      if (k.cpu == c) return &k;
    for (Count& k : counts)
      if (k.cpu == no_cpu) {
        k.cpu = c;
        return &k;
      }
    beyond = beyond || by_placer;
    return nullptr;
  }
  const Count* find_count(CpuId c) const noexcept {
    for (const Count& k : counts)
      if (k.cpu == c && c != no_cpu) return &k;
    return nullptr;
  }
  void mark_torn(CpuId c) noexcept {
    if (c < max_cpus) torn |= std::uint64_t{1} << c;
  }
  void note_nr(CpuId c, std::uint32_t v) noexcept {
    if (Count* k = count(c)) {
      if (k->has_nr && k->nr_running != v) mark_torn(c);
      if (!k->has_nr) k->nr_running = v, k->has_nr = true;
    }
  }
  void note_load(CpuId c, std::uint64_t v) noexcept {
    if (Count* k = count(c)) {
      if (k->has_load && k->load != v) mark_torn(c);
      if (!k->has_load) k->load = v, k->has_load = true;
    }
  }
};

struct ChromeTraceHook;

namespace detail {
// The view of the placement running on this thread, and the machine it
// reads (type-erased), while an ObservedMachine lives; the hook completes
// and takes the view.
struct ViewSource {
  const void* machine = nullptr;
  bool (*is_idle)(const void*, CpuId) = nullptr;
  std::uint32_t (*nr_running)(const void*, CpuId) = nullptr;
  std::uint64_t (*load)(const void*, CpuId) = nullptr;
};
inline thread_local MachineView current_view{};
inline thread_local ViewSource current_source{};
}  // namespace detail

// A MachineState that answers as M does and records each answer in this
// thread's MachineView, for the trace hook. One per placement, alive
// across the place() call (a temporary argument is); not copyable.
// Optional members (O1-O4) exist where M has them.
template <MachineState M>
class ObservedMachine {
 public:
  ObservedMachine(M m, std::uint32_t cpus) noexcept(std::is_nothrow_move_constructible_v<M>) : m_(std::move(m)) {
    detail::current_view = MachineView{};
    detail::current_view.cpus = cpus;
    detail::current_view.has_llc = HasLlcUtilization<M>;
    detail::current_view.has_core_hint = HasIdleCoreHint<M>;
    detail::current_source = {this, [](const void* p, CpuId c) { return static_cast<bool>(self(p).m_.is_idle(c)); },
                              [](const void* p, CpuId c) { return static_cast<std::uint32_t>(self(p).m_.nr_running(c)); },
                              [](const void* p, CpuId c) { return static_cast<std::uint64_t>(self(p).m_.load(c)); }};
  }
  ~ObservedMachine() {
    if (detail::current_source.machine == this) detail::current_source = {}, detail::current_view.cpus = 0;
  }
  ObservedMachine(const ObservedMachine&) = delete;
  ObservedMachine& operator=(const ObservedMachine&) = delete;

  bool is_idle(CpuId c) const {
    const bool v = static_cast<bool>(m_.is_idle(c));
    detail::current_view.note_idle(c, v, true);
    return v;
  }
  std::uint32_t nr_running(CpuId c) const {
    const auto v = static_cast<std::uint32_t>(m_.nr_running(c));
    detail::current_view.note_nr(c, v);
    return v;
  }
  std::uint64_t load(CpuId c) const {
    const auto v = static_cast<std::uint64_t>(m_.load(c));
    detail::current_view.note_load(c, v);
    return v;
  }
  std::uint32_t llc_utilization_pct(CpuId c) const
    requires HasLlcUtilization<M>
  {
    const auto v = static_cast<std::uint32_t>(m_.llc_utilization_pct(c));
    MachineView& view = detail::current_view;
    if (view.llc_cpu == no_cpu) view.llc_cpu = c, view.llc_pct = v;
    return v;
  }
  bool has_idle_core(CpuId c) const
    requires HasIdleCoreHint<M>
  {
    const bool v = static_cast<bool>(m_.has_idle_core(c));
    MachineView& view = detail::current_view;
    if (view.core_cpu == no_cpu) view.core_cpu = c, view.idle_core = v;
    return v;
  }
  void clear_idle_core(CpuId c) const
    requires HasIdleCoreClear<M>
  {
    m_.clear_idle_core(c);
  }
  decltype(auto) reservation(CpuId c) const
    requires requires(const M& m) { m.reservation(c); }
  {
    return m_.reservation(c);
  }
  // O5, O6 (CostGate's costs): forwarded, not recorded.
  Nanoseconds wake_cost(CpuId c) const
    requires HasWakeCost<M>
  {
    return m_.wake_cost(c);
  }
  Nanoseconds crossing_cost() const
    requires HasCrossingCost<M>
  {
    return m_.crossing_cost();
  }

 private:
  static const ObservedMachine& self(const void* p) noexcept { return *static_cast<const ObservedMachine*>(p); }
  M m_;
};

// Returns: `m` observed (its answers recorded with each wake event) when
// the placer's hook is the trace hook, else `m` itself (no cost). `cpus`:
// the machine's CPU count. For the argument of Placer::place().
template <class Placer, MachineState M>
auto observed(M m, std::uint32_t cpus) {
  if constexpr (std::is_same_v<typename Placer::hook_type, ChromeTraceHook>)
    return ObservedMachine<M>(std::move(m), cpus);
  else
    return m;
}

namespace detail {
// Returns: this thread's view completed for `e` (the idle state of the
// CPUs below 64 not read, the counts of the waking and previous CPUs), or
// null when no ObservedMachine is alive on this thread.
inline const MachineView* take_view(CpuId waking, CpuId prev) noexcept {
  const ViewSource& s = current_source;
  MachineView& v = current_view;
  if (s.machine == nullptr || v.cpus == 0) return nullptr;
  const std::uint32_t n = v.cpus < MachineView::max_cpus ? v.cpus : MachineView::max_cpus;
  for (CpuId c = 0; c < n; ++c)
    if (!v.has_idle(c)) v.note_idle(c, s.is_idle(s.machine, c), false);
  for (CpuId c : {waking, prev}) {
    if (c >= v.cpus) continue;
    MachineView::Count* k = v.count(c, false);
    if (k == nullptr) continue;
    if (!k->has_nr) k->nr_running = s.nr_running(s.machine, c), k->has_nr = true;
    if (!k->has_load) k->load = s.load(s.machine, c), k->has_load = true;
  }
  return &v;
}
}  // namespace detail

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
    if (sink != nullptr) sink->record(e, detail::take_view(e.waking_cpu, e.prev_cpu));
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
