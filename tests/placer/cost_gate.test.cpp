// CostGate (placer/cost_gate.hpp), the rule of traits::Runtime, from its
// cost argument: the wakee B of waker A stays on A's worker when
//   (a) A's average overlap + q * B's average run < the move cost, or
//   (b) (q + 1) * B's average run < the move cost,
// q being the tasks queued behind A on its worker, the move cost the
// machine's crossing cost (tunables::crossing_cost, 250 ns, without one),
// or prev's wake cost when prev is another idle worker and costs more.
// Then inside WakePlacer against today's kernel on the same wake-ups.
#include <catch2/catch.hpp>

#include <chrono>
#include <cstdint>
#include <limits>
#include <string>

#include "taskplace/kit/machine.hpp"
#include "taskplace/placer/cost_gate.hpp"
#include "taskplace/testing/machine.hpp"
#include "taskplace/topology/uniform.hpp"
#include "taskplace/wake_placer.hpp"

#include "ping_pong_pair.hpp"

using namespace taskplace;
using namespace std::chrono_literals;
using testing::ScriptedMachine;

namespace Catch {
template <>
struct StringMaker<WakeReason> {
  static std::string convert(WakeReason r) { return to_string(r); }
};
}  // namespace Catch

using placer_test::key_a;
using placer_test::key_b;

namespace {

// A alone on its worker; overlap, B's run and the move cost as given.
constexpr WakeOnCurrentInput gate_input(Nanoseconds overlap, Nanoseconds run, Nanoseconds cost,
                                        std::uint32_t nr_running = 1, bool ran_here = true) {
  WakeOnCurrentInput in{.waking_nr_running = nr_running,
                        .waker_duration = 0ns,
                        .wakee_duration = run,
                        .waker_flips = 0,
                        .wakee_flips = 0,
                        .waker_last_wakee = key_b,
                        .wakee_last_wakee = no_task,
                        .waker = key_a,
                        .wakee = key_b,
                        .cpu_count = 2};
  in.waker_overlap = overlap;
  in.move_cost = cost;
  in.wakee_ran_here = ran_here;
  return in;
}
// traits::Runtime with every wake-up judged: these cases test the gate's
// verdict at each wake-up (the set's replay of a settled pair's verdict
// has its own tests, tests/placer/settled_pair.test.cpp).
struct Judged : traits::Runtime {
  using Settle = NoSettle;
};
// Two workers in one LLC under traits::Runtime, worker 0 running a task;
// a spinning worker costs 300 ns to wake, a parked one `parked`, a move
// at least 650 ns.
struct TwoWorkers {
  using Placer = WakePlacer<UniformTopology, Judged>;
  UniformTopology topo{1, 1, 2, 1};
  Placer placer{topo};
  kit::Machine m;
  explicit TwoWorkers(Nanoseconds parked)
      : m{2, kit::WakeCosts{.spinning = 300ns, .parked = parked, .crossing = 650ns}} {
    m.running(0);
  }
  TwoWorkers(const TwoWorkers&) = delete;  // the placer points at topo
};
constexpr WakeReason verdict(const WakeOnCurrentInput& in) {
  const KeepVerdict v = CostGate::decide(in);
  return v ? v.reason : WakeReason::no_search;
}
}  // namespace

TEST_CASE("a waker that blocks within the crossing cost keeps its wakee", "[cost_gate]") {
  // (a) with q = 0: overlap < cost, whatever B's run.
  CHECK(verdict(gate_input(100ns, 50us, 650ns)) == WakeReason::waker_blocks);
  CHECK(verdict(gate_input(649ns, 50us, 650ns)) == WakeReason::waker_blocks);
  // The edge: an overlap equal to the cost is not below it.
  CHECK(verdict(gate_input(650ns, 50us, 650ns)) == WakeReason::no_search);
  // A waker never measured (average 0) reads as one that blocks at once.
  CHECK(verdict(gate_input(0ns, 50us, 650ns)) == WakeReason::waker_blocks);
  // Queued work counts: 100 + 2 * 250 = 600 < 650 keeps; 100 + 3 * 250 = 850 does not
  // by (a), nor by (b): 4 * 250 = 1000.
  CHECK(verdict(gate_input(100ns, 250ns, 650ns, 3)) == WakeReason::waker_blocks);  // (b): 3 * 250 > 650
  CHECK(verdict(gate_input(100ns, 250ns, 650ns, 4)) == WakeReason::no_search);
  // Queued work of unknown length (B never measured) never passes (a).
  CHECK(verdict(gate_input(100ns, 0ns, 650ns, 2)) == WakeReason::no_search);
  // (a) needs B's cache on the waking CPU: a B that last ran elsewhere
  // is pulled only if short (b).
  CHECK(verdict(gate_input(100ns, 50us, 650ns, 1, false)) == WakeReason::no_search);
  CHECK(verdict(gate_input(100ns, 600ns, 650ns, 1, false)) == WakeReason::short_work);
  // ... or when the two are a pair, each the other's last wakee: the
  // refill is paid once.
  auto pair = gate_input(100ns, 50us, 650ns, 1, false);
  pair.wakee_last_wakee = key_a;
  CHECK(verdict(pair) == WakeReason::waker_blocks);
  pair.waker_last_wakee = 7;  // A woke someone else last: a 1:N waker, no pair
  CHECK(verdict(pair) == WakeReason::no_search);
}

TEST_CASE("a 1:N dispatcher's wakees spread when their work exceeds the crossing cost", "[cost_gate]") {
  // The dispatcher runs on 20 us after each wake-up: (a) fails; each
  // wakee runs 5 us > 650 ns: (b) fails at once.
  CHECK(verdict(gate_input(20us, 5us, 650ns)) == WakeReason::no_search);
  // Short wakees are kept while the queue's work stays below the cost:
  // 100 ns each, (q + 1) * 100 < 650 for q <= 5.
  for (std::uint32_t q = 0; q <= 5; ++q) {
    INFO("queued " << q);
    CHECK(verdict(gate_input(20us, 100ns, 650ns, q + 1)) == WakeReason::short_work);
  }
  CHECK(verdict(gate_input(20us, 100ns, 650ns, 7)) == WakeReason::no_search);
  // 650 ns exactly is not below the cost: (q + 1) * 130 < 650 for q <= 3.
  CHECK(verdict(gate_input(20us, 130ns, 650ns, 4)) == WakeReason::short_work);
  CHECK(verdict(gate_input(20us, 130ns, 650ns, 5)) == WakeReason::no_search);
  // A wakee never measured is never short.
  CHECK(verdict(gate_input(20us, 0ns, 650ns)) == WakeReason::no_search);
}

TEST_CASE("a waker or a wakee of many partners is left to the kernel's steps", "[cost_gate]") {
  // Flips (before this wake-up) at the wide factor, the LLC's size:
  // neither (a) nor (b) keeps the wakee. Below it, the tests as before.
  // Factor 2 (a 2-worker LLC).
  auto in = gate_input(0ns, 100ns, 15us);  // (a) holds: A blocks at once, B ran here
  in.wide_factor = 2;
  CHECK(verdict(in) == WakeReason::waker_blocks);
  in.waker_flips = 1;  // one partner switch: still a pair-like waker
  CHECK(verdict(in) == WakeReason::waker_blocks);
  in.waker_flips = 2;  // a dispatcher: pgbench's client over its backends
  CHECK(verdict(in) == WakeReason::no_search);
  CHECK_FALSE(CostGate::after_search(in, false));  // nor (d), which asks (a) and (b)
  // Test (c) still holds: every worker busy, a move buys no parallel time
  // whoever the partners are (hackbench's senders and receivers).
  CHECK(CostGate::after_search(in, true).reason == WakeReason::busy_short);
  in.waker_flips = 0;
  in.wakee_flips = 2;  // the wakee is the dispatcher, woken by one of its partners
  CHECK(verdict(in) == WakeReason::no_search);
  CHECK(CostGate::keeps_from_busy(in).reason == WakeReason::busy_short);
  // An LLC of one CPU (factor 1): a pair's 1 flip (the switch to its
  // partner) is not many; 2 are.
  in.wide_factor = 1;
  in.wakee_flips = 1;
  in.waker_flips = 1;
  CHECK(verdict(in) == WakeReason::waker_blocks);
  in.waker_flips = 2;
  CHECK(verdict(in) == WakeReason::no_search);
  // The default factor is the most a count can be: a caller that fills
  // no factor sees the tests as before, whatever the flips.
  auto plain = gate_input(0ns, 100ns, 15us);
  plain.waker_flips = plain.wakee_flips = 1'000'000;
  CHECK(verdict(plain) == WakeReason::waker_blocks);
  CHECK(CostGate::keeps_from_busy(plain).reason == WakeReason::busy_short);
}

TEST_CASE("traits::Runtime spreads a dispatcher's wakees onto a parked worker, a pair's stays",
          "[cost_gate][wake_placer]") {
  // Worker 1 parked (15 us to unpark), B runs 3 us (pgbench's backend),
  // prev worker 1: alone, (b) keeps B on worker 0, 3 us < 15 us. Once
  // the waker has switched partners twice (the LLC's 2 workers), the
  // kernel's steps place B: worker 1 is idle (idle_prev).
  using Placer = TwoWorkers::Placer;
  TwoWorkers w{15us};
  auto& placer = w.placer;
  auto& m = w.m;
  m.parked(1);
  Placer::task_state a{}, b{}, c{}, d{};
  Nanoseconds now = 1ms;
  for (auto* t : {&b, &c, &d}) {  // each ran 3 us on worker 1
    placer.task_runs(*t, now);
    now += 3us;
    placer.task_sleeps(*t, now);
  }
  const auto wake = [&](Placer::task_state& t, TaskKey k) {
    now += 1us;
    return placer.place({.waker = &a, .waker_key = key_a, .wakee = &t, .wakee_key = k, .waking_cpu = 0,
                         .prev_cpu = 1, .sync = true},
                        m.at(now), now);
  };
  // Kernel record_wakee: a flip at each wake-up of another task than the
  // last one, the first one included.
  CHECK(wake(b, 2).reason == WakeReason::short_work);  // A's flips 0: B kept, worker 1 stays parked
  CHECK(wake(b, 2).reason == WakeReason::short_work);  // flips 1; the same partner: no flip
  CHECK(wake(c, 3).reason == WakeReason::short_work);  // flips 1 before this one: kept
  const Placement spread = wake(d, 4);                 // flips 2: a dispatcher
  CHECK(spread.cpu == 1u);
  CHECK(spread.reason == WakeReason::idle_prev);
  // The same waker known by its key alone, on another thread: its flips
  // as the runtime read them there decide alike; without them (0), (b).
  const auto by_key = [&](std::uint32_t flips) {
    now += 1us;
    return placer.place({.waker = nullptr, .waker_key = key_a, .wakee = &c, .wakee_key = 3, .waking_cpu = 0,
                         .prev_cpu = 1, .waker_flips = flips},
                        m.at(now), now);
  };
  CHECK(by_key(0).reason == WakeReason::short_work);
  CHECK(by_key(5).cpu == 1u);
}

TEST_CASE("the gate keeps no pair it cannot judge", "[cost_gate]") {
  auto in = gate_input(100ns, 100ns, 650ns);
  in.waker = no_task;
  CHECK(verdict(in) == WakeReason::no_search);
  in = gate_input(100ns, 100ns, 650ns);
  in.wakee = key_a;  // a task waking itself
  CHECK(verdict(in) == WakeReason::no_search);
  // A zero cost keeps nothing; the largest inputs overflow nothing.
  CHECK(verdict(gate_input(0ns, 1ns, 0ns)) == WakeReason::no_search);
  constexpr auto max = Nanoseconds::max();
  constexpr auto u32_max = std::numeric_limits<std::uint32_t>::max();
  CHECK(verdict(gate_input(max, max, max, u32_max)) == WakeReason::no_search);
  CHECK(verdict(gate_input(0ns, max, max, u32_max)) == WakeReason::no_search);
  CHECK(verdict(gate_input(0ns, 1ns, max, u32_max)) == WakeReason::waker_blocks);  // 2^32 - 1 ns of work
  CHECK(verdict(gate_input(max - 1ns, 0ns, max)) == WakeReason::waker_blocks);
}

TEST_CASE("the move cost is the crossing floor, or prev's wake cost when prev is another idle worker",
          "[cost_gate]") {
  kit::Machine m{3, kit::WakeCosts{.spinning = 300ns, .parked = 30us, .crossing = 650ns}};
  m.running(0);
  m.parked(1);
  m.spinning(2);
  const auto at = m.at(0ns);
  CHECK(move_cost(at, 0, 1) == 30us);   // prev parked: its unpark latency
  CHECK(move_cost(at, 0, 2) == 650ns);  // prev spinning: 300 ns, below the floor
  CHECK(move_cost(at, 0, 0) == 650ns);  // prev is the waking worker: the floor
  m.running(1);
  CHECK(move_cost(at, 0, 1) == 650ns);  // prev busy: the floor
  // A machine that measures nothing: the tunable.
  ScriptedMachine<> plain{2};
  CHECK(move_cost(plain, 0, 1) == tunables::crossing_cost);
  kit::Machine unmeasured{2};
  CHECK(move_cost(unmeasured.at(0ns), 0, 1) == tunables::crossing_cost);
}

using placer_test::Pair;

TEST_CASE("traits::Runtime keeps a pipe pair on the waker's worker where the kernel splits it",
          "[cost_gate][wake_placer]") {
  kit::Machine m{2, kit::WakeCosts{.spinning = 300ns, .parked = 30us, .crossing = 650ns}};
  m.spinning(1);
  // The pair settled on worker 0; A blocks 100 ns after its wake-up:
  // below the 650 ns floor. Test (a), every round.
  Pair<Judged> rt{0};
  for (int i = 0; i < 20; ++i) {
    const Placement p = rt.round(m, 100ns, 2us);
    INFO("round " << i);
    CHECK(p.cpu == 0u);
    CHECK(p.reason == WakeReason::waker_blocks);
    CHECK(p.affine == AffineReason::cost_gate);
  }
  // The kernel: sync pull to CPU 0, busy; the search finds CPU 1 idle.
  Pair<traits::Current> cur{0};
  CHECK(cur.round(m, 100ns, 2us).cpu == 1u);
  // A pair of short tasks that starts apart settles by test (b): B's
  // runs of 200 ns are below the move cost, so B is pulled to worker 0
  // once its run is measured, and test (a) keeps it there.
  Pair<Judged> apart{1};
  CHECK(apart.round(m, 100ns, 200ns).cpu == 1u);  // B's run not measured yet: the kernel's rules
  const Placement pulled = apart.round(m, 100ns, 200ns);
  CHECK(pulled.cpu == 0u);
  CHECK(pulled.reason == WakeReason::short_work);
}

TEST_CASE("traits::Runtime does not pull a long-running wakee from the CPU that holds its cache",
          "[cost_gate][wake_placer]") {
  // A 1:N client that blocks at once, a backend of 5 us last on worker 1:
  // test (a) needs B's cache on worker 0, test (b) a run below 650 ns.
  kit::Machine m{2, kit::WakeCosts{.spinning = 300ns, .parked = 30us, .crossing = 650ns}};
  m.spinning(1);
  Pair<Judged> rt{1};
  for (int i = 0; i < 20; ++i) {
    const Placement p = rt.round(m, 100ns, 5us);
    INFO("round " << i);
    CHECK(p.cpu == 1u);
    CHECK(p.reason == WakeReason::idle_prev);
  }
}

TEST_CASE("traits::Runtime spreads the work of a waker that runs on, unless the work is shorter than the move",
          "[cost_gate][wake_placer]") {
  kit::Machine m{2, kit::WakeCosts{.spinning = 300ns, .parked = 30us, .crossing = 650ns}};
  m.spinning(1);
  // A runs 20 us after each wake-up, B 5 us: neither test holds; the
  // kernel's pipeline moves B to the idle worker 1 and keeps it there.
  Pair<Judged> rt{0};
  Placement p{};
  for (int i = 0; i < 40; ++i) p = rt.round(m, 20us, 5us);
  CHECK(p.cpu == 1u);
  CHECK(p.reason == WakeReason::idle_prev);
  // The same waker, a wakee of 200 ns: (b), 200 < 650, wherever B was.
  Pair<Judged> short_work{1};
  for (int i = 0; i < 40; ++i) p = short_work.round(m, 20us, 200ns);
  CHECK(p.cpu == 0u);
  CHECK(p.reason == WakeReason::short_work);
  // B last on a parked worker 1: the move's cost is its 30 us unpark, so
  // a 5 us wakee is short there (test b) and stays on worker 0.
  m.parked(1);
  Pair<Judged> parked{1};
  (void)parked.round(m, 20us, 5us);  // B's run not measured yet
  parked.b_cpu = 1;
  p = parked.round(m, 20us, 5us);
  CHECK(p.cpu == 0u);
  CHECK(p.reason == WakeReason::short_work);
  // The same with worker 1 spinning: 650 ns, B moves.
  m.spinning(1);
  parked.b_cpu = 1;
  CHECK(parked.round(m, 20us, 5us).cpu == 1u);
}

TEST_CASE("one preempted sample does not hold a pair apart: the gate reads the lower of average and latest",
          "[cost_gate][wake_placer]") {
  kit::Machine m{2, kit::WakeCosts{.spinning = 300ns, .parked = 30us, .crossing = 650ns}};
  m.spinning(1);
  Pair<Judged> rt{0};
  for (int i = 0; i < 20; ++i) (void)rt.round(m, 100ns, 2us);
  // A 4 ms overlap (the worker's thread lost its CPU): the average jumps
  // to about 500 us; the next wake-up reads that sample and moves B.
  CHECK(rt.round(m, 4ms, 2us).reason == WakeReason::waker_blocks);  // judged on the samples before it
  const Placement moved = rt.round(m, 100ns, 2us);
  CHECK(moved.cpu == 1u);
  CHECK(OverlapTracker::average(rt.a.overlap) > 400us);
  // Back on worker 0 (as a steal would bring it), the wake-up after a
  // short sample is kept again, whatever the average.
  rt.b_cpu = 0;
  const Placement kept = rt.round(m, 100ns, 2us);
  CHECK(kept.cpu == 0u);
  CHECK(kept.reason == WakeReason::waker_blocks);
  CHECK(OverlapTracker::average(rt.a.overlap) > 300us);
}

TEST_CASE("test (c): a short wakee stays on the waking worker when the search finds no idle worker",
          "[cost_gate]") {
  // keeps_from_busy keeps any known run below the move cost; the waker's
  // overlap and queue do not count (the wakee queues on either CPU).
  CHECK(CostGate::keeps_from_busy(gate_input(20us, 649ns, 650ns, 9, false)).reason == WakeReason::busy_short);
  CHECK(!CostGate::keeps_from_busy(gate_input(20us, 650ns, 650ns, 9, false)));
  CHECK(!CostGate::keeps_from_busy(gate_input(20us, 0ns, 650ns, 9, false)));  // never measured
  auto in = gate_input(0ns, 100ns, 650ns);
  in.waker = no_task;
  CHECK(!CostGate::keeps_from_busy(in));
  CHECK(!CostGate::keeps_from_busy(gate_input(0ns, 1ns, 0ns)));  // no cost, no keep
}

TEST_CASE("traits::Runtime keeps short work off a busy target; long work goes where the kernel sends it",
          "[cost_gate][wake_placer]") {
  // Both workers busy: worker 1 runs a task, worker 0 runs A with two
  // tasks queued behind it (q = 2). A runs on 20 us after each wake-up
  // (test a fails); B, last on worker 1, runs 300 ns: (q + 1) * 300 =
  // 900 ns > 650 ns (test b fails). The kernel's affine step: a sync
  // wake-up of a CPU running 3 is not pulled, the load (3 x 1024 against
  // 1 x 1024) keeps prev; the search finds nothing idle: worker 1,
  // target_busy. Test (c): 300 ns < 650 ns, worker 0.
  kit::Machine m{2, kit::WakeCosts{.spinning = 300ns, .parked = 30us, .crossing = 650ns}};
  m.running(1);
  (void)m.queued(0);
  (void)m.queued(0);
  struct Counted : Judged {
    using Stats = PlainStats;
  };
  Pair<Counted> rt{1};
  const Placement first = rt.round(m, 20us, 300ns);  // B's run not measured yet: the kernel's rules
  CHECK(first.cpu == 1u);
  CHECK(first.reason == WakeReason::target_busy);
  rt.b_cpu = 1;
  const Placement kept = rt.round(m, 20us, 300ns);
  CHECK(kept.cpu == 0u);
  CHECK(kept.target == 1u);
  CHECK(kept.reason == WakeReason::busy_short);
  CHECK(rt.placer.stats().get(WakeCounter::busy_short) == 1u);
  // The kernel on the same wake-ups: worker 1.
  Pair<traits::Current> cur{1};
  for (int i = 0; i < 3; ++i) cur.b_cpu = 1, (void)cur.round(m, 20us, 300ns);
  cur.b_cpu = 1;
  CHECK(cur.round(m, 20us, 300ns).cpu == 1u);
  // B of 5 us: longer than the move, worker 1 as the kernel decides.
  Pair<Judged> long_work{1};
  for (int i = 0; i < 3; ++i) long_work.b_cpu = 1, (void)long_work.round(m, 20us, 5us);
  long_work.b_cpu = 1;
  const Placement moved = long_work.round(m, 20us, 5us);
  CHECK(moved.cpu == 1u);
  CHECK(moved.reason == WakeReason::target_busy);
  // An idle worker 1: the search finds it, (c) is not asked.
  m.stopped(1);
  m.spinning(1);
  rt.b_cpu = 1;
  const Placement spread = rt.round(m, 20us, 300ns);
  CHECK(spread.cpu == 1u);
  CHECK(spread.reason != WakeReason::busy_short);
}

TEST_CASE("a waker known by its key alone: the wakee is judged on its own run (tests b and c)",
          "[cost_gate][wake_placer]") {
  // A wake-up made on another thread of the runtime: waking_cpu 0 ran the
  // waker, whose state is not at hand (waker null, its key given).
  using Placer = TwoWorkers::Placer;
  TwoWorkers w{30us};
  auto& placer = w.placer;
  auto& m = w.m;
  m.spinning(1);
  Placer::task_state b{};
  Nanoseconds now = 1ms;
  auto run_b = [&](Nanoseconds run) {
    placer.task_runs(b, now);
    now += run;
    placer.task_sleeps(b, now);
  };
  const auto place = [&](TaskKey waker_key) {
    return placer.place({.waker = nullptr, .waker_key = waker_key, .wakee = &b, .wakee_key = key_b,
                         .waking_cpu = 0, .prev_cpu = 1, .sync = true},
                        m.at(now), now);
  };
  run_b(200ns);
  // (b): 200 ns < 650 ns, B comes to worker 0, where the waker ran.
  const Placement kept = place(key_a);
  CHECK(kept.cpu == 0u);
  CHECK(kept.reason == WakeReason::short_work);
  // With no key, nothing woke it that the gate can judge: the kernel's
  // steps find worker 1 idle.
  CHECK(place(no_task).cpu == 1u);
  // A long run: (a) would need the waker's overlap, which is not at hand.
  run_b(5us);
  CHECK(place(key_a).cpu == 1u);
}

TEST_CASE("test (d): a wakee stays on the waking worker rather than wait for an unpark the search proposes",
          "[cost_gate][wake_placer]") {
  // B last ran on worker 0, where A wakes it; A runs on 2 us after each
  // wake-up, B runs 13 us (pgbench's client and backend with one client).
  // Before the search the move cost is the 650 ns floor (prev is the
  // waking worker): (a) 2 us > 650 ns, (b) 13 us > 650 ns, neither holds.
  // The kernel's steps: same_cpu, worker 0 busy, the search finds worker 1
  // idle. Worker 1 parked: that move costs its 30 us unpark, and at 30 us
  // (a) holds, 2 us + 0 x 13 us < 30 us: B stays, costly_idle.
  struct Counted : Judged {
    using Stats = PlainStats;
  };
  kit::Machine m{2, kit::WakeCosts{.spinning = 300ns, .parked = 30us, .crossing = 650ns}};
  m.parked(1);
  Pair<Counted> rt{0};
  for (int i = 0; i < 3; ++i) (void)rt.round(m, 2us, 13us);  // A's overlap and B's run measured
  rt.b_cpu = 0;
  const Placement kept = rt.round(m, 2us, 13us);
  CHECK(kept.cpu == 0u);
  CHECK(kept.reason == WakeReason::costly_idle);
  CHECK(kept.affine == AffineReason::same_cpu);
  CHECK(rt.placer.stats().get(WakeCounter::costly_idle) >= 1u);
  // Worker 1 spinning: the move costs the 650 ns floor, as judged before
  // the search; the kernel's move stands.
  m.spinning(1);
  rt.b_cpu = 0;
  const Placement moved = rt.round(m, 2us, 13us);
  CHECK(moved.cpu == 1u);
  CHECK(moved.reason != WakeReason::costly_idle);
  // Parked again, but A runs on 40 us: (a) 40 us > 30 us, (b) 13 us x 1 <
  // 30 us holds: kept by (b) at the unpark's cost.
  m.parked(1);
  rt.b_cpu = 0;
  (void)rt.round(m, 40us, 13us);
  rt.b_cpu = 0;
  const Placement by_b = rt.round(m, 40us, 13us);
  CHECK(by_b.cpu == 0u);
  CHECK(by_b.reason == WakeReason::costly_idle);
  // A pair of 40 us each (a fresh one: the gate reads the lower of the
  // average and the latest sample): neither holds at 30 us; B goes to
  // worker 1.
  Pair<Counted> long_pair{0};
  for (int i = 0; i < 3; ++i) long_pair.b_cpu = 0, (void)long_pair.round(m, 40us, 40us);
  long_pair.b_cpu = 0;
  CHECK(long_pair.round(m, 40us, 40us).cpu == 1u);
}
