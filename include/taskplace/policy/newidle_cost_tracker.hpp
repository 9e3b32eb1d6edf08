// taskplace/policy/newidle_cost_tracker.hpp: is a newly idle CPU idle long
// enough to be worth pulling work, and at how many levels?
//
// Provides NewidleCostTracker<Traits>, the avg_idle estimators
// avg_idle::Clamp2014 and Saturate2009, the decay schedules
// cost_decay::EverySecond2014 and IfNoNewMax2022, the decay ratios
// DecayRatio<Num, Den>, the entry gates newidle_gate::None,
// MigrationCost2009 and FirstLevel2022, the level budgets
// level_budget::None, Spent2014 and SpentPlusMigration2013, and
// DefaultNewidleTraits. Kernel analogue: rq->avg_idle, rq->idle_stamp,
// rq->max_idle_balance_cost, sd->max_newidle_lb_cost and
// update_newidle_cost() around newidle_balance() in kernel/sched/fair.c.
// Follows Jason Low's "sched: Limiting idle balance" v4 (Low 2013;
// merged in v3.13, 2014), the v5.16 (2022) gate and decay rework, and the
// 2026 "no idle stamp, no sample" guard.
//
//   taskplace::NewidleCostTracker<> t;  auto s = t.make_state(3, clock.now());
//   if (t.should_balance(s) && t.may_visit_level(s, 0, 0ns)) { /* pull, then */ t.record_cost(s, 0, cost, clock.now()); }
#pragma once

#include "taskplace/detail/config.hpp"

#include <algorithm>
#include <array>
#include <concepts>
#include <cstdint>
#include <limits>

#include "taskplace/concepts.hpp"
#include "taskplace/detail/assert.hpp"
#include "taskplace/detail/math.hpp"
#include "taskplace/fwd.hpp"
#include "taskplace/tunables.hpp"
#include "taskplace/types.hpp"

namespace taskplace {

namespace detail::newidle_math {
// Negative durations (a hand-built state, a backwards clock read by the
// caller) are read as zero, so that every formula below stays in range.
constexpr Nanoseconds non_negative(Nanoseconds d) noexcept {
  return d.count() < 0 ? Nanoseconds::zero() : d;
}
// 2 * d for d >= 0, saturating.
constexpr Nanoseconds saturating_twice(Nanoseconds d) noexcept {
  return saturating_add(non_negative(d), non_negative(d));
}
// floor(d * num / den) for d >= 0 and 0 < num < den, exact and without
// overflow: d = q * den + r, so d * num / den = q * num + r * num / den,
// where q * num < d and r * num < 2^64.
constexpr Nanoseconds scale_down(Nanoseconds d, std::uint32_t num, std::uint32_t den) noexcept {
  const auto v = static_cast<std::uint64_t>(non_negative(d).count());
  const std::uint64_t q = v / den;
  const auto r = static_cast<std::uint32_t>(v % den);
  return Nanoseconds{static_cast<std::int64_t>(q * num + wide_mul(r, num) / den)};
}
}  // namespace detail::newidle_math

// ---------------------------------------------------------------------------
// Estimators: how one idle period of length `delta` folds into avg_idle.
// `cap` is 2 * max_idle_balance_cost: an idle period longer than twice the
// most we ever spent balancing tells us nothing more.

// v3.13 (Low 2013 patch 1/3, Jason Low): average first, then clamp. One long
// idle period only moves the average by an eighth of the way to the cap.
namespace avg_idle {
struct Clamp2014 {
  // Returns: min(update_avg(avg, delta), cap); negative inputs read as 0.
  // Complexity: O(1). Thread-safety: pure.
  static constexpr Nanoseconds update(Nanoseconds avg, Nanoseconds delta, Nanoseconds cap) noexcept {
    const Nanoseconds a = detail::update_avg(detail::newidle_math::non_negative(avg), detail::newidle_math::non_negative(delta));
    return std::min(a, detail::newidle_math::non_negative(cap));
  }
};
static_assert(AvgIdleEstimator<avg_idle::Clamp2014>);

// Before v3.13: a period longer than the cap sets avg_idle to the cap
// outright, whatever the history. "This can cause avg_idle to often be
// overestimated" (Low 2013 patch 1/3): one long sleep among many short ones
// claims the CPU will idle long.
struct Saturate2009 {
  // Returns: delta > cap ? cap : update_avg(avg, delta); negative inputs
  // read as 0. Complexity: O(1). Thread-safety: pure.
  static constexpr Nanoseconds update(Nanoseconds avg, Nanoseconds delta, Nanoseconds cap) noexcept {
    const Nanoseconds d = detail::newidle_math::non_negative(delta);
    const Nanoseconds c = detail::newidle_math::non_negative(cap);
    return d > c ? c : detail::update_avg(detail::newidle_math::non_negative(avg), d);
  }
};
}  // namespace avg_idle
static_assert(AvgIdleEstimator<avg_idle::Saturate2009>);

// ---------------------------------------------------------------------------
// Decay schedules: when a level's maximum cost decays.

// v3.13 (2014): rebalance_domains() decays every level once a period,
// whether or not a new maximum was just recorded.
namespace cost_decay {
struct EverySecond2014 {
  static constexpr bool restart_on_new_max = false;
};
static_assert(CostDecaySchedule<cost_decay::EverySecond2014>);

// v5.16 (2022): a new maximum restarts the wait, so a level decays only
// after a whole period without a new maximum. A cost that keeps being hit is
// not worn down between hits.
struct IfNoNewMax2022 {
  static constexpr bool restart_on_new_max = true;
};
}  // namespace cost_decay
static_assert(CostDecaySchedule<cost_decay::IfNoNewMax2022>);

// The factor of one decay step. Per-second steps, so the half-life is
// ln(1/2) / ln(Num/Den) seconds.
template <std::uint32_t Num, std::uint32_t Den>
struct DecayRatio {
  static constexpr std::uint32_t num = Num;
  static constexpr std::uint32_t den = Den;
};
using Decay253_256 = DecayRatio<253, 256>;  // today's kernel: ~1.2%/s, half-life ~60 s (58.8 s)
using Decay254_256 = DecayRatio<254, 256>;  // Low 2013 RFC: ~0.8%/s (its comment says ~0.5%), half-life ~88 s
using Decay63_64 = DecayRatio<63, 64>;      // Low 2013 follow-up: ~1.6%/s, half-life ~44 s
static_assert(CostDecayRatio<Decay253_256>);
static_assert(CostDecayRatio<Decay254_256>);
static_assert(CostDecayRatio<Decay63_64>);

// ---------------------------------------------------------------------------
// Entry gates: may a newly idle CPU balance at all?

// No limit: always try (before 2.6.3x, and a baseline for comparisons).
namespace newidle_gate {
struct None {
  // Returns: true. Complexity: O(1). Thread-safety: pure.
  static constexpr bool allow(Nanoseconds, Nanoseconds, Nanoseconds) noexcept { return true; }
};
static_assert(NewidleEntryGate<newidle_gate::None>);

// 2009-2021: skip when the CPU is expected to idle less than a migration.
// Removed in v5.16: 500 us is far more than an SMT or LLC pull costs and hid
// useful pulls (hackbench -g 16 +20% without it).
struct MigrationCost2009 {
  // Returns: avg_idle >= migration_cost. Complexity: O(1). Thread-safety: pure.
  static constexpr bool allow(Nanoseconds avg_idle, Nanoseconds, Nanoseconds migration_cost) noexcept {
    return avg_idle >= migration_cost;
  }
};
static_assert(NewidleEntryGate<newidle_gate::MigrationCost2009>);

// v5.16 to today: skip when the CPU is expected to idle less than even the
// first (cheapest) level's worst pull takes.
struct FirstLevel2022 {
  // Returns: avg_idle >= first_level_cost. Complexity: O(1). Thread-safety: pure.
  static constexpr bool allow(Nanoseconds avg_idle, Nanoseconds first_level_cost, Nanoseconds) noexcept {
    return avg_idle >= first_level_cost;
  }
};
}  // namespace newidle_gate
static_assert(NewidleEntryGate<newidle_gate::FirstLevel2022>);

// ---------------------------------------------------------------------------
// Level budgets: may the balance go on to the next level?

// Visit every level (2009 to v3.12).
namespace level_budget {
struct None {
  // Returns: true. Complexity: O(1). Thread-safety: pure.
  static constexpr bool allow(Nanoseconds, Nanoseconds, Nanoseconds, Nanoseconds) noexcept { return true; }
};
static_assert(NewidleLevelBudget<level_budget::None>);

// v3.13 (Low 2013 patch 2/3) to today: "If the avg time the CPU remains idle
// is less than the time we have already spent on idle balancing + the max
// cost of idle balancing in the sched domain, then we don't continue".
struct Spent2014 {
  // Returns: avg_idle - spent >= level_cost, which for avg_idle, spent >= 0
  //   is avg_idle >= spent + level_cost exactly, with no sum to overflow
  //   (negative spent reads as 0). The difference is taken modulo 2^64, so
  //   a negative avg_idle (a state filled in against its invariant) gives
  //   some answer, never undefined behaviour.
  // Complexity: O(1). Thread-safety: pure.
  static constexpr bool allow(Nanoseconds avg_idle, Nanoseconds spent, Nanoseconds level_cost,
                              Nanoseconds) noexcept {
    const auto left = static_cast<std::uint64_t>(avg_idle.count()) -
                      static_cast<std::uint64_t>(detail::newidle_math::non_negative(spent).count());
    return static_cast<std::int64_t>(left) >= level_cost.count();  // a negative cost reads as it is
  }
};
static_assert(NewidleLevelBudget<level_budget::Spent2014>);

// Low 2013 RFC 3/3: also charge a migration, for what the timing misses
// (dropping and retaking the runqueue lock, the cache misses of the pulled
// task). Not merged.
struct SpentPlusMigration2013 {
  // Returns: avg_idle >= spent + level_cost + migration_cost exactly
  //   (negative spent, cost or migration read as 0): each term is taken
  //   off what is left, so no sum is formed and none can overflow.
  // Complexity: O(1). Thread-safety: pure.
  static constexpr bool allow(Nanoseconds avg_idle, Nanoseconds spent, Nanoseconds level_cost,
                              Nanoseconds migration_cost) noexcept {
    Nanoseconds left = avg_idle;
    for (const Nanoseconds term : {spent, level_cost, migration_cost}) {
      const Nanoseconds t = detail::newidle_math::non_negative(term);
      if (left < t) return false;
      left -= t;  // 0 <= t <= left: no overflow
    }
    return true;
  }
};
}  // namespace level_budget
static_assert(NewidleLevelBudget<level_budget::SpentPlusMigration2013>);

// ---------------------------------------------------------------------------
// A CPU's number of balance levels, 0..max_levels. A larger value is stored
// as max_levels, so any level below it indexes the state's fixed arrays and
// no reader needs a second bounds test (a state filled in by hand included).
//   NewidleCostTracker<>::state s;  s.level_count = 12;  // reads back as 8
class LevelCount {
 public:
  constexpr LevelCount() noexcept = default;
  constexpr LevelCount(std::uint32_t n) noexcept : n_(n < max_levels ? n : max_levels) {}
  constexpr operator std::uint32_t() const noexcept { return n_; }

 private:
  std::uint32_t n_ = 0;
};

// ---------------------------------------------------------------------------
// The defaults: today's kernel. Derive and replace one member:
//   struct my_traits : taskplace::DefaultNewidleTraits {
//     using Estimator = taskplace::avg_idle::Saturate2009;
//   };
struct DefaultNewidleTraits {
  // kernel ttwu/idle exit since v3.13: averaging first never overestimates
  using Estimator = avg_idle::Clamp2014;
  // kernel update_newidle_cost since v5.16: a cost still being hit stays
  using Schedule = cost_decay::IfNoNewMax2022;
  using Ratio = DecayRatio<253, 256>;  // kernel since v5.16: ~1.2%/s, half-life ~60 s
  // kernel since v5.16: the 500 us gate hid cheap SMT/LLC pulls
  using EntryGate = newidle_gate::FirstLevel2022;
  // kernel since v3.13: stop before a level the idle time cannot pay for
  using Budget = level_budget::Spent2014;
  // Low 2013 patch 2/3's early cap of a level's cost at 5 * migration_cost.
  // Off: decay replaced it before merging.
  static constexpr bool cap_level_cost = false;
  // The 2026 guard: no idle stamp, no sample. On: without it one bogus
  // delta (from the clock's epoch) saturates avg_idle.
  static constexpr bool skip_without_stamp = true;
  // v6.17 (Chris Mason, 2025): a level's attempt that found nothing records
  // 3/2 of the level's maximum instead of its timed cost, and every new
  // maximum is capped at migration_cost + 200 ns, so failing levels price
  // themselves out. Off: reverted in v6.18 (SPECjbb -6%), replaced by the
  // success-rate gate (policy/newidle_success_rate.hpp). Optional in user
  // traits: a traits type without it reads as false.
  static constexpr bool bump_failed_cost = false;
  // Low 2013 patch 2/3 (v3.13): avg_idle is capped at twice the CPU-wide
  // balance cost (max_idle_balance_cost). Off: twice migration_cost, as
  // the 2009-2013 kernels did (they kept no balance cost). Optional in user
  // traits: a traits type without it reads as true.
  static constexpr bool cap_avg_idle_on_cost = true;
};

namespace detail {
template <class T> concept NewidleHasEstimator = requires { typename T::Estimator; } && AvgIdleEstimator<typename T::Estimator>;
template <class T> concept NewidleHasSchedule = requires { typename T::Schedule; } && CostDecaySchedule<typename T::Schedule>;
template <class T> concept NewidleHasRatio = requires { typename T::Ratio; } && CostDecayRatio<typename T::Ratio>;
template <class T> concept NewidleHasGate = requires { typename T::EntryGate; } && NewidleEntryGate<typename T::EntryGate>;
template <class T> concept NewidleHasBudget = requires { typename T::Budget; } && NewidleLevelBudget<typename T::Budget>;
template <class T> concept NewidleHasCap = requires { { T::cap_level_cost } -> std::convertible_to<bool>; };
template <class T> concept NewidleHasGuard = requires { { T::skip_without_stamp } -> std::convertible_to<bool>; };
// bump_failed_cost came after the other members: traits written before it
// (not derived from DefaultNewidleTraits) read as "no bump".
template <class T> constexpr bool newidle_bumps_failed_cost() noexcept {
  if constexpr (requires { { T::bump_failed_cost } -> std::convertible_to<bool>; }) return T::bump_failed_cost;
  else return false;
}
// cap_avg_idle_on_cost likewise: traits without it read as "capped on the
// balance cost", the behaviour before the member existed.
template <class T> constexpr bool newidle_caps_on_cost() noexcept {
  if constexpr (requires { { T::cap_avg_idle_on_cost } -> std::convertible_to<bool>; }) return T::cap_avg_idle_on_cost;
  else return true;
}
}  // namespace detail

// ---------------------------------------------------------------------------
// NewidleCostTracker: avg_idle against the cost of balancing.
//
// A CPU about to go idle may pull work from others, level by level. Pulling
// costs time; it is only worth it when the CPU would stay idle longer than
// the pull takes. We keep the average idle period and, per level, the worst
// pull cost seen (a maximum, not an average: costs vary too much for an
// average to compare meaningfully, Low 2013), and let the maximum decay so a
// one-off spike (runqueue lock contention) is not carried until reboot.
//
// An aggregate: `NewidleCostTracker<> t{.migration_cost = 250us};`.
template <class Traits>
class NewidleCostTracker {
 public:
  static_assert(detail::NewidleHasEstimator<Traits>,
                "Traits::Estimator must model taskplace::AvgIdleEstimator (static update(avg, delta, cap) noexcept -> Nanoseconds)");
  static_assert(detail::NewidleHasSchedule<Traits>,
                "Traits::Schedule must model taskplace::CostDecaySchedule (static bool restart_on_new_max)");
  static_assert(detail::NewidleHasRatio<Traits>,
                "Traits::Ratio must model taskplace::CostDecayRatio (num, den with 0 < num < den)");
  static_assert(detail::NewidleHasGate<Traits>,
                "Traits::EntryGate must model taskplace::NewidleEntryGate (static allow(avg, first_cost, migration) noexcept -> bool)");
  static_assert(detail::NewidleHasBudget<Traits>,
                "Traits::Budget must model taskplace::NewidleLevelBudget (static allow(avg, spent, cost, migration) noexcept -> bool)");
  static_assert(detail::NewidleHasCap<Traits>, "Traits::cap_level_cost must be a bool constant");
  static_assert(detail::NewidleHasGuard<Traits>, "Traits::skip_without_stamp must be a bool constant");

  using traits_type = Traits;
  using estimator = typename Traits::Estimator;
  using schedule = typename Traits::Schedule;
  using ratio = typename Traits::Ratio;
  using entry_gate = typename Traits::EntryGate;
  using budget = typename Traits::Budget;

  // default 500us; kernel: sysctl_sched_migration_cost
  SaturatingNanoseconds migration_cost = tunables::migration_cost;
  // default 1s; kernel: HZ in update_newidle_cost
  SaturatingNanoseconds decay_period = tunables::cost_decay_period;

  // Per-CPU state; lives in the embedder's per-worker data. Make it with
  // make_state(). The idle stamp is a separate flag, not "0 = none" as in
  // the kernel, so a clock whose epoch is the pool's start may stamp 0.
  // The per-level fields are arrays indexed by level (kernel: each sched
  // domain's sd->max_newidle_lb_cost and sd->last_decay_max_lb_cost), one
  // array per field, so a gate reads one 8-byte slot per level.
  // Invariant: level_count <= max_levels (its type clamps); avg_idle >= 0;
  //   max_cost[i] >= 0; max_idle_balance_cost >= migration_cost once
  //   make_state/record_cost/decay ran; max_cost[i] == 0 for
  //   i >= level_count (make_state zeroes every level; record_cost and decay
  //   write below level_count only). A state filled in by hand must keep
  //   these; outside them the answers are unspecified but defined.
  // Aligned to a cache line: each worker writes its own state on every idle
  // entry and exit, so two states must not share a line (kernel: struct rq
  // is cache-line aligned for the same reason).
  struct alignas(64) state {
    Nanoseconds idle_stamp{0};  // when the idle period began, if has_stamp
    bool has_stamp = false;     // kernel: rq->idle_stamp != 0
    Nanoseconds avg_idle = tunables::initial_avg_idle;                // kernel rq->avg_idle
    Nanoseconds max_idle_balance_cost = tunables::migration_cost;     // kernel rq->max_idle_balance_cost
    std::array<Nanoseconds, max_levels> max_cost{};    // worst pull cost seen per level, decayed
    std::array<Nanoseconds, max_levels> last_decay{};  // when it last decayed (or, v5.16, last rose)
    LevelCount level_count{};
  };

  // Returns: a fresh state for a CPU with `level_count` levels at `now`:
  //   avg_idle = 2 * migration_cost (balancing allowed at first),
  //   max_idle_balance_cost = migration_cost, level costs 0, last_decay = now.
  // Precondition (checked): level_count <= max_levels; unchecked builds
  //   clamp it to max_levels. Complexity: O(max_levels). Thread-safety: const.
  state make_state(std::uint32_t level_count, Nanoseconds now) const TASKPLACE_NOEXCEPT {
    TASKPLACE_EXPECTS(level_count <= max_levels, "level_count must be <= max_levels");
    state s;
    s.level_count = level_count;  // LevelCount clamps
    s.avg_idle = detail::newidle_math::saturating_twice(migration_cost);
    s.max_idle_balance_cost = detail::newidle_math::non_negative(migration_cost);
    s.max_cost.fill(Nanoseconds{0});
    s.last_decay.fill(now);
    return s;
  }

  // Effects: the CPU starts idling at `now` (stamps it, replacing any stamp).
  // Complexity: O(1). Thread-safety: one thread per state.
  void idle_start(state& s, Nanoseconds now) const noexcept {
    s.idle_stamp = now;
    s.has_stamp = true;
  }

  // Effects: the CPU stops idling at `now`. delta = now - idle_stamp (0 if
  //   the clock went backwards) folds into avg_idle through the estimator
  //   with cap = 2 * max_idle_balance_cost (2 * migration_cost when
  //   Traits::cap_avg_idle_on_cost is false); the stamp is cleared. Without a
  //   stamp: no-op if Traits::skip_without_stamp (the 2026 guard), else the
  //   stamp's value is used, as kernels before the guard did: 0 after
  //   clear_stamp (an idle_end, a balance that pulled).
  // Complexity: O(1). Thread-safety: one thread per state.
  void idle_end(state& s, Nanoseconds now) const noexcept {
    if (!s.has_stamp && Traits::skip_without_stamp) return;
    const Nanoseconds delta = detail::elapsed(s.idle_stamp, now);
    const Nanoseconds cost = detail::newidle_caps_on_cost<Traits>() ? s.max_idle_balance_cost
                                                                   : detail::newidle_math::non_negative(migration_cost);
    s.avg_idle = detail::newidle_math::non_negative(
        estimator::update(s.avg_idle, delta, detail::newidle_math::saturating_twice(cost)));
    clear_stamp(s);
  }

  // Effects: no idle period is open: has_stamp false and idle_stamp 0, as
  //   the kernel's idle_stamp = 0 (after idle_end, and after a newidle
  //   balance that pulled). Without the guard (skip_without_stamp false)
  //   the next idle_end then measures from 0, as the kernel's did.
  // Complexity: O(1). Thread-safety: one thread per state.
  void clear_stamp(state& s) const noexcept {
    s.has_stamp = false;
    s.idle_stamp = Nanoseconds{0};
  }

  // Returns: whether the entry gate lets this CPU balance at all, from
  //   avg_idle and level 0's cost (0 without levels: make_state zeroes
  //   every level and nothing writes past level_count, so max_cost[0] reads
  //   0 then, with no test of level_count here).
  // Complexity: O(1). Thread-safety: const.
  bool should_balance(const state& s) const noexcept {
    return entry_gate::allow(s.avg_idle, s.max_cost[0], migration_cost);
  }

  // Returns: what a timed attempt of `cost` adds to the `spent` a balance
  //   passes to may_visit_level: the cost (negative reads as 0), capped at
  //   5 * migration_cost if Traits::cap_level_cost (Low 2013 patch 2/3 adds
  //   the capped domain_cost to curr_cost).
  // Complexity: O(1). Thread-safety: const.
  Nanoseconds charged_cost(Nanoseconds cost) const noexcept {
    const Nanoseconds c = detail::newidle_math::non_negative(cost);
    if constexpr (Traits::cap_level_cost) return std::min(c, early_cap());
    return c;
  }

  // Returns: whether the budget allows visiting `level` after `spent` time
  //   in this balance (negative spent reads as 0).
  // Precondition (checked): level < level_count; unchecked builds return
  //   false for such a level. Complexity: O(1). Thread-safety: const.
  bool may_visit_level(const state& s, std::uint32_t level, Nanoseconds spent) const TASKPLACE_NOEXCEPT {
    TASKPLACE_EXPECTS(level < s.level_count, "level must be < level_count");
    if (level >= s.level_count) return false;  // level_count <= max_levels by its type
    return budget::allow(s.avg_idle, detail::newidle_math::non_negative(spent), s.max_cost[level], migration_cost);
  }

  // Effects: a pull at `level` took `cost` (negative reads as 0; capped at
  //   5 * migration_cost if Traits::cap_level_cost). A new maximum replaces
  //   max_cost and, with cost_decay::IfNoNewMax2022, restarts the level's decay wait
  //   (last_decay = now). Otherwise, with cost_decay::IfNoNewMax2022, a due decay of
  //   this level is applied (v5.16 decays in update_newidle_cost, which both
  //   the newidle and the periodic balance call). Then the CPU-wide cost is
  //   recomputed: max(migration_cost, sum of level costs), saturating.
  // Precondition (checked): level < level_count; unchecked builds ignore
  //   such a call. Complexity: O(level_count). Thread-safety: one thread per state.
  void record_cost(state& s, std::uint32_t level, Nanoseconds cost, Nanoseconds now) const TASKPLACE_NOEXCEPT {
    record_attempt(s, level, cost, true, now);  // an attempt that pulled is never bumped
  }

  // Effects: record_cost for an attempt whose outcome is known. With
  //   Traits::bump_failed_cost (v6.17, reverted) an attempt that did not
  //   pull records 3/2 of the level's current maximum (saturating) instead
  //   of `cost`, and a new maximum is capped at migration_cost + 200 ns;
  //   otherwise exactly record_cost(s, level, cost, now). The balancer
  //   calls this one. Precondition and complexity: as record_cost.
  void record_attempt(state& s, std::uint32_t level, Nanoseconds cost, bool pulled,
                      Nanoseconds now) const TASKPLACE_NOEXCEPT {
    TASKPLACE_EXPECTS(level < s.level_count, "level must be < level_count");
    if (level >= s.level_count) return;  // level_count <= max_levels by its type
    Nanoseconds c = detail::newidle_math::non_negative(cost);
    if constexpr (detail::newidle_bumps_failed_cost<Traits>()) {
      if (!pulled) {
        const Nanoseconds m = detail::newidle_math::non_negative(s.max_cost[level]);
        c = detail::saturating_add(m, m / 2);  // floor(3 * m / 2) exactly, saturating instead of overflowing
      }
    }
    record(s, level, c, now);
  }

  // Effects: the periodic tick (kernel: rebalance_domains). Every level
  //   whose last decay is strictly more than decay_period before `now` is
  //   multiplied by Ratio (exact 64-bit arithmetic, rounding down) and
  //   stamped `now`; one step per level per call, however long it has been.
  //   A clock that went backwards decays nothing. Then the CPU-wide cost is
  //   recomputed. With cost_decay::EverySecond2014 this is the only decay; with
  //   cost_decay::IfNoNewMax2022 a recent new maximum has moved last_decay forward.
  // Complexity: O(level_count). Thread-safety: one thread per state.
  void decay(state& s, Nanoseconds now) const noexcept {
    for (std::uint32_t i = 0; i < s.level_count; ++i) decay_level(s, i, now);
    recompute(s);
  }

  // Returns: the average idle period. Complexity: O(1).
  Nanoseconds avg_idle(const state& s) const noexcept { return s.avg_idle; }
  // Returns: the CPU-wide cost, max(migration_cost, sum of level costs).
  Nanoseconds cpu_cost(const state& s) const noexcept { return s.max_idle_balance_cost; }
  // Returns: level's decayed maximum cost; 0 for a level >= level_count.
  Nanoseconds level_cost(const state& s, std::uint32_t level) const noexcept {
    return level < s.level_count ? s.max_cost[level] : Nanoseconds{0};
  }

 private:
  // The common body of record_cost and record_attempt, for a level below
  // level_count and c >= 0: the optional caps, then a new maximum or, with
  // cost_decay::IfNoNewMax2022, a due decay; then the CPU-wide cost.
  void record(state& s, std::uint32_t level, Nanoseconds c, Nanoseconds now) const noexcept {
    if constexpr (Traits::cap_level_cost) c = std::min(c, early_cap());
    if (c > s.max_cost[level]) {
      if constexpr (detail::newidle_bumps_failed_cost<Traits>())
        c = std::min(c, detail::saturating_add(detail::newidle_math::non_negative(migration_cost), Nanoseconds{200}));
      s.max_cost[level] = c;
      if constexpr (schedule::restart_on_new_max) s.last_decay[level] = now;
    } else if constexpr (schedule::restart_on_new_max) {
      decay_level(s, level, now);
    }
    recompute(s);
  }


  Nanoseconds early_cap() const noexcept {
    const Nanoseconds m = detail::newidle_math::non_negative(migration_cost);
    return m.count() > Nanoseconds::max().count() / 5 ? Nanoseconds::max() : 5 * m;
  }

  void decay_level(state& s, std::uint32_t level, Nanoseconds now) const noexcept {
    // Strictly more than decay_period since the last decay, the difference
    // unsaturated: with decay_period = Nanoseconds::max() a stamp below 0
    // and now = max() still decay (elapsed() would saturate and never be
    // more than max()).
    if (detail::strictly_after(now, s.last_decay[level], detail::newidle_math::non_negative(decay_period))) {
      s.max_cost[level] = detail::newidle_math::scale_down(s.max_cost[level], ratio::num, ratio::den);
      s.last_decay[level] = now;
    }
  }

  // Peter Zijlstra (Low 2013): the sum, since a balance walks every level;
  // the migration_cost floor keeps avg_idle's cap sane when costs are tiny.
  void recompute(state& s) const noexcept {
    Nanoseconds sum{0};
    for (std::uint32_t i = 0; i < s.level_count; ++i)
      sum = detail::saturating_add(sum, detail::newidle_math::non_negative(s.max_cost[i]));
    s.max_idle_balance_cost = std::max(detail::newidle_math::non_negative(migration_cost), sum);
  }
};
static_assert(NewidleTracker<NewidleCostTracker<DefaultNewidleTraits>>);

}  // namespace taskplace
