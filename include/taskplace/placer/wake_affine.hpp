// taskplace/placer/wake_affine.hpp: the affine step of a wake-up: pull the
// wakee to the waking CPU, or leave it near its previous CPU?
//
// Kernel analogue: wake_affine() with WA_IDLE (wake_affine_idle) then
// WA_WEIGHT with WA_BIAS (wake_affine_weight), as in v4.15 to today; plus
// the baselines the seeds compare against: pull always (2.6.23-2.6.26 sync
// wake-ups) and never pull.
//
//   AffineDecision d = WakeAffine::decide(AffineInput{topo, machine, allowed, waking, prev});
//   // d.target is waking or prev, d.reason says which rule decided.
#pragma once

#include <algorithm>
#include <cstdint>

#include "taskplace/concepts.hpp"
#include "taskplace/detail/math.hpp"
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
  forced_waking,       // AffineAlways
  forced_prev,         // AffineNever
  current_cpu,         // a hand-off (Wakeup::current_cpu): the waking CPU, no decision
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
  std::uint64_t wakee_load = 1024;  // kernel task_h_load(p); 1024 = one nice-0 task
  std::uint64_t waker_load = 1024;  // kernel task_h_load(current), used with sync
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

// Pull every wakee to the waking CPU: sync wake-ups of 2.6.23-2.6.26, which
// stacked pgbench's backends on the client's CPU (seed 001).
struct AffineAlways {
  template <Topology T, MachineState M>
  constexpr AffineDecision decide(const AffineInput<T, M>& in) const noexcept {
    return {in.waking, AffineReason::forced_waking};
  }
};

// Never pull: the wakee goes back where it ran.
struct AffineNever {
  template <Topology T, MachineState M>
  constexpr AffineDecision decide(const AffineInput<T, M>& in) const noexcept {
    return {in.prev, AffineReason::forced_prev};
  }
};

// Wide rules for the baselines: never wide (every wake-up considers the
// pull) and always wide (none does).
struct NeverWide {
  static constexpr bool wide(std::uint32_t, std::uint32_t, std::uint32_t) noexcept { return false; }
};
struct AlwaysWide {
  static constexpr bool wide(std::uint32_t, std::uint32_t, std::uint32_t) noexcept { return true; }
};
static_assert(WideRule<NeverWide>);
static_assert(WideRule<AlwaysWide>);

}  // namespace taskplace
