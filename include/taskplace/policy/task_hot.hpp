// taskplace/policy/task_hot.hpp: a worker that runs dry has found a queued
// task it could steal; is the task's cache still warm where it is, and has
// this level refused often enough that the imbalance now wins?
//
// Provides TaskHot<Rule> (the per-task test and the verdict), TaskHotState
// (the per-level failure counters), the rules task_hot::AllLevels2007 and
// task_hot::SmtExempt2020, and the inputs Move, BalanceKind and PullOutcome.
// Kernel analogue: task_hot() and the cache-hot part of can_migrate_task()
// in kernel/sched/fair.c, with sysctl_sched_migration_cost, the
// CACHE_HOT_BUDDY feature, sd->nr_balance_failed (load_balance()) and
// sd->cache_nice_tries (sd_init(), v3.16); SmtExempt2020 is Josh Don's
// "sched/fair: Ignore cache hotness for SMT migration" (v5.10, 2020).
//
//   taskplace::TaskHot<> hot;  TaskHot<>::state s{};   // one state per worker
//   if (hot.can_migrate(s, level, {.kind = kind, .last_ran = t.last_ran}, now)) take(t);
//
// Why it exists: the newidle cost tracker answers "may this idle CPU spend
// time looking for work?"; this answers "is the task it found worth
// moving?". A task that ran within the last migration_cost probably still
// has its working set in the source CPU's caches; moved, it pays for the
// refill on every access, and the source CPU (which will run it within a
// few microseconds anyway) loses it. So a balance leaves a hot task where
// it is. But a level whose periodic balances keep finding an imbalance and
// keep moving nothing is stuck: once such failures in a row exceed
// cache_nice_tries the imbalance outweighs the cache and the next balance
// may move a hot task. Newidle balances never count as failures: they run thousands
// of times a second and would make every task fair game within a
// millisecond (the kernel's comment in load_balance()).
#pragma once

#include "taskplace/detail/config.hpp"

#include <array>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <type_traits>

#include "taskplace/concepts.hpp"
#include "taskplace/detail/assert.hpp"
#include "taskplace/detail/math.hpp"
#include "taskplace/fwd.hpp"
#include "taskplace/tunables.hpp"
#include "taskplace/types.hpp"

namespace taskplace {

// Which balance this is (kernel enum cpu_idle_type): a newidle balance is
// the one a CPU runs as it goes idle; a periodic one runs from the tick
// (kernel CPU_IDLE / CPU_NOT_IDLE, and the nohz idle balance run for idle
// CPUs). Only a periodic balance's failure counts.
enum class BalanceKind : std::uint8_t { newidle, periodic };

// How one level's pull ended (kernel load_balance()'s exits).
enum class PullOutcome : std::uint8_t {
  moved,     // a task was taken (ld_moved != 0)
  balanced,  // nothing to take: no busier CPU, or all its tasks pinned (out_balanced, out_all_pinned)
  refused,   // a busier CPU had tasks to spare, and every one was refused (!ld_moved)
};

constexpr const char* to_string(PullOutcome o) noexcept {
  switch (o) {
    case PullOutcome::moved: return "moved";
    case PullOutcome::balanced: return "balanced";
    case PullOutcome::refused: return "refused";
  }
  return "?";
}

// One task a balance considers taking.
struct Move {
  LevelKind kind = LevelKind::llc;  // the level the move crosses (kernel env->sd)
  // When the task last ran on the source CPU: the end of its last run, or
  // now if it is running (kernel se.exec_start, which update_curr() moves
  // forward while the task runs). A stamp after `now` (a clock read on
  // another CPU, a clock that went backwards) reads as "ran just now".
  Nanoseconds last_ran{0};
  // The source CPU has chosen this task to run next (kernel cfs_rq->next,
  // the wake-up buddy): hot whatever its stamp, unless the destination is
  // empty (kernel CACHE_HOT_BUDDY needs env->dst_rq->nr_running).
  bool next_buddy = false;
  std::uint32_t dst_nr_running = 0;  // tasks on the destination CPU now
};

// Per CPU: how many periodic balances in a row found tasks to spare at
// each level and moved none (kernel sd->nr_balance_failed; each CPU has its
// own sched_domain per level). Indexed by the level's position in the
// topology's levels for that CPU, as IdleBalancer's pulls are. One type for
// every rule (TaskHot<R>::state), so a program may judge the same counts
// by either.
// Invariant: counts saturate at UINT32_MAX; they never wrap.
struct TaskHotState {
  std::array<std::uint32_t, max_levels> nr_balance_failed{};
  constexpr bool operator==(const TaskHotState&) const noexcept = default;
};

namespace task_hot {

// CFS (v2.6.23) to v5.9: a move between SMT siblings is tested like any
// other. (Its level's cache_nice_tries of 0 lets one failed periodic
// balance through.)
struct AllLevels2007 {
  static constexpr bool smt_exempt = false;
};
static_assert(TaskHotRule<AllLevels2007>);

// v5.10 to today: SMT siblings share every cache level, so a move between
// them costs no refill and no task is hot for it (Josh Don, Aug 2020,
// proposed by Venkatesh Pallipadi; the review kept it to SMT: freely moving
// tasks within an LLC would undo what the cache-hot test is for).
struct SmtExempt2020 {
  static constexpr bool smt_exempt = true;
};
static_assert(TaskHotRule<SmtExempt2020>);

}  // namespace task_hot

// ---------------------------------------------------------------------------
// TaskHot: the verdict. An aggregate: `TaskHot<> hot{.migration_cost = 250us};`.
//
// Invariant: with migration_cost == 0 and no hot next buddy, can_migrate
//   is true; with migration_cost < 0 every task is hot, and only a level's
//   failures (more than its cache_nice_tries) let one move.
template <TaskHotRule Rule>
class TaskHot {
 public:
  using rule = Rule;

  // A task that ran within this is hot; 0: no task is (kernel 0), < 0: every
  // task is (kernel -1). default 500us; kernel: sysctl_sched_migration_cost
  SaturatingNanoseconds migration_cost = tunables::migration_cost;
  // A level moves a hot task once its failed periodic balances in a row
  // exceed this; indexed by LevelKind. default {0, 1, 1, 1, 2}; kernel:
  // sd->cache_nice_tries from sd_init()
  std::array<std::uint32_t, 5> cache_nice_tries = tunables::cache_nice_tries;
  // The source CPU's next pick is hot. default on; kernel: CACHE_HOT_BUDDY
  bool hot_buddy = tunables::cache_hot_buddy;

  // The per-CPU failure counts (TaskHotState, the same for every rule).
  using state = TaskHotState;

  // Returns: whether moving the task across m.kind would throw away a warm
  //   cache (kernel task_hot()), in the kernel's order: an SMT move (with
  //   SmtExempt2020) is never hot; the next buddy is hot when the
  //   destination has tasks; migration_cost < 0: hot; == 0: not hot; else
  //   hot when less than migration_cost has passed since m.last_ran.
  // Complexity: O(1). Thread-safety: const; any thread.
  constexpr bool is_hot(const Move& m, Nanoseconds now) const noexcept {
    if (Rule::smt_exempt && m.kind == LevelKind::smt) return false;
    if (hot_buddy && m.next_buddy && m.dst_nr_running > 0) return true;
    if (migration_cost < Nanoseconds::zero()) return true;
    if (migration_cost == Nanoseconds::zero()) return false;
    return detail::elapsed(m.last_ran, now) < migration_cost;
  }

  // Returns: the cache_nice_tries of a level of kind `kind`: it moves a hot
  //   task once its failures in a row exceed this. A kind outside
  //   LevelKind reads as the machine level's.
  constexpr std::uint32_t tries(LevelKind kind) const noexcept {
    const auto i = static_cast<std::size_t>(kind);
    return cache_nice_tries[i < cache_nice_tries.size() ? i : cache_nice_tries.size() - 1];
  }

  // Returns: whether a balance at `level` may take the task (kernel
  //   can_migrate_task()'s cache test): it is not hot, or the level's
  //   periodic balances have failed more than tries(m.kind) times in a row.
  // Precondition (checked): level < max_levels; unchecked builds read the
  //   failures of an out-of-range level as 0.
  // Complexity: O(1). Thread-safety: reads `s`; the owner's thread, or
  //   any thread while the owner does not write it.
  constexpr bool can_migrate(const state& s, std::uint32_t level, const Move& m, Nanoseconds now) const
      TASKPLACE_NOEXCEPT {
    TASKPLACE_EXPECTS(level < max_levels, "level must be < max_levels");
    const std::uint32_t failed = level < max_levels ? s.nr_balance_failed[level] : 0;
    return failed > tries(m.kind) || !is_hot(m, now);
  }

  // Effects: records how a balance at `level` ended (kernel load_balance()):
  //   moved or balanced resets the level's failures to 0; refused adds one
  //   when the balance was periodic (saturating) and leaves them as they
  //   are when it was a newidle one.
  // Precondition (checked): level < max_levels; unchecked builds ignore an
  //   out-of-range level.
  // Complexity: O(1). Thread-safety: writes `s`; its owner's thread only.
  constexpr void record(state& s, std::uint32_t level, BalanceKind kind, PullOutcome o) const TASKPLACE_NOEXCEPT {
    TASKPLACE_EXPECTS(level < max_levels, "level must be < max_levels");
    if (level >= max_levels) return;
    std::uint32_t& f = s.nr_balance_failed[level];
    if (o != PullOutcome::refused)
      f = 0;
    else if (kind == BalanceKind::periodic)
      f = detail::saturating_inc(f);
  }

  // What find_movable() found.
  template <class It>
  struct Found {
    It it;                     // the task to take; the scan's end when none
    bool found = false;
    std::uint32_t looked = 0;  // candidates judged
    // Returns: how many of them were left as hot.
    constexpr std::uint32_t hot() const noexcept { return looked - (found ? 1u : 0u); }
  };

  // Returns: the first of the candidates [first, last), at most `limit`
  //   of them (kernel detach_tasks(): env->loop_max, sysctl_sched_nr_migrate),
  //   that a balance at `level` (of kind `kind`) may take (can_migrate),
  //   each judged by `last_ran(*it)` (its Move::last_ran); the counts say
  //   how many were judged and how many were left as hot. Walk the victim's
  //   queue in the order it should give tasks up (the kernel's: least
  //   recently run first).
  // Precondition (checked): level < max_levels.
  // Complexity: at most `limit` can_migrate calls. Thread-safety: as
  //   can_migrate; the caller holds whatever guards the candidates.
  template <std::input_or_output_iterator It, std::sentinel_for<It> S, class LastRan>
    requires std::is_invocable_r_v<Nanoseconds, LastRan&, std::iter_reference_t<It>>
  constexpr Found<It> find_movable(const state& s, std::uint32_t level, LevelKind kind, It first, S last,
                                   LastRan last_ran, Nanoseconds now, std::uint32_t dst_nr_running = 0,
                                   std::uint32_t limit = tunables::nr_migrate) const TASKPLACE_NOEXCEPT {
    Found<It> r{first};
    for (; r.it != last && r.looked < limit; ++r.it) {
      ++r.looked;
      const Move m{.kind = kind, .last_ran = last_ran(*r.it), .dst_nr_running = dst_nr_running};
      if (can_migrate(s, level, m, now)) {
        r.found = true;
        return r;
      }
    }
    return r;
  }
};

// ---------------------------------------------------------------------------
// TaskHotPolicy: the cache-hot test of a steal, the member Hot of an
// IdleBalancer's traits (kit::Stealer applies it). Models: TaskHot<Rule>.
//   R1 typename H::state: default-constructible (one per worker: its
//      failure counts per level, kernel sd->nr_balance_failed)
//   R2 h.is_hot(Move, Nanoseconds now) const -> bool (kernel task_hot())
//   R3 h.can_migrate(const state&, level, Move, now) const -> bool
//   R4 h.record(state&, level, BalanceKind, PullOutcome) const
//   R5 h.find_movable(const state&, level, LevelKind, first, last,
//      last_ran, now, dst_nr_running, limit) const: a result with `it`,
//      `found`, `looked` and hot(), a template over the iterator
//   H default-constructible and copyable (a runtime's options hold one).
namespace detail {
struct LastRanArchetype {
  Nanoseconds operator()(const Nanoseconds& x) const noexcept { return x; }
};
}  // namespace detail
template <class H>
concept TaskHotPolicy =
    std::default_initializable<H> && std::copy_constructible<H> && requires { typename H::state; } &&
    std::default_initializable<typename H::state> &&
    requires(const H& h, typename H::state& s, const typename H::state& cs, const Move& m, Nanoseconds now,
             std::uint32_t level, const Nanoseconds* it) {
      { h.is_hot(m, now) } -> std::convertible_to<bool>;
      { h.can_migrate(cs, level, m, now) } -> std::convertible_to<bool>;
      h.record(s, level, BalanceKind::periodic, PullOutcome::refused);
      h.find_movable(cs, level, LevelKind::llc, it, it, detail::LastRanArchetype{}, now, 0u, 1u).it;
      { h.find_movable(cs, level, LevelKind::llc, it, it, detail::LastRanArchetype{}, now, 0u, 1u).found }
          -> std::convertible_to<bool>;
      { h.find_movable(cs, level, LevelKind::llc, it, it, detail::LastRanArchetype{}, now, 0u, 1u).hot() }
          -> std::convertible_to<std::uint32_t>;
    };
static_assert(TaskHotPolicy<TaskHot<task_hot::AllLevels2007>>);
static_assert(TaskHotPolicy<TaskHot<task_hot::SmtExempt2020>>);

// Returns: a test of type H with the tunables of `o` (migration_cost,
//   cache_nice_tries, hot_buddy), where H takes them as TaskHot does;
//   else H{}. A runtime's options hold the tunables as a TaskHot<> and its
//   traits pick the rule (IdleBalancer's hot_policy): this joins the two.
template <TaskHotPolicy H, TaskHotRule R>
constexpr H task_hot_with_tunables(const TaskHot<R>& o) noexcept {
  if constexpr (requires { H{o.migration_cost, o.cache_nice_tries, o.hot_buddy}; })
    return H{o.migration_cost, o.cache_nice_tries, o.hot_buddy};
  else
    return H{};
}

}  // namespace taskplace
