// taskplace/placer/wake_affine.hpp: the affine step of a wake-up: pull the
// wakee to the waking CPU, or leave it near its previous CPU?
//
// Kernel analogue: wake_affine() with WA_IDLE (wake_affine_idle) then
// WA_WEIGHT with WA_BIAS (wake_affine_weight), as in v4.15 to today; plus
// the baselines the seeds compare against: pull always (2.6.23-2.6.26 sync
// wake-ups) and never pull; the 2008 kernels' rule, whose sync pull was
// gated by the tasks' average overlap (WakeAffine2008, Smith 2008); and the
// rule of v3.12 (WakeAffine2013: the load test alone, no idle test).
//
//   AffineDecision d = WakeAffine::decide(AffineInput{topo, machine, allowed, waking, prev});
//   // d.target is waking or prev, d.reason says which rule decided.
#pragma once

#include "taskplace/detail/config.hpp"

#include <algorithm>
#include <cstdint>

#include "taskplace/concepts.hpp"
#include "taskplace/detail/math.hpp"
#include "taskplace/fwd.hpp"
#include "taskplace/tunables.hpp"
#include "taskplace/types.hpp"

namespace taskplace {

// Which rule chose the target of a wake-up, before the idle-sibling search.
enum class AffineReason : std::uint8_t {
  wide,                // the wide rule said no pull: target = prev
  waking_not_allowed,  // the wakee may not run on the waking CPU: target = prev
  same_cpu,            // waking CPU == prev: nothing to decide
  idle_prev,           // waking idle and cache-shared with prev, prev idle too
  idle_waking,         // waking idle and cache-shared with prev, prev busy
  sync,                // sync hint and the waker is all the waking CPU runs
  prev_idle,           // prev idle (not cache-shared with waking)
  load_waking,         // load test: waking CPU plus the wakee is lighter
  load_prev,           // load test: prev stays (8% bias toward it)
  forced_waking,       // affine::Always
  forced_prev,         // affine::Never
  current_cpu,         // a hand-off (Wakeup::current_cpu): the waking CPU, no decision
  sync_overlap,        // WakeAffine2008: sync hint, both overlaps short
  wake_on_current,     // WakeOnCurrent: a short pair that wakes each other, the waking CPU
  cost_gate,           // CostGate: a move would cost more than it gains, the waking CPU
};

constexpr const char* to_string(AffineReason r) noexcept {
  switch (r) {
    case AffineReason::wide: return "wide";
    case AffineReason::waking_not_allowed: return "waking_not_allowed";
    case AffineReason::same_cpu: return "same_cpu";
    case AffineReason::idle_prev: return "idle_prev";
    case AffineReason::idle_waking: return "idle_waking";
    case AffineReason::sync: return "sync";
    case AffineReason::prev_idle: return "prev_idle";
    case AffineReason::load_waking: return "load_waking";
    case AffineReason::load_prev: return "load_prev";
    case AffineReason::forced_waking: return "forced_waking";
    case AffineReason::forced_prev: return "forced_prev";
    case AffineReason::current_cpu: return "current_cpu";
    case AffineReason::sync_overlap: return "sync_overlap";
    case AffineReason::wake_on_current: return "wake_on_current";
    case AffineReason::cost_gate: return "cost_gate";
  }
  return "unknown";
}

struct AffineDecision {
  CpuId target;
  AffineReason reason;
};

// Everything the affine step looks at. Loads are in the machine state's
// unit; the kernel's PELT counts a sleeping task's decaying load on its
// previous CPU, hence "prev's load minus the wakee" below. An embedder whose
// load(c) leaves sleeping tasks out passes wakee_load = 0.
template <Topology T, MachineState M>
struct AffineInput {
  const T& topology;
  const M& machine;
  CpuId waking;
  CpuId prev;
  bool sync = false;                // the waker is about to sleep (kernel WF_SYNC)
  // kernel task_h_load(p); 1024 = one nice-0 task. WakeAffine2008 reads it
  // as the wakee's weight (see its wakee_load_is_weight), whatever load(c)
  // counts: pass 1024 there even where load(c) leaves sleepers out.
  std::uint64_t wakee_load = 1024;
  std::uint64_t waker_load = 1024;  // kernel task_h_load(current), used with sync
  // Read by WakeAffine2008 only: the waker's and the wakee's average overlap
  // (OverlapTracker; kernel se.avg_overlap, 2008-2010). The largest
  // duration, the default, means unknown and never counts as short.
  Nanoseconds waker_overlap = Nanoseconds::max();
  Nanoseconds wakee_overlap = Nanoseconds::max();
};

namespace detail {
template <Topology T>
constexpr bool shares_cache(const T& t, CpuId a, CpuId b) noexcept(noexcept(t.llc_of(a))) {
  return a == b || t.llc_of(a) == t.llc_of(b);
}
// Loads are clamped here so that (load + load) * 100 fits 64 bits; a load
// times the imbalance factor (up to 2^31 for any imbalance_pct) is
// compared exactly (compare_product), never formed in 64 bits.
inline constexpr std::uint64_t max_affine_load = std::uint64_t{1} << 48;
// 100 + half the percentage above 100: the side of a load comparison that
// favours prev (108 at 117). Below 100 reads as 100.
constexpr std::uint32_t affine_bias_factor(std::uint32_t pct) noexcept {
  return 100 + (pct > 100 ? (pct - 100) / 2 : 0);
}
}  // namespace detail

// The kernel's decision (default). First the idle test: an idle waking CPU
// that shares cache with prev is as good as prev, so take prev if it is idle
// too, else the waking CPU; a sync wake-up from a CPU that runs only the
// waker goes to the waking CPU, whose waker is about to sleep; an idle prev
// wins. Failing that the load test: pull only if the waking CPU with the
// wakee added is lighter than prev without it, with prev favoured by half
// of imbalance_pct (8% at 117; 5% between SMT siblings), since a pull costs
// cache warmth that a tie does not repay; only a sync wake-up's tie pulls.
struct WakeAffine {
  std::uint32_t imbalance_pct = tunables::imbalance_pct;          // default 117; kernel: sd->imbalance_pct
  std::uint32_t smt_imbalance_pct = tunables::smt_imbalance_pct;  // default 110; kernel: SMT sd

  // Precondition: waking != prev, both valid.
  // Complexity: O(1) machine-state reads. Thread-safety: const.
  template <Topology T, MachineState M>
  constexpr AffineDecision decide(const AffineInput<T, M>& in) const {
    const auto& m = in.machine;
    const bool waking_idle = m.is_idle(in.waking);
    if (waking_idle && detail::shares_cache(in.topology, in.waking, in.prev))
      return m.is_idle(in.prev) ? AffineDecision{in.prev, AffineReason::idle_prev}
                                : AffineDecision{in.waking, AffineReason::idle_waking};
    if (in.sync && m.nr_running(in.waking) == 1)
      return {in.waking, AffineReason::sync};
    if (m.is_idle(in.prev)) return {in.prev, AffineReason::prev_idle};
    return load_test(in);
  }

  template <Topology T, MachineState M>
  constexpr AffineDecision load_test(const AffineInput<T, M>& in) const {
    using detail::max_affine_load;
    const std::uint64_t task = std::min(in.wakee_load, max_affine_load);
    std::uint64_t this_load = std::min<std::uint64_t>(in.machine.load(in.waking), max_affine_load);
    if (in.sync) {
      const std::uint64_t current = std::min(in.waker_load, max_affine_load);
      // The waker leaves: if it is all the waking CPU carries, pull.
      if (current > this_load) return {in.waking, AffineReason::load_waking};
      this_load -= current;
    }
    const std::uint64_t this_eff = (this_load + task) * 100;
    const std::uint64_t prev_load = std::min<std::uint64_t>(in.machine.load(in.prev), max_affine_load);
    const std::uint64_t prev_less = prev_load > task ? prev_load - task : 0;
    const bool siblings = in.topology.core_of(in.waking) == in.topology.core_of(in.prev);
    const std::uint32_t pct = siblings ? smt_imbalance_pct : imbalance_pct;
    // A sync wake-up breaks a tie toward the waking CPU (kernel since
    // v4.16: prev_eff_load + 1 when sync, so that the search may stack the
    // wakee on the leaving waker if nothing is idle); otherwise a tie keeps
    // prev.
    // this_eff < prev_less * factor + sync, in exact arithmetic.
    const int prev_side = detail::compare_product(prev_less, detail::affine_bias_factor(pct), this_eff);
    return prev_side > 0 || (in.sync && prev_side == 0)
               ? AffineDecision{in.waking, AffineReason::load_waking}
               : AffineDecision{in.prev, AffineReason::load_prev};
  }
};

static_assert(AffinePolicy<WakeAffine, detail::TopologyArchetype>);

// The wakee_load an embedder passes when its load(c) counts runnable tasks
// only, one nice-0 task being 1024: 0 for a rule that takes the wakee off
// prev's load (WakeAffine: a sleeper is not in it), the weight 1024 for one
// that reads wakee_load as the wakee's weight (WakeAffine2008).
template <class Affine>
inline constexpr std::uint64_t runnable_only_wakee_load =
    requires { requires Affine::wakee_load_is_weight; } ? 1024 : 0;

// Pull every wakee to the waking CPU: sync wake-ups of 2.6.23-2.6.26, which
// stacked pgbench's backends on the client's CPU (Smith 2008).
namespace affine {
struct Always {
  template <Topology T, MachineState M>
  constexpr AffineDecision decide(const AffineInput<T, M>& in) const noexcept {
    return {in.waking, AffineReason::forced_waking};
  }
};
}  // namespace affine
static_assert(AffinePolicy<affine::Always, detail::TopologyArchetype>);

// How a 2008 kernel treated the sync hint (Smith 2008, pgbench on 2.6.25 and
// 2.6.26). Each is a SyncAffineVariant for WakeAffine2008.
namespace sync_affine {
// 2.6.25 to 2.6.26-rc: a sync wake-up between two tasks whose overlaps are
// both short pulls, whatever the loads. pgbench's client and backends all
// qualify, so the backends stacked on the client's CPU ("over-enthusiastic
// affinity", Mike Galbraith).
struct Unchecked2008 {
  static constexpr bool honour_sync = true;
  static constexpr bool pull_needs_balance = false;
};
// 2.6.26 (Mike Galbraith's fix, May 2008): the overlap pull also needs the
// balance test, so a waking CPU already heavier than prev stops pulling.
struct Balanced2008 {
  static constexpr bool honour_sync = true;
  static constexpr bool pull_needs_balance = true;
};
// The SYNC_WAKEUPS feature bit cleared (Greg Smith's sched_features 863):
// the hint is ignored, the load test alone decides.
struct Ignored2008 {
  static constexpr bool honour_sync = false;
  static constexpr bool pull_needs_balance = true;
};
}  // namespace sync_affine
static_assert(SyncAffineVariant<sync_affine::Unchecked2008>);
static_assert(SyncAffineVariant<sync_affine::Balanced2008>);
static_assert(SyncAffineVariant<sync_affine::Ignored2008>);

// A 2008 kernel's wake_affine() (2.6.25-2.6.26). With this = the waking
// CPU's load, less the waker's on a sync wake-up (clamped at 0), and
// prev = prev's load:
//   balanced = 100 * (this + wakee) <= (100 + (pct - 100) / 2) * prev
//   1. sync, both overlaps below migration_cost (and, per the variant,
//      balanced): pull (reason sync_overlap);
//   2. this <= prev and this + prev <= the waking CPU's load per running
//      task (1024 when it runs nothing), or balanced: pull (load_waking);
//   3. else prev (load_prev).
// pct is imbalance_pct, 125 by default as in the 2008 MC and CPU domains
// (110 between SMT siblings). There is no idle test: that came with
// select_idle_sibling and wake_affine_idle, years later. The kernel read decayed cpu_load[] values
// (target_load of the waking CPU, source_load of prev); this rule reads the
// machine state's load(c) for both. Pair it with OverlapTracker in the
// WakePlacer traits (traits::Linux2008), which fills the overlaps.
template <SyncAffineVariant Variant>  // default in fwd.hpp: sync_affine::Balanced2008
struct WakeAffine2008 {
  using variant = Variant;
  static constexpr bool reads_overlap = true;
  // The 2008 kernel added the wakee's weight to the waking CPU's load and
  // took nothing off prev's (its cpu_load[] left sleepers out): wakee_load
  // is that weight, never 0 for a runnable-only load(c) as WakeAffine's is.
  static constexpr bool wakee_load_is_weight = true;
  std::uint32_t imbalance_pct = tunables::imbalance_pct_2008;     // 125: the 2008 MC/CPU domains'
  std::uint32_t smt_imbalance_pct = tunables::smt_imbalance_pct;  // 110: the SMT domain's
  // default 500us; kernel: sysctl_sched_migration_cost
  SaturatingNanoseconds migration_cost = tunables::migration_cost;

  // Precondition: waking != prev, both valid.
  // Complexity: O(1) machine-state reads. Thread-safety: const.
  template <Topology T, MachineState M>
  constexpr AffineDecision decide(const AffineInput<T, M>& in) const {
    using detail::max_affine_load;
    const auto& m = in.machine;
    const bool sync = Variant::honour_sync && in.sync;
    const std::uint64_t task = std::min(in.wakee_load, max_affine_load);
    const std::uint64_t raw_this = std::min<std::uint64_t>(m.load(in.waking), max_affine_load);
    std::uint64_t this_load = raw_this;
    if (sync) {
      const std::uint64_t current = std::min(in.waker_load, max_affine_load);
      this_load = this_load > current ? this_load - current : 0;
    }
    const std::uint64_t prev_load = std::min<std::uint64_t>(m.load(in.prev), max_affine_load);
    const bool siblings = in.topology.core_of(in.waking) == in.topology.core_of(in.prev);
    const std::uint32_t pct = siblings ? smt_imbalance_pct : imbalance_pct;
    const bool balanced =
        detail::compare_product(prev_load, detail::affine_bias_factor(pct), 100 * (this_load + task)) >= 0;
    if (sync && (balanced || !Variant::pull_needs_balance) && in.waker_overlap < migration_cost &&
        in.wakee_overlap < migration_cost)
      return {in.waking, AffineReason::sync_overlap};
    // The kernel's cpu_avg_load_per_task: one nice-0 task's weight when the
    // CPU runs nothing.
    const std::uint32_t running = m.nr_running(in.waking);
    const std::uint64_t per_task = running == 0 ? 1024 : raw_this / running;
    if ((this_load <= prev_load && this_load + prev_load <= per_task) || balanced)
      return {in.waking, AffineReason::load_waking};
    return {in.prev, AffineReason::load_prev};
  }
};
static_assert(AffinePolicy<WakeAffine2008<sync_affine::Unchecked2008>, detail::TopologyArchetype>);
static_assert(AffinePolicy<WakeAffine2008<sync_affine::Balanced2008>, detail::TopologyArchetype>);
static_assert(AffinePolicy<WakeAffine2008<sync_affine::Ignored2008>, detail::TopologyArchetype>);

// v3.12's wake_affine() (2013; the rule of v2.6.36 to v3.15, wake_wide()
// added in v3.12 is the placer's wide step). No idle test: that came with
// wake_affine_idle() in v4.15. With this = the waking CPU's load, less the
// waker's weight on a sync wake-up (it may go below 0: the kernel's s64),
// prev = prev's load, w = the wakee's weight, P(c) = c's cpu_power:
//   balanced = this <= 0, or 100 * P(prev) * (this + w) <= (100 + (pct - 100) / 2) * P(waking) * prev
//   pull when balanced, or when this <= prev and this + prev <= the waking
//   CPU's load per running task (0 when it runs nothing);
//   else prev. A sync wake-up changes `this` only (its "sync && balanced"
//   shortcut pulls where `balanced` alone would).
// pct is the affine domain's imbalance_pct: 110 between SMT siblings, 125
// above (v3.12's SD_MC_INIT, SD_CPU_INIT, NUMA levels). cpu_power is
// 1024, or smt_gain 1178 shared by the CPUs of a core with siblings
// (default_scale_smt_power(): 589 each of two), so the powers cancel
// between cores of one size. The kernel read cpu_load[wake_idx = 0], the
// runnable load (sleepers out): wakee_load is the wakee's weight, as for
// WakeAffine2008. Loads clamp at 2^48 as in WakeAffine; the comparison is
// exact.
struct WakeAffine2013 {
  static constexpr bool wakee_load_is_weight = true;
  std::uint32_t imbalance_pct = tunables::imbalance_pct_2008;     // 125: v3.12's MC, CPU and NUMA domains'
  std::uint32_t smt_imbalance_pct = tunables::smt_imbalance_pct;  // 110: the SMT domain's

  // Returns: c's cpu_power in v3.12 (no RT pressure, no frequency scaling).
  template <Topology T>
  static constexpr std::uint32_t power(const T& t, CpuId c) noexcept(noexcept(t.core_size(c))) {
    const auto n = static_cast<std::uint32_t>(t.core_size(c));
    return n > 1 ? 1178 / n : 1024;
  }

  // Precondition: waking != prev, both valid.
  // Complexity: O(1) machine-state reads. Thread-safety: const.
  template <Topology T, MachineState M>
  constexpr AffineDecision decide(const AffineInput<T, M>& in) const {
    using detail::max_affine_load;
    const auto& m = in.machine;
    const std::uint64_t weight = std::min(in.wakee_load, max_affine_load);
    const std::uint64_t raw_this = std::min<std::uint64_t>(m.load(in.waking), max_affine_load);
    const std::uint64_t prev_load = std::min<std::uint64_t>(m.load(in.prev), max_affine_load);
    // Invariant: |this_load| <= 2^48, so every sum below fits 64 bits.
    std::int64_t this_load = static_cast<std::int64_t>(raw_this);
    if (in.sync) this_load -= static_cast<std::int64_t>(std::min(in.waker_load, max_affine_load));
    bool balanced = this_load <= 0;
    if (!balanced) {
      const auto& t = in.topology;
      const std::uint32_t pct = t.core_of(in.waking) == t.core_of(in.prev) ? smt_imbalance_pct : imbalance_pct;
      // 100 * P(prev) * (this + w) <= bias * P(waking) * prev, exact.
      const std::uint64_t this_side = static_cast<std::uint64_t>(this_load) + weight;  // <= 2^49
      balanced = detail::compare_products(100u * std::uint64_t{power(t, in.prev)}, this_side,
                                          std::uint64_t{detail::affine_bias_factor(pct)} * power(t, in.waking),
                                          prev_load) <= 0;
    }
    if (balanced) return {in.waking, AffineReason::load_waking};
    // The kernel's cpu_avg_load_per_task(): 0 when the CPU runs nothing.
    const std::uint32_t running = m.nr_running(in.waking);
    const std::uint64_t per_task = running == 0 ? 0 : raw_this / running;
    const auto this_u = static_cast<std::uint64_t>(this_load);  // > 0 here
    if (this_u <= prev_load && this_u + prev_load <= per_task) return {in.waking, AffineReason::load_waking};
    return {in.prev, AffineReason::load_prev};
  }
};
static_assert(AffinePolicy<WakeAffine2013, detail::TopologyArchetype>);

// Never pull: the wakee goes back where it ran.
namespace affine {
struct Never {
  template <Topology T, MachineState M>
  constexpr AffineDecision decide(const AffineInput<T, M>& in) const noexcept {
    return {in.prev, AffineReason::forced_prev};
  }
};
}  // namespace affine
static_assert(AffinePolicy<affine::Never, detail::TopologyArchetype>);

// Wide rules for the baselines: never wide (every wake-up considers the
// pull) and always wide (none does).
namespace wide {
struct Never {
  static constexpr bool wide(std::uint32_t, std::uint32_t, std::uint32_t) noexcept { return false; }
};
struct Always {
  static constexpr bool wide(std::uint32_t, std::uint32_t, std::uint32_t) noexcept { return true; }
};
}  // namespace wide
static_assert(WideRule<wide::Never>);
static_assert(WideRule<wide::Always>);

}  // namespace taskplace
