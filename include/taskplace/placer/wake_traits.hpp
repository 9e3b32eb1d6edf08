// taskplace/placer/wake_traits.hpp: what a WakePlacer is made of: the
// default traits (today's kernel), the named policy sets of other eras,
// the decision it returns (Placement, WakeEvent), and the check of each
// traits member against its concept. Included by wake_placer.hpp.
//
//   struct my_traits : taskplace::DefaultWakeTraits { using Wide = taskplace::wide::Never; };
//   taskplace::WakePlacer<Topo, my_traits> placer{topo};
#pragma once

#include "taskplace/detail/config.hpp"

#include <concepts>
#include <cstdint>
#include <type_traits>

#include "taskplace/concepts.hpp"
#include "taskplace/fwd.hpp"
#include "taskplace/detail/traits.hpp"
#include "taskplace/placer/cost_gate.hpp"
#include "taskplace/placer/idle_group_2013.hpp"
#include "taskplace/placer/select_idle_sibling.hpp"
#include "taskplace/placer/wake_affine.hpp"
#include "taskplace/placer/wake_on_current.hpp"
#include "taskplace/policy/cache_hot_reservation.hpp"
#include "taskplace/policy/duration_tracker.hpp"
#include "taskplace/policy/flip_counter.hpp"
#include "taskplace/policy/llc_factor.hpp"
#include "taskplace/policy/overlap_tracker.hpp"
#include "taskplace/policy/settled_pair.hpp"
#include "taskplace/policy/wide_detector.hpp"
#include "taskplace/stats.hpp"
#include "taskplace/types.hpp"

namespace taskplace {

// The defaults: today's kernel. Derive and replace one member:
//   struct my_traits : taskplace::DefaultWakeTraits { using Wide = WideDetector<wide::OneSided2013>; };
struct DefaultWakeTraits {
  using Flips = FlipCounter<>;        // kernel record_wakee; halving decay since v3.17
  using Wide = WideDetector<>;        // kernel wake_wide; symmetric rule since v4.3
  using Factor = LlcFactor;           // kernel sd_llc_size; patch 2/2 of Wang 2013
  using Affine = WakeAffine;          // kernel wake_affine: WA_IDLE, WA_WEIGHT, WA_BIAS
  using Search = IdleSiblingSearch;   // kernel select_idle_sibling with SIS_UTIL
  using Reservation = NoReservation;  // SIS_CACHE (Chen 2023) was never merged
  using Overlap = NoOverlap;          // avg_overlap went in 2010
  using Duration = NoDuration;        // dur_avg (SIS_CURRENT's patch 1/2) was never merged
  using OnCurrent = NoWakeOnCurrent;  // SIS_CURRENT (2023) was never merged
  using Stats = NoStats;              // schedstats off, as in production kernels
  using Hook = NoHook;                // no tracepoint attached
};

// Named policy sets for comparison, each a traits swap.
namespace traits {
// Today's kernel.
struct Current : DefaultWakeTraits {};
// Pull every wakee to the waking CPU, no search: 2.6.23-2.6.26 sync
// wake-ups, which collapsed pgbench past ~8 clients (Smith 2008).
struct AlwaysAffine : DefaultWakeTraits {
  using Wide = wide::Never;
  using Affine = affine::Always;
  using Search = NoSearch;
};
// Never pull, no search: the wakee returns to where it ran.
struct PrevCpu : DefaultWakeTraits {
  using Affine = affine::Never;
  using Search = NoSearch;
};
// Wang 2013's wake_wide as v3.12 had it (wiping decay, the one-sided
// rule) in today's pipeline: the affine step and the idle search are
// today's, not v3.12's (effective_load() and the group walk of its
// select_idle_sibling() are not modelled), so the set isolates the wide
// rule, as the paper's comparison did.
struct Linux2013 : DefaultWakeTraits {
  using Flips = FlipCounter<flip_decay::Wipe2013>;
  using Wide = WideDetector<wide::OneSided2013>;
};
// The v3.12 kernel's whole wake-up path (2013): Linux2013's flips and wide
// rule, with v3.12's wake_affine() (the load test alone, no idle test) and
// its select_idle_sibling() (the first wholly idle core of the LLC, then
// an idle sibling of the target; no search when the waking CPU is
// refused). The era Wang 2013 measured, as the kernel ran it.
struct Linux2013Kernel : Linux2013 {
  using Affine = WakeAffine2013;
  using Search = sis_walk::IdleGroup2013;
};
// A 2008 kernel (2.6.25-2.6.26, Smith 2008): no wake_wide, the 2008
// wake_affine() whose sync pull is gated by the tasks' average overlap,
// and no idle-sibling search (the era's wake_idle() is not modelled, as
// in AlwaysAffine). Variant: sync_affine::Unchecked2008 (2.6.25, the
// pgbench regression), Balanced2008 (2.6.26, its fix) or Ignored2008
// (SYNC_WAKEUPS off).
template <class Variant = sync_affine::Balanced2008>
struct Linux2008 : DefaultWakeTraits {
  using Wide = wide::Never;
  using Affine = WakeAffine2008<Variant>;
  using Search = NoSearch;
  using Overlap = OverlapTracker;
};
// Current plus SIS_CACHE in one of its variants (Chen 2023).
template <class Variant = sis_cache::HalveLong2023, class Ownership = AnyTaskMayTake>
struct CacheHot : DefaultWakeTraits {
  using Reservation = CacheHotReservation<Variant, Ownership>;
};
// Current plus SIS_CURRENT (2023): a pair of short tasks that wake each
// other stays on the waking CPU, with no search. Variant:
// sis_current::MigrationCost2023 (threshold the migration cost) or
// Granularity2023 (an eighth of the granularity).
template <ShortTaskVariant Variant = sis_current::MigrationCost2023>
struct SisCurrent : DefaultWakeTraits {
  using Duration = DurationTracker;
  using OnCurrent = WakeOnCurrent<Variant>;
};
// For user-space runtimes, not a kernel era (docs/runtime.md): today's
// kernel, plus CostGate in front of it. A wakee stays on the waking worker,
// with no search, when the waker sleeps, or the wakee's work ends, before
// a move to another worker would have paid for itself, the move's cost
// being what the runtime measures (a cache line's round trip, a parked
// worker's unpark latency: MachineState O5, O6; kit::Machine gives both).
// The kernel's wide rule, affine step and idle search decide the rest,
// and the move they propose is judged at its own cost (a busy CPU, a
// parked one: CostGate's tests c, d). Needs the runtime's run and sleep
// reports (task_runs, task_sleeps).
struct Runtime : DefaultWakeTraits {
  using Overlap = OverlapTracker;
  using Duration = DurationTracker;
  using OnCurrent = CostGate;
  // A settled pair's verdict replayed on 7 of 8 wake-ups, measured around
  // the judgement only (policy/settled_pair.hpp).
  using Settle = SettledPair<8>;
};
}  // namespace traits

// The decision, with the reason of each step, for tests and traces.
struct Placement {
  CpuId cpu;              // where the wakee runs; always < cpu_count()
  CpuId target;           // the affine step's choice, before the search
  AffineReason affine;    // why the target
  WakeReason reason;      // why the final CPU
  bool wide;              // the wide rule's verdict
  std::uint32_t scanned;  // CPUs the LLC walk visited (SearchResult::scanned)
  std::uint32_t reservation_skips;
};

// The event a Hook receives: the placement plus who woke whom, when (the
// `now` given to place(), in the embedder's clock) and the sync hint.
struct WakeEvent {
  TaskKey waker;
  TaskKey wakee;
  CpuId waking_cpu;
  CpuId prev_cpu;
  Placement placement;
  Nanoseconds now{0};
  bool sync = false;
  // The waker was given by its key alone (Wakeup::waker null, waker_key
  // set: a wake-up made on another thread of the runtime): no state of it
  // was read or written.
  bool waker_by_key = false;
  // With waker_by_key: the waker's flips the runtime passed
  // (Wakeup::waker_flips; 0: none).
  std::uint32_t waker_flips = 0;
};

static_assert(DecisionHook<NoHook, WakeEvent>);

namespace detail {
template <class Traits> using flips_member = typename Traits::Flips;
template <class Traits> using wide_member = typename Traits::Wide;
template <class Traits> using factor_member = typename Traits::Factor;
template <class Traits> using affine_member = typename Traits::Affine;
template <class Traits> using search_member = typename Traits::Search;
template <class Traits> using reservation_member = typename Traits::Reservation;
template <class Traits> using overlap_member = typename Traits::Overlap;
template <class Traits> using duration_member = typename Traits::Duration;
template <class Traits> using on_current_member = typename Traits::OnCurrent;
template <class Traits> using settle_member = typename Traits::Settle;
template <class Traits> using stats_member = typename Traits::Stats;
template <class Traits> using hook_member = typename Traits::Hook;
template <class Affine>
inline constexpr bool reads_overlap = requires { requires Affine::reads_overlap; };
// Whether a search runs only when the waking CPU is allowed (SearchPolicy
// O1: v3.12's, under an affine domain).
template <class Search>
inline constexpr bool search_needs_waking_allowed = requires { requires Search::needs_waking_allowed; };

// Each member of a WakePlacer's traits as given (void where a required one
// is missing, the default where an optional one is: Overlap, Duration and
// OnCurrent came later), whether it models its role, and what the placer
// uses: the member where it does, else the default. Naming a member here
// cannot fail and each `ok` is a concept's answer, so that nothing goes
// wrong before check_wake_traits() has said what is wrong; and after it
// has, the placer goes on with the default, so that one bad member gives
// one error, not a cascade from its uses.
template <class T, class Traits>
struct wake_traits_check {
  using flips = member_or_t<Traits, void, flips_member>;
  using wide = member_or_t<Traits, void, wide_member>;
  using factor = member_or_t<Traits, void, factor_member>;
  using affine = member_or_t<Traits, void, affine_member>;
  using search = member_or_t<Traits, void, search_member>;
  using reservation = member_or_t<Traits, void, reservation_member>;
  using overlap = member_or_t<Traits, NoOverlap, overlap_member>;
  using duration = member_or_t<Traits, NoDuration, duration_member>;
  using on_current = member_or_t<Traits, NoWakeOnCurrent, on_current_member>;
  using settle = member_or_t<Traits, NoSettle, settle_member>;
  using stats = member_or_t<Traits, void, stats_member>;
  using hook = member_or_t<Traits, void, hook_member>;

  static constexpr bool flips_ok = FlipPolicy<flips>;
  static constexpr bool wide_ok = WideRule<wide>;
  static constexpr bool factor_ok = FactorPolicy<factor, T>;
  static constexpr bool affine_ok = AffinePolicy<affine, T>;
  static constexpr bool reservation_ok = ReservationPolicy<reservation>;
  // What the search is handed: the reservation policy, void without one.
  using search_reservation =
      std::conditional_t<reservation_ok && !std::is_same_v<reservation, NoReservation>, reservation, void>;
  static constexpr bool search_ok = SearchPolicy<search, T, search_reservation>;
  static constexpr bool overlap_ok = OverlapPolicy<overlap>;
  static constexpr bool duration_ok = DurationPolicy<duration>;
  static constexpr bool on_current_ok = OnCurrentRule<on_current>;
  static constexpr bool settle_ok = SettlePolicy<settle>;
  static constexpr bool stats_ok = StatsPolicy<stats, WakeCounter>;
  static constexpr bool hook_ok = DecisionHook<hook, WakeEvent>;

  using flips_policy = checked_t<flips_ok, flips, FlipCounter<>>;
  using wide_rule = checked_t<wide_ok, wide, WideDetector<>>;
  using factor_policy = checked_t<factor_ok, factor, LlcFactor>;
  using affine_policy = checked_t<affine_ok, affine, WakeAffine>;
  using search_policy = checked_t<search_ok, search, NoSearch>;
  using reservation_policy = checked_t<reservation_ok, reservation, NoReservation>;
  using overlap_policy = checked_t<overlap_ok, overlap, NoOverlap>;
  using duration_policy = checked_t<duration_ok, duration, NoDuration>;
  using on_current_rule = checked_t<on_current_ok, on_current, NoWakeOnCurrent>;
  using settle_policy = checked_t<settle_ok, settle, NoSettle>;
  using stats_family = checked_t<stats_ok, stats, NoStats>;
  using hook_type = checked_t<hook_ok, hook, NoHook>;
};

// The checks of a WakePlacer's traits, one static_assert per member, each
// naming the member and the fix, then what the members ask of each other
// (skipped where a member already failed its own). WakePlacer runs them
// first thing, so that their message is the first error a bad traits class
// gives; they live in a function, so that a failed one leaves WakePlacer
// itself sound (the compilers report nothing more about it).
template <class T, class Traits>
consteval bool check_wake_traits() {
  using C = wake_traits_check<T, Traits>;
  static_assert(FlipPolicy<typename C::flips>,
                "Traits::Flips must model taskplace::FlipPolicy: use FlipCounter<Decay, Storage>, or give it "
                "a state, record(state&, TaskKey, Nanoseconds) and flips(const state&) -> std::uint32_t");
  static_assert(WideRule<typename C::wide>,
                "Traits::Wide must model taskplace::WideRule: use WideDetector<Rule> or a wide:: rule, or give "
                "it static wide(std::uint32_t, std::uint32_t, std::uint32_t) noexcept -> bool");
  static_assert(FactorPolicy<typename C::factor, T>,
                "Traits::Factor must model taskplace::FactorPolicy for this topology: use LlcFactor (or "
                "NodeFactor, FixedFactor<N>, ...), or give it static factor(const T&, CpuId) -> std::uint32_t");
  static_assert(AffinePolicy<typename C::affine, T>,
                "Traits::Affine must model taskplace::AffinePolicy: use WakeAffine, WakeAffine2008<V>, "
                "affine::Always or affine::Never, or give it decide(const AffineInput<T, M>&) const -> "
                "AffineDecision, a template over every MachineState M");
  static_assert(SearchPolicy<typename C::search, T, typename C::search_reservation>,
                "Traits::Search must model taskplace::SearchPolicy: use IdleSiblingSearch or NoSearch, or give "
                "it static constexpr bool enabled and search(const SearchInput<T, M, F, R>&) const -> "
                "SearchResult, a template over every MachineState M and CpuFilter F");
  static_assert(ReservationPolicy<typename C::reservation>,
                "Traits::Reservation must model taskplace::ReservationPolicy: use NoReservation or "
                "CacheHotReservation<Variant, Ownership>");
  static_assert(OverlapPolicy<typename C::overlap>,
                "Traits::Overlap must model taskplace::OverlapPolicy: use OverlapTracker or NoOverlap");
  static_assert(DurationPolicy<typename C::duration>,
                "Traits::Duration must model taskplace::DurationPolicy: use DurationTracker or NoDuration");
  static_assert(OnCurrentRule<typename C::on_current>,
                "Traits::OnCurrent must model taskplace::OnCurrentRule: use WakeOnCurrent<Variant> or "
                "NoWakeOnCurrent, or give it static constexpr bool enabled and static "
                "decide(const WakeOnCurrentInput&) noexcept -> bool");
  static_assert(SettlePolicy<typename C::settle>,
                "Traits::Settle must model taskplace::SettlePolicy: use SettledPair<Every> or NoSettle");
  static_assert(StatsPolicy<typename C::stats, WakeCounter>,
                "Traits::Stats must model taskplace::StatsPolicy: use NoStats, PlainStats, SingleWriterStats "
                "or AtomicStats, the family itself, not one of its counters<...>");
  static_assert(DecisionHook<typename C::hook, WakeEvent>,
                "Traits::Hook must model taskplace::DecisionHook<H, WakeEvent>: use NoHook, or a "
                "default-constructible type callable as hook(const WakeEvent&)");

  using Affine = typename C::affine_policy;
  using OnCurrent = typename C::on_current_rule;
  using Flips = typename C::flips_policy;
  static_assert(!C::affine_ok || !C::overlap_ok || !reads_overlap<Affine> || C::overlap_policy::enabled,
                "Traits::Affine reads the tasks' average overlap: set Traits::Overlap = OverlapTracker");
  static_assert(!C::on_current_ok || !C::duration_ok || !OnCurrent::enabled || C::duration_policy::enabled,
                "Traits::OnCurrent reads the tasks' run durations: set Traits::Duration = DurationTracker");
  static_assert(!C::on_current_ok || !C::overlap_ok || !reads_costs<OnCurrent> || C::overlap_policy::enabled,
                "Traits::OnCurrent reads the waker's average overlap: set Traits::Overlap = OverlapTracker");
  static_assert(!C::settle_ok || !C::on_current_ok || !C::settle::enabled || reads_costs<OnCurrent>,
                "Traits::Settle replays CostGate's verdicts: set Traits::OnCurrent = CostGate");
  static_assert(!C::settle_ok || !C::reservation_ok || !C::settle::enabled ||
                    std::is_same_v<typename C::reservation, NoReservation>,
                "Traits::Settle skips wake-ups and sleeps that Traits::Reservation must see: set one of them "
                "to NoReservation or NoSettle");
  static_assert(!C::on_current_ok || !C::flips_ok || !OnCurrent::enabled ||
                    requires(const Flips& f, const typename Flips::state& s) {
                      { f.last_wakee(s) } -> std::same_as<TaskKey>;
                    },
                "Traits::OnCurrent reads the last wakee: Traits::Flips needs last_wakee(state)");
  return true;
}
}  // namespace detail

}  // namespace taskplace
