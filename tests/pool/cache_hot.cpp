// The pool's cache-hot steals (PoolOptions::cache_hot_steals,
// taskplace::TaskHot): a thief leaves a task that ran lately on its
// worker, until that level's periodic balances (a tick's kicks) have
// failed more than cache_nice_tries times in a row.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <limits>
#include <type_traits>

#include <catch2/catch.hpp>

#include "pool_test_support.hpp"
#include "taskplace_pool/pool.hpp"

using namespace std::chrono_literals;
using taskplace_pool::Channel;
using taskplace_pool::PoolOptions;
using taskplace_pool::task;
using AffinePool = pool_test::UniformPool<taskplace::traits::AlwaysAffine>;

namespace {

// Busy for `d` of the worker's time, then yield: the task stays runnable,
// queued again on its own worker.
task<void> busy_yield(std::chrono::microseconds d) {
  const auto until = std::chrono::steady_clock::now() + d;
  while (std::chrono::steady_clock::now() < until) {
  }
  co_await taskplace_pool::yield{};
}

// The pool's counters when a member of the pair had met the other (the
// lower of the two snapshots): steals before the meeting took tasks that
// had never run (cold), which says nothing about the cache-hot test.
struct AtMeet {
  std::atomic<std::uint64_t> steals[2] = {std::numeric_limits<std::uint64_t>::max(),
                                          std::numeric_limits<std::uint64_t>::max()};
  std::atomic<std::uint64_t> kicks[2] = {0, 0};
  std::uint64_t min_steals() const { return std::min(steals[0].load(), steals[1].load()); }
  std::uint64_t min_kicks() const { return std::min(kicks[0].load(), kicks[1].load()); }
};

// One of a pair that meets once over a rendezvous channel (so that under
// AlwaysAffine the one arriving second wakes the first onto its own
// worker, where it ran an instant ago: hot), then runs in slices of 50 us,
// yielding between them, until `done` says so or 10 s pass. Both stay
// runnable on one worker unless a thief takes one.
template <class P, class Done>
task<void> pair_member(P& p, Channel<int>& meet, bool sender, AtMeet& at, Done done) {
  if (sender)
    co_await meet.send(1);
  else
    (void)co_await meet.recv();
  const auto st = p.stats();
  at.kicks[sender ? 1 : 0] = st.kicks;
  at.steals[sender ? 1 : 0] = st.steals;
  const auto give_up = std::chrono::steady_clock::now() + 10s;
  while (!done() && std::chrono::steady_clock::now() < give_up) co_await busy_yield(50us);
}

template <class P, class Done>
task<void> run_pair(P& p, AtMeet& at, Done done) {
  Channel<int> meet{0};
  auto a = p.spawn(pair_member(p, meet, false, at, done));
  auto b = p.spawn(pair_member(p, meet, true, at, done));
  co_await a;
  co_await b;
}

PoolOptions hot_options(std::uint32_t tries) {
  PoolOptions o;
  o.tick = 200us;          // a kick every 200 us while the pair's worker holds both
  o.preempted_for = 0ns;   // the placer's view does not matter here
  o.cache_hot_steals = true;
  o.task_hot = taskplace::TaskHot<>{};
  o.task_hot->migration_cost = 1h;  // every task that ran is hot for the whole test
  o.task_hot->cache_nice_tries = {tries, tries, tries, tries, tries};
  return o;
}

}  // namespace

TEST_CASE("a thief leaves cache-hot tasks where they are", "[pool][balance][task_hot]") {
  // No level ever fails often enough (UINT32_MAX tries): once the pair has
  // met, it stays on one worker through 20 more kicks, each a refused
  // periodic balance, and the newidle balances in between refuse too.
  AffinePool pool{pool_test::two_cpus(), hot_options(std::numeric_limits<std::uint32_t>::max())};
  AtMeet at;
  pool.block_on(run_pair(pool, at, [&] { return pool.stats().kicks >= at.min_kicks() + 20; }));
  const auto st = pool.stats();
  INFO("kicks " << st.kicks << " (" << at.min_kicks() << " at the meeting), steals " << st.steals << " ("
                << at.min_steals() << "), hot skips " << st.hot_skips);
  REQUIRE(st.kicks >= at.min_kicks() + 20);
  CHECK(st.steals == at.min_steals());
  CHECK(st.hot_skips >= 20);
}

TEST_CASE("without the cache-hot test a kick splits the pair", "[pool][balance][task_hot]") {
  // The control: the same pair and kicks, cache_hot_steals off.
  PoolOptions o = hot_options(0);
  o.cache_hot_steals = false;
  AffinePool pool{pool_test::two_cpus(), o};
  AtMeet at;
  pool.block_on(run_pair(pool, at, [&] {
    const auto s = pool.stats();
    return s.steals > at.min_steals() || s.kicks >= at.min_kicks() + 20;
  }));
  const auto st = pool.stats();
  INFO("kicks " << st.kicks << ", steals " << st.steals << " (" << at.min_steals() << " at the meeting)");
  CHECK(st.steals > at.min_steals());
  CHECK(st.hot_skips == 0);
}

TEST_CASE("failed periodic balances let a hot task go", "[pool][balance][task_hot]") {
  // cache_nice_tries 2: the two-worker LLC level must refuse in three
  // periodic balances in a row (each looks at the one queued task, hot)
  // before any balance there, the next kick or a newidle one, may move it
  // (kernel: newidle balances read the failures too, they only never add
  // to them). The victim always holds both tasks, so nothing resets the
  // count.
  // The kicks are read as soon as a task of the pair sees the steal.
  AffinePool pool{pool_test::two_cpus(), hot_options(2)};
  AtMeet at;
  std::atomic<std::uint64_t> kicks_at_steal{0};
  pool.block_on(run_pair(pool, at, [&] {
    const auto s = pool.stats();
    if (s.steals <= at.min_steals()) return false;
    std::uint64_t none = 0;
    kicks_at_steal.compare_exchange_strong(none, s.kicks);
    return true;
  }));
  const auto st = pool.stats();
  INFO("kicks " << kicks_at_steal.load() << " at the steal (" << at.min_kicks() << " at the meeting), steals "
                << st.steals << " (" << at.min_steals() << "), hot skips " << st.hot_skips);
  CHECK(st.steals > at.min_steals());
  CHECK(kicks_at_steal.load() >= at.min_kicks() + 3);
  CHECK(st.hot_skips >= 3);
}

// The cache-hot test's rule is the pool's BalanceTraits' Hot member. On
// two SMT siblings of one core the two rules part (kernel task_hot():
// v5.10 on, a move within an SD_SHARE_CPUCAPACITY domain is never hot;
// before, it was tested like any other): today's rule lets a kick split
// the hot pair at once, the classic one keeps it together through every
// kick (UINT32_MAX tries).
namespace {
using ClassicHot = taskplace::traits::Balance<taskplace::newidle::StampGuard2026, taskplace::AttemptEveryLevel,
                                              taskplace::TaskHot<taskplace::task_hot::AllLevels2007>>;
using ClassicPool = taskplace_pool::Pool<taskplace::UniformTopology, taskplace::traits::AlwaysAffine, ClassicHot>;
static_assert(std::is_same_v<ClassicPool::balancer_type::hot_policy,
                             taskplace::TaskHot<taskplace::task_hot::AllLevels2007>>);
static_assert(std::is_same_v<AffinePool::balancer_type::hot_policy, taskplace::TaskHot<>>);
const taskplace::UniformTopology smt_pair{1, 1, 1, 2};
}  // namespace

TEST_CASE("the pool's balance traits pick the cache-hot rule: SMT siblings", "[pool][balance][task_hot]") {
  const auto o = hot_options(std::numeric_limits<std::uint32_t>::max());
  {
    ClassicPool pool{smt_pair, o};
    AtMeet at;
    pool.block_on(run_pair(pool, at, [&] { return pool.stats().kicks >= at.min_kicks() + 20; }));
    const auto st = pool.stats();
    INFO("classic: kicks " << st.kicks << ", steals " << st.steals << " (" << at.min_steals() << " at the meeting)");
    REQUIRE(st.kicks >= at.min_kicks() + 20);
    CHECK(st.steals == at.min_steals());
    CHECK(st.hot_skips >= 20);
  }
  {
    AffinePool pool{smt_pair, o};
    AtMeet at;
    pool.block_on(run_pair(pool, at, [&] {
      const auto s = pool.stats();
      return s.steals > at.min_steals() || s.kicks >= at.min_kicks() + 20;
    }));
    const auto st = pool.stats();
    INFO("today's: kicks " << st.kicks << ", steals " << st.steals << " (" << at.min_steals() << " at the meeting)");
    CHECK(st.steals > at.min_steals());
    CHECK(st.hot_skips == 0);
  }
}
