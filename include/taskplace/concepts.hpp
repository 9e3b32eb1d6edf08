// taskplace/concepts.hpp: every concept of the library, in one place.
//
// A concept names a role: the machine (Topology), time (Clock), and one per
// policy role, so that users can write their own model of any of them and
// have it checked at compile time. Requirements are numbered (R1, R2, ...)
// and invariants that a compiler cannot check (I1, I2, ...) are stated here
// and checked at run time by the conformance kit (taskplace/testing.hpp).
//
//   static_assert(taskplace::Topology<MyTopology>);
//   static_assert(taskplace::WideRule<MyRule>);
#pragma once

#include "taskplace/detail/config.hpp"

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <ranges>
#include <span>
#include <type_traits>

#include "taskplace/types.hpp"

namespace taskplace {

// ---------------------------------------------------------------------------
// CpuRange: what a topology hands out for "the CPUs of this core / LLC /
// node / level".
//   R1 a random-access, sized range (a span, an iota view);
//   R2 its elements convert to CpuId.
//   I1 elements are distinct, ascending, and each < cpu_count().
template <class R>
concept CpuRange = std::ranges::random_access_range<R> &&
                   std::ranges::sized_range<R> &&
                   std::convertible_to<std::ranges::range_value_t<R>, CpuId>;

// ---------------------------------------------------------------------------
// Topology: the machine as the heuristics see it. `c` is a dense CpuId in
// [0, cpu_count()); `i` is a level index in [0, level_count(c)). Passing ids
// outside those ranges is a precondition violation: shipped topologies check
// it in checked builds (detail/assert.hpp) and throw PreconditionError.
//
//   R1 t.cpu_count()      -> std::uint32_t   number of CPUs, >= 1
//   R2 t.core_of(c), t.llc_of(c), t.node_of(c)
//                         -> std::uint32_t   id of c's core / LLC / node
//   R3 t.core_size(c), t.llc_size(c), t.node_size(c)
//                         -> std::uint32_t   how many CPUs share it
//   R4 t.core_cpus(c), t.llc_cpus(c), t.node_cpus(c)
//                         -> CpuRange        those CPUs
//   R5 t.level_count(c)   -> std::uint32_t   balance levels of c, <= max_levels
//   R6 t.level_kind(c, i) -> LevelKind       what level i is
//   R7 t.level_cpus(c, i) -> CpuRange        the CPUs level i spans
//
// Invariants (checked by taskplace::testing::check_topology):
//   I1 c is in core_cpus(c), llc_cpus(c), node_cpus(c).
//   I2 size(core_cpus(c)) == core_size(c), and likewise for llc and node.
//   I3 SMT siblings share an LLC: core_cpus(c) is a subset of llc_cpus(c).
//   I4 Equal ids mean equal sets: llc_of(a) == llc_of(b) iff b is in
//      llc_cpus(a); hence equal llc_of implies equal llc_size. Likewise for
//      core and node.
//   I5 LLCs and nodes nest one way or the other: llc_cpus(c) is a subset of
//      node_cpus(c), or node_cpus(c) of llc_cpus(c) (Intel SNC: several
//      nodes inside one LLC).
//   I6 Levels grow strictly and nest: c is in level 0, level i is a strict
//      subset of level i+1, kinds never decrease.
//   I7 The last level spans every CPU when cpu_count() > 1; a single-CPU
//      topology has no levels.
//   I8 The level of kind smt, if any, equals core_cpus(c); the level of kind
//      llc, if any, equals llc_cpus(c); the level of kind cluster, if any,
//      holds core_cpus(c) and lies inside llc_cpus(c).
template <class T>
concept Topology = requires(const T& t, CpuId c, std::uint32_t i) {
  { t.cpu_count() } -> std::convertible_to<std::uint32_t>;   // R1
  { t.core_of(c) } -> std::convertible_to<std::uint32_t>;    // R2
  { t.llc_of(c) } -> std::convertible_to<std::uint32_t>;
  { t.node_of(c) } -> std::convertible_to<std::uint32_t>;
  { t.core_size(c) } -> std::convertible_to<std::uint32_t>;  // R3
  { t.llc_size(c) } -> std::convertible_to<std::uint32_t>;
  { t.node_size(c) } -> std::convertible_to<std::uint32_t>;
  { t.core_cpus(c) } -> CpuRange;                            // R4
  { t.llc_cpus(c) } -> CpuRange;
  { t.node_cpus(c) } -> CpuRange;
  { t.level_count(c) } -> std::convertible_to<std::uint32_t>;  // R5
  { t.level_kind(c, i) } -> std::same_as<LevelKind>;           // R6
  { t.level_cpus(c, i) } -> CpuRange;                          // R7
};

namespace detail {
// The least a Topology declares, declarations only: checks a policy's
// concept against "any topology" where the policy is defined
// (llc_factor.hpp) and in the static tests. Never called, never defined.
struct TopologyArchetype {
  std::uint32_t cpu_count() const;
  std::uint32_t core_of(CpuId) const;
  std::uint32_t llc_of(CpuId) const;
  std::uint32_t node_of(CpuId) const;
  std::uint32_t core_size(CpuId) const;
  std::uint32_t llc_size(CpuId) const;
  std::uint32_t node_size(CpuId) const;
  std::span<const CpuId> core_cpus(CpuId) const;
  std::span<const CpuId> llc_cpus(CpuId) const;
  std::span<const CpuId> node_cpus(CpuId) const;
  std::uint32_t level_count(CpuId) const;
  LevelKind level_kind(CpuId, std::uint32_t) const;
  std::span<const CpuId> level_cpus(CpuId, std::uint32_t) const;
};
}  // namespace detail
static_assert(Topology<detail::TopologyArchetype>);

// ---------------------------------------------------------------------------
// Clock: monotonic time in nanoseconds.
//   R1 c.now() -> Nanoseconds, callable on a const clock.
//   I1 Ideally never decreases. Every policy treats a decrease as no time
//      passing (detail::elapsed), so a clock that jumps back or wraps cannot
//      make a duration negative or huge.
template <class C>
concept Clock = requires(const C& c) {
  { c.now() } -> std::same_as<Nanoseconds>;
};

// ---------------------------------------------------------------------------
// Flip policies (taskplace/policy/flip_counter.hpp).
//
// FlipDecay: what the once-a-period decay does to the flip count.
//   R1 D::apply(std::uint32_t flips) -> std::uint32_t, noexcept, constexpr.
//   I1 apply(x) <= x (decay never increases flips).
template <class D>
concept FlipDecay = requires(std::uint32_t flips) {
  { D::apply(flips) } noexcept -> std::same_as<std::uint32_t>;
};

// StorageCell: one field of per-task state.
//   R1 load() const -> T; store(T); both noexcept.
template <class Cell, class T>
concept StorageCell = std::default_initializable<Cell> &&
                      requires(Cell& cell, const Cell& ccell, T v) {
  { ccell.load() } noexcept -> std::same_as<T>;
  { cell.store(v) } noexcept;
};

// FlipStorage: how per-task flip state is stored (plain fields, or relaxed
// atomics so that several threads may touch it without a data race).
//   R1 S::cell<T> is a StorageCell of T for T in {std::uint32_t, TaskKey,
//      std::int64_t}.
template <class S>
concept FlipStorage =
    StorageCell<typename S::template cell<std::uint32_t>, std::uint32_t> &&
    StorageCell<typename S::template cell<TaskKey>, TaskKey> &&
    StorageCell<typename S::template cell<std::int64_t>, std::int64_t>;

// FlipPolicy: the role FlipCounter plays in a wake decision.
//   R1 F::state, default-constructible: the waker's per-task state.
//   R2 f.record(state&, TaskKey wakee, Nanoseconds now): the waker woke wakee.
//   R3 f.flips(const state&) -> std::uint32_t: current flip count.
//   I1 flips never wrap (they saturate at UINT32_MAX).
template <class F>
concept FlipPolicy = requires { typename F::state; } && std::default_initializable<typename F::state> &&
    requires(const F& f, typename F::state& s, const typename F::state& cs,
             TaskKey wakee, Nanoseconds now) {
  { f.record(s, wakee, now) } -> std::same_as<void>;
  { f.flips(cs) } -> std::same_as<std::uint32_t>;
};

// ---------------------------------------------------------------------------
// Wide rules (taskplace/policy/wide_detector.hpp).
//   R1 R::wide(std::uint32_t waker_flips, std::uint32_t wakee_flips,
//              std::uint32_t factor) -> bool, noexcept, constexpr.
//   I1 Defined for every 32-bit input: no overflow, no division by zero.
template <class R>
concept WideRule = requires(std::uint32_t w, std::uint32_t e, std::uint32_t f) {
  { R::wide(w, e, f) } noexcept -> std::same_as<bool>;
};

// ---------------------------------------------------------------------------
// Factor policies (taskplace/policy/llc_factor.hpp): the flip threshold, a
// property of the waking CPU.
//   R1 F::factor(const T& topology, CpuId waking_cpu) -> std::uint32_t.
//   I1 factor >= 1.
template <class F, class T>
concept FactorPolicy = Topology<T> && requires(const T& t, CpuId c) {
  { F::factor(t, c) } -> std::convertible_to<std::uint32_t>;
};

// ---------------------------------------------------------------------------
// Newidle cost policies (taskplace/policy/newidle_cost_tracker.hpp).
//
// AvgIdleEstimator: folds one idle period into avg_idle.
//   R1 E::update(Nanoseconds avg_idle, Nanoseconds delta, Nanoseconds cap)
//      -> Nanoseconds, noexcept; `cap` is 2 * max_idle_balance_cost.
//   I1 0 <= result <= max(cap, avg_idle) for non-negative inputs.
template <class E>
concept AvgIdleEstimator = requires(Nanoseconds avg, Nanoseconds delta, Nanoseconds cap) {
  { E::update(avg, delta, cap) } noexcept -> std::same_as<Nanoseconds>;
};

// CostDecaySchedule: when a level's maximum cost decays.
//   R1 D::restart_on_new_max: bool constant. true: a new maximum restarts the
//      one-period wait (v5.16, cost_decay::IfNoNewMax2022); false: decay
//      every period regardless (v3.13, cost_decay::EverySecond2014).
template <class D>
concept CostDecaySchedule = requires {
  { D::restart_on_new_max } -> std::convertible_to<bool>;
};

// CostDecayRatio: the factor each decay multiplies by, num/den < 1.
//   R1 R::num, R::den: std::uint32_t constants, 0 < num < den.
template <class R>
concept CostDecayRatio = requires {
  { R::num } -> std::convertible_to<std::uint32_t>;
  { R::den } -> std::convertible_to<std::uint32_t>;
} && (R::num > 0) && (R::num < R::den);

// NewidleEntryGate: may a newly idle CPU balance at all?
//   R1 G::allow(Nanoseconds avg_idle, Nanoseconds first_level_cost,
//               Nanoseconds migration_cost) -> bool, noexcept.
template <class G>
concept NewidleEntryGate = requires(Nanoseconds a, Nanoseconds b, Nanoseconds m) {
  { G::allow(a, b, m) } noexcept -> std::same_as<bool>;
};

// NewidleLevelBudget: may it go on to the next level?
//   R1 B::allow(Nanoseconds avg_idle, Nanoseconds spent_so_far,
//               Nanoseconds level_cost, Nanoseconds migration_cost) -> bool,
//      noexcept.
template <class B>
concept NewidleLevelBudget = requires(Nanoseconds a, Nanoseconds s, Nanoseconds c, Nanoseconds m) {
  { B::allow(a, s, c, m) } noexcept -> std::same_as<bool>;
};

// ---------------------------------------------------------------------------
// Newidle attempt policies (taskplace/policy/newidle_success_rate.hpp): of
// the levels the cost budget allows, which does a balance try?
//   R1 typename A::state: per-CPU, default-constructible, copyable.
//   R2 a.make_state(std::uint32_t level_count, Nanoseconds now,
//      std::uint64_t seed) -> A::state.
//   R3 a.roll(state&, std::uint32_t level, Nanoseconds now) -> std::uint32_t:
//      0 skips the level; otherwise try it, and a success there weighs this
//      many calls.
//   R4 a.record(state&, std::uint32_t level, bool pulled, std::uint32_t
//      weight, Nanoseconds now): the outcome of a level roll() let through.
//   R5 default-constructible and copy-constructible (the balancer holds one).
//   I1 With a given seed, the answers are a function of the calls made.
//   I2 No level is shut off for good: a level is tried now and then, also
//      one that never finds work (so that it can be found to work again).
//   testing::check_attempt_policy checks I1 and I2.
template <class A>
concept NewidleAttemptPolicy =
    std::default_initializable<A> && std::copy_constructible<A> &&
    requires { typename A::state; } &&
    std::default_initializable<typename A::state> && std::copyable<typename A::state> &&
    requires(const A& a, typename A::state& s, std::uint32_t n, Nanoseconds now, std::uint64_t seed, bool pulled) {
      { a.make_state(n, now, seed) } -> std::same_as<typename A::state>;
      { a.roll(s, n, now) } -> std::same_as<std::uint32_t>;
      { a.record(s, n, pulled, n, now) } -> std::same_as<void>;
    };

// SuccessRateVariant: an era of the success-rate gate.
//   R1 V::rate_term: bool constant (v7.0: a slow window adds to the ratio).
//   R2 V::always_at_full: bool constant (v7.0: no dice at ratio 1024).
template <class V>
concept SuccessRateVariant = requires {
  { V::rate_term } -> std::convertible_to<bool>;
  { V::always_at_full } -> std::convertible_to<bool>;
};

// ---------------------------------------------------------------------------
// Cache-hot reservation variants (taskplace/policy/cache_hot_reservation.hpp).
//   R1 V::update_sleep_avg(Nanoseconds avg, Nanoseconds sample,
//                          Nanoseconds migration_cost) -> Nanoseconds.
//   R2 V::reserve_until(Nanoseconds hot_until, Nanoseconds now,
//                       Nanoseconds sleep_avg) -> Nanoseconds.
//   R3 V::fallback_to_hot_idle: bool constant (if every idle CPU is hot, take
//      the first hot idle one instead of stacking on a busy CPU).
//   R4 V::scan_share_den: std::uint32_t constant; the reservation-aware scan
//      may use 1/scan_share_den of the scan budget (1: all, 2: half).
//   I1 reserve_until(h, now, s) <= now + s when h <= now + s.
template <class V>
concept SleepReservationVariant = requires(Nanoseconds a, Nanoseconds b, Nanoseconds c) {
  { V::update_sleep_avg(a, b, c) } noexcept -> std::same_as<Nanoseconds>;
  { V::reserve_until(a, b, c) } noexcept -> std::same_as<Nanoseconds>;
  { V::fallback_to_hot_idle } -> std::convertible_to<bool>;
  { V::scan_share_den } -> std::convertible_to<std::uint32_t>;
};

// ---------------------------------------------------------------------------
// TaskHotRule: which moves the cache-hot test of a balance applies to.
//   R1 R::smt_exempt -> bool   true: a move between SMT siblings is never
//                              hot (they share every cache level)
template <class R>
concept TaskHotRule = requires {
  { R::smt_exempt } -> std::convertible_to<bool>;
};

// ---------------------------------------------------------------------------
// OverlapPolicy: measures how long a task runs on after it wakes another
// (kernel avg_overlap, 2008-2010). Models: OverlapTracker, NoOverlap.
//   R1 typename P::state, default-constructible (lives in the task)
//   R2 P::enabled -> bool: false for a policy that measures nothing
//   R3 P::on_wake_other(s, now), P::on_sleep(s, now): noexcept
//   R4 P::average(s) -> Nanoseconds; NoOverlap answers the largest duration
template <class P>
concept OverlapPolicy = requires { typename P::state; } && std::default_initializable<typename P::state> &&
    requires(typename P::state& s, const typename P::state& cs, Nanoseconds now) {
      { P::enabled } -> std::convertible_to<bool>;
      { P::on_wake_other(s, now) } noexcept;
      { P::on_sleep(s, now) } noexcept;
      { P::average(cs) } noexcept -> std::same_as<Nanoseconds>;
    };

// ---------------------------------------------------------------------------
// DurationPolicy: measures how long a task runs between two sleeps (se.dur_avg
// of the SIS_CURRENT series, 2023). Models: DurationTracker, NoDuration.
//   R1 typename P::state, default-constructible (lives in the task)
//   R2 P::enabled -> bool: false for a policy that measures nothing
//   R3 P::on_run(s, now), P::on_stop(s, now), P::on_sleep(s, now): noexcept
//   R4 P::average(s) -> Nanoseconds; 0 means nothing measured (never short)
template <class P>
concept DurationPolicy = requires { typename P::state; } && std::default_initializable<typename P::state> &&
    requires(typename P::state& s, const typename P::state& cs, Nanoseconds now) {
      { P::enabled } -> std::convertible_to<bool>;
      { P::on_run(s, now) } noexcept;
      { P::on_stop(s, now) } noexcept;
      { P::on_sleep(s, now) } noexcept;
      { P::average(cs) } noexcept -> std::same_as<Nanoseconds>;
    };

// ---------------------------------------------------------------------------
// ShortTaskVariant: when WakeOnCurrent counts a task's average run as short
// (placer/wake_on_current.hpp). Models: sis_current::Granularity2023,
// sis_current::MigrationCost2023.
//   R1 V::is_short(Nanoseconds dur, std::size_t cpus) -> bool, noexcept,
//      constexpr, defined for every duration (0 and the largest included)
template <class V>
concept ShortTaskVariant = requires(Nanoseconds d, std::size_t cpus) {
  { V::is_short(d, cpus) } noexcept -> std::same_as<bool>;
};

// ---------------------------------------------------------------------------
// SyncAffineVariant: how a 2008 kernel's wake_affine() treated the sync hint
// (WakeAffine2008). Models: sync_affine::Unchecked2008, Balanced2008,
// Ignored2008.
//   R1 V::honour_sync -> bool: false ignores the hint (SYNC_WAKEUPS off)
//   R2 V::pull_needs_balance -> bool: the overlap pull also needs the
//      balance test to pass (Mike Galbraith's fix, 2.6.26)
template <class V>
concept SyncAffineVariant = requires {
  { V::honour_sync } -> std::convertible_to<bool>;
  { V::pull_needs_balance } -> std::convertible_to<bool>;
};

// ---------------------------------------------------------------------------
// MachineState: what the composed WakePlacer needs to know about the machine
// right now. The embedder implements it over its own per-worker data; every
// member takes a dense CpuId and must be cheap (it is read on every wake-up).
//   R1 m.is_idle(c)    -> bool           nothing runs or is queued on c
//                                        (kernel available_idle_cpu)
//   R2 m.nr_running(c) -> std::uint32_t  tasks running or queued on c
//   R3 m.load(c)       -> std::uint64_t  c's load, any unit as long as the
//                                        wakee_load / waker_load given to the
//                                        placer use the same one
// Optional members, each with a documented fallback when absent:
//   O1 m.llc_utilization_pct(c) -> std::uint32_t in [0, 100]: utilisation of
//      c's LLC, sets the idle-scan budget (kernel SIS_UTIL). Absent: the
//      whole LLC is scanned.
//   O2 m.has_idle_core(c) -> bool: a hint that c's LLC has a fully idle core
//      (kernel sd_llc_shared->has_idle_cores). Absent: the idle-core search
//      runs within the scan budget only.
//   O3 m.reservation(c) -> the reservation policy's cpu_state (by value or
//      const reference). Required when a CacheHotReservation is configured.
//   O4 m.clear_idle_core(c), on a const machine (the hint is shared state,
//      say a relaxed atomic): c's LLC has no fully idle core after all; the
//      search calls it when the hint sent it after an idle core and it
//      found none (kernel set_idle_cores(target, false)). Absent: the hint
//      stays as the machine set it.
// Invariant: answers may be stale (other workers change them concurrently);
// the placer never relies on two reads agreeing.
template <class M>
concept MachineState = requires(const M& m, CpuId c) {
  { m.is_idle(c) } -> std::convertible_to<bool>;
  { m.nr_running(c) } -> std::convertible_to<std::uint32_t>;
  { m.load(c) } -> std::convertible_to<std::uint64_t>;
};

// One concept per optional member, each on its own, so that a requirement
// on one member (or on MachineState's) composes with the others.
// O1: the LLC's utilisation, a percentage.
template <class M>
concept HasLlcUtilization = requires(const M& m, CpuId c) {
  { m.llc_utilization_pct(c) } -> std::convertible_to<std::uint32_t>;
};

// O2: the idle-core hint.
template <class M>
concept HasIdleCoreHint = requires(const M& m, CpuId c) {
  { m.has_idle_core(c) } -> std::convertible_to<bool>;
};

// O4: clearing the idle-core hint.
template <class M>
concept HasIdleCoreClear = requires(const M& m, CpuId c) { m.clear_idle_core(c); };

// O3: the reservation's per-CPU state; with R a ReservationPolicy, as that
// policy's cpu_state (the placer passes it to R::reserved_against).
template <class M, class R = void>
concept HasReservationState = requires(const M& m, CpuId c) { m.reservation(c); } &&
    (std::is_void_v<R> || requires(const M& m, CpuId c) {
      { m.reservation(c) } -> std::convertible_to<const typename R::cpu_state&>;
    });

namespace detail {
// A machine state that declares an optional member under its name, whatever
// its signature: one that does not model the member's concept would be
// ignored, and WakePlacer refuses it instead.
template <class M>
concept DeclaresLlcUtilization = requires { &M::llc_utilization_pct; } ||
    requires(const M& m, CpuId c) { m.llc_utilization_pct(c); };
template <class M>
concept DeclaresIdleCoreHint = requires { &M::has_idle_core; } ||
    requires(const M& m, CpuId c) { m.has_idle_core(c); };
}  // namespace detail

// CpuFilter: which CPUs a task may run on (its affinity mask).
//   R1 f(c) -> bool, on a const filter.
template <class F>
concept CpuFilter = requires(const F& f, CpuId c) {
  { f(c) } -> std::convertible_to<bool>;
};

namespace detail {
// The least a MachineState and a CpuFilter declare, declarations only:
// WakePlacer checks its Affine and Search members against "any machine
// state", before it knows the embedder's. Never called, never defined.
struct MachineArchetype {
  bool is_idle(CpuId) const noexcept;
  std::uint32_t nr_running(CpuId) const noexcept;
  std::uint64_t load(CpuId) const noexcept;
};
struct CpuFilterArchetype {
  bool operator()(CpuId) const noexcept;
};
}  // namespace detail
static_assert(MachineState<detail::MachineArchetype>);
static_assert(CpuFilter<detail::CpuFilterArchetype>);

// ---------------------------------------------------------------------------
// The members of WakePlacer's traits that are steps of the decision
// (taskplace/wake_placer.hpp). Their inputs and results are defined with
// the steps: include taskplace/wake_placer.hpp (or the step's header) to
// check a model.
template <Topology T, MachineState M>
struct AffineInput;  // placer/wake_affine.hpp
struct AffineDecision;
template <Topology T, MachineState M, CpuFilter F, class Reservation>
struct SearchInput;  // placer/select_idle_sibling.hpp
struct SearchResult;
struct WakeOnCurrentInput;  // placer/wake_on_current.hpp

// AffinePolicy (Traits::Affine): the affine step, the waking CPU or prev?
// Models: WakeAffine, WakeAffine2008<V>, WakeAffine2013, affine::Always, affine::Never.
//   R1 default-constructible and copy-constructible (the placer holds one).
//   R2 a.decide(const AffineInput<T, M>&) -> AffineDecision, on a const
//      policy, for every MachineState M (checked with a machine state that
//      has R1-R3 only, as the placer's is not known until place()).
//   O1 A::reads_overlap: true when decide() reads the overlaps, which then
//      need an OverlapPolicy that measures (WakeAffine2008).
//   I1 the target is in.waking or in.prev.
template <class A, class T>
concept AffinePolicy = Topology<T> && std::default_initializable<A> && std::copy_constructible<A> &&
    requires(const A& a, const AffineInput<T, detail::MachineArchetype>& in) {
      { a.decide(in) } -> std::same_as<AffineDecision>;
    };

// SearchPolicy (Traits::Search): from the affine step's target, an idle CPU
// that shares its cache. Models: IdleSiblingSearch, sis_walk::IdleGroup2013,
// NoSearch.
//   R1 default-constructible and copy-constructible.
//   R2 S::enabled: a bool constant; false: no search, the target is the
//      answer (nothing else is required).
//   R3 when enabled: s.search(const SearchInput<T, M, F, R>&) ->
//      SearchResult, on a const policy, for every MachineState M and
//      CpuFilter F; R is the Reservation member (void for NoReservation).
//   O1 S::needs_waking_allowed: true when the search runs only where the
//      waking CPU is allowed (v3.12's, under an affine domain); otherwise
//      the placer keeps the target (reason no_search).
//   I1 the CPU found is the target or an allowed CPU sharing its LLC.
template <class S, class T, class R = void>
concept SearchPolicy = Topology<T> && std::default_initializable<S> && std::copy_constructible<S> &&
    requires {
      { S::enabled } -> std::convertible_to<bool>;
      typename std::bool_constant<S::enabled>;
    } &&
    (!S::enabled ||
     requires(const S& s, const SearchInput<T, detail::MachineArchetype, detail::CpuFilterArchetype, R>& in) {
       { s.search(in) } -> std::same_as<SearchResult>;
     });

// ReservationPolicy (Traits::Reservation): keeps a short sleeper's CPU for
// it (SIS_CACHE). Models: NoReservation, CacheHotReservation<V, O>.
//   R1 default-constructible and copy-constructible.
//   R2 R::task_state and R::cpu_state, default-constructible: per task (in
//      the placer's task_state) and per CPU (the embedder's, read through
//      the machine state's reservation(c), MachineState O3).
//   R3 r.on_wakeup(task_state&, Nanoseconds now) noexcept.
//   R4 r.on_sleep(task_state&, cpu_state&, bool cpu_becomes_idle, TaskKey,
//      Nanoseconds now) noexcept.
//   R5 r.reserved_against(const cpu_state&, TaskKey asker, Nanoseconds now)
//      noexcept -> bool.
//   R6 R::scan_budget(std::uint32_t) noexcept -> std::uint32_t: how much of
//      the scan budget the reservation guards.
//   R7 r.release(cpu_state&) noexcept: the reservation is used up.
//   R8 R::owner_only, R::fallback_to_hot_idle: bool constants.
template <class R>
concept ReservationPolicy =
    std::default_initializable<R> && std::copy_constructible<R> &&
    requires { typename R::task_state; typename R::cpu_state; } &&
    std::default_initializable<typename R::task_state> && std::default_initializable<typename R::cpu_state> &&
    requires(const R& r, typename R::task_state& t, typename R::cpu_state& c, const typename R::cpu_state& cc,
             bool idle, TaskKey key, Nanoseconds now, std::uint32_t budget) {
      { r.on_wakeup(t, now) } noexcept;
      { r.on_sleep(t, c, idle, key, now) } noexcept;
      { r.reserved_against(cc, key, now) } noexcept -> std::same_as<bool>;
      { R::scan_budget(budget) } noexcept -> std::convertible_to<std::uint32_t>;
      { r.release(c) } noexcept;
      { R::owner_only } -> std::convertible_to<bool>;
      { R::fallback_to_hot_idle } -> std::convertible_to<bool>;
    };

// OnCurrentRule (Traits::OnCurrent): keeps a pair of short tasks that wake
// each other on the waking CPU (SIS_CURRENT). Models: WakeOnCurrent<V>,
// NoWakeOnCurrent.
//   R1 O::enabled: a bool constant; false: never applied.
//   R2 O::decide(const WakeOnCurrentInput&) noexcept, static, -> bool,
//      or -> KeepVerdict (the reason of a kept wake-up; CostGate).
//   R3 optional: O::reads_costs, true for a rule that reads the input's
//      waker_overlap and move_cost (WakePlacer fills them only then).
//   When enabled, WakePlacer also needs a DurationPolicy that measures, a
//   Flips member with last_wakee(state), and with reads_costs an
//   OverlapPolicy that measures.
struct KeepVerdict;  // placer/cost_gate.hpp
template <class O>
concept OnCurrentRule = requires(const WakeOnCurrentInput& in) {
  { O::enabled } -> std::convertible_to<bool>;
  typename std::bool_constant<O::enabled>;
  { O::decide(in) } noexcept;
  requires std::same_as<decltype(O::decide(in)), bool> || std::same_as<decltype(O::decide(in)), KeepVerdict>;
};

// SettlePolicy (Traits::Settle): replays a settled pair's verdict instead
// of judging each wake-up. Models: SettledPair<Every>, NoSettle.
//   R1 S::enabled: a bool constant; false: every wake-up is judged.
//   R2 S::state, default-constructible, per task (the wakee's memo).
//   R3 static arm(state&, TaskKey waker, TaskKey wakee_last, WakeReason),
//      clear(state&), take(state&) -> bool, all noexcept; holds(const
//      state&, TaskKey, TaskKey, TaskKey, TaskKey), measures(const state&)
//      and quiet(const state&) -> bool, noexcept.
//   When enabled, WakePlacer also needs a rule with reads_costs (CostGate,
//   whose verdicts it replays) and no reservation policy (which reads
//   every wake-up and sleep).
enum class WakeReason : std::uint8_t;  // placer/select_idle_sibling.hpp
template <class S>
concept SettlePolicy = std::default_initializable<typename S::state> &&
    requires(typename S::state& s, const typename S::state& cs, TaskKey k, WakeReason r) {
      { S::enabled } -> std::convertible_to<bool>;
      typename std::bool_constant<S::enabled>;
      { S::arm(s, k, k, r) } noexcept;
      { S::clear(s) } noexcept;
      { S::take(s) } noexcept -> std::same_as<bool>;
      { S::holds(cs, k, k, k, k) } noexcept -> std::same_as<bool>;
      { S::measures(cs) } noexcept -> std::same_as<bool>;
      { S::quiet(cs) } noexcept -> std::same_as<bool>;
    };

// ---------------------------------------------------------------------------
// Counters and hooks (taskplace/stats.hpp), members of both composed
// decisions' traits.
//
// StatsCounters: one set of counters, indexed by Counter (WakeCounter or
// BalanceCounter).
//   R1 default-constructible.
//   R2 C::enabled: bool (false: every add() is a no-op).
//   R3 c.add(k), c.add(k, std::uint64_t n) noexcept.
//   R4 c.get(k) -> std::uint64_t on a const set.
//   R5 c.reset() noexcept.
template <class C, class Counter>
concept StatsCounters = std::default_initializable<C> &&
    requires(C& c, const C& cc, Counter k, std::uint64_t n) {
      { C::enabled } -> std::convertible_to<bool>;
      { c.add(k) } noexcept;
      { c.add(k, n) } noexcept;
      { cc.get(k) } -> std::convertible_to<std::uint64_t>;
      { c.reset() } noexcept;
    };

// StatsPolicy (Traits::Stats): a family of counter sets, one per decision.
// Models: NoStats, PlainStats, SingleWriterStats, AtomicStats.
//   R1 S::counters<Counter> is a StatsCounters of Counter.
//   R2 S is the family, not one of its sets: a set names itself as a
//      template (its injected class name), which clang 14 takes for
//      S::counters<Counter>, so a set is refused as such.
template <class S, class Counter>
concept StatsPolicy = !StatsCounters<S, Counter> &&
    requires { typename S::template counters<Counter>; } &&
    StatsCounters<typename S::template counters<Counter>, Counter>;

// DecisionHook (Traits::Hook): called with each decision (a WakeEvent of the
// placer, a BalanceEvent of the balancer). Models: NoHook, any callable.
//   R1 default-constructible (the placer holds one).
//   R2 h(const Event&) on a non-const hook; its result is ignored.
//   O1 H::enabled: a bool constant; false: never called (NoHook).
template <class H, class Event>
concept DecisionHook = std::default_initializable<H> && std::invocable<H&, const Event&> &&
    (!requires { H::enabled; } || requires {
      { H::enabled } -> std::convertible_to<bool>;
      typename std::bool_constant<H::enabled>;
    });

// ---------------------------------------------------------------------------
// The members of IdleBalancer's traits and its pull (taskplace/idle_balancer.hpp).
//
// NewidleTracker (Traits::Tracker): per-CPU avg_idle and balance costs, the
// entry gate and the budget. Model: NewidleCostTracker<NewidleTraits> (a
// newidle traits set such as newidle::Gate2009 is its parameter, not a
// tracker).
//   R1 default-constructible and copy-constructible.
//   R2 K::state: default-constructible, copyable, with a level_count
//      convertible to std::uint32_t.
//   R3 k.make_state(std::uint32_t levels, Nanoseconds now) -> K::state.
//   R4 k.should_balance(const state&) -> bool: the entry gate.
//   R5 k.may_visit_level(const state&, std::uint32_t level, Nanoseconds
//      charged) -> bool: the budget.
//   R6 k.record_attempt(state&, std::uint32_t level, Nanoseconds cost,
//      bool pulled, Nanoseconds now).
//   R7 k.idle_start(state&, now); k.idle_end(state&, now) noexcept;
//      k.decay(state&, now) noexcept.
//   R8 k.avg_idle(const state&) -> Nanoseconds.
//   O1 k.charged_cost(Nanoseconds) -> Nanoseconds: what an attempt charges
//      the budget (Low 2013's early cap); absent: its time.
//   O2 state::has_stamp and K::traits_type::skip_without_stamp: idle_end
//      without a stamp folds nothing (the 2026 guard); absent: every
//      idle_end counts as an idle period.
template <class K>
concept NewidleTracker =
    std::default_initializable<K> && std::copy_constructible<K> &&
    requires { typename K::state; } &&
    std::default_initializable<typename K::state> && std::copyable<typename K::state> &&
    requires(const K& k, typename K::state& s, const typename K::state& cs, std::uint32_t level,
             Nanoseconds now, bool pulled) {
      { cs.level_count } -> std::convertible_to<std::uint32_t>;
      { k.make_state(level, now) } -> std::same_as<typename K::state>;
      { k.should_balance(cs) } -> std::convertible_to<bool>;
      { k.may_visit_level(cs, level, now) } -> std::convertible_to<bool>;
      k.record_attempt(s, level, now, pulled, now);
      k.idle_start(s, now);
      { k.idle_end(s, now) } noexcept;
      { k.decay(s, now) } noexcept;
      { k.avg_idle(cs) } -> std::same_as<Nanoseconds>;
    };

// NewidlePull: the callback IdleBalancer::balance() tries a level with.
//   R1 pull(std::uint32_t level, LevelKind kind, Cpus cpus), Cpus being what
//      the topology's level_cpus() returns, on an lvalue P.
//   R2 the result converts to bool: true, it got work.
//   It may throw: the balance then records nothing (see balance()).
template <class P, class Cpus>
concept NewidlePull = std::invocable<P&, std::uint32_t, LevelKind, Cpus> &&
    std::convertible_to<std::invoke_result_t<P&, std::uint32_t, LevelKind, Cpus>, bool>;

}  // namespace taskplace
