// kit::Stealer: the idle side over a runtime's queues (here a fake one):
// which worker it steals from, which task, what the cache-hot test's
// failure counts record, the newidle balance through IdleBalancer.
#include "taskplace/kit/idle.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <deque>
#include <mutex>
#include <optional>
#include <thread>
#include <type_traits>
#include <vector>

#include "taskplace/clock.hpp"
#include "taskplace/topology/uniform.hpp"
#include "taskplace/wake_placer.hpp"

using namespace std::chrono_literals;
using taskplace::CpuId;
using taskplace::LevelKind;
using taskplace::Nanoseconds;
using taskplace::kit::Stealer;

namespace {
struct Task {
  int id;
  Nanoseconds last_ran = Nanoseconds::min();
};
// A worker's queue: oldest at the front; try_steal() gives the oldest.
struct FakeQueue {
  std::mutex m;
  std::deque<Task*> q;
  // Read without the lock by thieves: a relaxed count beside the deque
  // (kept by try_steal; the tests fill q before any thief runs).
  std::atomic<std::size_t> stealable{0};
  bool counted = false;
  std::size_t size() const noexcept { return counted ? stealable.load(std::memory_order_relaxed) : q.size(); }
  template <class Pick>
  Task* try_steal(const Pick& pick) {
    std::lock_guard lk(m);
    if (q.empty()) return nullptr;
    auto it = pick(q.begin(), q.end());
    if (it == q.end()) return nullptr;
    Task* t = *it;
    q.erase(it);
    if (counted) stealable.fetch_sub(1, std::memory_order_relaxed);
    return t;
  }
  Task* try_steal() {
    return try_steal([](auto first, auto) { return first; });
  }
};
struct Queues {
  std::vector<FakeQueue>* qs;
  FakeQueue& operator()(CpuId c) const { return (*qs)[c]; }
};
struct LastRan {
  Nanoseconds operator()(Task* const& t) const noexcept { return t->last_ran; }
};
static_assert(taskplace::kit::WorkerQueue<FakeQueue>);
static_assert(taskplace::kit::QueueSource<Queues>);
static_assert(taskplace::kit::LastRanOf<LastRan, Task*>);
struct NotAQueue {
  int size() const;
};
static_assert(!taskplace::kit::WorkerQueue<NotAQueue>);

// Two LLCs of two cores: level 0 is cpu 0's LLC {0, 1}, level 1 all four.
const taskplace::UniformTopology topo{1, 2, 2, 1};
}  // namespace

TEST_CASE("a pull takes the oldest task of the first other worker with one", "[kit][idle]") {
  std::vector<FakeQueue> qs(4);
  Task a{1}, b{2}, c{3};
  qs[0].q = {&a};  // its own: never stolen from
  qs[2].q = {&b, &c};
  Stealer<taskplace::UniformTopology> thief{topo, 0};
  Queues queues{&qs};
  taskplace::ManualClock clock;
  Task* got = thief.pull(topo.level_cpus(0, 1), 1, topo.level_kind(0, 1), taskplace::BalanceKind::newidle, queues,
                         taskplace::kit::NoLastRan{}, clock);
  CHECK(got == &b);  // the queue's choice without the cache-hot test
  CHECK(qs[2].q.size() == 1);
  CHECK(qs[0].q.size() == 1);
  // Empty queues are not looked into (no lock taken): one attempt, one steal.
  CHECK(thief.counts().attempts == 1);
  CHECK(thief.counts().steals == 1);
  // Nothing anywhere but its own queue: nothing.
  qs[2].q.clear();
  CHECK(thief.pull(topo.level_cpus(0, 1), 1, topo.level_kind(0, 1), taskplace::BalanceKind::newidle, queues,
                   taskplace::kit::NoLastRan{}, clock) == nullptr);
}

TEST_CASE("with the cache-hot test a steal prefers a cold task and leaves hot ones", "[kit][idle]") {
  std::vector<FakeQueue> qs(4);
  taskplace::ManualClock clock{10ms};
  Task hot{1, clock.now() - 100us};   // ran 100 us ago: hot (migration_cost 500 us)
  Task cold{2, clock.now() - 2ms};    // 2 ms ago: cold
  qs[1].q = {&hot, &cold};
  Stealer<taskplace::UniformTopology> thief{topo, 0, {.cache_hot = true}};
  Queues queues{&qs};
  Task* got = thief.pull(topo.level_cpus(0, 0), 0, topo.level_kind(0, 0), taskplace::BalanceKind::newidle, queues,
                         LastRan{}, clock);
  CHECK(got == &cold);  // kernel can_migrate_task(): the hot one is skipped
  CHECK(thief.counts().hot_skips == 1);
  CHECK(thief.hot_state().nr_balance_failed[0] == 0);  // moved
}

TEST_CASE("a level whose periodic pulls find only hot tasks gives one up past cache_nice_tries", "[kit][idle]") {
  std::vector<FakeQueue> qs(4);
  taskplace::ManualClock clock{10ms};
  Task hot{1, clock.now() - 100us};
  qs[1].q = {&hot};
  Stealer<taskplace::UniformTopology> thief{topo, 0, {.cache_hot = true}};
  Queues queues{&qs};
  const LevelKind kind = topo.level_kind(0, 0);
  const std::uint32_t tries = thief.options().task_hot.tries(kind);
  auto pull = [&](taskplace::BalanceKind why) {
    return thief.pull(topo.level_cpus(0, 0), 0, kind, why, queues, LastRan{}, clock);
  };
  // Newidle pulls never count as failures (kernel load_balance(): only
  // CPU_IDLE / CPU_NOT_IDLE balances bump nr_balance_failed).
  for (int i = 0; i < 10; ++i) CHECK(pull(taskplace::BalanceKind::newidle) == nullptr);
  CHECK(thief.hot_state().nr_balance_failed[0] == 0);
  // Periodic ones do; the hot task goes once failed > cache_nice_tries.
  for (std::uint32_t i = 0; i <= tries; ++i) CHECK(pull(taskplace::BalanceKind::periodic) == nullptr);
  CHECK(thief.hot_state().nr_balance_failed[0] == tries + 1);
  CHECK(pull(taskplace::BalanceKind::periodic) == &hot);
  CHECK(thief.hot_state().nr_balance_failed[0] == 0);  // moved: reset
}

TEST_CASE("a cache-hot pull at a level leaves the level below to its own balance", "[kit][idle]") {
  std::vector<FakeQueue> qs(4);
  taskplace::ManualClock clock{10ms};
  Task near{1}, far{2};
  qs[1].q = {&near};  // in cpu 0's LLC, level 0
  qs[3].q = {&far};   // the other LLC
  Queues queues{&qs};
  Stealer<taskplace::UniformTopology> hot{topo, 0, {.cache_hot = true}};
  CHECK(hot.pull(topo.level_cpus(0, 1), 1, topo.level_kind(0, 1), taskplace::BalanceKind::newidle, queues,
                 LastRan{}, clock) == &far);  // kernel: a domain never pulls from its own group
  qs[3].q = {&far};
  Stealer<taskplace::UniformTopology> plain{topo, 0};
  CHECK(plain.pull(topo.level_cpus(0, 1), 1, topo.level_kind(0, 1), taskplace::BalanceKind::newidle, queues,
                   LastRan{}, clock) == &near);  // without the test: the level's first worker with one
}

TEST_CASE("a periodic balance looks at the nearest level first", "[kit][idle]") {
  std::vector<FakeQueue> qs(4);
  taskplace::ManualClock clock;
  Task near{1}, far{2};
  qs[1].q = {&near};
  qs[2].q = {&far};
  Queues queues{&qs};
  Stealer<taskplace::UniformTopology> thief{topo, 3};  // cpu 3: LLC {2, 3}
  CHECK(thief.periodic(queues, LastRan{}, clock) == &far);
  CHECK(thief.periodic(queues, LastRan{}, clock) == &near);
  CHECK(thief.periodic(queues, LastRan{}, clock) == nullptr);
}

TEST_CASE("the newidle balance pulls through IdleBalancer, and not when no worker is overloaded", "[kit][idle]") {
  std::vector<FakeQueue> qs(4);
  taskplace::ManualClock clock{1s};
  Task t{1};
  qs[2].q = {&t};
  Queues queues{&qs};
  taskplace::IdleBalancer<taskplace::UniformTopology> balancer{topo};
  auto st = balancer.make_state(0, clock.now());
  Stealer<taskplace::UniformTopology> thief{topo, 0};
  taskplace::BalanceResult r{};
  // Overload::none: the kernel's root-domain overload gate, no pull at all.
  CHECK(thief.newidle(balancer, st, queues, LastRan{}, clock, taskplace::Overload::none, 0, &r) == nullptr);
  CHECK(r.outcome != taskplace::BalanceOutcome::pulled);
  CHECK(qs[2].q.size() == 1);
  CHECK(thief.counts().attempts == 0);
  CHECK(thief.newidle(balancer, st, queues, LastRan{}, clock, taskplace::Overload::some, 0, &r) == &t);
  CHECK(r.outcome == taskplace::BalanceOutcome::pulled);
}

TEST_CASE("thieves on several threads take every task exactly once", "[kit][idle][concurrency]") {
  std::vector<FakeQueue> qs(4);
  constexpr int n = 4000;
  std::vector<Task> tasks(n);
  for (int i = 0; i < n; ++i) {
    tasks[static_cast<std::size_t>(i)].id = i;
    qs[static_cast<std::size_t>(i % 4)].q.push_back(&tasks[static_cast<std::size_t>(i)]);
  }
  for (auto& q : qs) {
    q.counted = true;
    q.stealable = q.q.size();
  }
  Queues queues{&qs};
  std::vector<std::vector<int>> got(4);
  std::vector<std::thread> ts;
  for (CpuId c = 0; c < 4; ++c)
    ts.emplace_back([&, c] {
      Stealer<taskplace::UniformTopology> thief{topo, c};
      taskplace::ManualClock clock;
      while (Task* t = thief.periodic(queues, LastRan{}, clock)) got[c].push_back(t->id);
    });
  for (auto& t : ts) t.join();
  std::vector<int> all;
  for (auto& g : got) all.insert(all.end(), g.begin(), g.end());
  std::sort(all.begin(), all.end());
  // Each thread's own queue is never stolen by itself: those stay.
  std::size_t left = 0;
  for (auto& q : qs) left += q.q.size();
  CHECK(all.size() + left == n);
  CHECK(std::adjacent_find(all.begin(), all.end()) == all.end());
}

// TaskHot as the balance traits' Hot member: the default is today's test,
// the classic one is selectable, and the two decide differently exactly
// where the kernel's changed: a move between SMT siblings.
namespace hot_traits {
using Topo = taskplace::UniformTopology;
using Classic = taskplace::traits::Balance<taskplace::newidle::StampGuard2026, taskplace::AttemptEveryLevel,
                                           taskplace::TaskHot<taskplace::task_hot::AllLevels2007>>;
struct OwnClassic : taskplace::DefaultBalanceTraits {
  using Hot = taskplace::TaskHot<taskplace::task_hot::AllLevels2007>;
};
// Balance traits written before Hot existed, not derived from the defaults.
struct Older {
  using Tracker = taskplace::NewidleCostTracker<>;
  using Stats = taskplace::NoStats;
  using Hook = taskplace::NoHook;
};
static_assert(std::is_same_v<taskplace::IdleBalancer<Topo>::hot_policy,
                             taskplace::TaskHot<taskplace::task_hot::SmtExempt2020>>);
static_assert(std::is_same_v<taskplace::IdleBalancer<Topo, Classic>::hot_policy,
                             taskplace::TaskHot<taskplace::task_hot::AllLevels2007>>);
static_assert(std::is_same_v<taskplace::IdleBalancer<Topo, OwnClassic>::hot_policy,
                             taskplace::TaskHot<taskplace::task_hot::AllLevels2007>>);
static_assert(std::is_same_v<taskplace::IdleBalancer<Topo, Older>::hot_policy, taskplace::TaskHot<>>);
static_assert(taskplace::TaskHotPolicy<taskplace::TaskHot<>>);
static_assert(!taskplace::TaskHotPolicy<taskplace::task_hot::AllLevels2007>);  // the rule, not the test
static_assert(!taskplace::TaskHotPolicy<int>);

// One newidle pull at the SMT level for a task that ran 100 us ago
// (migration_cost 500 us). Kernel task_hot(): before v5.10 the task is
// hot (exec_start within sysctl_sched_migration_cost) and the SMT
// domain's cache_nice_tries is 0 with no failure counted yet, so
// can_migrate_task() refuses it; from v5.10 (Josh Don, "sched/fair: Ignore
// cache hotness for SMT migration") task_hot() returns 0 for a domain with
// SD_SHARE_CPUCAPACITY, and the task moves.
template <class Traits>
Task* smt_newidle_pull(Task& t, std::uint32_t& hot_skips) {
  const Topo smt{1, 1, 2, 2};  // cpus 0 and 1: SMT siblings (level 0), 2 and 3 the other core
  std::vector<FakeQueue> qs(4);
  taskplace::ManualClock clock{10ms};
  t.last_ran = clock.now() - 100us;
  qs[1].q = {&t};
  using Hot = typename taskplace::IdleBalancer<Topo, Traits>::hot_policy;
  Stealer<Topo, Hot> thief{smt, 0, {.cache_hot = true, .task_hot = Hot{}}};
  Queues queues{&qs};
  REQUIRE(smt.level_kind(0, 0) == LevelKind::smt);
  Task* got = thief.pull(smt.level_cpus(0, 0), 0, LevelKind::smt, taskplace::BalanceKind::newidle, queues, LastRan{},
                         clock);
  hot_skips = static_cast<std::uint32_t>(thief.counts().hot_skips);
  return got;
}
}  // namespace hot_traits

TEST_CASE("the balance traits' Hot member picks the cache-hot rule of the steals", "[kit][idle][task_hot]") {
  Task t{1};
  std::uint32_t skips = 0;
  CHECK(hot_traits::smt_newidle_pull<taskplace::DefaultBalanceTraits>(t, skips) == &t);  // v5.10+
  CHECK(skips == 0);
  CHECK(hot_traits::smt_newidle_pull<hot_traits::Classic>(t, skips) == nullptr);  // v2.6.23 to v5.9
  CHECK(skips == 1);
  CHECK(hot_traits::smt_newidle_pull<hot_traits::OwnClassic>(t, skips) == nullptr);
  // Across an LLC both rules judge alike (only SMT moves changed).
  const taskplace::TaskHot<taskplace::task_hot::AllLevels2007> classic{};
  const taskplace::TaskHot<> current{};
  const taskplace::Move llc{.kind = LevelKind::llc, .last_ran = 0us};
  CHECK(classic.is_hot(llc, 100us) == current.is_hot(llc, 100us));
  CHECK(classic.is_hot(llc, 100us));
}

TEST_CASE("a runtime's TaskHot<> tunables carry over to the traits' rule", "[kit][idle][task_hot]") {
  const taskplace::TaskHot<> o{.migration_cost = 250us, .cache_nice_tries = {3, 3, 3, 3, 3}, .hot_buddy = false};
  const auto c = taskplace::task_hot_with_tunables<taskplace::TaskHot<taskplace::task_hot::AllLevels2007>>(o);
  CHECK(c.migration_cost == 250us);
  CHECK(c.cache_nice_tries == o.cache_nice_tries);
  CHECK_FALSE(c.hot_buddy);
}

// The steal side each policy set gets by default (kit::hot_steals_default,
// task_hot_default, with_policy_steals): the runtime set leaves tasks that
// ran within the runtime's migration cost, tunables::runtime_migration_cost
// (25 us, a 256 KB refill); the kernel's sets keep the embedding's old
// default (every task fair game) and the kernel's 500 us when turned on.
namespace {
using RuntimePlacer = taskplace::WakePlacer<taskplace::UniformTopology, taskplace::traits::Runtime>;
using CurrentPlacer = taskplace::WakePlacer<taskplace::UniformTopology, taskplace::traits::Current>;
struct StealOptions {
  std::optional<bool> cache_hot_steals;
  std::optional<taskplace::TaskHot<>> task_hot;
};
}  // namespace

TEST_CASE("the runtime set steals with the cache-hot test at the runtime's migration cost", "[kit][idle][task_hot]") {
  STATIC_REQUIRE(taskplace::kit::hot_steals_default<RuntimePlacer>);
  STATIC_REQUIRE_FALSE(taskplace::kit::hot_steals_default<CurrentPlacer>);
  STATIC_REQUIRE(taskplace::kit::task_hot_default<RuntimePlacer>().migration_cost == 25us);
  STATIC_REQUIRE(taskplace::kit::task_hot_default<CurrentPlacer>().migration_cost == 500us);
  // The rest of the test is the kernel's at either cost.
  STATIC_REQUIRE(taskplace::kit::task_hot_default<RuntimePlacer>().cache_nice_tries ==
                 taskplace::TaskHot<>{}.cache_nice_tries);

  // Unset options take the set's; set ones stay as the embedding set them.
  const auto r = taskplace::kit::with_policy_steals<RuntimePlacer>(StealOptions{});
  CHECK(r.cache_hot_steals == true);
  CHECK(r.task_hot->migration_cost == 25us);
  const auto c = taskplace::kit::with_policy_steals<CurrentPlacer>(StealOptions{});
  CHECK(c.cache_hot_steals == false);
  CHECK(c.task_hot->migration_cost == 500us);
  StealOptions mine;
  mine.cache_hot_steals = false;
  mine.task_hot = taskplace::TaskHot<>{};
  mine.task_hot->migration_cost = 3us;
  const auto m = taskplace::kit::with_policy_steals<RuntimePlacer>(mine);
  CHECK(m.cache_hot_steals == false);
  CHECK(m.task_hot->migration_cost == 3us);

  // At 25 us, a task that last ran 10 us ago is left, one that ran 40 us
  // ago goes (a newidle balance: its failures never count).
  const auto hot = taskplace::kit::task_hot_default<RuntimePlacer>();
  const Nanoseconds now{1'000'000};
  CHECK(hot.is_hot({.kind = LevelKind::llc, .last_ran = now - 10us}, now));
  CHECK_FALSE(hot.is_hot({.kind = LevelKind::llc, .last_ran = now - 40us}, now));
}

// WorkerQueue O1 (drains): a refusal counts as a failure only when the
// victim's queue has not drained since the level's last refusal there.
namespace {
struct DrainingQueue : FakeQueue {
  std::uint64_t drained = 0;  // the owner's pops that emptied the queue
  std::uint64_t drains() const noexcept { return drained; }
};
struct DrainingQueues {
  std::vector<DrainingQueue>* qs;
  DrainingQueue& operator()(CpuId c) const { return (*qs)[c]; }
};
static_assert(taskplace::kit::HasDrains<DrainingQueue>);
static_assert(!taskplace::kit::HasDrains<FakeQueue>);
}  // namespace

TEST_CASE("a victim whose queue drains between pulls is no failure: its hot task stays", "[kit][idle][task_hot]") {
  std::vector<DrainingQueue> qs(4);
  taskplace::ManualClock clock{10ms};
  Task partner{1, clock.now() - 100us};  // hot: ran 100 us ago (500 us)
  qs[1].q = {&partner};
  Stealer<taskplace::UniformTopology> thief{topo, 0, {.cache_hot = true}};
  DrainingQueues queues{&qs};
  const LevelKind kind = topo.level_kind(0, 0);
  const std::uint32_t tries = thief.options().task_hot.tries(kind);
  auto pull = [&] {
    return thief.pull(topo.level_cpus(0, 0), 0, kind, taskplace::BalanceKind::periodic, queues, LastRan{}, clock);
  };
  // A ping-pong pair: at every pull the partner sits queued, but the
  // queue emptied in between (the owner ran it, it blocked, it was woken
  // again): 20 pulls, far past cache_nice_tries, and no failure.
  for (int i = 0; i < 20; ++i) {
    CHECK(pull() == nullptr);
    ++qs[1].drained;
  }
  CHECK(thief.hot_state().nr_balance_failed[0] == 0);
  CHECK(thief.counts().hot_skips == 20);
  // Two tasks that never leave the queue empty: the first refusal is the
  // level's record, each one after it a failure, and the hot task goes
  // once failures exceed cache_nice_tries (one pull later than a queue
  // without drains).
  for (std::uint32_t i = 0; i <= tries + 1; ++i) CHECK(pull() == nullptr);
  CHECK(thief.hot_state().nr_balance_failed[0] == tries + 1);
  CHECK(pull() == &partner);
  CHECK(thief.hot_state().nr_balance_failed[0] == 0);
}
