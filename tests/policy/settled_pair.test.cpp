// SettledPair (policy/settled_pair.hpp), the runtime set's replay of a
// settled pair's verdict: the memo's counting alone, then in the placer
// (traits::Runtime) against the same set judging every wake-up. Golden
// values follow from the rule's text: a judgement arms Every - 1 replays,
// the last of them measured; CostGate's tests as in cost_gate.test.cpp.
#include <catch2/catch.hpp>

#include <chrono>
#include <cstdint>

#include "taskplace/kit/machine.hpp"
#include "taskplace/topology/uniform.hpp"
#include "taskplace/wake_placer.hpp"

#include "../placer/ping_pong_pair.hpp"

using namespace taskplace;
using namespace std::chrono_literals;

using placer_test::key_a;
using placer_test::key_b;
using placer_test::key_c;

TEST_CASE("SettledPair: a judgement arms Every - 1 replays for its waker, the last one measured",
          "[settled_pair]") {
  using S = SettledPair<4>;
  S::state s{};
  CHECK_FALSE(S::holds(s, key_a, key_b, key_b, key_a));  // nothing armed
  S::arm(s, key_a, key_a, WakeReason::waker_blocks);
  // Holds for A, whose last wakee is B, while B's own last wakee is the one
  // it had when judged (A).
  CHECK(S::holds(s, key_a, key_b, key_b, key_a));
  CHECK_FALSE(S::holds(s, key_c, key_b, key_b, key_a));      // another waker
  CHECK_FALSE(S::holds(s, key_a, key_c, key_b, key_a));      // A woke C since
  CHECK_FALSE(S::holds(s, key_a, key_b, key_b, key_c));      // B woke C since
  CHECK_FALSE(S::holds(s, key_a, key_b, key_b, no_task));    // B's partner changed
  // Every = 4: three replays, two quiet, the third measured.
  CHECK_FALSE(S::measures(s));
  CHECK_FALSE(S::take(s));
  CHECK(S::quiet(s));
  CHECK_FALSE(S::take(s));
  CHECK(S::measures(s));
  CHECK(S::take(s));
  CHECK_FALSE(S::quiet(s));  // the run before the judgement is measured
  CHECK_FALSE(S::holds(s, key_a, key_b, key_b, key_a));  // spent: the next wake-up is judged
  S::arm(s, key_a, key_a, WakeReason::short_work);
  CHECK(s.reason == WakeReason::short_work);
  S::clear(s);
  CHECK_FALSE(S::holds(s, key_a, key_b, key_b, key_a));
  CHECK_FALSE(S::quiet(s));
  // NoSettle never replays.
  NoSettle::state n{};
  NoSettle::arm(n, key_a, key_a, WakeReason::waker_blocks);
  CHECK_FALSE(NoSettle::holds(n, key_a, key_b, key_b, key_a));
  CHECK(NoSettle::take(n));
}

namespace {
struct Counted : traits::Runtime {
  using Stats = PlainStats;
};
struct Judged : Counted {
  using Settle = NoSettle;
};
static_assert(WakePlacer<UniformTopology, Counted>::settling);

template <class Traits>
struct Pair : placer_test::Pair<Traits> {
  std::uint64_t settled() const { return this->placer.stats().get(WakeCounter::settled); }
};
}  // namespace

TEST_CASE("traits::Runtime judges a settled pair once every 8 wake-ups and measures around the judgement",
          "[settled_pair][cost_gate][wake_placer]") {
  kit::Machine m{2, kit::WakeCosts{.spinning = 300ns, .parked = 30us, .crossing = 650ns}};
  m.spinning(1);
  Pair<Counted> rt;
  // Wake-up 1: A's overlap not measured yet (it reads as blocking at
  // once): kept by test (a), not armed. Wake-up 2: kept on a measured
  // overlap (100 ns < 650 ns): armed. Wake-ups 3-9 replay it (9 the
  // measured one), 10 is judged and arms again, and so on.
  for (int i = 1; i <= 26; ++i) {
    const int reads = rt.clock_reads;
    const Placement p = rt.round(m, 100ns, 2us);
    INFO("wake-up " << i);
    CHECK(p.cpu == 0u);
    CHECK(p.reason == WakeReason::waker_blocks);
    CHECK(p.affine == AffineReason::cost_gate);
    const bool judged = i <= 2 || (i - 2) % 8 == 0;
    const bool measured_replay = i > 2 && (i - 2) % 8 == 7;
    // The clock is read for a judgement and the measured replay only.
    CHECK(rt.clock_reads - reads == (judged || measured_replay ? 1 : 0));
    if (i == 9) {
      // Samples taken: A's overlap at wake-ups 1, 2 and 9 (its stamp at
      // each); B's run after each of them.
      CHECK(OverlapTracker::samples(rt.a.overlap) == 3u);
      CHECK(DurationTracker::samples(rt.b.duration) == 3u);
    }
  }
  // Judged: 1, 2, 10, 18, 26; the other 21 replayed.
  CHECK(rt.settled() == 21u);
  CHECK(rt.placer.stats().get(WakeCounter::waker_blocks) == 26u);
  CHECK(rt.placer.stats().get(WakeCounter::wakeups) == 26u);
}

TEST_CASE("traits::Runtime notices a settled pair's change of behaviour within 2 x 8 wake-ups",
          "[settled_pair][cost_gate][wake_placer]") {
  // From wake-up 5 on, A runs on 10 us after each wake-up: above the 650
  // ns move cost, so test (a) fails; B's 2 us run fails (b). The kernel's
  // pipeline then sends B to worker 1 (idle, spinning: 300 ns to wake).
  kit::Machine m{2, kit::WakeCosts{.spinning = 300ns, .parked = 30us, .crossing = 650ns}};
  m.spinning(1);
  auto first_move = [&](auto& pair) {
    for (int i = 1; i <= 40; ++i)
      if (pair.round(m, i >= 5 ? 10us : 100ns, 2us).cpu != 0u) return i;
    return 0;
  };
  // Judged at every wake-up: wake-up 5 is judged on the samples before
  // it; A's sleep then samples 10 us, and wake-up 6 moves B.
  Pair<Judged> judged;
  CHECK(first_move(judged) == 6);
  // Replayed: armed at wake-up 2, replays 3-9 (9 measured: A's 10 us is
  // sampled there), judged at 10: B moves.
  Pair<Counted> rt;
  CHECK(first_move(rt) == 10);
}

TEST_CASE("traits::Runtime judges a wake-up that the memo does not cover", "[settled_pair][cost_gate][wake_placer]") {
  kit::Machine m{2, kit::WakeCosts{.spinning = 300ns, .parked = 30us, .crossing = 650ns}};
  m.spinning(1);
  auto settled_pair = [&](Pair<Counted>& rt) {
    (void)rt.round(m, 100ns, 2us);
    (void)rt.round(m, 100ns, 2us);  // armed
    REQUIRE(rt.round(m, 100ns, 2us).cpu == 0u);
    REQUIRE(rt.settled() == 1u);  // replays from here
  };
  auto wake = [&](Pair<Counted>& rt, CpuId waking, CpuId prev, bool handoff = false) {
    return rt.placer.place({.waker = &rt.a, .waker_key = key_a, .wakee = &rt.b, .wakee_key = key_b,
                            .waking_cpu = waking, .prev_cpu = prev, .sync = true, .current_cpu = handoff},
                           m.at(rt.now), rt.now);
  };
  SECTION("another waker") {
    Pair<Counted> rt;
    settled_pair(rt);
    (void)rt.round(m, 100ns, 2us, key_c);
    CHECK(rt.settled() == 1u);
  }
  SECTION("the waker woke another task since") {
    Pair<Counted> rt;
    settled_pair(rt);
    typename Pair<Counted>::Placer::task_state c{};
    m.running(0);
    (void)rt.placer.place({.waker = &rt.a, .waker_key = key_a, .wakee = &c, .wakee_key = key_c, .waking_cpu = 0,
                           .prev_cpu = 1},
                          m.at(rt.now), rt.now);
    CHECK(rt.placer.stats().get(WakeCounter::settled) == 1u);
    (void)rt.round(m, 100ns, 2us);
    CHECK(rt.settled() == 1u);  // judged: A's last wakee was C
  }
  SECTION("the wakee last ran elsewhere") {
    Pair<Counted> rt;
    settled_pair(rt);
    m.running(0);
    (void)wake(rt, 0, 1);
    CHECK(rt.settled() == 1u);
  }
  SECTION("work queued behind the waker") {
    Pair<Counted> rt;
    settled_pair(rt);
    m.running(0);
    (void)m.queued(0);
    (void)wake(rt, 0, 0);
    CHECK(rt.settled() == 1u);
    m.dequeued(0);
  }
  SECTION("the waking CPU not allowed") {
    Pair<Counted> rt;
    settled_pair(rt);
    m.running(0);
    const Placement p = rt.placer.place({.waker = &rt.a, .waker_key = key_a, .wakee = &rt.b, .wakee_key = key_b,
                                         .waking_cpu = 0, .prev_cpu = 0},
                                        m.at(rt.now), rt.now, [](CpuId c) { return c == 1; });
    CHECK(p.cpu == 1u);
    CHECK(rt.settled() == 1u);
  }
  SECTION("a hand-off") {
    Pair<Counted> rt;
    settled_pair(rt);
    m.running(0);
    CHECK(wake(rt, 0, 0, true).reason == WakeReason::current_cpu);
    CHECK(rt.settled() == 1u);
  }
}
