// WakeOnCurrent (placer/wake_on_current.hpp): SIS_CURRENT of Chen Yu's
// 2023 series, v7 and v8 thresholds; then the rule inside WakePlacer
// (traits::SisCurrent) on a ping-pong pair, against today's kernel.
// Golden values come from the rule's five tests and its thresholds:
//   MigrationCost2023: short iff 0 < dur < migration_cost (500 us);
//   Granularity2023: short iff 0 < dur and dur * 8 < g, g = 750 us * (1 + log2(min(cpus, 8))),
//       i.e. dur <= (g - 1) / 8 in integers;
// the flips of FlipCounter (halving once a period, judged at record()), and
// the average of DurationTracker, avg += (sample - avg) / 8 (truncating).
#include <catch2/catch.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "taskplace/placer/wake_on_current.hpp"
#include "taskplace/testing/machine.hpp"
#include "taskplace/topology/uniform.hpp"
#include "taskplace/wake_placer.hpp"

using namespace taskplace;
using namespace std::chrono_literals;
using testing::ScriptedMachine;

// Reasons print by name in failure messages (their underlying type is a
// character type, which Catch would print as a character).
namespace Catch {
template <>
struct StringMaker<AffineReason> {
  static std::string convert(AffineReason r) { return to_string(r); }
};
template <>
struct StringMaker<WakeReason> {
  static std::string convert(WakeReason r) { return to_string(r); }
};
}  // namespace Catch

namespace {
constexpr TaskKey key_a = 1, key_b = 2, key_c = 3;
constexpr std::uint32_t u32_max = std::numeric_limits<std::uint32_t>::max();

// A waker A and a wakee B that pass all five tests: A alone on the waking
// CPU, both averaging 10 us (short for MigrationCost2023, and for Granularity2023 on any CPU count:
// 10,000 <= 93,749), no flips, each the other's last wakee.
constexpr WakeOnCurrentInput passing() {
  return WakeOnCurrentInput{.waking_nr_running = 1,
                            .waker_duration = 10us,
                            .wakee_duration = 10us,
                            .waker_flips = 0,
                            .wakee_flips = 0,
                            .waker_last_wakee = key_b,
                            .wakee_last_wakee = key_a,
                            .waker = key_a,
                            .wakee = key_b,
                            .cpu_count = 8};
}
static_assert(WakeOnCurrent<sis_current::MigrationCost2023>::decide(passing()));
static_assert(WakeOnCurrent<sis_current::Granularity2023>::decide(passing()));

struct Row {
  const char* what;
  void (*change)(WakeOnCurrentInput&);
  bool expected;
};
}  // namespace

// ---------------------------------------------------------------------------
// The rule alone.

TEST_CASE("each of the five tests, failing alone, keeps the wakee off the waking CPU", "[wake_on_current]") {
  const Row rows[] = {
      {"all five pass", [](WakeOnCurrentInput&) {}, true},
      // Test 1: nr_running <= 1 (the waker alone, or nothing: an idle CPU).
      {"the waking CPU runs nothing", [](WakeOnCurrentInput& in) { in.waking_nr_running = 0; }, true},
      {"the waking CPU runs 2 tasks", [](WakeOnCurrentInput& in) { in.waking_nr_running = 2; }, false},
      {"the waking CPU runs 2^32 - 1 tasks", [](WakeOnCurrentInput& in) { in.waking_nr_running = u32_max; }, false},
      // Test 2: the waker short, 0 < dur under the threshold.
      {"the waker's duration is unknown (0)", [](WakeOnCurrentInput& in) { in.waker_duration = 0ns; }, false},
      {"the waker's duration is negative", [](WakeOnCurrentInput& in) { in.waker_duration = -1ns; }, false},
      {"the waker runs 1 s", [](WakeOnCurrentInput& in) { in.waker_duration = 1s; }, false},
      // Test 3: the wakee likewise.
      {"the wakee's duration is unknown (0)", [](WakeOnCurrentInput& in) { in.wakee_duration = 0ns; }, false},
      {"the wakee runs 1 s", [](WakeOnCurrentInput& in) { in.wakee_duration = 1s; }, false},
      // Test 4: both flip counts 0.
      {"the waker flipped once", [](WakeOnCurrentInput& in) { in.waker_flips = 1; }, false},
      {"the wakee flipped once", [](WakeOnCurrentInput& in) { in.wakee_flips = 1; }, false},
      {"the wakee's flips are saturated", [](WakeOnCurrentInput& in) { in.wakee_flips = u32_max; }, false},
      // Test 5: each the other's last wakee; no_task matches nothing.
      {"the waker last woke C", [](WakeOnCurrentInput& in) { in.waker_last_wakee = key_c; }, false},
      {"the wakee last woke C", [](WakeOnCurrentInput& in) { in.wakee_last_wakee = key_c; }, false},
      {"the wakee woke nobody yet", [](WakeOnCurrentInput& in) { in.wakee_last_wakee = no_task; }, false},
      {"the waker last woke itself",
       [](WakeOnCurrentInput& in) { in.waker_last_wakee = key_a; }, false},
      {"a wake-up from outside any task whose wakee woke nobody",
       [](WakeOnCurrentInput& in) {
         in.waker = no_task;
         in.wakee_last_wakee = no_task;  // equal keys, but no_task matches nothing
       },
       false},
      // A task waking itself (one key on both sides) passes test 5's
      // equalities trivially, but is no pair: refused.
      {"a task that wakes itself",
       [](WakeOnCurrentInput& in) {
         in.wakee = in.waker;
         in.waker_last_wakee = in.waker;
         in.wakee_last_wakee = in.waker;
       },
       false},
      {"a wakee without a key, as the waker's last wakee",
       [](WakeOnCurrentInput& in) {
         in.wakee = no_task;
         in.waker_last_wakee = no_task;
       },
       false},
  };
  for (const Row& r : rows) {
    WakeOnCurrentInput in = passing();
    r.change(in);
    INFO(r.what);
    CHECK(WakeOnCurrent<sis_current::MigrationCost2023>::decide(in) == r.expected);
    CHECK(WakeOnCurrent<sis_current::Granularity2023>::decide(in) == r.expected);
    CHECK_FALSE(NoWakeOnCurrent::decide(in));  // today's kernel: never
  }
  STATIC_REQUIRE(std::is_same_v<WakeOnCurrent<>::variant_type, sis_current::MigrationCost2023>);
  STATIC_REQUIRE(WakeOnCurrent<>::enabled && !NoWakeOnCurrent::enabled);
}

TEST_CASE("v8 is short strictly below the 500 us migration cost, on any CPU count", "[wake_on_current]") {
  using sis_current::MigrationCost2023;
  for (std::size_t cpus : {std::size_t{0}, std::size_t{1}, std::size_t{8}, std::size_t{1024}}) {
    INFO(cpus << " CPUs");
    CHECK(MigrationCost2023::is_short(1ns, cpus));
    CHECK(MigrationCost2023::is_short(499'999ns, cpus));
    CHECK_FALSE(MigrationCost2023::is_short(500'000ns, cpus));  // kernel: dur_avg < sysctl_sched_migration_cost
    CHECK_FALSE(MigrationCost2023::is_short(0ns, cpus));        // 0: nothing measured
    CHECK_FALSE(MigrationCost2023::is_short(-1ns, cpus));
    CHECK_FALSE(MigrationCost2023::is_short(Nanoseconds::max(), cpus));
    CHECK_FALSE(MigrationCost2023::is_short(Nanoseconds::min(), cpus));
  }
  // Through the whole rule: both durations at the edge.
  auto in = passing();
  in.waker_duration = in.wakee_duration = 499'999ns;
  CHECK(WakeOnCurrent<MigrationCost2023>::decide(in));
  in.wakee_duration = 500us;
  CHECK_FALSE(WakeOnCurrent<MigrationCost2023>::decide(in));
}

TEST_CASE("v7 is short below an eighth of the granularity, scaled by the CPU count", "[wake_on_current]") {
  using sis_current::Granularity2023;
  struct Edge {
    std::size_t cpus;
    std::int64_t factor;      // 1 + log2(min(cpus, 8)), log2 rounded down; 0 CPUs reads as 1
    std::int64_t last_short;  // (750,000 * factor - 1) / 8
  };
  const Edge edges[] = {
      {0, 1, 93'749},   // g = 750,000: 93,750 * 8 = 750,000 is not < g
      {1, 1, 93'749},
      {2, 2, 187'499},  // g = 1,500,000
      {3, 2, 187'499},  // log2(3) rounds down to 1
      {4, 3, 281'249},  // g = 2,250,000
      {7, 3, 281'249},
      {8, 4, 374'999},  // g = 3,000,000
      {64, 4, 374'999}, // min(cpus, 8): no growth past 8
      {std::numeric_limits<std::size_t>::max(), 4, 374'999},
  };
  for (const Edge& e : edges) {
    INFO(e.cpus << " CPUs");
    CHECK(Granularity2023::granularity_factor(e.cpus) == e.factor);
    const std::int64_t g = 750'000 * e.factor;
    // The kernel's product, formed here where it cannot overflow.
    CHECK(e.last_short * 8 < g);
    CHECK_FALSE((e.last_short + 1) * 8 < g);
    CHECK(Granularity2023::is_short(Nanoseconds{e.last_short}, e.cpus));
    CHECK_FALSE(Granularity2023::is_short(Nanoseconds{e.last_short + 1}, e.cpus));
    CHECK(Granularity2023::is_short(1ns, e.cpus));
    CHECK_FALSE(Granularity2023::is_short(0ns, e.cpus));
    CHECK_FALSE(Granularity2023::is_short(-1ns, e.cpus));
    // dur * 8 would overflow for these; the rule never forms it.
    CHECK_FALSE(Granularity2023::is_short(Nanoseconds::max(), e.cpus));
    CHECK_FALSE(Granularity2023::is_short(Nanoseconds{std::numeric_limits<std::int64_t>::max() / 8 + 1}, e.cpus));
    // Through the whole rule, with the input's CPU count.
    auto in = passing();
    in.cpu_count = e.cpus;
    in.waker_duration = in.wakee_duration = Nanoseconds{e.last_short};
    CHECK(WakeOnCurrent<Granularity2023>::decide(in));
    in.waker_duration = Nanoseconds{e.last_short + 1};
    CHECK_FALSE(WakeOnCurrent<Granularity2023>::decide(in));
  }
  // The cover letter's "comparable" thresholds: from 8 CPUs on, 375 us
  // (v7) against 500 us (v8). A 400 us pair is short for v8 only.
  auto in = passing();
  in.waker_duration = in.wakee_duration = 400us;
  CHECK(WakeOnCurrent<sis_current::MigrationCost2023>::decide(in));
  CHECK_FALSE(WakeOnCurrent<Granularity2023>::decide(in));
  // Constant evaluation of the extremes: no overflow (UB would not compile).
  STATIC_REQUIRE(!Granularity2023::is_short(Nanoseconds::max(), std::numeric_limits<std::size_t>::max()));
  STATIC_REQUIRE(Granularity2023::is_short(93'749ns, 0) && !Granularity2023::is_short(93'750ns, 0));
  STATIC_REQUIRE(!sis_current::MigrationCost2023::is_short(Nanoseconds::max(), 0));
}

// ---------------------------------------------------------------------------
// The rule inside WakePlacer: a ping-pong pair.

namespace {
// One LLC of 4 CPUs, no SMT: every CPU shares a cache with every other.
const UniformTopology quad{1, 1, 4, 1};

template <class Variant>
struct SisCounted : traits::SisCurrent<Variant> {
  using Stats = PlainStats;
};
struct CurrentCounted : traits::Current {
  using Stats = PlainStats;
};

// A's and B's wake-ups. Flips decay once a period of 1 ms (FlipCounter's
// tunable; 1 s in the kernel), so the pair reaches 0 flips in 50 rounds.
//
// Timeline: A runs from 0. Round i (i = 0, 1, ...):
//   at 20i + 10 us A wakes B (sync), sleeps; B runs 10 us;
//   at 20i + 20 us B wakes A (sync), sleeps; A runs 10 us.
// Each task's runs are 10 us samples: its average after k sleeps, by the
// truncating recurrence avg += (10,000 - avg) / 8 from 0, is 1,250, 2,343,
// 3,300, ..., 9,984 at k = 50, 9,988 at k = 53 (short for both variants:
// on 4 CPUs Granularity2023's edge is 281,249).
// Flips: each task's first wake-up of the other makes its count 1 (a new
// partner); the decay stamp starts at 0 and moves at the first record()
// strictly more than 1 ms after it. A records at 20i + 10 us: first past
// 1,000 us at i = 50 (1,010 us), count 1 -> 0. B records at 20i + 20 us:
// i = 49 is 1,000 us, not strictly after, so B's first decay is at
// i = 50 (1,020 us). Both are 0 first at B's wake-up of A in round 50.
template <class Traits>
struct PingPong {
  using Placer = WakePlacer<UniformTopology, Traits>;
  struct Task {
    typename Placer::task_state s{};
    TaskKey key;
    CpuId cpu;  // where it runs or last ran
    bool runnable = false;
  };

  Placer placer{quad, FlipCounter<>{.period = 1ms}};
  Task a{.key = key_a, .cpu = 0, .runnable = true};
  Task b{.key = key_b, .cpu = 1};
  Task c{.key = key_c, .cpu = 3};
  std::uint32_t others[4] = {};  // runnable tasks besides a, b, c, per CPU
  Nanoseconds now = 0ns;
  std::vector<Placement> log;

  PingPong() { placer.task_runs(a.s, now); }

  // The machine as the tasks leave it: each CPU runs its runnable tasks.
  ScriptedMachine<> machine() const {
    ScriptedMachine<> m{4};
    for (CpuId cpu = 0; cpu < 4; ++cpu) {
      std::uint32_t nr = others[cpu];
      for (const Task* t : {&a, &b, &c}) nr += t->runnable && t->cpu == cpu ? 1u : 0u;
      if (nr > 0) m.busy(cpu, nr, 1024u * nr);
    }
    return m;
  }

  // `waker` wakes `wakee` (sync); every placement must pass the kit's
  // rules. The wakee becomes runnable where it was placed.
  Placement wake(Task& waker, Task& wakee) {
    const auto m = machine();
    const Placement p = placer.place({.waker = &waker.s, .waker_key = waker.key, .wakee = &wakee.s,
                                      .wakee_key = wakee.key, .waking_cpu = waker.cpu,
                                      .prev_cpu = wakee.cpu, .sync = true},
                                     m, now);
    const auto v = testing::check_placement(
        quad, m, AnyCpu{}, testing::PlacementQuery{waker.cpu, wakee.cpu, true, true, false}, p);
    std::string broken;
    for (const auto& x : v) broken += x.rule + ": " + x.detail + "; ";
    INFO("placement " << to_string(p.affine) << "/" << to_string(p.reason) << " on " << p.cpu << ": "
                      << broken);
    CHECK(v.empty());
    wakee.cpu = p.cpu;
    wakee.runnable = true;
    log.push_back(p);
    return p;
  }
  // A pipe's ping: wake the partner, block at once; the partner then runs
  // for `run`.
  Placement ping(Task& waker, Task& wakee, Nanoseconds run = 10us) {
    const Placement p = wake(waker, wakee);
    placer.task_sleeps(waker.s, now);
    waker.runnable = false;
    placer.task_runs(wakee.s, now);
    now += run;
    return p;
  }
  void rounds(int n) {
    now = 10us;  // A's first run
    for (int i = 0; i < n; ++i) {
      ping(a, b);
      ping(b, a);
    }
  }
  std::uint32_t flips(const Task& t) const { return placer.flips().flips(t.s.flips); }
  TaskKey last_wakee(const Task& t) const { return placer.flips().last_wakee(t.s.flips); }
  std::uint64_t count(WakeCounter w) const { return placer.stats().get(w); }
};

using Variants = std::tuple<sis_current::MigrationCost2023, sis_current::Granularity2023>;
}  // namespace

TEMPLATE_LIST_TEST_CASE("a ping-pong pair of short tasks stays on the waking CPU once both flip counts are 0",
                        "[wake_on_current][wake_placer]", Variants) {
  PingPong<SisCounted<TestType>> pp;
  pp.rounds(53);  // rounds 0..52: 106 wake-ups
  REQUIRE(pp.log.size() == 106);
  // Rounds 0..49 and A's wake-up in round 50: the normal path. The waking
  // CPU runs the waker alone, a sync wake-up: target the waking CPU
  // (affine sync), busy; prev idle and sharing the LLC: idle_prev. The
  // pair alternates between CPUs 0 and 1.
  for (std::size_t k = 0; k <= 100; ++k) {
    INFO("wake-up " << k);
    CHECK(pp.log[k].affine == AffineReason::sync);
    CHECK(pp.log[k].reason == WakeReason::idle_prev);
    CHECK(pp.log[k].cpu == (k % 2 == 0 ? 1u : 0u));
  }
  // k = 100 is A's wake-up of B at 1,010 us: A's flips decayed to 0, B's
  // still 1 (its last record at 1,000 us was not strictly after the period).
  // k = 101, B's wake-up of A at 1,020 us: B's decay too; all five tests
  // pass. A lands on B's CPU 1 although A's prev, CPU 0, is idle.
  CHECK(pp.log[101].cpu == 1);
  CHECK(pp.log[101].target == 1);
  CHECK(pp.log[101].affine == AffineReason::wake_on_current);
  CHECK(pp.log[101].reason == WakeReason::wake_on_current);
  CHECK_FALSE(pp.log[101].wide);
  CHECK(pp.log[101].scanned == 0);
  // Rounds 51 and 52: both stay on CPU 1 (waking == prev now).
  for (std::size_t k = 102; k < 106; ++k) {
    INFO("wake-up " << k);
    CHECK(pp.log[k].cpu == 1);
    CHECK(pp.log[k].reason == WakeReason::wake_on_current);
  }
  CHECK(pp.a.cpu == 1);
  CHECK(pp.b.cpu == 1);
  CHECK(pp.flips(pp.a) == 0);
  CHECK(pp.flips(pp.b) == 0);
  CHECK(pp.last_wakee(pp.a) == key_b);
  CHECK(pp.last_wakee(pp.b) == key_a);
  // 53 sleeps each of 10 us runs: 9,988 ns (see the timeline above).
  CHECK(DurationTracker::average(pp.a.s.duration) == 9988ns);
  CHECK(DurationTracker::average(pp.b.s.duration) == 9988ns);
  // The counters: 106 wake-ups, 101 through idle_prev, 5 kept on the
  // waking CPU (round 50's second, rounds 51 and 52).
  CHECK(pp.count(WakeCounter::wakeups) == 106);
  CHECK(pp.count(WakeCounter::idle_prev) == 101);
  CHECK(pp.count(WakeCounter::wake_on_current) == 5);
  CHECK(pp.count(WakeCounter::current_cpu) == 0);
}

TEMPLATE_LIST_TEST_CASE("each broken test of the rule sends the pair down the normal path",
                        "[wake_on_current][wake_placer]", Variants) {
  PingPong<SisCounted<TestType>> pp;
  pp.rounds(53);
  // The pair is kept on CPU 1; A runs there, B sleeps there (prev 1). B
  // never searched (idle_prev returns before the recent-CPU step), so its
  // recent CPU is unset. Now 1,070 us; A's decay stamp 1,010 us, B's 1,020 us.
  REQUIRE(pp.log.back().reason == WakeReason::wake_on_current);
  REQUIRE(pp.a.cpu == 1);
  REQUIRE(pp.a.runnable);
  REQUIRE(pp.b.cpu == 1);
  REQUIRE(pp.b.s.recent_cpu == no_cpu);
  const auto kept = pp.count(WakeCounter::wake_on_current);

  // The normal path for A waking B on CPU 1, B's prev 1: same_cpu, target 1
  // busy, prev is the target, no recent CPU: the LLC scan from 2 finds 2 idle.
  auto normal_on_2 = [](const Placement& p) {
    CHECK(p.affine == AffineReason::same_cpu);
    CHECK(p.target == 1);
    CHECK(p.cpu == 2);
    CHECK(p.reason == WakeReason::idle_scan);
    CHECK(p.scanned == 1);
  };

  SECTION("the waker wakes a third task: its last wakee changes and it flips") {
    // A wakes C (prev 3): A's flips 0 -> 1 (60 us since its stamp: no
    // decay); C has no duration yet. Sync, waker alone: target 1 busy; C's
    // prev 3 idle: idle_prev.
    auto p = pp.wake(pp.a, pp.c);
    CHECK(p.reason == WakeReason::idle_prev);
    CHECK(p.cpu == 3);
    CHECK(pp.flips(pp.a) == 1);
    CHECK(pp.last_wakee(pp.a) == key_c);
    // Then B: last wakee B again, flips 1 -> 2. B's last wakee is A, both
    // short, CPU 1 runs A alone; test 4 fails on the waker's flips.
    p = pp.wake(pp.a, pp.b);
    CHECK(pp.flips(pp.a) == 2);
    CHECK(pp.last_wakee(pp.a) == key_b);
    normal_on_2(p);
    // B, on 2, wakes A back: B's flips 0, each the other's last wakee,
    // but A's flips are 2: sync target 2 busy, A's prev 1 idle: idle_prev.
    pp.placer.task_sleeps(pp.a.s, pp.now);
    pp.a.runnable = false;
    pp.now += 10us;
    p = pp.wake(pp.b, pp.a);
    CHECK(p.reason == WakeReason::idle_prev);
    CHECK(p.cpu == 1);
    CHECK(pp.count(WakeCounter::wake_on_current) == kept);
  }
  SECTION("the waking CPU runs two tasks") {
    pp.others[1] = 1;  // another task runnable beside A
    normal_on_2(pp.wake(pp.a, pp.b));
    // Everything else still passes: the same wake-up without it is kept.
    pp.others[1] = 0;
    pp.b.runnable = false;
    pp.b.cpu = 1;
    CHECK(pp.wake(pp.a, pp.b).reason == WakeReason::wake_on_current);
    CHECK(pp.count(WakeCounter::wake_on_current) == kept + 1);
  }
  SECTION("the wakee's last wakee is not the waker") {
    // Test 5 alone: B's last wakee set to C without a flip (a natural wake
    // of C by B would also count a flip and fail test 4).
    pp.b.s.flips.last_wakee.store(key_c);
    REQUIRE(pp.flips(pp.b) == 0);
    normal_on_2(pp.wake(pp.a, pp.b));
    CHECK(pp.flips(pp.a) == 0);  // A's side unchanged: same partner
    CHECK(pp.count(WakeCounter::wake_on_current) == kept);
  }
  SECTION("the wakee runs long") {
    // Round 53: A wakes B (kept), B runs 4 ms, then wakes A. B's average
    // changes only at its sleep, after that wake-up: still kept.
    CHECK(pp.ping(pp.a, pp.b, 4ms).reason == WakeReason::wake_on_current);
    CHECK(pp.ping(pp.b, pp.a).reason == WakeReason::wake_on_current);
    // B's 54th sample, 4,000,000: 9,988 + (4,000,000 - 9,988) / 8
    // = 9,988 + 498,751 = 508,739 ns, long for MigrationCost2023 (>= 500,000) and Granularity2023 on
    // 4 CPUs (> 281,249).
    CHECK(DurationTracker::average(pp.b.s.duration) == 508'739ns);
    // A (on 1) wakes B (prev 1): the wakee fails test 3.
    normal_on_2(pp.wake(pp.a, pp.b));
    CHECK(pp.flips(pp.a) == 0);
    CHECK(pp.flips(pp.b) == 0);
    CHECK(pp.count(WakeCounter::wake_on_current) == kept + 2);
  }
}

TEST_CASE("today's kernel never keeps the pair on the waking CPU", "[wake_on_current][wake_placer]") {
  PingPong<CurrentCounted> pp;
  STATIC_REQUIRE(!decltype(pp.placer)::tracking_duration);
  pp.rounds(53);
  REQUIRE(pp.log.size() == 106);
  for (std::size_t k = 0; k < pp.log.size(); ++k) {
    INFO("wake-up " << k);
    CHECK(pp.log[k].reason == WakeReason::idle_prev);
    CHECK(pp.log[k].cpu == (k % 2 == 0 ? 1u : 0u));
  }
  CHECK(pp.flips(pp.a) == 0);  // the flips decay as with SisCurrent
  CHECK(pp.flips(pp.b) == 0);
  CHECK(pp.count(WakeCounter::wakeups) == 106);
  CHECK(pp.count(WakeCounter::idle_prev) == 106);
  CHECK(pp.count(WakeCounter::wake_on_current) == 0);
}
