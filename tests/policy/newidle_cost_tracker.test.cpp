// Tests for taskplace/policy/newidle_cost_tracker.hpp (kernel avg_idle,
// max_newidle_lb_cost, update_newidle_cost) and the estimator part of
// taskplace/testing/idle_conformance.hpp.
#include "taskplace/policy/newidle_cost_tracker.hpp"

#include <catch2/catch.hpp>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <limits>
#include <tuple>

#include "taskplace/idle_balancer.hpp"
#include "taskplace/testing/idle_conformance.hpp"

using namespace std::chrono_literals;
using taskplace::Nanoseconds;
using taskplace::NewidleCostTracker;

namespace {

constexpr Nanoseconds ns_max = Nanoseconds::max();

// One traits struct per era or single swap (derive, replace one member).
struct Saturate2009Traits : taskplace::DefaultNewidleTraits {
  using Estimator = taskplace::avg_idle::Saturate2009;
};
struct EverySecondTraits : taskplace::DefaultNewidleTraits {
  using Schedule = taskplace::cost_decay::EverySecond2014;
};
struct MigrationGateTraits : taskplace::DefaultNewidleTraits {
  using EntryGate = taskplace::newidle_gate::MigrationCost2009;
};
struct PlusMigrationTraits : taskplace::DefaultNewidleTraits {
  using Budget = taskplace::level_budget::SpentPlusMigration2013;
};
struct NoGuardTraits : taskplace::DefaultNewidleTraits {
  static constexpr bool skip_without_stamp = false;
};
struct EarlyCapTraits : taskplace::DefaultNewidleTraits {
  static constexpr bool cap_level_cost = true;
};
struct Cap2009Traits : taskplace::DefaultNewidleTraits {
  using Estimator = taskplace::avg_idle::Saturate2009;
  static constexpr bool cap_avg_idle_on_cost = false;
};
template <class R>
struct RatioTraits : taskplace::DefaultNewidleTraits {
  using Ratio = R;
};

using AllTrackers =
    std::tuple<NewidleCostTracker<>, NewidleCostTracker<Saturate2009Traits>,
               NewidleCostTracker<EverySecondTraits>, NewidleCostTracker<MigrationGateTraits>,
               NewidleCostTracker<PlusMigrationTraits>, NewidleCostTracker<NoGuardTraits>,
               NewidleCostTracker<EarlyCapTraits>, NewidleCostTracker<Cap2009Traits>>;

using AllRatios = std::tuple<taskplace::Decay253_256, taskplace::Decay254_256, taskplace::Decay63_64>;

// A deliberately broken estimator: takes the raw idle period, never capped.
struct RawDeltaEstimator {
  static Nanoseconds update(Nanoseconds, Nanoseconds delta, Nanoseconds) noexcept { return delta; }
};

// Runs `n` idle periods of length `len` back to back starting at `t`;
// returns the time after the last one.
template <class T>
Nanoseconds idle_periods(const T& t, typename T::state& s, int n, Nanoseconds len, Nanoseconds at) {
  for (int i = 0; i < n; ++i) {
    t.idle_start(s, at);
    at += len;
    t.idle_end(s, at);
  }
  return at;
}

}  // namespace

TEMPLATE_LIST_TEST_CASE("a fresh state allows balancing with the boot-time values", "[newidle_cost_tracker]",
                        AllTrackers) {
  const TestType t;
  const auto s = t.make_state(3, 7s);
  // The kernel's sched_init() values: avg_idle = 2 * 500us, cost = 500us, levels 0.
  CHECK(t.avg_idle(s) == 1ms);
  CHECK(t.cpu_cost(s) == 500us);
  CHECK(s.level_count == 3);
  for (std::uint32_t i = 0; i < 3; ++i) {
    CHECK(t.level_cost(s, i) == 0ns);
    CHECK(s.last_decay[i] == 7s);
  }
  CHECK_FALSE(s.has_stamp);
  CHECK(t.should_balance(s));  // 1 ms >= 500 us and >= 0: every gate opens
  CHECK(t.level_cost(s, 5) == 0ns);  // a level past level_count reads as 0
}

TEST_CASE("a level count past max_levels is stored as max_levels", "[newidle_cost_tracker]") {
  // The state's arrays hold max_levels levels; LevelCount keeps every
  // index below level_count inside them, so the gates need no second test.
  CHECK(std::uint32_t{taskplace::LevelCount{3}} == 3);
  CHECK(std::uint32_t{taskplace::LevelCount{taskplace::max_levels}} == taskplace::max_levels);
  CHECK(std::uint32_t{taskplace::LevelCount{taskplace::max_levels + 1}} == taskplace::max_levels);
  CHECK(std::uint32_t{taskplace::LevelCount{0xffffffffu}} == taskplace::max_levels);
  static_assert(std::uint32_t{taskplace::LevelCount{99}} == taskplace::max_levels);
  const NewidleCostTracker<> t;
  auto s = t.make_state(2, 0ns);
  s.level_count = 1000;  // a state filled in by hand
  CHECK(s.level_count == taskplace::max_levels);
  s.avg_idle = 1s;
  for (std::uint32_t i = 0; i < taskplace::max_levels; ++i) CHECK(t.may_visit_level(s, i, 0ns));
  CHECK_THROWS_AS(t.may_visit_level(s, taskplace::max_levels, 0ns), taskplace::PreconditionError);
  t.decay(s, 100s);  // walks max_levels levels, no further
  CHECK(t.cpu_cost(s) == 500us);
}

TEST_CASE("make_state refuses more levels than max_levels", "[newidle_cost_tracker]") {
  const NewidleCostTracker<> t;
  CHECK_NOTHROW(t.make_state(taskplace::max_levels, 0ns));
  CHECK_THROWS_AS(t.make_state(taskplace::max_levels + 1, 0ns), taskplace::PreconditionError);
}

TEST_CASE("Clamp2014 averages first and then clamps", "[newidle_cost_tracker]") {
  using taskplace::avg_idle::Clamp2014;
  // update_avg: avg + (delta - avg) / 8, truncating toward zero.
  CHECK(Clamp2014::update(1'000'000ns, 50'000ns, 1ms) == 881'250ns);   // 1e6 - 950000/8
  CHECK(Clamp2014::update(881'250ns, 50'000ns, 1ms) == 777'344ns);     // -831250/8 = -103906.25 -> -103906
  CHECK(Clamp2014::update(777'344ns, 50'000ns, 1ms) == 686'426ns);     // -727344/8 = -90918
  CHECK(Clamp2014::update(100'000ns, 1'200'000ns, 1ms) == 237'500ns);  // +1100000/8, under the cap
  CHECK(Clamp2014::update(900'000ns, 10'000'000ns, 1ms) == 1ms);       // 2'037'500 clamped to the cap
  CHECK(Clamp2014::update(2ms, 2ms, 1ms) == 1ms);  // an average above a lowered cap is pulled down
}

TEST_CASE("Saturate2009 jumps to the cap on one long idle period", "[newidle_cost_tracker]") {
  using taskplace::avg_idle::Clamp2014;
  using taskplace::avg_idle::Saturate2009;
  // Below the cap both are update_avg.
  CHECK(Saturate2009::update(1'000'000ns, 50'000ns, 1ms) == 881'250ns);
  CHECK(Saturate2009::update(1ms, 1ms, 1ms) == 1ms);  // delta == cap is not "> cap": update_avg(1e6, 1e6)
  // Low 2013 patch 1/3: "if the delta exceeds some max value, then avg_idle
  // gets set to the max, regardless of what the previous avg was". A CPU
  // that idled 100 us on average and once 1.2 ms: Saturate2009 claims 1 ms,
  // Clamp2014 moves an eighth of the way, 100000 + 1100000/8.
  CHECK(Saturate2009::update(100'000ns, 1'200'000ns, 1ms) == 1ms);
  CHECK(Clamp2014::update(100'000ns, 1'200'000ns, 1ms) == 237'500ns);
}

TEST_CASE("the overestimate shows in a tracker fed mostly short idle periods", "[newidle_cost_tracker]") {
  const NewidleCostTracker<> low;
  const NewidleCostTracker<Saturate2009Traits> pre;
  auto a = low.make_state(2, 0ns);
  auto b = pre.make_state(2, 0ns);
  Nanoseconds t1 = idle_periods(low, a, 40, 100us, 0ns);
  Nanoseconds t2 = idle_periods(pre, b, 40, 100us, 0ns);
  REQUIRE(a.avg_idle == b.avg_idle);  // identical until a period exceeds the cap
  // avg - 100us = 900us * (7/8)^40 ~ 4.3 us, with truncation.
  CHECK(a.avg_idle > 100us);
  CHECK(a.avg_idle < 105us);
  idle_periods(low, a, 1, 1200us, t1);  // cap = 2 * 500us; 1.2 ms exceeds it
  idle_periods(pre, b, 1, 1200us, t2);
  CHECK(b.avg_idle == 1ms);
  CHECK(a.avg_idle < 250us);  // ~ avg + (1.2ms - avg) / 8
  CHECK(a.avg_idle > 230us);
}

TEST_CASE("shipped estimators conform and a raw-delta estimator does not", "[newidle_cost_tracker][conformance]") {
  using taskplace::testing::check_avg_idle_estimator;
  CHECK(check_avg_idle_estimator<taskplace::avg_idle::Clamp2014>().empty());
  CHECK(check_avg_idle_estimator<taskplace::avg_idle::Saturate2009>().empty());
  const auto v = check_avg_idle_estimator<RawDeltaEstimator>();
  REQUIRE_FALSE(v.empty());
  CHECK(v.front().rule.find("I1") != std::string::npos);
  CHECK(v.front().cpu == taskplace::no_cpu);
}

TEST_CASE("estimators never overflow at the top of the range", "[newidle_cost_tracker]") {
  using taskplace::avg_idle::Clamp2014;
  using taskplace::avg_idle::Saturate2009;
  // (max - 0) / 8 added to 0: exact, no signed overflow.
  CHECK(Clamp2014::update(0ns, ns_max, ns_max) == Nanoseconds{ns_max.count() / 8});
  CHECK(Saturate2009::update(ns_max, ns_max, ns_max) == ns_max);
  CHECK(Clamp2014::update(ns_max, 0ns, ns_max) == Nanoseconds{ns_max.count() - ns_max.count() / 8});
  // Negative inputs read as zero.
  CHECK(Clamp2014::update(-5ns, -5ns, 1ms) == 0ns);
  CHECK(Saturate2009::update(800ns, 0ns, -1ns) == 700ns);  // cap reads 0; 0 > 0 is false: update_avg(800, 0)
}

TEST_CASE("an idle stamp at the clock's epoch is a real stamp", "[newidle_cost_tracker]") {
  const NewidleCostTracker<> t;
  auto s = t.make_state(1, 0ns);
  t.idle_start(s, 0ns);
  CHECK(s.has_stamp);
  t.idle_end(s, 50us);
  CHECK(t.avg_idle(s) == 881'250ns);  // update_avg(1e6, 50000)
  CHECK_FALSE(s.has_stamp);
}

TEST_CASE("without a stamp one bogus sample saturates avg_idle unless guarded", "[newidle_cost_tracker]") {
  // The 2026 guard (docs/provenance.md): skip the update when there was no idle stamp.
  const NewidleCostTracker<> guarded;
  const NewidleCostTracker<NoGuardTraits> unguarded;
  auto a = guarded.make_state(2, 0ns);
  auto b = unguarded.make_state(2, 0ns);
  const Nanoseconds t1 = idle_periods(guarded, a, 30, 20us, 100s);
  idle_periods(unguarded, b, 30, 20us, 100s);
  REQUIRE(a.avg_idle == b.avg_idle);
  REQUIRE(a.avg_idle < 50us);  // 20 us + 980 us * (7/8)^30 ~ 38 us
  const Nanoseconds before = a.avg_idle;
  // The CPU "stops idling" at 200 s without having started: the unguarded
  // tracker measures from the cleared stamp (0), 200 s, and hits the cap.
  guarded.idle_end(a, t1 + 100s);
  unguarded.idle_end(b, t1 + 100s);
  CHECK(a.avg_idle == before);
  CHECK(b.avg_idle == 1ms);  // cap = 2 * max(500us, costs 0)
  // A second end without a start changes nothing with the guard either.
  guarded.idle_end(a, t1 + 200s);
  CHECK(a.avg_idle == before);
}

TEST_CASE("a clock going backwards is an idle period of zero length", "[newidle_cost_tracker]") {
  const NewidleCostTracker<> t;
  auto s = t.make_state(1, 0ns);
  t.idle_start(s, 10s);
  t.idle_end(s, 9s);
  CHECK(t.avg_idle(s) == 875'000ns);  // update_avg(1e6, 0) = 1e6 - 125000
  // Stamps so far apart that now - stamp overflows saturate to INT64_MAX,
  // which the estimator then clamps to the cap.
  t.idle_start(s, Nanoseconds{std::numeric_limits<std::int64_t>::min()});
  t.idle_end(s, ns_max);
  CHECK(t.avg_idle(s) == 1ms);
}

TEST_CASE("a level keeps its maximum cost and the CPU cost is the floored sum", "[newidle_cost_tracker]") {
  const NewidleCostTracker<> t;
  auto s = t.make_state(3, 0ns);
  t.record_cost(s, 0, 5us, 1ms);
  t.record_cost(s, 1, 20us, 2ms);
  t.record_cost(s, 2, 200us, 3ms);
  CHECK(t.level_cost(s, 2) == 200us);
  CHECK(t.cpu_cost(s) == 500us);  // max(500us, 225us): the migration floor
  t.record_cost(s, 2, 100us, 4ms);  // not a new maximum
  CHECK(t.level_cost(s, 2) == 200us);
  t.record_cost(s, 2, 600us, 5ms);  // new maximum
  CHECK(t.cpu_cost(s) == 625us);  // 5 + 20 + 600 us, above the floor
  t.record_cost(s, 1, -1ms, 6ms);  // negative reads as 0: no change
  CHECK(t.level_cost(s, 1) == 20us);
  // The cap on avg_idle follows: 2 * 625 us.
  t.idle_start(s, 10s);
  t.idle_end(s, 20s);
  CHECK(t.avg_idle(s) == 1250us);
  CHECK_THROWS_AS(t.record_cost(s, 3, 1us, 7ms), taskplace::PreconditionError);
}

TEST_CASE("before Low 2013 avg_idle was capped at two migrations, whatever balancing cost", "[newidle_cost_tracker]") {
  // Low 2013 patch 2/3 changed the cap from 2*sysctl_sched_migration_cost
  // to 2*rq->max_idle_balance_cost. Levels cost 0.1 + 0.4 + 1.5 ms (CPU
  // cost 2 ms); one 12 ms idle period under Saturate2009 jumps to the cap.
  const NewidleCostTracker<Saturate2009Traits> merged;
  const NewidleCostTracker<Cap2009Traits> before;
  auto a = merged.make_state(3, 0ns);
  auto b = before.make_state(3, 0ns);
  const Nanoseconds costs[3] = {100us, 400us, 1500us};
  for (std::uint32_t i = 0; i < 3; ++i) {
    merged.record_cost(a, i, costs[i], 1ms);
    before.record_cost(b, i, costs[i], 1ms);
  }
  REQUIRE(merged.cpu_cost(a) == 2ms);
  REQUIRE(before.cpu_cost(b) == 2ms);  // still recorded: the budget may read it
  merged.idle_start(a, 10ms);
  merged.idle_end(a, 22ms);
  before.idle_start(b, 10ms);
  before.idle_end(b, 22ms);
  CHECK(merged.avg_idle(a) == 4ms);  // 2 * 2 ms
  CHECK(before.avg_idle(b) == 1ms);  // 2 * 500 us
  // The named 2009 set carries the old cap.
  static_assert(!taskplace::newidle::Gate2009::cap_avg_idle_on_cost);
  static_assert(taskplace::DefaultNewidleTraits::cap_avg_idle_on_cost);
}

TEST_CASE("the early cap holds a level's cost at five migrations", "[newidle_cost_tracker]") {
  const NewidleCostTracker<EarlyCapTraits> capped;
  const NewidleCostTracker<> uncapped;
  auto a = capped.make_state(1, 0ns);
  auto b = uncapped.make_state(1, 0ns);
  capped.record_cost(a, 0, 10ms, 1s);
  uncapped.record_cost(b, 0, 10ms, 1s);
  CHECK(capped.level_cost(a, 0) == 2500us);  // Low 2013 patch 2/3: 5 * 500 us
  CHECK(capped.level_cost(a, 0) == taskplace::tunables::early_cost_cap);
  CHECK(uncapped.level_cost(b, 0) == 10ms);
}

TEST_CASE("huge costs saturate instead of overflowing", "[newidle_cost_tracker]") {
  const NewidleCostTracker<> t;
  auto s = t.make_state(2, 0ns);
  t.record_cost(s, 0, ns_max, 1s);
  t.record_cost(s, 1, ns_max, 1s);
  CHECK(t.cpu_cost(s) == ns_max);  // the sum saturates
  CHECK(t.may_visit_level(s, 0, ns_max) == false);
  t.idle_start(s, 0ns);
  t.idle_end(s, ns_max);  // cap 2 * max saturates at max
  CHECK(t.avg_idle(s) == Nanoseconds{1'000'000 + (ns_max.count() - 1'000'000) / 8});
  t.decay(s, 3s);  // one step of 253/256, exact in 128-bit arithmetic
  // floor((2^63 - 1) * 253 / 256) = 253 * (2^55 - 1) + floor(255 * 253 / 256),
  // by hand: 9115285645797883651 + 252.
  CHECK(t.level_cost(s, 0) == Nanoseconds{9'115'285'645'797'883'903});
  // Saturating 5 * migration_cost for the early cap.
  NewidleCostTracker<EarlyCapTraits> c{.migration_cost = ns_max / 2};
  auto s2 = c.make_state(1, 0ns);
  c.record_cost(s2, 0, ns_max, 1s);
  CHECK(c.level_cost(s2, 0) == ns_max);
}

TEST_CASE("a level decays only after strictly more than one period", "[newidle_cost_tracker]") {
  const NewidleCostTracker<> t;
  auto s = t.make_state(1, 0ns);
  t.record_cost(s, 0, 1ms, 10s);  // new maximum: cost_decay::IfNoNewMax2022 stamps 10 s
  t.decay(s, 11s);  // exactly one period: kernel time_after is strict
  CHECK(t.level_cost(s, 0) == 1ms);
  t.decay(s, 11s + 1ns);
  CHECK(t.level_cost(s, 0) == 988'281ns);  // 1e6 * 253 / 256 = 988281.25
  CHECK(t.cpu_cost(s) == 988'281ns);       // above the 500 us floor
  CHECK(s.last_decay[0] == 11s + 1ns);
  t.decay(s, 12s);  // less than a period since the last decay
  CHECK(t.level_cost(s, 0) == 988'281ns);
  t.decay(s, 100s);  // one step per call, however long it has been
  CHECK(t.level_cost(s, 0) == 976'699ns);  // 988281 * 253 / 256 = 976699.58
  t.decay(s, 50s);  // backwards: nothing
  CHECK(t.level_cost(s, 0) == 976'699ns);
}

TEST_CASE("a decay period of the largest duration still elapses once strictly more time passed", "[newidle_cost_tracker]") {
  // The contract (and the kernel's strict time_after() in
  // update_newidle_cost()/rebalance_domains()): decay when the last decay
  // is strictly more than decay_period before now. With decay_period =
  // Nanoseconds::max(), last decay at -1 ns and now = max(), 2^63 ns have
  // passed, one more than the period: it decays, as FlipCounter does for
  // its period. (It did not when the difference was saturated at max().)
  NewidleCostTracker<> t;
  t.decay_period = ns_max;
  auto s = t.make_state(1, -1ns);
  t.record_cost(s, 0, 1ms, -1ns);  // new maximum, stamped -1 ns
  t.decay(s, ns_max);
  CHECK(t.level_cost(s, 0) == 988'281ns);  // 1e6 * 253 / 256
  CHECK(s.last_decay[0] == ns_max);
  // Exactly the period (0 to max()): no decay.
  auto z = t.make_state(1, 0ns);
  t.record_cost(z, 0, 1ms, 0ns);
  t.decay(z, ns_max);
  CHECK(t.level_cost(z, 0) == 1ms);
}

TEST_CASE("the 2013 schedule decays even right after a new maximum", "[newidle_cost_tracker]") {
  const NewidleCostTracker<EverySecondTraits> every;
  const NewidleCostTracker<> if_no_new;
  auto a = every.make_state(1, 0ns);
  auto b = if_no_new.make_state(1, 0ns);
  every.record_cost(a, 0, 1ms, 10s);
  if_no_new.record_cost(b, 0, 1ms, 10s);
  CHECK(a.last_decay[0] == 0ns);  // cost_decay::EverySecond2014: a new max does not restart
  CHECK(b.last_decay[0] == 10s);
  every.decay(a, 10s + 1ms);
  if_no_new.decay(b, 10s + 1ms);
  CHECK(every.level_cost(a, 0) == 988'281ns);  // 10 s since the last decay at 0
  CHECK(if_no_new.level_cost(b, 0) == 1ms);    // 1 ms since the new max
}

TEST_CASE("v5.16 also decays when a cost below the maximum is recorded", "[newidle_cost_tracker]") {
  // v5.16 update_newidle_cost(): not a new max and a period passed -> decay.
  const NewidleCostTracker<EverySecondTraits> every;
  const NewidleCostTracker<> if_no_new;
  auto a = every.make_state(1, 0ns);
  auto b = if_no_new.make_state(1, 0ns);
  every.record_cost(a, 0, 1ms, 10s);
  if_no_new.record_cost(b, 0, 1ms, 10s);
  every.record_cost(a, 0, 1us, 12s);
  if_no_new.record_cost(b, 0, 1us, 12s);
  CHECK(every.level_cost(a, 0) == 1ms);  // 2013: only the periodic tick decays
  CHECK(if_no_new.level_cost(b, 0) == 988'281ns);
  CHECK(b.last_decay[0] == 12s);
}

TEMPLATE_LIST_TEST_CASE("a decay ratio halves a cost in its stated half-life", "[newidle_cost_tracker]",
                        AllRatios) {
  const NewidleCostTracker<RatioTraits<TestType>> t;
  auto s = t.make_state(1, 0ns);
  const Nanoseconds start = 1s;  // 1e9 ns: truncation loses < 1 ns per step
  t.record_cost(s, 0, start, 0ns);
  const double r = static_cast<double>(TestType::num) / static_cast<double>(TestType::den);
  // Low 2013: 254/256 ~ 88 s, 63/64 ~ 44 s; today's 253/256 ~ 60 s.
  // Half-life in one-second steps: ln(1/2) / ln(r) = 58.8, 88.4, 44.0.
  const double half_life = std::log(0.5) / std::log(r);
  const int cross = static_cast<int>(std::ceil(half_life));  // first step below one half
  int step = 0;
  Nanoseconds now = 0ns;
  while (t.level_cost(s, 0) * 2 > start && step < 1000) {
    now += 1s + 1ms;
    t.decay(s, now);
    ++step;
  }
  CHECK(step == cross);
  // And the value after `cross` steps matches r^cross within the truncation.
  const double expect = 1e9 * std::pow(r, cross);
  CHECK(std::fabs(static_cast<double>(t.level_cost(s, 0).count()) - expect) <= static_cast<double>(cross));
  if constexpr (TestType::num == 253) CHECK(cross == 59);  // "about 60 s"
  if constexpr (TestType::num == 254) CHECK(cross == 89);  // "88 s"
  if constexpr (TestType::num == 63) CHECK(cross == 45);   // "44 s": 0.50011 after 44 steps
}

TEST_CASE("entry gates: none, the 2009 migration gate, the first-level gate", "[newidle_cost_tracker]") {
  using taskplace::newidle_gate::FirstLevel2022;
  using taskplace::newidle_gate::MigrationCost2009;
  using taskplace::newidle_gate::None;
  // None: always.
  CHECK(None::allow(0ns, ns_max, ns_max));
  // 2009-2021: skip if avg_idle < migration_cost.
  CHECK_FALSE(MigrationCost2009::allow(499'999ns, 0ns, 500us));  // just short
  CHECK(MigrationCost2009::allow(500us, ns_max, 500us));          // equal passes, level cost ignored
  // v5.16+: skip if avg_idle < level 0's cost.
  CHECK(FirstLevel2022::allow(100ns, 100ns, 500us));              // equal passes
  CHECK_FALSE(FirstLevel2022::allow(99ns, 100ns, 0ns));           // just short
  CHECK(FirstLevel2022::allow(50us, 5us, 500us));                 // the v5.16 point: 50 us idles still
                                                                  // pull at SMT, the 2009 gate refused
  CHECK_FALSE(MigrationCost2009::allow(50us, 5us, 500us));
}

TEST_CASE("level budgets: none, spent plus cost, plus a migration", "[newidle_cost_tracker]") {
  using taskplace::level_budget::Spent2014;
  using taskplace::level_budget::SpentPlusMigration2013;
  using taskplace::level_budget::None;
  CHECK(None::allow(0ns, ns_max, ns_max, ns_max));
  // Low 2013 patch 2/3: stop if avg_idle < spent + level cost.
  CHECK(Spent2014::allow(1000ns, 400ns, 600ns, 500us));         // 1000 == 400 + 600
  CHECK_FALSE(Spent2014::allow(999ns, 400ns, 600ns, 500us));    // one short
  // The comparison is exact for any non-negative inputs: no sum is formed
  // (avg_idle - spent >= cost), so nothing saturates or overflows.
  CHECK_FALSE(Spent2014::allow(ns_max, ns_max, ns_max, 0ns));   // max < 2 * max
  CHECK_FALSE(Spent2014::allow(ns_max, 1ns, ns_max, 0ns));      // max < max + 1
  CHECK(Spent2014::allow(ns_max, 0ns, ns_max, 0ns));            // max == 0 + max
  CHECK(Spent2014::allow(ns_max, ns_max, 0ns, 0ns));            // max == max + 0
  CHECK(Spent2014::allow(10ns, -1s, 10ns, 0ns));                // negative spent reads as 0
  CHECK_FALSE(Spent2014::allow(10ns, -1s, 11ns, 0ns));
  // Outside the tracker's invariant (avg_idle >= 0): an answer, no UB
  // (UBSan runs this suite).
  (void)Spent2014::allow(Nanoseconds::min(), ns_max, ns_max, 0ns);
  (void)Spent2014::allow(Nanoseconds::min(), 0ns, Nanoseconds::min(), 0ns);
  // RFC 3/3: ... + migration_cost.
  CHECK(SpentPlusMigration2013::allow(1000ns, 400ns, 100ns, 500ns));
  CHECK_FALSE(SpentPlusMigration2013::allow(999ns, 400ns, 100ns, 500ns));
  CHECK_FALSE(SpentPlusMigration2013::allow(ns_max - 1ns, ns_max, 0ns, 0ns));
  // Exact at the top of the range as well: no saturated sum to tie with.
  CHECK_FALSE(SpentPlusMigration2013::allow(ns_max, ns_max, ns_max, 1ns));  // max < 2 * max + 1
  CHECK_FALSE(SpentPlusMigration2013::allow(ns_max, ns_max, 0ns, 1ns));     // max < max + 1
  CHECK(SpentPlusMigration2013::allow(ns_max, ns_max - 2ns, 1ns, 1ns));     // max == max - 2 + 2
  CHECK(SpentPlusMigration2013::allow(10ns, -1s, -1s, 10ns));               // negatives read as 0
  CHECK_FALSE(SpentPlusMigration2013::allow(-1ns, 0ns, 0ns, 0ns));         // a negative avg_idle affords nothing
}

TEST_CASE("the tracker's gates read avg_idle and the level costs", "[newidle_cost_tracker]") {
  const NewidleCostTracker<> cur;
  const NewidleCostTracker<MigrationGateTraits> old;
  const NewidleCostTracker<PlusMigrationTraits> rfc;
  auto a = cur.make_state(2, 0ns);
  auto b = old.make_state(2, 0ns);
  auto c = rfc.make_state(2, 0ns);
  a.avg_idle = b.avg_idle = c.avg_idle = 300us;
  cur.record_cost(a, 0, 10us, 1ms);
  old.record_cost(b, 0, 10us, 1ms);
  rfc.record_cost(c, 0, 10us, 1ms);
  CHECK(cur.should_balance(a));      // 300 us >= 10 us
  CHECK_FALSE(old.should_balance(b)); // 300 us < 500 us
  CHECK(cur.may_visit_level(a, 1, 290us));         // 290 + 0 <= 300
  CHECK_FALSE(cur.may_visit_level(a, 1, 301us));
  CHECK_FALSE(rfc.may_visit_level(c, 0, 0us));     // 0 + 10 + 500 > 300
  CHECK_THROWS_AS(cur.may_visit_level(a, 2, 0us), taskplace::PreconditionError);
  const auto none = cur.make_state(0, 0ns);
  CHECK(cur.should_balance(none));  // no levels: first cost 0
}

TEST_CASE("short idle periods stop outer levels until their cost decays", "[newidle_cost_tracker]") {
  // Low 2013's shape: an outer level (package) costing 200 us, idle periods
  // of 50 us. SMT 5 us and LLC 20 us stay affordable; the package does not.
  const NewidleCostTracker<> t;
  auto s = t.make_state(3, 0ns);
  t.record_cost(s, 0, 5us, 0ns);
  t.record_cost(s, 1, 20us, 0ns);
  t.record_cost(s, 2, 200us, 0ns);
  Nanoseconds now = idle_periods(t, s, 40, 50us, 0ns);
  // avg_idle = 50 us + 950 us * (7/8)^40 ~ 54.5 us.
  const Nanoseconds avg = t.avg_idle(s);
  REQUIRE(avg > 50us);
  REQUIRE(avg < 56us);
  auto spent_before = [&](std::uint32_t level) {
    Nanoseconds sum{0};
    for (std::uint32_t i = 0; i < level; ++i) sum += t.level_cost(s, i);
    return sum;
  };
  CHECK(t.should_balance(s));
  CHECK(t.may_visit_level(s, 0, spent_before(0)));
  CHECK(t.may_visit_level(s, 1, spent_before(1)));        // 54.5 >= 5 + 20
  CHECK_FALSE(t.may_visit_level(s, 2, spent_before(2)));  // 54.5 < 25 + 200
  // What a balancer does each second: the decay, then a balance that
  // visits SMT and LLC, which re-measure their cost (5 and 20 us: back to
  // their maxima) and have spent 25 us. The package level is never visited,
  // so it never re-hits its maximum and decays by 253/256 a second until
  // 25 us + 200 us * r^k <= avg_idle: k = ln((54.5 - 25) / 200) / ln r ~ 163.
  const double r = 253.0 / 256.0;
  const int expect = static_cast<int>(
      std::ceil(std::log(static_cast<double>((avg - 25us).count()) / 200'000.0) / std::log(r)));
  REQUIRE(expect == 163);
  int periods = 0;
  while (periods < 1000) {
    now += 1s + 1ms;
    t.decay(s, now);
    CHECK(t.should_balance(s));  // the cheap levels are allowed all along
    t.record_cost(s, 0, 5us, now);
    t.record_cost(s, 1, 20us, now);
    ++periods;
    if (t.may_visit_level(s, 2, 25us)) break;
  }
  CHECK(t.level_cost(s, 0) == 5us);
  CHECK(t.level_cost(s, 1) == 20us);
  CHECK(periods >= expect - 1);  // integer truncation may gain a period
  CHECK(periods <= expect);
  CHECK(periods > 150);  // over two and a half minutes of no outer balancing
}

TEST_CASE("levels past level_count keep a zero cost, so the entry gate reads level 0 as is",
          "[newidle_cost_tracker]") {
  // should_balance reads max_cost[0] without testing level_count: the state
  // invariant (zero past level_count) gives "0 without levels".
  const NewidleCostTracker<> t;
  auto s = t.make_state(2, 0ns);
  for (const auto c : s.max_cost) CHECK(c == 0ns);
  t.record_cost(s, 0, 30us, 1ms);
  t.record_cost(s, 1, 70us, 2ms);
  t.decay(s, 10s);
  CHECK_THROWS_AS(t.record_cost(s, 2, 1ms, 3ms), taskplace::PreconditionError);
  for (std::uint32_t i = 2; i < taskplace::max_levels; ++i) CHECK(s.max_cost[i] == 0ns);
  auto none = t.make_state(0, 0ns);
  none.avg_idle = 0ns;
  CHECK(t.should_balance(none));  // 0 >= 0: no level to pay for
  CHECK_THROWS_AS(t.record_cost(none, 0, 1ms, 1ms), taskplace::PreconditionError);
  CHECK(none.max_cost[0] == 0ns);
  CHECK(t.should_balance(none));
}
