// Compile-time checks for the newidle and cache-hot concepts and their
// shipped models (taskplace/policy/{newidle_cost_tracker,cache_hot_reservation,
// newidle_success_rate,task_hot}.hpp).
// This file compiling is the test.
#include <chrono>
#include <cstdint>
#include <type_traits>

#include "taskplace/concepts.hpp"
#include "taskplace/idle_balancer.hpp"
#include "taskplace/policy/cache_hot_reservation.hpp"
#include "taskplace/policy/newidle_cost_tracker.hpp"
#include "taskplace/policy/newidle_success_rate.hpp"
#include "taskplace/policy/task_hot.hpp"

namespace taskplace_static_idle {

using namespace taskplace;
using namespace std::chrono_literals;

// --- AvgIdleEstimator --------------------------------------------------------
static_assert(AvgIdleEstimator<avg_idle::Clamp2014>);
static_assert(AvgIdleEstimator<avg_idle::Saturate2009>);
struct ThrowingEstimator {  // not noexcept
  static Nanoseconds update(Nanoseconds a, Nanoseconds, Nanoseconds) { return a; }
};
struct IntEstimator {  // returns a count, not Nanoseconds
  static std::int64_t update(Nanoseconds, Nanoseconds, Nanoseconds) noexcept { return 0; }
};
struct TwoArgEstimator {  // forgets the cap
  static Nanoseconds update(Nanoseconds a, Nanoseconds) noexcept { return a; }
};
static_assert(!AvgIdleEstimator<ThrowingEstimator>);
static_assert(!AvgIdleEstimator<IntEstimator>);
static_assert(!AvgIdleEstimator<TwoArgEstimator>);
static_assert(!AvgIdleEstimator<int>);

// Golden values (update_avg()): update_avg(1e6, 50000) = 881250; avg_idle::Clamp2014
// clamps after averaging, avg_idle::Saturate2009 jumps to the cap when delta > cap.
static_assert(avg_idle::Clamp2014::update(1'000'000ns, 50'000ns, 1ms) == 881'250ns);
static_assert(avg_idle::Clamp2014::update(100'000ns, 1'200'000ns, 1ms) == 237'500ns);
static_assert(avg_idle::Saturate2009::update(100'000ns, 1'200'000ns, 1ms) == 1ms);

// --- CostDecaySchedule -------------------------------------------------------
static_assert(CostDecaySchedule<cost_decay::EverySecond2014>);
static_assert(CostDecaySchedule<cost_decay::IfNoNewMax2022>);
static_assert(!cost_decay::EverySecond2014::restart_on_new_max && cost_decay::IfNoNewMax2022::restart_on_new_max);
struct NoFlagSchedule {};
struct TypeFlagSchedule {  // a type, not a bool constant
  struct restart_on_new_max {};
};
static_assert(!CostDecaySchedule<NoFlagSchedule>);
static_assert(!CostDecaySchedule<TypeFlagSchedule>);

// --- CostDecayRatio ----------------------------------------------------------
static_assert(CostDecayRatio<Decay253_256>);
static_assert(CostDecayRatio<Decay254_256>);
static_assert(CostDecayRatio<Decay63_64>);
static_assert(CostDecayRatio<DecayRatio<1, 2>>);
static_assert(!CostDecayRatio<DecayRatio<256, 256>>);  // num == den: never decays
static_assert(!CostDecayRatio<DecayRatio<257, 256>>);  // grows
static_assert(!CostDecayRatio<DecayRatio<0, 256>>);    // wipes
struct NoDenRatio {
  static constexpr std::uint32_t num = 1;
};
static_assert(!CostDecayRatio<NoDenRatio>);

// --- NewidleEntryGate --------------------------------------------------------
static_assert(NewidleEntryGate<newidle_gate::None>);
static_assert(NewidleEntryGate<newidle_gate::MigrationCost2009>);
static_assert(NewidleEntryGate<newidle_gate::FirstLevel2022>);
struct ThrowingGate {
  static bool allow(Nanoseconds, Nanoseconds, Nanoseconds) { return true; }
};
struct MemberGate {
  bool allow(Nanoseconds, Nanoseconds, Nanoseconds) const noexcept { return true; }
};
static_assert(!NewidleEntryGate<ThrowingGate>);
static_assert(!NewidleEntryGate<MemberGate>);
static_assert(!NewidleEntryGate<level_budget::Spent2014>);  // four arguments, not three
static_assert(!newidle_gate::MigrationCost2009::allow(499us, 0ns, 500us) && newidle_gate::FirstLevel2022::allow(499us, 499us, 500us));

// --- NewidleLevelBudget ------------------------------------------------------
static_assert(NewidleLevelBudget<level_budget::None>);
static_assert(NewidleLevelBudget<level_budget::Spent2014>);
static_assert(NewidleLevelBudget<level_budget::SpentPlusMigration2013>);
struct IntBudget {  // returns int, not bool
  static int allow(Nanoseconds, Nanoseconds, Nanoseconds, Nanoseconds) noexcept { return 1; }
};
static_assert(!NewidleLevelBudget<IntBudget>);
static_assert(!NewidleLevelBudget<newidle_gate::FirstLevel2022>);  // three arguments
static_assert(level_budget::Spent2014::allow(1000ns, 400ns, 600ns, 0ns) && !level_budget::Spent2014::allow(999ns, 400ns, 600ns, 0ns));

// --- SleepReservationVariant -------------------------------------------------
static_assert(SleepReservationVariant<sis_cache::EverySleep2023>);
static_assert(SleepReservationVariant<sis_cache::ShortSleeps2023>);
static_assert(SleepReservationVariant<sis_cache::HalveLong2023>);
struct NoFallbackVariant {  // lacks fallback_to_hot_idle
  static Nanoseconds update_sleep_avg(Nanoseconds a, Nanoseconds, Nanoseconds) noexcept { return a; }
  static Nanoseconds reserve_until(Nanoseconds h, Nanoseconds, Nanoseconds) noexcept { return h; }
  static constexpr std::uint32_t scan_share_den = 1;
};
struct ThrowingVariant {  // update_sleep_avg may throw
  static Nanoseconds update_sleep_avg(Nanoseconds a, Nanoseconds, Nanoseconds) { return a; }
  static Nanoseconds reserve_until(Nanoseconds h, Nanoseconds, Nanoseconds) noexcept { return h; }
  static constexpr bool fallback_to_hot_idle = false;
  static constexpr std::uint32_t scan_share_den = 1;
};
static_assert(!SleepReservationVariant<NoFallbackVariant>);
static_assert(!SleepReservationVariant<ThrowingVariant>);
static_assert(!SleepReservationVariant<NoReservation>);  // a policy, not a variant
// SIS_CACHE switches (Chen 2023, v1, v2): fallback false, true, true; scan share 1, 1, 2.
static_assert(!sis_cache::EverySleep2023::fallback_to_hot_idle && sis_cache::ShortSleeps2023::fallback_to_hot_idle &&
              sis_cache::HalveLong2023::fallback_to_hot_idle);
static_assert(sis_cache::EverySleep2023::scan_share_den == 1 && sis_cache::ShortSleeps2023::scan_share_den == 1 &&
              sis_cache::HalveLong2023::scan_share_den == 2);
static_assert(sis_cache::HalveLong2023::update_sleep_avg(23'437ns, 2ms, 500us) == 11'718ns);  // long sleep halves

// --- The front doors ---------------------------------------------------------
// The fwd.hpp defaults resolve to today's kernel and SIS_CACHE v2.
static_assert(std::is_same_v<NewidleCostTracker<>::estimator, avg_idle::Clamp2014>);
static_assert(std::is_same_v<NewidleCostTracker<>::schedule, cost_decay::IfNoNewMax2022>);
static_assert(std::is_same_v<NewidleCostTracker<>::ratio, DecayRatio<253, 256>>);
static_assert(std::is_same_v<NewidleCostTracker<>::entry_gate, newidle_gate::FirstLevel2022>);
static_assert(std::is_same_v<NewidleCostTracker<>::budget, level_budget::Spent2014>);
static_assert(std::is_same_v<CacheHotReservation<>::variant, sis_cache::HalveLong2023>);
static_assert(!CacheHotReservation<>::owner_only);

// A traits struct that replaces one member still instantiates.
struct EverySecond : DefaultNewidleTraits {
  using Schedule = cost_decay::EverySecond2014;
};
static_assert(!NewidleCostTracker<EverySecond>::schedule::restart_on_new_max);

// The traits checks fire with a message naming the member. A failing
// static_assert cannot live in a file that must compile, so the negative
// case is shown here, commented out:
//
//   struct BadTraits : DefaultNewidleTraits { using Estimator = ThrowingEstimator; };
//   NewidleCostTracker<BadTraits> t;
//   // error: static assertion failed: Traits::Estimator must model
//   //        taskplace::AvgIdleEstimator (static update(avg, delta, cap) noexcept -> Nanoseconds)
//
//   struct Bare { using Estimator = avg_idle::Clamp2014; };  // not derived from the defaults
//   NewidleCostTracker<Bare> u;                  // "Traits::Schedule must model ..."
//
// The predicates behind them are checked here instead:
static_assert(detail::NewidleHasEstimator<DefaultNewidleTraits>);
struct BadTraits : DefaultNewidleTraits {
  using Estimator = ThrowingEstimator;
};
static_assert(!detail::NewidleHasEstimator<BadTraits>);
struct Bare {
  using Estimator = avg_idle::Clamp2014;
};
static_assert(!detail::NewidleHasSchedule<Bare> && !detail::NewidleHasGuard<Bare>);
struct IntGuard : DefaultNewidleTraits {
  struct skip_without_stamp {};  // a type, not a bool constant
};
static_assert(!detail::NewidleHasGuard<IntGuard>);

// --- bump_failed_cost (optional member) ----------------------------------------
static_assert(!detail::newidle_bumps_failed_cost<DefaultNewidleTraits>());
struct Bumps : DefaultNewidleTraits {
  static constexpr bool bump_failed_cost = true;
};
static_assert(detail::newidle_bumps_failed_cost<Bumps>());
static_assert(!detail::newidle_bumps_failed_cost<Bare>());  // traits written before it: no bump

// --- cap_avg_idle_on_cost (optional member) ------------------------------------
static_assert(detail::newidle_caps_on_cost<DefaultNewidleTraits>());
static_assert(!detail::newidle_caps_on_cost<newidle::Gate2009>());
static_assert(detail::newidle_caps_on_cost<Bare>());  // traits written before it: the v3.13 cap

// --- SuccessRateVariant ---------------------------------------------------------
static_assert(SuccessRateVariant<success_rate::Proportional2025>);
static_assert(SuccessRateVariant<success_rate::ProportionalRate2026>);
static_assert(!success_rate::Proportional2025::rate_term && success_rate::ProportionalRate2026::rate_term);
struct RateOnly {  // forgets always_at_full
  static constexpr bool rate_term = true;
};
static_assert(!SuccessRateVariant<RateOnly>);
static_assert(!SuccessRateVariant<int>);

// --- NewidleAttemptPolicy -------------------------------------------------------
static_assert(NewidleAttemptPolicy<AttemptEveryLevel>);
static_assert(NewidleAttemptPolicy<NewidleSuccessRate<>>);
static_assert(std::is_same_v<NewidleSuccessRate<>::variant, success_rate::ProportionalRate2026>);  // fwd.hpp default
static_assert(std::is_empty_v<AttemptEveryLevel::state>);
struct BoolRoll {  // roll answers yes/no, not a weight
  struct state {};
  state make_state(std::uint32_t, Nanoseconds, std::uint64_t) const { return {}; }
  bool roll(state&, std::uint32_t, Nanoseconds) const { return true; }
  void record(state&, std::uint32_t, bool, std::uint32_t, Nanoseconds) const {}
};
struct NoRecord {  // never learns from an outcome
  struct state {};
  state make_state(std::uint32_t, Nanoseconds, std::uint64_t) const { return {}; }
  std::uint32_t roll(state&, std::uint32_t, Nanoseconds) const { return 1; }
};
static_assert(!NewidleAttemptPolicy<BoolRoll>);
static_assert(!NewidleAttemptPolicy<NoRecord>);
static_assert(!NewidleAttemptPolicy<int>);

// --- TaskHotRule ----------------------------------------------------------------
static_assert(TaskHotRule<task_hot::AllLevels2007> && TaskHotRule<task_hot::SmtExempt2020>);
static_assert(!task_hot::AllLevels2007::smt_exempt && task_hot::SmtExempt2020::smt_exempt);
struct NoSmtFlag {};  // says nothing about SMT
static_assert(!TaskHotRule<NoSmtFlag>);
static_assert(!TaskHotRule<int>);
static_assert(std::is_same_v<TaskHot<>::rule, task_hot::SmtExempt2020>);  // fwd.hpp default
// The verdict is usable at compile time: a task that ran 100 us ago is hot
// for an LLC move (500 us migration cost), not for an SMT one since v5.10.
static_assert(TaskHot<>{}.is_hot({.kind = LevelKind::llc, .last_ran = 0ns}, 100us));
static_assert(!TaskHot<>{}.is_hot({.kind = LevelKind::smt, .last_ran = 0ns}, 100us));
static_assert(TaskHot<task_hot::AllLevels2007>{}.is_hot({.kind = LevelKind::smt, .last_ran = 0ns}, 100us));
// One state type for every rule: counts kept under one rule can be judged by another.
static_assert(std::is_same_v<TaskHot<task_hot::AllLevels2007>::state, TaskHot<>::state>);
// sd_init()'s cache_nice_tries: SMT 0, cluster/LLC/package 1, NUMA 2.
static_assert(TaskHot<>{}.tries(LevelKind::smt) == 0 && TaskHot<>{}.tries(LevelKind::llc) == 1 &&
              TaskHot<>{}.tries(LevelKind::machine) == 2);

}  // namespace taskplace_static_idle
