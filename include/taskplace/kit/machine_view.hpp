// taskplace/kit/machine_view.hpp: the machine one placement read, recorded
// for the trace hook (kit/trace.hpp): kit::observed wraps a runtime's
// MachineState so that each answer the placer gets lands in this thread's
// MachineView, which ChromeTraceHook writes with the wake event and
// taskplace-replay answers from (docs/replay.md). Kernel analogue: none;
// the kernel's tracepoints do not carry the runqueue state a wake-up read.
//
//   placer.place(w, taskplace::kit::observed<Placer>(machine, cpus), now);
#pragma once

#include "taskplace/detail/config.hpp"

#include <cstdint>
#include <type_traits>
#include <utility>

#include "taskplace/concepts.hpp"
#include "taskplace/types.hpp"
#include "taskplace/wake_placer.hpp"

namespace taskplace::kit {

// The machine as one placement read it, recorded with its wake event so
// that a replay can answer the placer's questions as the runtime did.
// Bounded (128 bytes, two cache lines: a trace's slots hold one each):
// CPUs 0-63 by bit masks; the counts (nr_running, load) of two CPUs (the
// placer reads them for the waking and the previous CPU only); the LLC
// utilisation and the idle-core hint, each for the one CPU it was asked
// for; the move costs CostGate reads (O5 wake_cost of two CPUs: the
// previous one and the one the search found, in whole nanoseconds below
// 2^32; O6 crossing_cost). An answer the placer read twice and got
// two different ones (the machine changed under it) keeps the first, and
// its CPU's bit in `torn`. After the decision, the hook completes the view
// (`known`): the idle state of every CPU below 64 the placer did not ask
// about, the counts of the waking and the previous CPU, and, where the
// machine has them, the wake costs of the previous and the chosen CPU and
// the crossing cost,
// read then (a moment later), so that a replay can also run a rule that
// reads the costs on a trace recorded without one. It also says which
// optional members the machine has (O1, O2): a placer without them scans
// the whole LLC, with no idle-core hint.
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
  struct WakeCost {
    CpuId cpu = no_cpu;  // no_cpu: an empty entry
    std::uint32_t ns = 0;
  };
  Count counts[2];
  Nanoseconds crossing{0};   // crossing_cost() read (where has_crossing)
  WakeCost wake_costs[2];    // wake_cost(cpu) read: ns
  CpuId llc_cpu = no_cpu;   // llc_utilization_pct(llc_cpu) read: llc_pct
  std::uint32_t llc_pct = 0;
  CpuId core_cpu = no_cpu;  // has_idle_core(core_cpu) read: idle_core
  std::uint32_t cpus = 0;   // the machine's CPU count; 0: no view recorded
  bool idle_core = false;
  bool beyond = false;      // the placer read a CPU >= max_cpus (not recorded), a third count or wake cost, or one past 2^32 ns
  bool has_llc = false;     // the machine has llc_utilization_pct (MachineState O1)
  bool has_core_hint = false;  // ... has_idle_core (O2)
  bool has_crossing = false;   // crossing_cost() read: crossing (false: the machine has no O6)

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
  // Effects: records wake_cost(c)'s answer (the first stays, a different
  // one marks c torn); a third CPU, or an answer outside [0, 2^32) ns, is
  // not recorded (`beyond` for the placer's read).
  void note_wake_cost(CpuId c, Nanoseconds v, bool by_placer) noexcept {
    for (WakeCost& k : wake_costs)
      if (k.cpu == c) {
        if (Nanoseconds{k.ns} != v) mark_torn(c);
        return;
      }
    if (v.count() >= 0 && v.count() <= 0xffffffffLL)
      for (WakeCost& k : wake_costs)
        if (k.cpu == no_cpu) {
          k = {c, static_cast<std::uint32_t>(v.count())};
          return;
        }
    beyond = beyond || by_placer;
  }
  const WakeCost* find_wake_cost(CpuId c) const noexcept {
    for (const WakeCost& k : wake_costs)
      if (k.cpu == c && c != no_cpu) return &k;
    return nullptr;
  }
  // Effects: records crossing_cost()'s answer (the first stays).
  void note_crossing(Nanoseconds v) noexcept {
    if (!has_crossing) crossing = v, has_crossing = true;
  }
};
static_assert(sizeof(MachineView) <= 128, "MachineView: a trace slot's budget is two cache lines");

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
  Nanoseconds (*wake_cost)(const void*, CpuId) = nullptr;  // null: the machine has no O5
  Nanoseconds (*crossing)(const void*) = nullptr;          // null: ... no O6
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
    if constexpr (HasWakeCost<M>)
      detail::current_source.wake_cost = [](const void* p, CpuId c) { return Nanoseconds{self(p).m_.wake_cost(c)}; };
    if constexpr (HasCrossingCost<M>)
      detail::current_source.crossing = [](const void* p) { return Nanoseconds{self(p).m_.crossing_cost()}; };
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
  // O5, O6 (CostGate's costs).
  Nanoseconds wake_cost(CpuId c) const
    requires HasWakeCost<M>
  {
    const Nanoseconds v{m_.wake_cost(c)};
    detail::current_view.note_wake_cost(c, v, true);
    return v;
  }
  Nanoseconds crossing_cost() const
    requires HasCrossingCost<M>
  {
    const Nanoseconds v{m_.crossing_cost()};
    detail::current_view.note_crossing(v);
    return v;
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
// CPUs below 64 not read, the counts of the waking and previous CPUs, the
// wake costs of prev and of the CPU chosen and the crossing cost where
// the machine has them), or null when no ObservedMachine is alive on this
// thread.
inline const MachineView* take_view(CpuId waking, CpuId prev, CpuId chosen) noexcept {
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
  if (s.wake_cost != nullptr)
    for (CpuId c : {prev, chosen})
      if (c < v.cpus && c != waking && v.find_wake_cost(c) == nullptr)
        v.note_wake_cost(c, s.wake_cost(s.machine, c), false);
  if (s.crossing != nullptr && !v.has_crossing) v.note_crossing(s.crossing(s.machine));
  return &v;
}
}  // namespace detail

}  // namespace taskplace::kit
