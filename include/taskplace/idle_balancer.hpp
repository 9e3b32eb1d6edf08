// taskplace/idle_balancer.hpp: the whole newidle-balance decision.
//
// "CPU c has nothing to run: try to pull work, and how far?" Kernel
// analogue: newidle_balance() / sched_balance_newidle() with the cost
// limiting of Low 2013 (v3.13) and the gates of v5.16: walk the levels from
// the smallest, time each attempt, stop when the expected idle time no
// longer pays for the next level or when work was found.
//
//   taskplace::IdleBalancer<taskplace::UniformTopology> balancer{topo};
//   auto r = balancer.balance(cpu, state, [&](std::uint32_t, LevelKind, auto span) { return steal(span); }, clock);
#pragma once

#include "taskplace/detail/config.hpp"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <type_traits>
#include <utility>

#include "taskplace/detail/traits.hpp"
#include "taskplace/clock.hpp"
#include "taskplace/concepts.hpp"
#include "taskplace/fwd.hpp"
#include "taskplace/detail/assert.hpp"
#include "taskplace/detail/math.hpp"
#include "taskplace/policy/newidle_cost_tracker.hpp"
#include "taskplace/policy/newidle_success_rate.hpp"
#include "taskplace/policy/task_hot.hpp"
#include "taskplace/stats.hpp"
#include "taskplace/types.hpp"

namespace taskplace {

// Newidle traits of earlier eras, for comparison.
namespace newidle {
// Balance at every level whenever idle: no cost limit at all.
struct NoLimit : DefaultNewidleTraits {
  using EntryGate = newidle_gate::None;
  using Budget = level_budget::None;
};
// 2009-2013: skip when avg_idle < migration_cost, otherwise walk every
// level; avg_idle by the overestimating avg_idle::Saturate2009 rule, capped at twice
// migration_cost (no balance cost was kept before Low 2013).
struct Gate2009 : DefaultNewidleTraits {
  using Estimator = avg_idle::Saturate2009;
  using Schedule = cost_decay::EverySecond2014;
  using EntryGate = newidle_gate::MigrationCost2009;
  using Budget = level_budget::None;
  static constexpr bool cap_avg_idle_on_cost = false;
};
// v3.13 (Low 2013 as merged): per-level cost budget on top of the 2009
// gate, decaying once a second.
struct PerLevel2014 : DefaultNewidleTraits {
  using Schedule = cost_decay::EverySecond2014;
  using EntryGate = newidle_gate::MigrationCost2009;
  using Budget = level_budget::Spent2014;
};
// v6.17 (2025, reverted in v6.18): a level whose attempt found nothing
// records 3/2 of its maximum, capped at migration_cost + 200 ns.
struct BumpFailed2025 : DefaultNewidleTraits {
  static constexpr bool bump_failed_cost = true;
};
// Today's kernel's cost tracking (its success-rate dice are the balancer's
// Attempts member: see traits::Balance).
struct StampGuard2026 : DefaultNewidleTraits {};
}  // namespace newidle

struct DefaultBalanceTraits {
  using Tracker = NewidleCostTracker<>;  // kernel avg_idle + max_newidle_lb_cost, v5.16 on
  // Which of the levels the budget allows are tried: all of them, as the
  // kernel did until v6.17. The kernel since v6.18 throws success-rate dice
  // (NewidleSuccessRate<>); taskplace keeps every decision a function of
  // its inputs by default, see docs/policies/newidle_success_rate.md.
  using Attempts = AttemptEveryLevel;
  // The cache-hot test of a steal (kit::Stealer; kernel task_hot() in
  // can_migrate_task()): v5.10's, SMT moves never hot. TaskHot<
  // task_hot::AllLevels2007> is the classic test of v2.6.23 to v5.9.
  using Hot = TaskHot<>;
  using Stats = NoStats;                 // schedstats off
  using Hook = NoHook;                   // no tracepoint
};

namespace traits {
// A balancer whose newidle cost tracking follows `NewidleTraits`, trying
// levels as `Attempts` says, its steals judged by the cache-hot test `Hot`.
template <class NewidleTraits, class Attempts_ = AttemptEveryLevel, class Hot_ = TaskHot<>>
struct Balance : DefaultBalanceTraits {
  using Tracker = NewidleCostTracker<NewidleTraits>;
  using Attempts = Attempts_;
  using Hot = Hot_;
};
// Today's kernel (v7.0 on): the current cost tracking and the success-rate
// dice with the rate term.
using BalanceLinux2026 =
    Balance<newidle::StampGuard2026, NewidleSuccessRate<success_rate::ProportionalRate2026>>;
}  // namespace traits

static_assert(NewidleTracker<NewidleCostTracker<newidle::NoLimit>>);
static_assert(NewidleTracker<NewidleCostTracker<newidle::Gate2009>>);
static_assert(NewidleTracker<NewidleCostTracker<newidle::PerLevel2014>>);
static_assert(NewidleTracker<NewidleCostTracker<newidle::BumpFailed2025>>);
static_assert(NewidleTracker<NewidleCostTracker<newidle::StampGuard2026>>);

namespace detail {
// Traits::Attempts, or AttemptEveryLevel for balance traits written before
// it existed (not derived from DefaultBalanceTraits).
template <class Traits>
using attempts_member = typename Traits::Attempts;
template <class Traits>
using balance_attempts_t = member_or_t<Traits, AttemptEveryLevel, attempts_member>;
template <class Traits>
using tracker_member = typename Traits::Tracker;
template <class Traits>
using balance_stats_member = typename Traits::Stats;
template <class Traits>
using balance_hook_member = typename Traits::Hook;
template <class Traits>
using hot_member = typename Traits::Hot;

// The balancer's per-CPU state: the tracker's, plus the attempt policy's
// when that has any (AttemptEveryLevel has none: then it is the tracker's
// state itself, unchanged).
template <class TrackerState, class AttemptState, bool = std::is_empty_v<AttemptState>>
struct balancer_state {
  using type = TrackerState;
};
template <class TrackerState, class AttemptState>
struct balancer_state<TrackerState, AttemptState, false> {
  struct type : TrackerState {
    AttemptState attempts{};  // per level: calls, successes, ratio; the dice
  };
};
}  // namespace detail

enum class BalanceOutcome : std::uint8_t {
  pulled,        // a level's pull found work
  nothing_found, // every level allowed by the budget was tried, no work
  entry_gate,    // avg_idle too short: not tried at all
  budget,        // stopped before a level it could not afford, no work
  not_overloaded,  // the caller said no CPU has a task to spare: not tried
};

// What the caller knows of the other CPUs when one runs dry: whether any
// runs two or more tasks, so that there is something a pull could take.
// Kernel analogue: the root domain's overload flag (rd->overloaded), set
// when a CPU's nr_running reaches 2 and cleared by the top level's load
// balance; newidle_balance returns at once while it is clear (Tim Chen,
// "sched: Fast idling of CPU when system is partially loaded", v3.16,
// 2014). `unknown` (the default) balances as if some CPU were.
enum class Overload : std::uint8_t {
  unknown,  // the caller does not track it: balance
  none,     // no CPU runs two or more: skip, the CPU goes idle at once
  some,     // some CPU does: balance
};

constexpr const char* to_string(BalanceOutcome o) noexcept {
  switch (o) {
    case BalanceOutcome::pulled: return "pulled";
    case BalanceOutcome::nothing_found: return "nothing_found";
    case BalanceOutcome::entry_gate: return "entry_gate";
    case BalanceOutcome::budget: return "budget";
    case BalanceOutcome::not_overloaded: return "not_overloaded";
  }
  return "unknown";
}

struct BalanceResult {
  BalanceOutcome outcome;
  std::uint32_t levels_visited = 0;    // pull attempts made
  std::uint32_t levels_skipped = 0;    // levels the attempt policy passed over (success-rate dice)
  std::uint32_t stopped_before = 0;    // with outcome budget: the level not tried
  std::uint32_t pulled_level = 0;      // with outcome pulled: the level that found work
  Nanoseconds spent{0};                // time spent in pull attempts
};

// The event a Hook receives: the balance's CPU, its avg_idle as the entry
// gate read it, the result, and the clock's time once the balance ended
// (read for the hook only: a balancer without one reads no extra time).
struct BalanceEvent {
  CpuId cpu;
  Nanoseconds avg_idle;
  BalanceResult result;
  Nanoseconds now{0};
};
static_assert(DecisionHook<NoHook, BalanceEvent>);

namespace detail {
// Each member of an IdleBalancer's traits as given (void where a required
// one is missing), whether it models its role, and what the balancer uses:
// the member where it does, else the default (see wake_traits_check).
template <class Traits>
struct balance_traits_check {
  using tracker = member_or_t<Traits, void, tracker_member>;
  using attempts = balance_attempts_t<Traits>;
  using stats = member_or_t<Traits, void, balance_stats_member>;
  using hook = member_or_t<Traits, void, balance_hook_member>;
  using hot = member_or_t<Traits, TaskHot<>, hot_member>;  // optional: came later
  static constexpr bool tracker_ok = NewidleTracker<tracker>;
  static constexpr bool attempts_ok = NewidleAttemptPolicy<attempts>;
  static constexpr bool stats_ok = StatsPolicy<stats, BalanceCounter>;
  static constexpr bool hook_ok = DecisionHook<hook, BalanceEvent>;
  static constexpr bool hot_ok = TaskHotPolicy<hot>;
  using tracker_type = checked_t<tracker_ok, tracker, NewidleCostTracker<>>;
  using attempts_type = checked_t<attempts_ok, attempts, AttemptEveryLevel>;
  using stats_family = checked_t<stats_ok, stats, NoStats>;
  using hook_type = checked_t<hook_ok, hook, NoHook>;
  using hot_policy = checked_t<hot_ok, hot, TaskHot<>>;
};

// The checks of an IdleBalancer's traits, one static_assert per member,
// each naming the member and the fix; IdleBalancer runs them first thing
// (as WakePlacer runs check_wake_traits).
template <class Traits>
consteval bool check_balance_traits() {
  using C = balance_traits_check<Traits>;
  static_assert(NewidleTracker<typename C::tracker>,
                "Traits::Tracker must model taskplace::NewidleTracker: use NewidleCostTracker<NewidleTraits>; "
                "a newidle traits set such as newidle::Gate2009 is its parameter (or use "
                "traits::Balance<NewidleTraits>)");
  static_assert(NewidleAttemptPolicy<typename C::attempts>,
                "Traits::Attempts must model taskplace::NewidleAttemptPolicy: use AttemptEveryLevel or "
                "NewidleSuccessRate<Variant>, or give it a state, make_state, roll and record");
  static_assert(StatsPolicy<typename C::stats, BalanceCounter>,
                "Traits::Stats must model taskplace::StatsPolicy: use NoStats, PlainStats, SingleWriterStats "
                "or AtomicStats, the family itself, not one of its counters<...>");
  static_assert(DecisionHook<typename C::hook, BalanceEvent>,
                "Traits::Hook must model taskplace::DecisionHook<H, BalanceEvent>: use NoHook, or a "
                "default-constructible type callable as hook(const BalanceEvent&)");
  static_assert(TaskHotPolicy<typename C::hot>,
                "Traits::Hot must model taskplace::TaskHotPolicy: use TaskHot<task_hot::SmtExempt2020> (the "
                "default) or TaskHot<task_hot::AllLevels2007>, the test itself, not its rule");
  return true;
}
}  // namespace detail

template <Topology T, class Traits>  // default in fwd.hpp
class IdleBalancer {
  // Every member is checked before any is used (see check_balance_traits).
  static_assert(detail::check_balance_traits<Traits>());
  using check_ = detail::balance_traits_check<Traits>;

 public:
  using tracker_type = typename check_::tracker_type;
  using attempts_type = typename check_::attempts_type;
  // The tracker's state (plus `attempts`, when the attempt policy keeps any).
  using state = typename detail::balancer_state<typename tracker_type::state, typename attempts_type::state>::type;
  static constexpr bool has_attempt_state = !std::is_same_v<state, typename tracker_type::state>;
  using stats_type = typename check_::stats_family::template counters<BalanceCounter>;
  using hook_type = typename check_::hook_type;
  // The cache-hot test of this balancer's steals (Traits::Hot), for the
  // runtime's kit::Stealer: kit::Stealer<T, hot_policy>.
  using hot_policy = typename check_::hot_policy;

  explicit IdleBalancer(const T& topology, tracker_type tracker = {}, attempts_type attempts = {})
      : topology_(&topology), tracker_(tracker), attempts_(attempts) {}
  // The balancer keeps a pointer to the topology: a temporary would dangle.
  IdleBalancer(const T&&, tracker_type = {}, attempts_type = {}) = delete;

  // Returns: fresh per-CPU state for `cpu` (levels from the topology; the
  // attempt policy's dice, if any, seeded with the CPU id).
  // Precondition (checked): cpu < cpu_count().
  state make_state(CpuId cpu, Nanoseconds now) const {
    TASKPLACE_EXPECTS(cpu < topology_->cpu_count(), "cpu must be < cpu_count()");
    const auto levels = static_cast<std::uint32_t>(topology_->level_count(cpu));
    if constexpr (has_attempt_state) {
      state s;
      static_cast<typename tracker_type::state&>(s) = tracker_.make_state(levels, now);
      s.attempts = attempts_.make_state(levels, now, cpu);
      return s;
    } else {
      return tracker_.make_state(levels, now);
    }
  }

  // Effects: the newidle balance of `cpu`. Unless the entry gate refuses,
  // calls pull(level, kind, cpus) for each level from the smallest, timing
  // each call with `clock` and recording its cost, until a pull returns true
  // or the next level's cost exceeds what the expected idle time leaves.
  // A level the budget allows may still be passed over by the attempt
  // policy (Traits::Attempts; never with the default): no pull, no time,
  // on to the next level, as the kernel's success-rate dice do.
  // With no work found the CPU's idle period starts (idle_end ends it).
  // With `overload` == Overload::none nothing is tried (no CPU has a task
  // to spare, the kernel's v3.16 gate) and the idle period starts at once.
  // `pull` (a taskplace::NewidlePull: pull(level, kind, cpus) -> bool) must
  // return true if it got work; it may throw, in which case
  // nothing of this call is recorded: `st` and the counters are unchanged
  // and the exception propagates. (A pull and clock that are noexcept let
  // the balance skip the copy that guarantee needs.)
  // Complexity: level_count(cpu) pulls at most.
  // Thread-safety: `st` belongs to `cpu`; call from that CPU's worker only.
  template <class Pull, Clock C>
  BalanceResult balance(CpuId cpu, state& st, Pull&& pull, const C& clock,
                        Overload overload = Overload::unknown) const {
    TASKPLACE_EXPECTS(cpu < topology_->cpu_count(), "cpu must be < cpu_count()");
    // A pull or a clock that may throw works on a copy of `st`, committed at
    // the end, so that an exception leaves `st` (and the counters) as they
    // were. With a noexcept pull and clock nothing can be left half done:
    // the walk runs on `st` itself and the copy (a few hundred bytes of
    // state, twice) is not paid for.
    using span_type = decltype(topology_->level_cpus(cpu, 0u));
    static_assert(NewidlePull<Pull, span_type>,
                  "IdleBalancer::balance: pull must model taskplace::NewidlePull: callable as "
                  "pull(std::uint32_t level, LevelKind kind, cpus), cpus being the topology's level_cpus(), "
                  "and return bool (true: it got work)");
    constexpr bool nothrow = std::is_nothrow_invocable_v<Pull&, std::uint32_t, LevelKind, span_type> &&
                             noexcept(std::declval<const C&>().now());
    BalanceResult r{};
    if constexpr (!NewidlePull<Pull, span_type>) {
      // Refused above; nothing more to say about it.
    } else if constexpr (nothrow) {
      r = walk(cpu, st, pull, clock, overload);
    } else {
      state work = st;
      r = walk(cpu, work, pull, clock, overload);
      st = work;
    }
    stats_.add(BalanceCounter::runs);
    stats_.add(BalanceCounter::levels_visited, r.levels_visited);
    if constexpr (has_attempt_state) stats_.add(BalanceCounter::levels_skipped, r.levels_skipped);
    switch (r.outcome) {
      case BalanceOutcome::pulled: stats_.add(BalanceCounter::pulls); break;
      case BalanceOutcome::nothing_found: stats_.add(BalanceCounter::nothing_found); break;
      case BalanceOutcome::entry_gate: stats_.add(BalanceCounter::entry_gate_skips); break;
      case BalanceOutcome::budget: stats_.add(BalanceCounter::budget_stops); break;
      case BalanceOutcome::not_overloaded: stats_.add(BalanceCounter::not_overloaded_skips); break;
    }
    if constexpr (detail::hook_enabled<hook_type>())
      hook_(BalanceEvent{cpu, tracker_.avg_idle(st), r, clock.now()});
    return r;
  }

  // Effects: `cpu` stops idling (a task was queued, or it picked work on
  // its own); folds the idle period into avg_idle. No-op without an idle
  // stamp (the 2026 guard, when the traits enable it).
  void idle_end(state& st, Nanoseconds now) const noexcept {
    bool folds = true;
    if constexpr (requires { st.has_stamp; tracker_type::traits_type::skip_without_stamp; }) folds = st.has_stamp || !tracker_type::traits_type::skip_without_stamp;
    if (folds) stats_.add(BalanceCounter::idle_periods);
    tracker_.idle_end(st, now);
  }

  // Effects: the periodic tick: decays the per-level costs.
  void tick(state& st, Nanoseconds now) const noexcept {
    stats_.add(BalanceCounter::decays);
    tracker_.decay(st, now);
  }

  const T& topology() const noexcept { return *topology_; }
  const tracker_type& tracker() const noexcept { return tracker_; }
  const attempts_type& attempts() const noexcept { return attempts_; }
  const stats_type& stats() const noexcept { return stats_; }
  stats_type& stats() noexcept { return stats_; }
  hook_type& hook() noexcept { return hook_; }

 private:
  // The levels' walk of balance(), on `work`: the overload gate, the entry
  // gate, the budget, the attempt policy, the timed pulls and what they
  // record, then the idle stamp. Touches nothing but `work`.
  template <class Pull, Clock C>
  BalanceResult walk(CpuId cpu, state& work, Pull& pull, const C& clock, Overload overload) const {
    const T& t = *topology_;
    const Nanoseconds start = clock.now();
    BalanceResult r{BalanceOutcome::nothing_found};
    if (overload == Overload::none) {
      r.outcome = BalanceOutcome::not_overloaded;
    } else if (!tracker_.should_balance(work)) {
      r.outcome = BalanceOutcome::entry_gate;
    } else {
      const auto levels = std::min<std::uint32_t>(
          static_cast<std::uint32_t>(t.level_count(cpu)), work.level_count);
      Nanoseconds t0 = start;
      // What the budget has been charged so far: the time spent, unless
      // the tracker charges less (Low 2013 patch 2/3's early cap).
      Nanoseconds charged{0};
      for (std::uint32_t i = 0; i < levels; ++i) {
        if (!tracker_.may_visit_level(work, i, charged)) {
          r.outcome = BalanceOutcome::budget;
          r.stopped_before = i;
          break;
        }
        std::uint32_t weight = 1;
        if constexpr (has_attempt_state) {
          weight = attempts_.roll(work.attempts, i, t0);
          if (weight == 0) {
            ++r.levels_skipped;
            continue;
          }
        }
        const bool got = std::invoke(pull, i, t.level_kind(cpu, i), t.level_cpus(cpu, i));
        const Nanoseconds t1 = clock.now();
        const Nanoseconds cost = detail::elapsed(t0, t1);
        tracker_.record_attempt(work, i, cost, got, t1);
        if constexpr (has_attempt_state) attempts_.record(work.attempts, i, got, weight, t1);
        r.spent = detail::saturating_add(r.spent, cost);
        if constexpr (requires { tracker_.charged_cost(cost); })
          charged = detail::saturating_add(charged, tracker_.charged_cost(cost));
        else
          charged = r.spent;
        t0 = t1;
        ++r.levels_visited;
        if (got) {
          r.outcome = BalanceOutcome::pulled;
          r.pulled_level = i;
          break;
        }
      }
    }
    // The idle period counts from the start of the balance, as the kernel
    // stamps idle_stamp before balancing; a pull means the CPU did not go
    // idle, and the kernel clears the stamp (idle_stamp = 0).
    if (r.outcome != BalanceOutcome::pulled) {
      tracker_.idle_start(work, start);
    } else if constexpr (requires { tracker_.clear_stamp(work); }) {
      tracker_.clear_stamp(work);  // the stamp's value too: a later unguarded idle_end reads 0
    } else if constexpr (requires { work.has_stamp; }) {
      work.has_stamp = false;
    }
    return r;
  }

  const T* topology_;
  tracker_type tracker_;
  [[no_unique_address]] attempts_type attempts_{};
  [[no_unique_address]] mutable stats_type stats_{};
  [[no_unique_address]] mutable hook_type hook_{};
};

}  // namespace taskplace
