// taskplace/idle_balancer.hpp: the whole newidle-balance decision.
//
// "CPU c has nothing to run: try to pull work, and how far?" Kernel
// analogue: newidle_balance() / sched_balance_newidle() with the cost
// limiting of seed 003 (v3.13) and the gates of v5.16: walk the levels from
// the smallest, time each attempt, stop when the expected idle time no
// longer pays for the next level or when work was found.
//
//   taskplace::IdleBalancer<taskplace::UniformTopology> balancer{topo};
//   auto r = balancer.balance(cpu, state, [&](std::uint32_t, LevelKind, auto span) { return steal(span); }, clock);
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>

#include "taskplace/clock.hpp"
#include "taskplace/concepts.hpp"
#include "taskplace/fwd.hpp"
#include "taskplace/detail/assert.hpp"
#include "taskplace/detail/math.hpp"
#include "taskplace/policy/newidle_cost_tracker.hpp"
#include "taskplace/stats.hpp"
#include "taskplace/types.hpp"

namespace taskplace {

// Newidle traits of earlier eras, for comparison.
namespace newidle {
// Balance at every level whenever idle: no cost limit at all.
struct NoLimit : DefaultNewidleTraits {
  using EntryGate = NoEntryGate;
  using Budget = NoLevelBudget;
};
// 2009-2013: skip when avg_idle < migration_cost, otherwise walk every
// level; avg_idle by the overestimating Pre2013 rule.
struct Gate2009 : DefaultNewidleTraits {
  using Estimator = Pre2013;
  using Schedule = DecayEverySecond;
  using EntryGate = MigrationCostGate;
  using Budget = NoLevelBudget;
};
// v3.13 (seed 003 as merged): per-level cost budget on top of the 2009
// gate, decaying once a second.
struct PerLevel2013 : DefaultNewidleTraits {
  using Schedule = DecayEverySecond;
  using EntryGate = MigrationCostGate;
  using Budget = LevelBudget;
};
// Today's kernel.
struct Current : DefaultNewidleTraits {};
}  // namespace newidle

struct DefaultBalanceTraits {
  using Tracker = NewidleCostTracker<>;  // kernel avg_idle + max_newidle_lb_cost, v5.16 on
  using Stats = NoStats;                 // schedstats off
  using Hook = NoHook;                   // no tracepoint
};

namespace traits {
// A balancer whose newidle cost tracking follows `NewidleTraits`.
template <class NewidleTraits>
struct Balance : DefaultBalanceTraits {
  using Tracker = NewidleCostTracker<NewidleTraits>;
};
}  // namespace traits

enum class BalanceOutcome : std::uint8_t {
  pulled,        // a level's pull found work
  nothing_found, // every level allowed by the budget was tried, no work
  entry_gate,    // avg_idle too short: not tried at all
  budget,        // stopped before a level it could not afford, no work
};

constexpr const char* to_string(BalanceOutcome o) noexcept {
  switch (o) {
    case BalanceOutcome::pulled: return "pulled";
    case BalanceOutcome::nothing_found: return "nothing_found";
    case BalanceOutcome::entry_gate: return "entry_gate";
    case BalanceOutcome::budget: return "budget";
  }
  return "unknown";
}

struct BalanceResult {
  BalanceOutcome outcome;
  std::uint32_t levels_visited = 0;    // pull attempts made
  std::uint32_t stopped_before = 0;    // with outcome budget: the level not tried
  std::uint32_t pulled_level = 0;      // with outcome pulled: the level that found work
  Nanoseconds spent{0};                // time spent in pull attempts
};

struct BalanceEvent {
  CpuId cpu;
  Nanoseconds avg_idle;
  BalanceResult result;
};

template <Topology T, class Traits>  // default in fwd.hpp
class IdleBalancer {
 public:
  using tracker_type = typename Traits::Tracker;
  using state = typename tracker_type::state;
  using stats_type = typename Traits::Stats::template counters<BalanceCounter>;
  using hook_type = typename Traits::Hook;

  explicit IdleBalancer(const T& topology, tracker_type tracker = {})
      : topology_(&topology), tracker_(tracker) {}
  // The balancer keeps a pointer to the topology: a temporary would dangle.
  IdleBalancer(const T&&, tracker_type = {}) = delete;

  // Returns: fresh per-CPU state for `cpu` (levels from the topology).
  // Precondition (checked): cpu < cpu_count().
  state make_state(CpuId cpu, Nanoseconds now) const {
    TASKPLACE_EXPECTS(cpu < topology_->cpu_count(), "cpu must be < cpu_count()");
    return tracker_.make_state(static_cast<std::uint32_t>(topology_->level_count(cpu)), now);
  }

  // Effects: the newidle balance of `cpu`. Unless the entry gate refuses,
  // calls pull(level, kind, cpus) for each level from the smallest, timing
  // each call with `clock` and recording its cost, until a pull returns true
  // or the next level's cost exceeds what the expected idle time leaves.
  // With no work found the CPU's idle period starts (idle_end ends it).
  // `pull` must return true if it got work; it may throw, in which case
  // nothing of this call is recorded: `st` and the counters are unchanged
  // and the exception propagates.
  // Complexity: level_count(cpu) pulls at most.
  // Thread-safety: `st` belongs to `cpu`; call from that CPU's worker only.
  template <class Pull, Clock C>
  BalanceResult balance(CpuId cpu, state& st, Pull&& pull, const C& clock) const {
    TASKPLACE_EXPECTS(cpu < topology_->cpu_count(), "cpu must be < cpu_count()");
    const T& t = *topology_;
    // Work on a copy and commit it at the end: a pull that throws leaves
    // `st` (and the counters) as they were.
    state work = st;
    const Nanoseconds start = clock.now();
    BalanceResult r{BalanceOutcome::nothing_found};
    if (!tracker_.should_balance(work)) {
      r.outcome = BalanceOutcome::entry_gate;
    } else {
      const auto levels = std::min<std::uint32_t>(
          static_cast<std::uint32_t>(t.level_count(cpu)), work.level_count);
      Nanoseconds t0 = start;
      for (std::uint32_t i = 0; i < levels; ++i) {
        if (!tracker_.may_visit_level(work, i, r.spent)) {
          r.outcome = BalanceOutcome::budget;
          r.stopped_before = i;
          break;
        }
        const bool got = std::invoke(pull, i, t.level_kind(cpu, i), t.level_cpus(cpu, i));
        const Nanoseconds t1 = clock.now();
        const Nanoseconds cost = detail::elapsed(t0, t1);
        tracker_.record_cost(work, i, cost, t1);
        r.spent = detail::saturating_add(r.spent, cost);
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
    } else if constexpr (requires { work.has_stamp; }) {
      work.has_stamp = false;
    }
    st = work;
    stats_.add(BalanceCounter::runs);
    stats_.add(BalanceCounter::levels_visited, r.levels_visited);
    switch (r.outcome) {
      case BalanceOutcome::pulled: stats_.add(BalanceCounter::pulls); break;
      case BalanceOutcome::nothing_found: stats_.add(BalanceCounter::nothing_found); break;
      case BalanceOutcome::entry_gate: stats_.add(BalanceCounter::entry_gate_skips); break;
      case BalanceOutcome::budget: stats_.add(BalanceCounter::budget_stops); break;
    }
    if constexpr (detail::hook_enabled<hook_type>())
      hook_(BalanceEvent{cpu, tracker_.avg_idle(st), r});
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
  const stats_type& stats() const noexcept { return stats_; }
  stats_type& stats() noexcept { return stats_; }
  hook_type& hook() noexcept { return hook_; }

 private:
  const T* topology_;
  tracker_type tracker_;
  [[no_unique_address]] mutable stats_type stats_{};
  [[no_unique_address]] mutable hook_type hook_{};
};

}  // namespace taskplace
