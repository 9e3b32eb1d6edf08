// The settled-pair fast path (CostGate::fast_path, WakePlacer::place) is
// exact: over random streams of wake-ups, runs and sleeps on random
// machines, traits::Runtime with the fast path and the same set without
// it (the gate asked after the flips' record, where WakeOnCurrent is)
// make the same decisions, leave every task in the same state and count
// the same; with the set's replay of settled pairs (SettledPair, the
// default) and without it (every wake-up judged). The two placers share
// nothing: each has its own tasks.
#include <catch2/catch.hpp>

#include <chrono>
#include <cstdint>
#include <random>
#include <vector>

#include "taskplace/kit/machine.hpp"
#include "taskplace/topology/uniform.hpp"
#include "taskplace/wake_placer.hpp"

using namespace taskplace;
using namespace std::chrono_literals;

namespace {

template <class S>
struct Counted : traits::Runtime {
  using Stats = PlainStats;
  using Settle = S;
};
struct SlowGate : CostGate {
  static constexpr bool fast_path = false;
};
template <class S>
struct CountedSlow : Counted<S> {
  using OnCurrent = SlowGate;
};
static_assert(WakePlacer<UniformTopology, Counted<SettledPair<>>>::fast_gate);
static_assert(!WakePlacer<UniformTopology, CountedSlow<SettledPair<>>>::fast_gate);
static_assert(WakePlacer<UniformTopology, Counted<SettledPair<>>>::settling);
static_assert(!WakePlacer<UniformTopology, Counted<NoSettle>>::settling);

// Replays seen over every stream of a test case (SettledPair's path runs).
std::uint64_t replays_seen = 0;

template <class Placer>
void require_same_task(const Placer& pa, const typename Placer::task_state& a, const auto& pb,
                       const auto& b) {
  using Ov = typename Placer::overlap_policy;
  using Du = typename Placer::duration_policy;
  REQUIRE(pa.flips().flips(a.flips) == pb.flips().flips(b.flips));
  REQUIRE(pa.flips().last_wakee(a.flips) == pb.flips().last_wakee(b.flips));
  REQUIRE(a.flips.decay_stamp_ns.load() == b.flips.decay_stamp_ns.load());
  REQUIRE(Ov::average(a.overlap) == Ov::average(b.overlap));
  REQUIRE(a.overlap.woke == b.overlap.woke);
  REQUIRE(a.overlap.woke_at == b.overlap.woke_at);
  REQUIRE(Du::average(a.duration) == Du::average(b.duration));
  REQUIRE(a.ledger.due == b.ledger.due);
  REQUIRE(a.recent_cpu == b.recent_cpu);
  if constexpr (Placer::settling) {
    REQUIRE(a.settle.left == b.settle.left);
    REQUIRE(a.settle.quiet == b.settle.quiet);
    REQUIRE(a.settle.reason == b.settle.reason);
  }
}

template <class S>
void run_streams(const UniformTopology& topo, std::uint32_t seed, int steps) {
  using Fast = WakePlacer<UniformTopology, Counted<S>>;
  using Slow = WakePlacer<UniformTopology, CountedSlow<S>>;
  const std::uint32_t n = topo.cpu_count();
  constexpr std::uint32_t ntasks = 6;
  std::mt19937 rng{seed};
  auto pick = [&](std::uint32_t k) { return static_cast<std::uint32_t>(rng() % k); };

  Fast fast{topo, FlipCounter<>{.period = 50us}};
  Slow slow{topo, FlipCounter<>{.period = 50us}};
  std::vector<typename Fast::task_state> ft(ntasks);
  std::vector<typename Slow::task_state> st(ntasks);
  std::vector<CpuId> cpu_of(ntasks, 0);
  std::vector<bool> running(ntasks, false);
  kit::Machine m{n, kit::WakeCosts{.spinning = Nanoseconds{100 + pick(400)}, .parked = Nanoseconds{pick(40'000)},
                                   .crossing = Nanoseconds{pick(2) == 0 ? 0 : 100 + pick(900)}}};
  Nanoseconds now = 1ms;
  for (int i = 0; i < steps; ++i) {
    now += Nanoseconds{pick(3) == 0 ? pick(200) : pick(20'000)};
    // A random machine: each CPU busy with 0-3 tasks, or idle spinning or parked.
    for (CpuId c = 0; c < n; ++c) {
      const std::uint32_t load = pick(4);
      m.stopped(c);
      while (m.queued_on(c) > 0) m.dequeued(c);
      if (load > 0) {
        m.running(c);
        for (std::uint32_t q = 1; q < load; ++q) (void)m.queued(c);
      } else if (pick(2) == 0) {
        m.parked(c);
      } else {
        m.spinning(c);
      }
    }
    const std::uint32_t k = pick(ntasks);
    switch (pick(4)) {
      case 0:  // k runs
        fast.task_runs(ft[k], now);
        slow.task_runs(st[k], now);
        running[k] = true;
        break;
      case 1:  // k sleeps
        if (running[k]) {
          fast.task_sleeps(ft[k], now);
          slow.task_sleeps(st[k], now);
          running[k] = false;
        }
        break;
      default: {  // a wake-up, from task k, from off any task, or from task k's key alone
        // Mostly k's partner (k ^ 1), so that pairs form (few flips: the
        // gate judges them) beside tasks of many partners (it leaves them).
        const std::uint32_t e = pick(4) == 0 ? pick(ntasks) : k ^ 1u;
        const std::uint32_t how = pick(8);
        const bool off = how <= 1;
        const TaskKey waker_key = how == 0 ? no_task : k + 1;  // how 1: k's state not at hand
        const CpuId waking = off ? pick(n) : cpu_of[k];
        const CpuId prev = pick(10) == 0 ? no_cpu : cpu_of[e];
        const bool sync = pick(2) == 0, hand_off = pick(16) == 0;
        const std::uint32_t key_flips = how == 1 ? pick(4) : 0;  // what k's thread read of its flips
        const Placement a = fast.place({.waker = off ? nullptr : &ft[k], .waker_key = waker_key,
                                        .wakee = &ft[e], .wakee_key = e + 1, .waking_cpu = waking,
                                        .prev_cpu = prev, .sync = sync, .current_cpu = hand_off,
                                        .waker_flips = key_flips, .wakee_load = 0},
                                       m.at(now), now);
        const Placement b = slow.place({.waker = off ? nullptr : &st[k], .waker_key = waker_key,
                                        .wakee = &st[e], .wakee_key = e + 1, .waking_cpu = waking,
                                        .prev_cpu = prev, .sync = sync, .current_cpu = hand_off,
                                        .waker_flips = key_flips, .wakee_load = 0},
                                       m.at(now), now);
        INFO("seed " << seed << " step " << i << ": " << to_string(a.reason) << " / " << to_string(b.reason));
        REQUIRE(a.cpu == b.cpu);
        REQUIRE(a.target == b.target);
        REQUIRE(a.affine == b.affine);
        REQUIRE(a.reason == b.reason);
        REQUIRE(a.wide == b.wide);
        REQUIRE(a.scanned == b.scanned);
        cpu_of[e] = a.cpu;
        break;
      }
    }
    for (std::uint32_t t = 0; t < ntasks; ++t) require_same_task(fast, ft[t], slow, st[t]);
  }
  for (std::size_t c = 0; c < static_cast<std::size_t>(WakeCounter::count_); ++c)
    REQUIRE(fast.stats().get(static_cast<WakeCounter>(c)) == slow.stats().get(static_cast<WakeCounter>(c)));
  // The streams exercise both paths: some wake-ups kept, some not.
  CHECK(fast.stats().get(WakeCounter::waker_blocks) + fast.stats().get(WakeCounter::short_work) > 0);
  CHECK(fast.stats().get(WakeCounter::waker_blocks) + fast.stats().get(WakeCounter::short_work) <
        fast.stats().get(WakeCounter::wakeups));
  replays_seen += fast.stats().get(WakeCounter::settled);
}

}  // namespace

TEST_CASE("the settled-pair fast path decides, writes and counts as the full decision", "[property][cost_gate]") {
  replays_seen = 0;
  for (std::uint32_t seed = 1; seed <= 40; ++seed) {
    run_streams<SettledPair<>>(UniformTopology{1, 1, 2, 1}, seed, 400);
    run_streams<SettledPair<>>(UniformTopology{1, 2, 4, 2}, seed + 1000, 400);
    run_streams<NoSettle>(UniformTopology{1, 1, 2, 1}, seed, 400);
    run_streams<NoSettle>(UniformTopology{1, 2, 4, 2}, seed + 1000, 400);
  }
  // The replays ran, in both configurations alike (each counted above).
  CHECK(replays_seen > 0);
  INFO("replays: " << replays_seen);
}
