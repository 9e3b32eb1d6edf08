// The composed newidle balance (idle_balancer.hpp): entry gate, budget stop,
// pull at level k, nothing found, the idle stamp and idle_end, the tick
// decay, a throwing pull, counters and hooks. Time is a ManualClock that the
// scripted pull advances by the level's cost.
#include <catch2/catch.hpp>

#include <random>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "taskplace/clock.hpp"
#include "taskplace/idle_balancer.hpp"
#include "taskplace/topology/uniform.hpp"

using namespace taskplace;
using namespace std::chrono_literals;

namespace {
// two_node_80cpu: levels smt (2), llc (40), machine (80) for every CPU.
const UniformTopology box = presets::two_node_80cpu();

struct Counted : DefaultBalanceTraits {
  using Stats = PlainStats;
};
// The kernels before the 2026 guard: idle_end folds without a stamp.
struct NoStampGuard : DefaultNewidleTraits {
  static constexpr bool skip_without_stamp = false;
};

// A pull that costs costs[level] of clock time and finds work at `hit`.
struct ScriptedPull {
  ManualClock* clock;
  std::vector<Nanoseconds> costs;
  std::uint32_t hit = 99;
  std::vector<std::uint32_t>* visited = nullptr;
  template <class Span>
  bool operator()(std::uint32_t level, LevelKind, const Span&) const {
    clock->advance(costs.at(level));
    if (visited) visited->push_back(level);
    return level == hit;
  }
};
}  // namespace

TEST_CASE("a fresh CPU balances at every level and starts idling when nothing is found", "[idle_balancer]") {
  REQUIRE(box.level_count(0) == 3);
  IdleBalancer<UniformTopology> b{box};
  ManualClock clock{10s};
  auto st = b.make_state(0, clock.now());
  std::vector<std::uint32_t> visited;
  const auto r = b.balance(0, st, ScriptedPull{&clock, {10us, 50us, 200us}, 99, &visited}, clock);
  // avg_idle starts at 2 * 500us = 1ms, level costs 0: every level passes
  // the gate and the budget.
  CHECK(r.outcome == BalanceOutcome::nothing_found);
  CHECK(r.levels_visited == 3);
  CHECK(visited == std::vector<std::uint32_t>{0, 1, 2});
  CHECK(r.spent == 260us);
  CHECK(b.tracker().level_cost(st, 0) == 10us);
  CHECK(b.tracker().level_cost(st, 2) == 200us);
  // The idle period is stamped at the start of the balance.
  CHECK(st.has_stamp);
  CHECK(st.idle_stamp == 10s);
  // idle_end 100us after the balance: delta = 260 + 100 = 360us;
  // update_avg(1ms, 360us) = 1'000'000 + (360'000 - 1'000'000) / 8 = 920'000 ns,
  // under the cap 2 * max(500us, 260us) = 1ms.
  clock.advance(100us);
  b.idle_end(st, clock.now());
  CHECK(b.tracker().avg_idle(st) == 920us);
  CHECK_FALSE(st.has_stamp);
}

TEST_CASE("the pull that finds work ends the balance and no idle period starts", "[idle_balancer]") {
  IdleBalancer<UniformTopology> b{box};
  ManualClock clock{1s};
  auto st = b.make_state(0, clock.now());
  const auto r = b.balance(0, st, ScriptedPull{&clock, {10us, 50us, 200us}, 1}, clock);
  CHECK(r.outcome == BalanceOutcome::pulled);
  CHECK(r.pulled_level == 1);
  CHECK(r.levels_visited == 2);
  CHECK(r.spent == 60us);
  CHECK_FALSE(st.has_stamp);
  // A stale stamp from an earlier idle period is cleared too (the kernel's
  // idle_stamp = 0 after a pull), so idle_end folds nothing.
  b.tracker().idle_start(st, 0s);
  b.balance(0, st, ScriptedPull{&clock, {10us, 50us, 200us}, 0}, clock);
  CHECK_FALSE(st.has_stamp);
  const auto before = b.tracker().avg_idle(st);
  b.idle_end(st, clock.now() + 1s);
  CHECK(b.tracker().avg_idle(st) == before);
}

TEST_CASE("without the stamp guard the sample after a pull measures from a zero stamp", "[idle_balancer][kernel]") {
  // Kernel (before the 2026 guard): sched_balance_newidle() (newidle_balance())
  // sets idle_stamp = 0 when it pulled; the next update of avg_idle
  // (put_prev_task_idle -> update_rq_avg_idle / idle_balance's caller)
  // then reads delta = now - 0, and the estimator caps it. A stale stamp
  // from an earlier idle period must not be measured from instead.
  IdleBalancer<UniformTopology, traits::Balance<NoStampGuard>> b{box};
  ManualClock clock{1s};
  auto st = b.make_state(0, clock.now());
  b.tracker().idle_start(st, 1s);  // a stale stamp
  const auto r = b.balance(0, st, ScriptedPull{&clock, {10us, 50us, 200us}, 0}, clock);
  REQUIRE(r.outcome == BalanceOutcome::pulled);
  CHECK_FALSE(st.has_stamp);
  CHECK(st.idle_stamp == 0ns);
  // idle_end at 1s + 10us + 100us: delta = 1.00011 s from 0, over the cap
  // 2 * max(500us, 10us) = 1ms: Clamp2014 averages first,
  // update_avg(1ms, 1.00011s) = 1'000'000 + (1'000'110'000 - 1'000'000) / 8
  // = 125'888'750 ns, then clamps to 1ms. From the stale stamp (1 s) the
  // delta would be 110us: update_avg(1ms, 110us) = 888'750 ns.
  clock.advance(100us);
  b.idle_end(st, clock.now());
  CHECK(b.tracker().avg_idle(st) == 1ms);
}

TEST_CASE("the budget stops before a level the expected idle time cannot pay for", "[idle_balancer]") {
  IdleBalancer<UniformTopology> b{box};
  ManualClock clock{1s};
  auto st = b.make_state(0, clock.now());
  b.balance(0, st, ScriptedPull{&clock, {100us, 400us, 900us}}, clock);  // records the costs
  // avg_idle 450us: level 0: 450 >= 0 + 100 goes; level 1: 450 >= 100 + 400
  // = 500 fails: stop before level 1 (level_budget::Spent2014, Low 2013 patch 2/3).
  st.avg_idle = 450us;
  std::vector<std::uint32_t> visited;
  auto r = b.balance(0, st, ScriptedPull{&clock, {100us, 400us, 900us}, 99, &visited}, clock);
  CHECK(r.outcome == BalanceOutcome::budget);
  CHECK(r.stopped_before == 1);
  CHECK(r.levels_visited == 1);
  CHECK(visited == std::vector<std::uint32_t>{0});
  CHECK(st.has_stamp);  // a stopped balance idles too
  // 500us: exactly 100 + 400 passes (the kernel's test is avg_idle < sum).
  st.avg_idle = 500us;
  r = b.balance(0, st, ScriptedPull{&clock, {100us, 400us, 900us}}, clock);
  CHECK(r.outcome == BalanceOutcome::budget);
  CHECK(r.stopped_before == 2);  // 500 < 500 + 900
}

namespace {
struct EarlyCapNewidle : DefaultNewidleTraits {
  static constexpr bool cap_level_cost = true;
};
}  // namespace

TEST_CASE("with the early cap the budget is charged the capped cost, the result the time spent", "[idle_balancer]") {
  // Low 2013 patch 2/3: domain_cost is capped at 5 * migration_cost (2.5
  // ms) before it is recorded and added to curr_cost.
  IdleBalancer<UniformTopology, traits::Balance<EarlyCapNewidle>> b{box};
  ManualClock clock{1s};
  auto st = b.make_state(0, clock.now());
  const ScriptedPull pull{&clock, {3ms, 100us, 400us}};
  for (std::uint32_t i = 0; i < 3; ++i) b.tracker().record_cost(st, i, pull.costs[i], clock.now());
  REQUIRE(b.tracker().level_cost(st, 0) == 2500us);  // recorded capped
  REQUIRE(b.tracker().level_cost(st, 2) == 400us);
  // avg_idle 2.9 ms: level 0 (2.9 >= 2.5) takes 3 ms but is charged 2.5;
  // level 1: 2.9 >= 2.5 + 0.1 goes; level 2: 2.9 < 2.6 + 0.4 stops.
  st.avg_idle = 2900us;
  const auto r = b.balance(0, st, pull, clock);
  CHECK(r.outcome == BalanceOutcome::budget);
  CHECK(r.stopped_before == 2);
  CHECK(r.levels_visited == 2);
  CHECK(r.spent == 3100us);  // the time it took, uncapped
}

TEST_CASE("the entry gate skips the balance when avg_idle is below level 0's cost", "[idle_balancer]") {
  IdleBalancer<UniformTopology> b{box};
  ManualClock clock{1s};
  auto st = b.make_state(0, clock.now());
  b.balance(0, st, ScriptedPull{&clock, {100us, 0us, 0us}}, clock);
  // newidle_gate::FirstLevel2022 (v5.16): avg_idle 99us < level 0's 100us: not tried.
  st.avg_idle = 99us;
  std::vector<std::uint32_t> visited;
  const auto r = b.balance(0, st, ScriptedPull{&clock, {1us, 1us, 1us}, 0, &visited}, clock);
  CHECK(r.outcome == BalanceOutcome::entry_gate);
  CHECK(r.levels_visited == 0);
  CHECK(visited.empty());
  CHECK(st.has_stamp);
  // The 2009 gate compares with migration_cost instead: 400us < 500us skips
  // even with level costs 0, and NoLimit never skips.
  IdleBalancer<UniformTopology, traits::Balance<newidle::Gate2009>> old{box};
  auto st2 = old.make_state(0, clock.now());
  st2.avg_idle = 400us;
  CHECK(old.balance(0, st2, ScriptedPull{&clock, {1us, 1us, 1us}}, clock).outcome ==
        BalanceOutcome::entry_gate);
  IdleBalancer<UniformTopology, traits::Balance<newidle::NoLimit>> none{box};
  auto st3 = none.make_state(0, clock.now());
  st3.avg_idle = 0us;
  CHECK(none.balance(0, st3, ScriptedPull{&clock, {1us, 1us, 1us}}, clock).levels_visited == 3);
}

TEST_CASE("the tick decays a level's cost by 253/256 a period", "[idle_balancer]") {
  IdleBalancer<UniformTopology> b{box};
  ManualClock clock{1s};
  auto st = b.make_state(0, clock.now());
  b.balance(0, st, ScriptedPull{&clock, {256us, 0us, 0us}}, clock);
  const Nanoseconds recorded = clock.now();
  // One period after the new maximum: not strictly more, no decay.
  b.tick(st, recorded + 1s);
  CHECK(b.tracker().level_cost(st, 0) == 256us);
  // Strictly more: 256'000 * 253 / 256 = 253'000 ns.
  b.tick(st, recorded + 1s + 1ns);
  CHECK(b.tracker().level_cost(st, 0) == 253us);
}

TEST_CASE("a pull that throws records nothing", "[idle_balancer]") {
  IdleBalancer<UniformTopology, Counted> b{box};
  ManualClock clock{1s};
  auto st = b.make_state(0, clock.now());
  const auto before = st;
  // Level 0 costs 300us and finds nothing, level 1 throws.
  auto pull = [&](std::uint32_t level, LevelKind, const auto&) -> bool {
    clock.advance(300us);
    if (level == 1) throw std::runtime_error("steal failed");
    return false;
  };
  CHECK_THROWS_AS(b.balance(0, st, pull, clock), std::runtime_error);
  CHECK(b.tracker().level_cost(st, 0) == before.max_cost[0]);
  CHECK(st.has_stamp == before.has_stamp);
  CHECK(st.avg_idle == before.avg_idle);
  CHECK(st.max_idle_balance_cost == before.max_idle_balance_cost);
  CHECK(b.stats().get(BalanceCounter::runs) == 0);
  CHECK(b.stats().get(BalanceCounter::levels_visited) == 0);
}

TEST_CASE("a clock that goes backwards during a pull costs nothing", "[idle_balancer]") {
  IdleBalancer<UniformTopology> b{box};
  ManualClock clock{1s};
  auto st = b.make_state(0, clock.now());
  const auto r = b.balance(0, st, ScriptedPull{&clock, {-50us, -1s, 0us}}, clock);
  CHECK(r.spent == 0ns);
  CHECK(b.tracker().level_cost(st, 0) == 0ns);
}

TEST_CASE("the balancer counts its outcomes and idle periods", "[idle_balancer][stats]") {
  IdleBalancer<UniformTopology, Counted> b{box};
  ManualClock clock{1s};
  auto st = b.make_state(0, clock.now());
  b.balance(0, st, ScriptedPull{&clock, {10us, 10us, 10us}}, clock);     // nothing found
  b.idle_end(st, clock.now());                                           // folds
  b.idle_end(st, clock.now());                                           // no stamp: guard, not counted
  b.balance(0, st, ScriptedPull{&clock, {10us, 10us, 10us}, 2}, clock);  // pulled at 2
  b.tick(st, clock.now());
  const auto& s = b.stats();
  CHECK(s.get(BalanceCounter::runs) == 2);
  CHECK(s.get(BalanceCounter::nothing_found) == 1);
  CHECK(s.get(BalanceCounter::pulls) == 1);
  CHECK(s.get(BalanceCounter::levels_visited) == 6);
  CHECK(s.get(BalanceCounter::idle_periods) == 1);
  CHECK(s.get(BalanceCounter::decays) == 1);
  CHECK(s.get(BalanceCounter::entry_gate_skips) == 0);
}

TEST_CASE("a bad CPU is a checked precondition", "[idle_balancer]") {
  IdleBalancer<UniformTopology> b{box};
  ManualClock clock;
  CHECK_THROWS_AS(b.make_state(80, clock.now()), PreconditionError);
  auto st = b.make_state(0, clock.now());
  CHECK_THROWS_AS(b.balance(80, st, ScriptedPull{&clock, {0ns, 0ns, 0ns}}, clock), PreconditionError);
  // A single-CPU topology has no levels: nothing to visit, nothing found.
  const UniformTopology one{1, 1, 1, 1, CpuNumbering::smt_last};
  IdleBalancer<UniformTopology> b1{one};
  auto s1 = b1.make_state(0, clock.now());
  CHECK(b1.balance(0, s1, ScriptedPull{&clock, {}}, clock).outcome == BalanceOutcome::nothing_found);
}

namespace {
struct BalanceRecorder {
  static inline std::vector<BalanceEvent>* sink = nullptr;
  void operator()(const BalanceEvent& e) const { sink->push_back(e); }
};
struct HookedBalance : DefaultBalanceTraits {
  using Hook = BalanceRecorder;
};
}  // namespace

TEST_CASE("a balance hook receives each outcome", "[idle_balancer][stats]") {
  std::vector<BalanceEvent> events;
  BalanceRecorder::sink = &events;
  IdleBalancer<UniformTopology, HookedBalance> b{box};
  ManualClock clock{1s};
  auto st = b.make_state(3, clock.now());
  b.balance(3, st, ScriptedPull{&clock, {10us, 10us, 10us}, 0}, clock);
  REQUIRE(events.size() == 1);
  CHECK(events[0].cpu == 3);
  CHECK(events[0].result.outcome == BalanceOutcome::pulled);
  CHECK(events[0].avg_idle == 1ms);
  BalanceRecorder::sink = nullptr;
}

namespace {
// Today's kernel (v7.0): cost tracking plus the success-rate dice, counted.
struct Dice : traits::BalanceLinux2026 {
  using Stats = PlainStats;
};
struct Bump : traits::Balance<newidle::BumpFailed2025> {};
}  // namespace

TEST_CASE("the default balancer keeps no attempt state: its state is the tracker's", "[idle_balancer]") {
  static_assert(std::is_same_v<IdleBalancer<UniformTopology>::state, NewidleCostTracker<>::state>);
  static_assert(!IdleBalancer<UniformTopology>::has_attempt_state);
  static_assert(IdleBalancer<UniformTopology, Dice>::has_attempt_state);
  static_assert(std::is_base_of_v<NewidleCostTracker<newidle::StampGuard2026>::state, IdleBalancer<UniformTopology, Dice>::state>);
}

TEST_CASE("success-rate dice pass over a level that never finds work and try one that always does",
          "[idle_balancer][newidle_success_rate]") {
  IdleBalancer<UniformTopology, Dice> b{box};
  ManualClock clock{1s};
  auto st = b.make_state(5, clock.now());
  CHECK(st.attempts.levels[0].ratio == 512);  // make_state seeds a fresh 50% level
  CHECK(st.attempts.rng == SuccessRateRng{5});  // dice seeded with the CPU id
  // Level 0 (SMT) at ratio 0: tried 2 calls in 1024; level 1 (LLC) at 1024:
  // always tried (v7.0, no die). Level 2 is never reached: level 1 pulls.
  std::uint32_t skipped = 0, tried0 = 0;
  for (int i = 0; i < 2000; ++i) {
    st.attempts.levels[0].ratio = 0;
    st.attempts.levels[0].calls = 0;
    st.attempts.levels[1].ratio = 1024;
    st.attempts.levels[1].calls = 0;
    std::vector<std::uint32_t> visited;
    const auto r = b.balance(5, st, ScriptedPull{&clock, {0ns, 0ns, 0ns}, 1, &visited}, clock);
    REQUIRE(r.outcome == BalanceOutcome::pulled);
    REQUIRE(r.pulled_level == 1);
    REQUIRE(visited.back() == 1);
    skipped += r.levels_skipped;
    tried0 += visited.front() == 0;
    REQUIRE(r.levels_skipped + r.levels_visited == 2);
  }
  // p(try level 0) = 2 / 1024: about 4 of 2000; 6-sigma bound ~16.
  CHECK(tried0 < 20);
  CHECK(skipped == 2000 - tried0);
  CHECK(b.stats().get(BalanceCounter::levels_skipped) == skipped);
  CHECK(b.stats().get(BalanceCounter::levels_visited) == 2000 + tried0);
}

TEST_CASE("a skipped level costs no time and the budget still applies to the next", "[idle_balancer][newidle_success_rate]") {
  IdleBalancer<UniformTopology, Dice> b{box};
  ManualClock clock{1s};
  auto st = b.make_state(0, clock.now());
  st.avg_idle = 100us;
  b.tracker().record_cost(st, 2, 150us, clock.now());  // level 2 costs more than avg_idle
  for (int i = 0; i < 200; ++i) {
    st.attempts.levels[0].ratio = 0;
    st.attempts.levels[0].calls = 0;
    st.attempts.levels[1].ratio = 1024;
    st.attempts.levels[1].calls = 0;
    const auto r = b.balance(0, st, ScriptedPull{&clock, {10us, 20us, 1us}}, clock);
    // Level 1 always runs (20 us); level 2 then needs 150 us more than the
    // time spent: budget stop before it.
    REQUIRE(r.outcome == BalanceOutcome::budget);
    REQUIRE(r.stopped_before == 2);
    REQUIRE(r.spent == (r.levels_skipped == 1 ? 20us : 30us));
    st.avg_idle = 100us;
  }
}

TEST_CASE("balancers with the same seed make the same decisions", "[idle_balancer][newidle_success_rate]") {
  IdleBalancer<UniformTopology, Dice> a{box}, b{box};
  ManualClock ca{1s}, cb{1s};
  auto sa = a.make_state(7, ca.now());
  auto sb = b.make_state(7, cb.now());
  std::mt19937 found{1};
  for (int i = 0; i < 5000; ++i) {
    const std::uint32_t hit = found() % 4;  // 3: nothing found
    const auto ra = a.balance(7, sa, ScriptedPull{&ca, {1us, 2us, 3us}, hit}, ca);
    const auto rb = b.balance(7, sb, ScriptedPull{&cb, {1us, 2us, 3us}, hit}, cb);
    REQUIRE(ra.outcome == rb.outcome);
    REQUIRE(ra.levels_skipped == rb.levels_skipped);
    a.idle_end(sa, ca.now());
    b.idle_end(sb, cb.now());
  }
  CHECK(sa.attempts == sb.attempts);
  CHECK(a.stats().get(BalanceCounter::levels_skipped) > 0);  // the dice did skip
}

TEST_CASE("v6.17's bump: a failed level records 3/2 of its maximum, capped at migration_cost + 200 ns",
          "[idle_balancer][newidle_cost_tracker]") {
  const NewidleCostTracker<newidle::BumpFailed2025> t;
  auto s = t.make_state(1, 0s);
  t.record_attempt(s, 0, 0ns, false, 1ms);
  CHECK(t.level_cost(s, 0) == 0ns);  // 3/2 of 0 is 0: only a measured cost starts it
  t.record_attempt(s, 0, 100us, true, 2ms);
  CHECK(t.level_cost(s, 0) == 100us);
  t.record_attempt(s, 0, 1us, false, 3ms);  // the timed 1 us is replaced by 150 us
  CHECK(t.level_cost(s, 0) == 150us);
  t.record_attempt(s, 0, 1us, false, 4ms);
  CHECK(t.level_cost(s, 0) == 225us);
  t.record_attempt(s, 0, 1us, false, 5ms);
  CHECK(t.level_cost(s, 0) == 337'500ns);
  t.record_attempt(s, 0, 1us, false, 6ms);  // 506.25 us, capped
  CHECK(t.level_cost(s, 0) == 500'200ns);
  t.record_attempt(s, 0, 3ms, true, 7ms);  // a measured cost is capped too
  CHECK(t.level_cost(s, 0) == 500'200ns);
  // Odd values round down, as 3 * m / 2 does: m = 101 ns -> 151 ns.
  auto o = t.make_state(1, 0s);
  t.record_attempt(o, 0, 101ns, true, 0s);
  t.record_attempt(o, 0, 0ns, false, 0s);
  CHECK(t.level_cost(o, 0) == 151ns);
  // Today's tracker ignores the outcome: record_attempt is record_cost.
  const NewidleCostTracker<> now;
  auto c = now.make_state(1, 0s);
  now.record_attempt(c, 0, 100us, true, 1ms);
  now.record_attempt(c, 0, 1us, false, 2ms);
  CHECK(now.level_cost(c, 0) == 100us);
  // Through the balancer: every level finds nothing, so each level's cost
  // grows by half per balance once it has one.
  IdleBalancer<UniformTopology, Bump> b{box};
  ManualClock clock{1s};
  auto st = b.make_state(0, clock.now());
  b.balance(0, st, ScriptedPull{&clock, {10us, 10us, 10us}}, clock);  // max 0: 3/2 of 0
  CHECK(b.tracker().level_cost(st, 0) == 0ns);
  b.tracker().record_cost(st, 0, 10us, clock.now());
  b.balance(0, st, ScriptedPull{&clock, {10us, 10us, 10us}}, clock);
  CHECK(b.tracker().level_cost(st, 0) == 15us);
}

namespace {
// ScriptedPull with a noexcept call: the balance then works on the state in
// place, with no copy to commit.
struct NoexceptPull {
  ScriptedPull inner;
  template <class Span>
  bool operator()(std::uint32_t level, LevelKind k, const Span& span) const noexcept {
    return inner(level, k, span);
  }
};
}  // namespace

TEST_CASE("a noexcept pull balances in place with the same results", "[idle_balancer]") {
  static_assert(std::is_nothrow_invocable_v<NoexceptPull&, std::uint32_t, LevelKind, std::span<const CpuId>>);
  static_assert(!std::is_nothrow_invocable_v<ScriptedPull&, std::uint32_t, LevelKind, std::span<const CpuId>>);
  IdleBalancer<UniformTopology, Dice> a{box}, b{box};
  ManualClock ca{1s}, cb{1s};
  auto sa = a.make_state(2, ca.now());
  auto sb = b.make_state(2, cb.now());
  for (std::uint32_t i = 0; i < 3000; ++i) {
    const std::uint32_t hit = i % 5;  // 3 and 4: nothing found
    const std::vector<Nanoseconds> costs{1us * (i % 7), 20us, 300us};
    const auto ra = a.balance(2, sa, ScriptedPull{&ca, costs, hit}, ca);
    const auto rb = b.balance(2, sb, NoexceptPull{ScriptedPull{&cb, costs, hit}}, cb);
    REQUIRE(ra.outcome == rb.outcome);
    REQUIRE(ra.levels_visited == rb.levels_visited);
    REQUIRE(ra.levels_skipped == rb.levels_skipped);
    REQUIRE(ra.spent == rb.spent);
    ca.advance(50us * (i % 11));
    cb.advance(50us * (i % 11));
    a.idle_end(sa, ca.now());
    b.idle_end(sb, cb.now());
  }
  CHECK(sa.avg_idle == sb.avg_idle);
  CHECK(sa.max_cost == sb.max_cost);
  CHECK(sa.attempts == sb.attempts);
  CHECK(a.stats().get(BalanceCounter::pulls) == b.stats().get(BalanceCounter::pulls));
}

TEST_CASE("with no CPU overloaded the balance is not tried and the CPU idles at once (v3.16)", "[idle_balancer]") {
  IdleBalancer<UniformTopology, Counted> b{box};
  ManualClock clock{3s};
  auto st = b.make_state(0, clock.now());
  std::vector<std::uint32_t> visited;
  const auto r = b.balance(0, st, ScriptedPull{&clock, {10us, 10us, 10us}, 0, &visited}, clock, Overload::none);
  CHECK(r.outcome == BalanceOutcome::not_overloaded);
  CHECK(visited.empty());
  CHECK(r.levels_visited == 0);
  CHECK(r.spent == 0ns);
  CHECK(st.has_stamp);  // the idle period starts now, as the kernel stamps before it returns
  CHECK(st.idle_stamp == 3s);
  CHECK(b.stats().get(BalanceCounter::not_overloaded_skips) == 1);
  CHECK(b.stats().get(BalanceCounter::runs) == 1);
  CHECK(std::string(to_string(BalanceOutcome::not_overloaded)) == "not_overloaded");
  // Overload::some and unknown balance as before: level 0 pulls.
  for (const Overload o : {Overload::some, Overload::unknown}) {
    visited.clear();
    const auto p = b.balance(0, st, ScriptedPull{&clock, {10us, 10us, 10us}, 0, &visited}, clock, o);
    CHECK(p.outcome == BalanceOutcome::pulled);
    CHECK(visited == std::vector<std::uint32_t>{0});
  }
  // The gate comes before the entry gate: a CPU the entry gate would stop
  // still reports not_overloaded.
  st.avg_idle = 0ns;
  b.tracker().record_cost(st, 0, 50us, clock.now());
  CHECK(b.balance(0, st, ScriptedPull{&clock, {10us, 10us, 10us}}, clock, Overload::none).outcome ==
        BalanceOutcome::not_overloaded);
  CHECK(b.balance(0, st, ScriptedPull{&clock, {10us, 10us, 10us}}, clock, Overload::some).outcome ==
        BalanceOutcome::entry_gate);
}
