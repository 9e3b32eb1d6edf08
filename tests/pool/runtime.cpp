// The pool with traits::Runtime: a ping-pong pair whose waker blocks at
// once is kept on the waking worker by CostGate's test (a) (waker_blocks),
// on a pool of one worker (an LLC of one CPU) as on two, and the settled
// pair's verdict is replayed between judgements (SettledPair). The costs are set
// to a millisecond, so that no preemption of the test's threads and no
// sanitizer's slowdown decides it.
#include <chrono>
#include <cstdint>

#include <catch2/catch.hpp>

#include "pool_test_support.hpp"
#include "taskplace_pool/pool.hpp"

using namespace std::chrono_literals;
using taskplace::WakeCounter;
using taskplace_pool::Channel;
using taskplace_pool::task;

namespace {

struct Counted : taskplace::traits::Runtime {
  using Stats = taskplace::SingleWriterStats;
};
using Pool = pool_test::UniformPool<Counted>;

task<void> echo(Channel<int>& in, Channel<int>& out) {
  while (auto v = co_await in.recv()) co_await out.send(*v);
}

// Effects: `rounds` round trips of a pipe pair on `pool`.
void pipe(Pool& pool, int rounds) {
  pool.block_on([](Pool& p, int n) -> task<void> {
    Channel<int> ab{1, taskplace_pool::WakeHint::sync}, ba{1, taskplace_pool::WakeHint::sync};
    auto other = p.spawn(echo(ab, ba));
    for (int i = 0; i < n; ++i) {
      co_await ab.send(i);
      (void)co_await ba.recv();
    }
    ab.close();
    co_await other;
  }(pool, rounds));
}

taskplace_pool::PoolOptions slow_moves() {
  taskplace_pool::PoolOptions o;
  o.costs = taskplace::kit::WakeCosts{.spinning = 1ms, .parked = 2ms, .crossing = 1ms};
  return o;
}

}  // namespace

TEST_CASE("traits::Runtime keeps a pipe pair on one worker, on an LLC of one CPU as of two", "[pool][runtime]") {
  const int rounds = 2000 / pool_test::scale;
  for (const auto& topology : {pool_test::one_cpu(), pool_test::two_cpus()}) {
    INFO("workers: " << topology.cpu_count());
    Pool pool{topology, slow_moves()};
    pipe(pool, rounds);
    const auto s = pool.placer_stats();
    const auto wakeups = s.get(WakeCounter::wakeups);
    const auto kept = s.get(WakeCounter::waker_blocks);
    INFO("kept by test (a): " << kept << " of " << wakeups << "; wide: " << s.get(WakeCounter::wide));
    // Every wake-up of the pair after its first few: each task's partner is
    // its last wakee (a pair), it blocks right after its wake-up (an
    // overlap far below 1 ms), and nothing else is queued. A task with one
    // partner has 1 flip, which is not many, even where the LLC's size (the
    // wide factor) is 1: before that rule every wake-up on one worker was
    // wide and went through the full decision.
    CHECK(wakeups >= static_cast<std::uint64_t>(2 * rounds));
    CHECK(kept * 100 >= wakeups * 95);
    CHECK(s.get(WakeCounter::wide) * 100 <= wakeups);
    // The settled pair's verdict is replayed on 7 of each 8 of its
    // wake-ups (SettledPair<8>), judged on the 8th: at least 80% of the
    // kept ones, allowing for the first wake-ups of each task.
    const auto replayed = s.get(WakeCounter::settled);
    INFO("replayed: " << replayed);
    CHECK(replayed * 100 >= kept * 80);
    CHECK(replayed * 8 <= kept * 7);
  }
}
