// taskplace/testing/machine.hpp: a scripted MachineState for tests, and the
// placement checks of the conformance kit.
//
// ScriptedMachine answers is_idle / nr_running / load (and, when enabled,
// llc_utilization_pct, has_idle_core and reservation) from values the test
// sets, so a decision table can put the machine in any state it likes.
// check_placement returns the rules of the wake-up decision (docs/
// placement.md) that a Placement breaks for that state. Kernel analogue:
// none; it plays the role of the runqueues select_task_rq_fair() reads.
//
//   taskplace::testing::ScriptedMachine<> m{12};
//   m.busy(3, 2, 2048);   // CPU 3 runs 2 tasks, load 2048
#pragma once

#include "taskplace/detail/config.hpp"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <string>
#include <type_traits>
#include <vector>

#include "taskplace/concepts.hpp"
#include "taskplace/detail/assert.hpp"
#include "taskplace/placer/select_idle_sibling.hpp"
#include "taskplace/placer/wake_affine.hpp"
#include "taskplace/testing/violation.hpp"
#include "taskplace/types.hpp"

namespace taskplace::testing {

// One CPU as the test scripts it. Invariant: none between the fields; a test
// may script an "idle" CPU with load (the decaying load of sleepers).
struct ScriptedCpu {
  bool idle = true;
  std::uint32_t nr_running = 0;
  std::uint64_t load = 0;
  std::uint32_t llc_util_pct = 0;  // read only when the machine has O1
  bool idle_core_hint = false;     // read only when the machine has O2
};

// A MachineState whose answers the test sets. `Util` and `Hint` switch the
// optional members O1 (llc_utilization_pct) and O2 (has_idle_core) on;
// `ReservationCpuState`, when not void, adds O3 (reservation(c)).
// Every CPU starts idle, empty, load 0, utilisation 0.
// Thread-safety: none; one test thread.
template <bool Util = false, bool Hint = false, class ReservationCpuState = void>
class ScriptedMachine {
  using rstate = std::conditional_t<std::is_void_v<ReservationCpuState>, char, ReservationCpuState>;

 public:
  // Throws: std::invalid_argument for zero CPUs.
  explicit ScriptedMachine(std::uint32_t cpus) : cpus_(cpus), res_(cpus) {
    if (cpus == 0) throw std::invalid_argument("ScriptedMachine: needs at least one CPU");
  }

  std::uint32_t cpu_count() const noexcept { return static_cast<std::uint32_t>(cpus_.size()); }

  // R1-R3. Precondition (checked): c < cpu_count().
  bool is_idle(CpuId c) const { return at(c).idle; }
  std::uint32_t nr_running(CpuId c) const { return at(c).nr_running; }
  std::uint64_t load(CpuId c) const { return at(c).load; }
  // O1, O2, O3, present only when enabled.
  std::uint32_t llc_utilization_pct(CpuId c) const requires Util { return at(c).llc_util_pct; }
  bool has_idle_core(CpuId c) const requires Hint { return at(c).idle_core_hint; }
  // O4: the search found no idle core where the hint said one was: clears
  // c's hint (one hint per CPU here; the search passes the target) and
  // counts the call.
  void clear_idle_core(CpuId c) const requires Hint {
    TASKPLACE_EXPECTS(c < cpus_.size(), "cpu must be < cpu_count()");
    cpus_[c].idle_core_hint = false;
    ++idle_core_clears_;
  }
  // How many times the search cleared a hint (O4).
  std::uint32_t idle_core_clears() const noexcept { return idle_core_clears_; }
  const rstate& reservation(CpuId c) const requires(!std::is_void_v<ReservationCpuState>) {
    TASKPLACE_EXPECTS(c < res_.size(), "cpu must be < cpu_count()");
    return res_[c];
  }
  // The per-CPU reservation state, writable (for WakePlacer::task_sleeps).
  rstate& reservation_state(CpuId c) requires(!std::is_void_v<ReservationCpuState>) {
    TASKPLACE_EXPECTS(c < res_.size(), "cpu must be < cpu_count()");
    return res_[c];
  }

  // Scripting. Each returns *this so rows read as one line.
  ScriptedMachine& idle(CpuId c) {
    auto& x = at(c);
    x.idle = true;
    x.nr_running = 0;
    x.load = 0;
    return *this;
  }
  ScriptedMachine& busy(CpuId c, std::uint32_t nr = 1, std::uint64_t load = 1024) {
    auto& x = at(c);
    x.idle = false;
    x.nr_running = nr;
    x.load = load;
    return *this;
  }
  ScriptedMachine& set_load(CpuId c, std::uint64_t load) {
    at(c).load = load;
    return *this;
  }
  ScriptedMachine& all_busy(std::uint32_t nr = 1, std::uint64_t load = 1024) {
    for (CpuId c = 0; c < cpu_count(); ++c) busy(c, nr, load);
    return *this;
  }
  ScriptedMachine& all_idle() {
    for (CpuId c = 0; c < cpu_count(); ++c) idle(c);
    return *this;
  }
  // Sets the utilisation every CPU reports (its LLC's, as the kernel shares
  // one value per LLC).
  ScriptedMachine& utilization(std::uint32_t pct) {
    for (auto& x : cpus_) x.llc_util_pct = pct;
    return *this;
  }
  ScriptedMachine& idle_core_hint(bool h) {
    for (auto& x : cpus_) x.idle_core_hint = h;
    return *this;
  }
  ScriptedCpu& cpu(CpuId c) { return at(c); }

 private:
  ScriptedCpu& at(CpuId c) {
    TASKPLACE_EXPECTS(c < cpus_.size(), "cpu must be < cpu_count()");
    return cpus_[c];
  }
  const ScriptedCpu& at(CpuId c) const {
    TASKPLACE_EXPECTS(c < cpus_.size(), "cpu must be < cpu_count()");
    return cpus_[c];
  }
  // mutable: the idle-core hint is shared state the search clears (O4).
  mutable std::vector<ScriptedCpu> cpus_;
  mutable std::uint32_t idle_core_clears_ = 0;
  std::vector<rstate> res_;
};

static_assert(MachineState<ScriptedMachine<>>);
static_assert(!HasLlcUtilization<ScriptedMachine<>> && !HasIdleCoreHint<ScriptedMachine<>>);
static_assert(HasLlcUtilization<ScriptedMachine<true>> && HasIdleCoreHint<ScriptedMachine<false, true>>);
static_assert(HasIdleCoreClear<ScriptedMachine<false, true>> && !HasIdleCoreClear<ScriptedMachine<true>>);
static_assert(!HasReservationState<ScriptedMachine<>>);
static_assert(HasReservationState<ScriptedMachine<false, false, int>>);

// An affinity mask over dense CPU ids, for tests. Empty vector: nothing
// allowed. CpuFilter.
struct CpuMask {
  std::vector<bool> bits;
  static CpuMask all(std::uint32_t n) { return CpuMask{std::vector<bool>(n, true)}; }
  static CpuMask none(std::uint32_t n) { return CpuMask{std::vector<bool>(n, false)}; }
  static CpuMask only(std::uint32_t n, std::initializer_list<CpuId> cpus) {
    CpuMask m = none(n);
    for (CpuId c : cpus) m.bits.at(c) = true;
    return m;
  }
  bool operator()(CpuId c) const noexcept { return c < bits.size() && bits[c]; }
};
static_assert(CpuFilter<CpuMask>);

// What check_placement needs to know about the wake-up besides the result.
struct PlacementQuery {
  CpuId waking_cpu;
  CpuId prev_cpu;            // as given to place(): may be invalid
  bool search_enabled = true;
  bool sync = false;
  bool current_cpu = false;  // Wakeup::current_cpu (a hand-off)
};

// Returns: every rule of the decision (docs/placement.md) that `p` breaks
//   for this machine state, affinity and query; empty when it conforms.
//   `reserved(c)` says whether c is reserved against the wakee (a
//   CacheHotReservation); `owner_only` whether such reservations guard the
//   fast paths too. Rules:
//   P1 p.cpu and p.target are valid CPU ids.
//   P2 p.cpu is allowed, or nothing is allowed and the reason is
//      affinity_empty.
//   P3 the affine reason matches the machine: idle_prev means waking and
//      prev idle and cache-shared, idle_waking waking idle and prev busy,
//      prev_idle prev idle, sync a sync wake-up of a CPU running one task,
//      same_cpu waking == prev, waking_not_allowed the waking CPU not
//      allowed, wide the wide verdict, current_cpu a hand-off onto the
//      allowed waking CPU, sync_overlap a sync wake-up pulled to the
//      waking CPU (WakeAffine2008), wake_on_current the allowed waking CPU
//      running one task or none (WakeOnCurrent), cost_gate the allowed
//      waking CPU (CostGate); the target is waking or prev.
//   P4 the wake reason matches the machine: idle_* and hot_fallback land on
//      an idle CPU of the target's LLC (idle_target: the target itself;
//      idle_prev: prev; idle_core: a whole idle core; idle_smt_sibling: a
//      sibling of prev); target_busy and
//      no_search return the target; current_cpu, a hand-off, and
//      wake_on_current, waker_blocks and short_work the waking CPU;
//      busy_short and costly_idle the waking CPU in place of the search's
//      CPU (CostGate's tests after the search).
//   P5 an idle target is never passed over: with the search on (and no
//      hand-off, WakeOnCurrent pair or CostGate keep), an idle,
//      allowed target not reserved against the wakee (under owner-only
//      reservations) gives idle_target.
//   P6 target_busy means no allowed idle CPU was left in the target's LLC
//      when the scan covered it all (`full_scan`), except reserved ones.
//   P7 a hand-off (q.current_cpu) lands on the waking CPU when that is
//      allowed, with reasons current_cpu, and only a hand-off does.
// Complexity: O(cpu_count). Thread-safety: reads only.
namespace detail_machine {
template <Topology T>
bool share_core(const T& t, CpuId a, CpuId b) {
  for (auto s : t.core_cpus(b))
    if (static_cast<CpuId>(s) == a) return true;
  return false;
}
}  // namespace detail_machine

template <Topology T, MachineState M, CpuFilter F, class Placement>
std::vector<Violation> check_placement(const T& t, const M& m, const F& allowed,
                                       const PlacementQuery& q, const Placement& p,
                                       const std::function<bool(CpuId)>& reserved = {},
                                       bool owner_only = false, bool full_scan = false) {
  std::vector<Violation> out;
  auto bad = [&](const char* rule, std::string detail) {
    out.push_back(Violation{p.cpu, rule, std::move(detail)});
  };
  const auto n = static_cast<CpuId>(t.cpu_count());
  const auto is_reserved = [&](CpuId c) { return reserved ? reserved(c) : false; };
  if (p.cpu >= n || p.target >= n) {
    bad("P1", "cpu " + std::to_string(p.cpu) + ", target " + std::to_string(p.target) +
                  " of " + std::to_string(n));
    return out;
  }
  const CpuId waking = q.waking_cpu < n ? q.waking_cpu : 0;
  const CpuId prev = q.prev_cpu < n ? q.prev_cpu : waking;
  bool any_allowed = false;
  for (CpuId c = 0; c < n; ++c) any_allowed = any_allowed || allowed(c);
  if (!allowed(p.cpu) && !(p.reason == WakeReason::affinity_empty && !any_allowed))
    bad("P2", std::string("cpu not allowed, reason ") + to_string(p.reason));
  if (p.reason == WakeReason::affinity_empty && any_allowed)
    bad("P2", "affinity_empty although some CPU is allowed");

  const bool share = t.llc_of(waking) == t.llc_of(prev);
  bool affine_ok = p.target == waking || p.target == prev;
  switch (p.affine) {
    case AffineReason::wide: affine_ok = affine_ok && p.wide && p.target == prev; break;
    case AffineReason::waking_not_allowed: affine_ok = affine_ok && !allowed(waking) && p.target == prev; break;
    case AffineReason::same_cpu: affine_ok = affine_ok && waking == prev; break;
    case AffineReason::idle_prev:
      affine_ok = affine_ok && m.is_idle(waking) && m.is_idle(prev) && share && p.target == prev;
      break;
    case AffineReason::idle_waking:
      affine_ok = affine_ok && m.is_idle(waking) && !m.is_idle(prev) && share && p.target == waking;
      break;
    case AffineReason::sync:
      affine_ok = affine_ok && q.sync && m.nr_running(waking) == 1 && p.target == waking;
      break;
    case AffineReason::prev_idle: affine_ok = affine_ok && m.is_idle(prev) && p.target == prev; break;
    case AffineReason::load_waking:
    case AffineReason::forced_waking: affine_ok = affine_ok && p.target == waking; break;
    case AffineReason::load_prev:
    case AffineReason::forced_prev: affine_ok = affine_ok && p.target == prev; break;
    case AffineReason::current_cpu:
      affine_ok = affine_ok && q.current_cpu && allowed(waking) && p.target == waking;
      break;
    case AffineReason::sync_overlap: affine_ok = affine_ok && q.sync && p.target == waking; break;
    case AffineReason::wake_on_current:
      affine_ok = affine_ok && allowed(waking) && m.nr_running(waking) <= 1 && p.target == waking;
      break;
    case AffineReason::cost_gate: affine_ok = affine_ok && allowed(waking) && p.target == waking; break;
  }
  if (p.affine != AffineReason::wide && p.wide) affine_ok = false;
  if (!affine_ok)
    bad("P3", std::string("affine reason ") + to_string(p.affine) + " with target " +
                  std::to_string(p.target) + ", waking " + std::to_string(waking) + ", prev " +
                  std::to_string(prev));

  const bool same_llc = t.llc_of(p.cpu) == t.llc_of(p.target);
  bool reason_ok = true;
  switch (p.reason) {
    case WakeReason::idle_target: reason_ok = p.cpu == p.target && m.is_idle(p.cpu); break;
    case WakeReason::idle_prev: reason_ok = p.cpu == prev && m.is_idle(p.cpu) && same_llc; break;
    case WakeReason::idle_smt_sibling: {
      reason_ok = m.is_idle(p.cpu) && same_llc && p.cpu != prev && detail_machine::share_core(t, p.cpu, prev);
      break;
    }
    case WakeReason::idle_recent:
    case WakeReason::idle_scan:
    case WakeReason::hot_fallback: reason_ok = m.is_idle(p.cpu) && same_llc; break;
    case WakeReason::idle_core: {
      reason_ok = same_llc;
      for (auto s : t.core_cpus(p.cpu)) reason_ok = reason_ok && m.is_idle(static_cast<CpuId>(s));
      break;
    }
    case WakeReason::target_busy:
    case WakeReason::no_search: reason_ok = p.cpu == p.target; break;
    case WakeReason::affinity_fallback: reason_ok = allowed(p.cpu); break;
    case WakeReason::affinity_empty: reason_ok = p.cpu == p.target; break;
    case WakeReason::current_cpu: reason_ok = q.current_cpu && p.cpu == waking && p.target == waking; break;
    case WakeReason::wake_on_current:
      reason_ok = p.affine == AffineReason::wake_on_current && p.cpu == waking && p.target == waking;
      break;
    case WakeReason::waker_blocks:
    case WakeReason::short_work:
      reason_ok = p.affine == AffineReason::cost_gate && p.cpu == waking && p.target == waking;
      break;
    case WakeReason::busy_short:
    case WakeReason::costly_idle: reason_ok = p.cpu == waking && p.affine != AffineReason::cost_gate; break;
  }
  if (p.reason == WakeReason::no_search && q.search_enabled) reason_ok = false;
  if (!reason_ok)
    bad("P4", std::string("wake reason ") + to_string(p.reason) + " on cpu " +
                  std::to_string(p.cpu) + " (target " + std::to_string(p.target) + ")");

  const bool target_free = m.is_idle(p.target) && allowed(p.target) &&
                           !(owner_only && is_reserved(p.target));
  const bool handed_off = p.reason == WakeReason::current_cpu;
  const bool kept_pair = p.reason == WakeReason::wake_on_current || p.reason == WakeReason::waker_blocks ||
                         p.reason == WakeReason::short_work || p.reason == WakeReason::costly_idle;
  if (q.search_enabled && target_free && p.reason != WakeReason::idle_target && !handed_off && !kept_pair)
    bad("P5", std::string("idle target ") + std::to_string(p.target) + " passed over: " +
                  to_string(p.reason));

  if (full_scan && p.reason == WakeReason::target_busy) {
    for (auto s : t.llc_cpus(p.target)) {
      const auto c = static_cast<CpuId>(s);
      if (m.is_idle(c) && allowed(c) && !is_reserved(c)) {
        bad("P6", "target_busy although cpu " + std::to_string(c) + " of the LLC is idle");
        break;
      }
    }
  }

  const bool must_hand_off = q.current_cpu && allowed(waking);
  if (must_hand_off != (handed_off && p.affine == AffineReason::current_cpu))
    bad("P7", std::string(must_hand_off ? "hand-off onto the waking CPU " : "no hand-off asked, yet ") +
                  "reasons " + to_string(p.affine) + "/" + to_string(p.reason) + " on cpu " +
                  std::to_string(p.cpu));
  return out;
}

}  // namespace taskplace::testing
