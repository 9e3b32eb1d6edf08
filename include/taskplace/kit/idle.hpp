// taskplace/kit/idle.hpp: the idle side of a runtime in one piece: the
// newidle balance (IdleBalancer) and the periodic, nohz-style balance of an
// idle worker, each stealing one task over the runtime's own queues, with
// the cache-hot test (TaskHot) preferring cold tasks when asked.
//
// The runtime models two small concepts: WorkerQueue (one worker's queue as
// a thief sees it: size, try_steal) and QueueSource (the queue of worker
// c); the kit does the walk: which workers, in which order, which task,
// what the failure counts record. Kernel analogue: newidle_balance() and
// the nohz idle balance, each calling load_balance() per sched domain,
// whose detach_tasks() / can_migrate_task() take the task; the kit steals
// one task a balance (the runtime's queues hold tasks, not load).
//
//   taskplace::kit::Stealer<Topo> thief{topo, worker, {.cache_hot = true}};
//   auto got = thief.newidle(balancer, bstate, queues, last_ran, clock, m.overload());
//   if (!got) got = thief.periodic(queues, last_ran, clock);   // a kick, a poll
#pragma once

#include "taskplace/detail/config.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <type_traits>
#include <utility>

#include "taskplace/concepts.hpp"
#include "taskplace/detail/math.hpp"
#include "taskplace/detail/topology_blocks.hpp"
#include "taskplace/idle_balancer.hpp"
#include "taskplace/kit/machine.hpp"
#include "taskplace/policy/task_hot.hpp"
#include "taskplace/tunables.hpp"
#include "taskplace/types.hpp"

namespace taskplace::kit {

namespace detail {
// A stand-in for the kit's cold-task picker: what try_steal(pick) gets.
// pick(first, last) -> an iterator in [first, last]; last: take none.
struct PickArchetype {
  template <std::forward_iterator It>
  It operator()(It first, It last) const;
};
}  // namespace detail

// WorkerQueue: one worker's queue as a thief sees it.
//   R1 q.size() -> convertible to std::size_t, on a const queue, without a
//      lock: how many tasks a thief could take now (0: not worth a lock;
//      a runtime that keeps the running task's worker its last queued one,
//      as the kernel's busiest-queue rule does, answers 0 for it).
//   R2 q.try_steal() -> Item: under the queue's lock, removes the task the
//      runtime gives up first and returns it, or Item{} (null) when none.
//   R3 q.try_steal(pick) -> Item: under the lock, calls pick(first, last)
//      over the candidates in the order they should be given up (least
//      recently run first), removes the task at the iterator it returns
//      and returns it; returns Item{} when it returns last.
//   O1 (optional) q.drains() -> convertible to std::uint64_t, on a const
//      queue, without a lock: how many times the worker has emptied its
//      queue by taking its last queued task to run. With it, a pull that
//      finds only cache-hot tasks counts as a failure (TaskHot's
//      nr_balance_failed) only when the victim's queue has not drained
//      since the level's last such pull there: a queue that empties
//      between balances runs its tasks without help, which is no
//      imbalance (the kernel counts a failure only where it found one),
//      and a ping-pong pair, whose partner sits queued for a moment at
//      every balance, is never given up as stuck; two tasks that share a
//      worker and never leave its queue empty are.
//   Item: default-constructible (Item{} is "none") and testable as bool;
//   a pointer, typically.
template <class Q>
concept WorkerQueue = requires(Q& q, const Q& cq, const detail::PickArchetype& pick) {
  { cq.size() } -> std::convertible_to<std::size_t>;
  q.try_steal();
  q.try_steal(pick);
} && std::default_initializable<decltype(std::declval<Q&>().try_steal())> &&
    std::constructible_from<bool, decltype(std::declval<Q&>().try_steal())> &&
    std::same_as<decltype(std::declval<Q&>().try_steal()),
                 decltype(std::declval<Q&>().try_steal(std::declval<const detail::PickArchetype&>()))>;

// QueueSource: the runtime's queues. R1 queues(CpuId c) -> WorkerQueue&
// (an lvalue), for every c < the topology's cpu_count().
template <class S>
concept QueueSource = requires(S& s, CpuId c) {
  { s(c) } -> std::same_as<std::remove_reference_t<decltype(s(c))>&>;
} && WorkerQueue<std::remove_reference_t<std::invoke_result_t<S&, CpuId>>>;

template <QueueSource S>
using queue_item_t = decltype(std::declval<S&>()(CpuId{}).try_steal());

// Whether a WorkerQueue tells how often it drained (O1).
template <class Q>
concept HasDrains = requires(const Q& q) {
  { q.drains() } -> std::convertible_to<std::uint64_t>;
};

// LastRanOf: when a queued task last ran (kernel se.exec_start), read
// under its queue's lock; Nanoseconds::min() for never. R1 f(item) ->
// Nanoseconds on a const f.
template <class F, class Item>
concept LastRanOf = std::invocable<const F&, const Item&> &&
                    std::same_as<std::invoke_result_t<const F&, const Item&>, Nanoseconds>;

// A last_ran for a Stealer without the cache-hot test: never called.
struct NoLastRan {
  template <class Item>
  Nanoseconds operator()(const Item&) const noexcept { return Nanoseconds::min(); }
};

// The steal side of a policy set, as the embeddings default to it.
// The sets that weigh moves in the runtime's costs (traits::Runtime:
// kit::reads_costs) steal with the cache-hot test, at the runtime's
// migration cost (tunables::runtime_migration_cost): a task that ran on
// its worker within it stays there. The gate keeps a short wakee on the
// waking worker because it starts there before a move pays; a thief that
// takes it anyway undoes that, and the worker it left, now dry, takes
// the partner back: a ping-pong pair on two Boost.Fiber workers was
// stolen back and forth 650-3,200 times in 50,000 round trips, at a
// third of the kept pair's rate. The kernel's sets steal as the embedding
// was told (off by default, every task fair game), at the kernel's
// migration cost when on.
// Complexity: O(1), at compile time.
template <class Placer>
inline constexpr bool hot_steals_default = reads_costs<Placer>;
template <class Placer, class Hot = TaskHot<>>
constexpr Hot task_hot_default() noexcept {
  Hot h{};
  if constexpr (reads_costs<Placer>) h.migration_cost = tunables::runtime_migration_cost;
  return h;
}

// Returns: an embedding's options `o` with the steal side it left unset
//   (o.cache_hot_steals, o.task_hot: std::optional) set to the policy
//   set's, so that every later read finds a value.
template <class Placer, class Options>
Options with_policy_steals(Options o) {
  if (!o.cache_hot_steals) o.cache_hot_steals = hot_steals_default<Placer>;
  if (!o.task_hot) o.task_hot = task_hot_default<Placer, std::remove_cvref_t<decltype(*o.task_hot)>>();
  return o;
}

// What a worker's thief did; each counter written by the thief's thread
// alone (relaxed load and store, no locked instruction), read anywhere.
struct StealCounts {
  std::uint64_t attempts = 0;   // victims with tasks to give that a pull looked into
  std::uint64_t steals = 0;     // tasks taken
  std::uint64_t hot_skips = 0;  // queued tasks a steal left as cache hot
};

namespace detail {
template <class Queues, class LastRan>
constexpr bool last_ran_fits() {
  if constexpr (QueueSource<Queues>) return LastRanOf<LastRan, queue_item_t<Queues>>;
  else return true;  // the queues' own assertion speaks first
}
}  // namespace detail

// The first statement of each Stealer entry point: the callbacks' concepts,
// each with the message a user reads first.
#define TASKPLACE_KIT_CHECK_CALLBACKS(Queues, LastRan)                                                        \
  static_assert(::taskplace::kit::QueueSource<Queues>,                                                       \
                "kit::Stealer: the queues must be callable as queues(CpuId) and return an lvalue of a "      \
                "WorkerQueue: size() const, try_steal() and try_steal(pick) returning the same nullable "   \
                "Item (kit/idle.hpp)");                                                                      \
  static_assert(::taskplace::kit::detail::last_ran_fits<Queues, LastRan>(),                                  \
                "kit::Stealer: last_ran must be callable as last_ran(const Item&) on a const object and "    \
                "return taskplace::Nanoseconds (when the task last ran; Nanoseconds::min() for never)")

// One worker's thief. Not thread-safe: its worker's thread only (the
// failure counts of TaskHot are that worker's, kernel sd->nr_balance_failed).
// `Hot`: the cache-hot test, the balancer's (IdleBalancer::hot_policy, its
// traits' Hot member).
template <Topology T, TaskHotPolicy Hot = TaskHot<>>
class Stealer {
 public:
  struct Options {
    // Steals leave cache-hot tasks (TaskHot) and look at the level below
    // each level no more (kernel: a domain never pulls from its own group).
    // default false: a steal takes the task the queue gives up first.
    bool cache_hot = false;
    Hot task_hot{};
  };

  // Precondition: self < topology.cpu_count(). The topology outlives it.
  Stealer(const T& topology, CpuId self, Options o = {}) : topo_(&topology), self_(self), opts_(o) {}
  Stealer(const T&&, CpuId, Options = {}) = delete;

  CpuId cpu() const noexcept { return self_; }
  const Options& options() const noexcept { return opts_; }
  // Effects: new options (a runtime that lets them change between runs of
  // a worker); the thief's thread, or while it does not steal.
  void set_options(Options o) noexcept { opts_ = o; }
  // Returns: the counts, from any thread (a snapshot).
  StealCounts counts() const noexcept {
    auto& c = const_cast<StealCounts&>(counts_);
    return {load(c.attempts), load(c.steals), load(c.hot_skips)};
  }
  // Effects: zeroes the counts (a count in flight on the thief's thread
  // may survive it: call it while the worker does not steal).
  void reset_counts() noexcept {
    for (auto* x : {&counts_.attempts, &counts_.steals, &counts_.hot_skips})
      std::atomic_ref<std::uint64_t>(*x).store(0, std::memory_order_relaxed);
  }
  const typename Hot::state& hot_state() const noexcept { return hot_; }
  void reset_hot_state() noexcept {
    hot_ = {};
    last_refusal_ = {};
  }

  // Effects: one pull at `level` (of kind `kind`, in a balance of kind
  //   `why`): the first worker of `cpus` (this one aside; with cache_hot
  //   also those of the level below) whose queue gives up a task. With
  //   cache_hot, the first that TaskHot lets go among each victim's
  //   nr_migrate oldest, and the level's failure count records the end
  //   (moved, refused: only hot tasks found, balanced: none found).
  //   `dst_nr_running`: this worker's tasks (CACHE_HOT_BUDDY's input).
  // Returns: the task, or Item{}.
  template <class Cpus, class Queues, class LastRan, Clock C>
  auto pull(const Cpus& cpus, std::uint32_t level, LevelKind kind, BalanceKind why, Queues& queues,
            const LastRan& last_ran, const C& clock, std::uint32_t dst_nr_running = 0) {
    TASKPLACE_KIT_CHECK_CALLBACKS(Queues, LastRan);
    using Item = queue_item_t<Queues>;
    const bool hot = opts_.cache_hot;
    const Nanoseconds now = hot ? clock.now() : Nanoseconds{0};
    bool refused = false;
    Item got{};
    for (auto x : cpus) {
      const auto c = static_cast<CpuId>(x);
      if (c == self_) continue;
      if (hot && level > 0 && taskplace::detail::range_contains(topo_->level_cpus(self_, level - 1), c)) continue;
      if ((got = take(queues(c), c, level, kind, last_ran, now, dst_nr_running, refused))) break;
    }
    if (hot) record(level, why, static_cast<bool>(got), refused);
    return got;
  }

  // Effects: the newidle balance: `balancer` walks this worker's levels
  //   as its entry gate, budget and `overload` allow, pulling at each
  //   (BalanceKind::newidle) until a task is found.
  // Returns: the task, or Item{}; `result`, when given, the balance's.
  template <class Balancer, class Queues, class LastRan, Clock C>
  auto newidle(const Balancer& balancer, typename Balancer::state& st, Queues& queues, const LastRan& last_ran,
               const C& clock, Overload overload = Overload::unknown, std::uint32_t dst_nr_running = 0,
               BalanceResult* result = nullptr) {
    TASKPLACE_KIT_CHECK_CALLBACKS(Queues, LastRan);
    queue_item_t<Queues> got{};
    const BalanceResult r = balancer.balance(
        self_, st,
        [&](std::uint32_t level, LevelKind kind, const auto& cpus) {
          got = pull(cpus, level, kind, BalanceKind::newidle, queues, last_ran, clock, dst_nr_running);
          return static_cast<bool>(got);
        },
        clock, overload);
    if (result != nullptr) *result = r;
    return got;
  }

  // Effects: the periodic balance of an idle worker (a tick's kick, an
  //   idle poll: kernel nohz idle balance, not cost-gated): this worker's
  //   levels nearest first, each a periodic pull; the last one goes on to
  //   the workers no level spans (a topology's levels need not span the
  //   machine), as one pull of that level.
  // Returns: the task, or Item{}.
  template <class Queues, class LastRan, Clock C>
  auto periodic(Queues& queues, const LastRan& last_ran, const C& clock, std::uint32_t dst_nr_running = 0) {
    TASKPLACE_KIT_CHECK_CALLBACKS(Queues, LastRan);
    using Item = queue_item_t<Queues>;
    const auto levels = static_cast<std::uint32_t>(topo_->level_count(self_));
    const std::uint32_t counted = std::min(levels, max_levels);
    constexpr auto why = BalanceKind::periodic;
    for (std::uint32_t i = 0; i + 1 < counted; ++i)
      if (Item got = pull(topo_->level_cpus(self_, i), i, topo_->level_kind(self_, i), why, queues, last_ran,
                          clock, dst_nr_running))
        return got;
    const std::uint32_t last = counted > 0 ? counted - 1 : 0;
    const LevelKind kind = counted > 0 ? topo_->level_kind(self_, last) : LevelKind::machine;
    const bool hot = opts_.cache_hot;
    const Nanoseconds now = hot ? clock.now() : Nanoseconds{0};
    bool refused = false;
    Item got{};
    const CpuId n = static_cast<CpuId>(topo_->cpu_count());
    auto in_last = [&](CpuId c) {
      return counted > 0 && taskplace::detail::range_contains(topo_->level_cpus(self_, last), c);
    };
    auto below = [&](CpuId c) {
      return hot && last > 0 && taskplace::detail::range_contains(topo_->level_cpus(self_, last - 1), c);
    };
    // The last level's workers first (its own order), then the rest.
    if (counted > 0)
      for (auto x : topo_->level_cpus(self_, last)) {
        const auto c = static_cast<CpuId>(x);
        if (c == self_ || below(c)) continue;
        if ((got = take(queues(c), c, last, kind, last_ran, now, dst_nr_running, refused))) break;
      }
    for (CpuId c = 0; !got && c < n; ++c)
      if (c != self_ && !in_last(c)) got = take(queues(c), c, last, kind, last_ran, now, dst_nr_running, refused);
    if (hot) record(last, why, static_cast<bool>(got), refused);
    return got;
  }

 private:
  // `refused` becomes true when the victim gave up nothing, every task it
  // looked at hot, and (with drains, O1) its queue has not drained since
  // the level's last refusal there.
  template <class Q, class LastRan>
  auto take(Q& q, CpuId victim, std::uint32_t level, LevelKind kind, const LastRan& last_ran, Nanoseconds now,
            std::uint32_t dst_nr_running, bool& refused) {
    using Item = decltype(q.try_steal());
    if (static_cast<std::size_t>(std::as_const(q).size()) == 0) return Item{};
    bump(counts_.attempts);
    Item got{};
    if (!opts_.cache_hot) {
      got = q.try_steal();
    } else {
      std::uint32_t skipped = 0;
      bool looked = false;
      got = q.try_steal([&](auto first, auto last) {
        const auto r = opts_.task_hot.find_movable(hot_, level, kind, first, last, last_ran, now, dst_nr_running);
        skipped = r.hot();
        looked = r.looked > 0;
        return r.found ? r.it : last;
      });
      if (skipped > 0) bump(counts_.hot_skips, skipped);
      if (!got && looked) refused = stalled(q, victim, level) || refused;
    }
    if (got) bump(counts_.steals);
    return got;
  }
  // Returns: whether the victim's refusal at `level` is a stall: its
  //   queue has not drained since the level's last refusal there (always,
  //   for a queue without drains). Records this refusal as the level's last.
  template <class Q>
  bool stalled(const Q& q, CpuId victim, std::uint32_t level) noexcept {
    if constexpr (HasDrains<Q>) {
      if (level >= max_levels) return true;
      const auto d = static_cast<std::uint64_t>(q.drains());
      Refusal& r = last_refusal_[level];
      const bool same = r.victim == victim && r.drains == d;
      r = {victim, d};
      return same;
    } else {
      (void)q, (void)victim, (void)level;
      return true;
    }
  }
  void record(std::uint32_t level, BalanceKind why, bool moved, bool refused) noexcept {
    if (moved && level < max_levels) last_refusal_[level] = {};  // a move ends any stall the level saw
    opts_.task_hot.record(hot_, level, why,
                          moved ? PullOutcome::moved : refused ? PullOutcome::refused : PullOutcome::balanced);
  }
  static std::uint64_t load(std::uint64_t& c) noexcept {
    return std::atomic_ref<std::uint64_t>(c).load(std::memory_order_relaxed);
  }
  static void bump(std::uint64_t& c, std::uint64_t n = 1) noexcept {
    std::atomic_ref<std::uint64_t> a(c);
    a.store(a.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
  }

  const T* topo_;
  CpuId self_;
  Options opts_;
  typename Hot::state hot_{};
  alignas(8) StealCounts counts_{};
  // Per level, the victim of its last refusal and its queue's drains then
  // (queues with drains, O1).
  struct Refusal {
    CpuId victim = no_cpu;
    std::uint64_t drains = 0;
  };
  std::array<Refusal, max_levels> last_refusal_{};
};

}  // namespace taskplace::kit

#undef TASKPLACE_KIT_CHECK_CALLBACKS
