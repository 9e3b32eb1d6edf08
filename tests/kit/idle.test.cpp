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
#include <thread>
#include <vector>

#include "taskplace/clock.hpp"
#include "taskplace/topology/uniform.hpp"

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
