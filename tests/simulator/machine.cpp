// Tests of taskplace_sim/machine.hpp: hand-computed outcomes, conservation,
// replay, each cost's effect in isolation, and machines described by a
// TableTopology.
#include <catch2/catch.hpp>

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "taskplace/topology/table.hpp"
#include "taskplace/topology/uniform.hpp"
#include "taskplace/wake_placer.hpp"
#include "taskplace_sim/machine.hpp"
#include "taskplace_sim/workloads.hpp"

using namespace std::chrono_literals;
using taskplace::Nanoseconds;
using taskplace::UniformTopology;
using namespace taskplace_sim;

namespace {

template <class Traits = taskplace::traits::Current>
using M = Machine<UniformTopology, Traits>;

Workload one_task(Nanoseconds work) {
  Workload w;
  w.tasks.push_back(TaskSpec{.name = "t", .program = {Step::compute(work), Step::end()}});
  return w;
}

Costs zero_costs() {
  Costs c;
  c.context_switch = c.remote_wakeup = c.refill_core = c.refill_llc = c.refill_node = Nanoseconds{0};
  c.line_llc = c.line_other_llc = c.line_node = c.wake_path = c.ipi_send = Nanoseconds{0};
  c.message_lines = 0;
  c.noise_pct = 0;
  // The newidle pulls below take a queued task whatever its last run (the
  // table model): the tests time the pull, not the cache-hot test
  // (tests/simulator/costs.cpp has that).
  c.cache_hot = CacheHotModel::table;
  return c;
}

}  // namespace

TEST_CASE("one task computing 1 ms on 1 CPU finishes at 1 ms plus one context switch", "[simulator][machine]") {
  const UniformTopology one{1, 1, 1, 1};
  Costs costs;  // defaults: context_switch 3 us
  costs.noise_pct = 0;
  M<> m{one, one_task(1ms), costs};
  const Report r = m.run_to_completion(1s);
  // 1 ms of work after the switch into the task (costs.hpp default 3 us).
  CHECK(r.all_done == 1ms + costs.context_switch);
  CHECK(m.task(0).cpu_time == 1ms);
  CHECK(m.check_invariants().empty());
}

TEST_CASE("two CPU-bound tasks on one CPU share it by slices and finish together", "[simulator][machine]") {
  const UniformTopology one{1, 1, 1, 1};
  Workload w = one_task(9ms);
  w.tasks.push_back(w.tasks[0]);
  Costs costs = zero_costs();
  M<> m{one, w, costs};
  const Report r = m.run_to_completion(1s);
  // 18 ms of work on one CPU, no costs: the last finishes at exactly 18 ms,
  // and the 3 ms base slice means the first cannot finish before 15 ms.
  CHECK(r.all_done == 18ms);
  // 18 ms / 3 ms slices = 6 picks; the first happens at construction,
  // before the measured window (and its counters) starts.
  CHECK(r.context_switches >= 5);
}

TEST_CASE("a task on a sibling thread runs at smt_speed_pct while both threads are busy", "[simulator][machine]") {
  const UniformTopology core{1, 1, 1, 2};
  Workload w;
  w.tasks.push_back(TaskSpec{.name = "a", .program = {Step::compute(6ms), Step::end()}, .start_cpu = 0});
  w.tasks.push_back(TaskSpec{.name = "b", .program = {Step::compute(6ms), Step::end()}, .start_cpu = 1});
  Costs costs = zero_costs();
  costs.smt_speed_pct = 50;
  M<> m{core, w, costs};
  const Report r = m.run_to_completion(1s);
  // Both run at half speed the whole time: 6 ms of work takes 12 ms.
  CHECK(r.all_done == 12ms);
}

TEST_CASE("every task's CPU time equals the work it was given, and none is lost", "[simulator][machine]") {
  const auto topo = taskplace::presets::westmere_12cpu_2013();
  M<> m{topo, workloads::pgbench(16, 12), Costs{}, 3};
  for (int i = 1; i <= 20; ++i) {
    m.run_until(Nanoseconds{i * 2'000'000});
    const std::string v = m.check_invariants();
    INFO(v);
    REQUIRE(v.empty());
  }
  Nanoseconds total{0};
  for (std::uint32_t i = 0; i < m.task_count(); ++i) total += m.task(i).cpu_time;
  CHECK(total > 0ms);
}

TEST_CASE("a finite workload conserves work: cpu time == computes + penalties, all tasks exit", "[simulator][machine]") {
  const auto topo = taskplace::presets::two_node_80cpu();
  M<> m{topo, workloads::hackbench(80, 5, 20), Costs{}, 5};
  const Report r = m.run_to_completion(10s);
  REQUIRE(r.all_done.count() > 0);
  Nanoseconds work{0};
  for (std::uint32_t i = 0; i < m.task_count(); ++i) {
    const auto& t = m.task(i);
    CHECK(t.state == TaskState::done);
    CHECK(t.cpu_time == t.work);
    work += t.work;
  }
  // 20 senders compute 15 us a step (10 writes of 1.5 us, workloads.hpp)
  // and 20 receivers 10 us (10 reads of 1 us), 20 loops of 20 steps each:
  // at least 20 * 400 * (15 + 10) us less the noise (+-5%).
  CHECK(work >= 20 * 400 * 25us * 95 / 100);
  CHECK(m.check_invariants().empty());
}

TEST_CASE("the same seed replays to a byte-identical report", "[simulator][machine]") {
  const auto topo = taskplace::presets::westmere_12cpu_2013();
  auto once = [&](std::uint64_t seed) {
    M<taskplace::traits::Linux2013> m{topo, workloads::pgbench(8, 12), Costs{}, seed};
    return m.run(5ms, 30ms).text();
  };
  const std::string a = once(11), b = once(11), c = once(12);
  CHECK(a == b);
  CHECK(a != c);  // the nudges draw from the seed: another seed, another run
}

TEST_CASE("ping-pong on one CPU beats spreading, and zero cross-CPU costs remove the advantage", "[simulator][machine][pipe]") {
  const auto topo = taskplace::presets::westmere_12cpu_2013();
  auto rate = [&](auto traits_tag, const Costs& c) {
    using Tr = typename decltype(traits_tag)::type;
    Machine<UniformTopology, Tr> m{topo, workloads::pipe(1, 12), c, 1};
    return m.run(2ms, 20ms).throughput;
  };
  struct Affine { using type = taskplace::traits::AlwaysAffine; };
  struct Spread { using type = taskplace::traits::PrevCpu; };
  Costs d;
  d.noise_pct = 0;
  // Default costs: a round trip on one CPU is 2 x (2 us work + 1 us wake
  // path + 3 us switch) = 12 us. Spread, a hop is 2 us of work, then the
  // 4 us remote wake-up (the waker's 1.5 us wake path, IPI included, runs
  // meanwhile on its own CPU), the 3 us switch from idle and the 1-byte
  // message's 9 lines at 50 ns: 9.45 us, 18.9 us a round trip.
  CHECK(rate(Affine{}, d) == Approx(1e9 / 12'000).epsilon(0.01));
  CHECK(rate(Spread{}, d) == Approx(1e9 / 18'900).epsilon(0.01));
  Costs free = d;
  // Free cross-CPU costs: no remote wake-up or IPI, no message transfer,
  // no refill, and no newidle balance cost for the CPU each side leaves idle.
  free.remote_wakeup = free.ipi_send = free.refill_core = free.newidle_base = Nanoseconds{0};
  free.message_lines = free.balance_lines = 0;
  // Then spreading wins: the waker's wake path overlaps the wakee's work
  // (10 us a round trip against 12 us).
  CHECK(rate(Spread{}, free) == Approx(1e9 / 10'000).epsilon(0.02));
  CHECK(rate(Spread{}, free) > rate(Affine{}, free));
}

TEST_CASE("SisCurrent spreads a pipe pair for one flip period, then keeps it on the waking CPU",
          "[simulator][machine][pipe]") {
  // The machine reports each run to the placer (task_runs at the pick,
  // task_stops at a preemption, task_sleeps at a block), which is what
  // WakeOnCurrent's duration tests read. A pipe task runs 2 us a hop, far
  // under MigrationCost2023's 500 us; the rule also needs both flip counts at 0, and the
  // pair's first wake-ups give each task 1, halved once a flip period
  // (tunables::flip_decay_period, 1 s). Rates from the default costs, as
  // in the test above (no noise): 12 us a round trip on one CPU, 18.9 us
  // spread.
  const auto topo = taskplace::presets::westmere_12cpu_2013();
  using Sis = M<taskplace::traits::SisCurrent<>>;
  Costs quiet;
  quiet.noise_pct = 0;
  Sis early{topo, workloads::pipe(1, 12), quiet, 1};
  const Report e = early.run(2ms, 20ms);
  CHECK(e.throughput == Approx(1e9 / 18'900).epsilon(0.01));  // Current's placement: idle prev
  CHECK(e.wake_count(taskplace::WakeCounter::wake_on_current) == 0);
  Sis late{topo, workloads::pipe(1, 12), quiet, 1};
  const Report l = late.run(1100ms, 20ms);
  CHECK(l.throughput == Approx(1e9 / 12'000).epsilon(0.01));  // one CPU
  // Every wake-up of the window kept: two per round trip.
  CHECK(l.wake_count(taskplace::WakeCounter::wake_on_current) == Approx(2 * l.throughput * 0.020).epsilon(0.01));
  CHECK(late.check_invariants().empty());
  // Current on the same machine never keeps the pair.
  M<> current{topo, workloads::pipe(1, 12), quiet, 1};
  CHECK(current.run(1100ms, 20ms).throughput == Approx(1e9 / 18'900).epsilon(0.01));
}

TEST_CASE("a zero wake-up granularity makes every woken sleeper preempt", "[simulator][machine]") {
  const UniformTopology one{1, 1, 1, 1};
  Workload w;
  w.tasks.push_back(TaskSpec{.name = "hog", .program = {Step::compute(50ms), Step::end()}});
  w.tasks.push_back(TaskSpec{.name = "sleeper", .program = {Step::sleep(1ms), Step::compute(10us), Step::loop(9), Step::end()}});
  Costs lazy = zero_costs();
  lazy.wakeup_granularity = 100ms;  // never preempt
  Costs eager = zero_costs();
  eager.wakeup_granularity = Nanoseconds{0};
  M<> a{one, w, lazy}, b{one, w, eager};
  const Report ra = a.run_to_completion(1s), rb = b.run_to_completion(1s);
  CHECK(ra.preemptions == 0);
  CHECK(rb.preemptions >= 10);  // each of the 10 wake-ups preempts the hog
}

TEST_CASE("migrations pay a refill growing with distance", "[simulator][machine]") {
  // two_node_80cpu numbers SMT last: cpu 40 is cpu 0's sibling, cpu 1 is
  // another core of the same LLC, cpu 20 is in the other node.
  const auto topo = taskplace::presets::two_node_80cpu();
  Costs c = zero_costs();
  c.refill_core = 10us;
  c.refill_llc = 20us;
  c.refill_node = 30us;
  auto work_when_woken_on = [&](taskplace::CpuId to) {
    Workload w;
    // B computes on cpu 0 and waits; A, on `to`, wakes it at 3 ms; always-
    // affine pulls B to `to`, where it computes again.
    w.tasks.push_back(TaskSpec{.name = "B", .program = {Step::compute(1ms), Step::wait(), Step::compute(1ms), Step::end()}, .start_cpu = 0});
    w.tasks.push_back(TaskSpec{.name = "A", .program = {Step::sleep(3ms), Step::send(0), Step::end()}, .start_cpu = to});
    Machine<UniformTopology, taskplace::traits::AlwaysAffine> m{topo, w, c};
    m.run_to_completion(1s);
    return m.task(0).work - 2ms;
  };
  // Sibling: the core's caches were not used by anyone else: nothing cooled.
  CHECK(work_when_woken_on(40) == 0us);
  // Same LLC, other core: the private caches refill (refill_core).
  CHECK(work_when_woken_on(1) == 10us);
  // Other node: private caches, LLC share and remote memory.
  CHECK(work_when_woken_on(20) == 60us);
}

namespace {

// A and two short tasks queued behind it on cpu 0; one short task on each
// other CPU, which then goes newly idle at 100 us and pulls one of cpu 0's
// queued tasks. The walk costs nothing (newidle_base = 0, no lines read)
// and nothing else costs time, so every delay below is
// the run-queue lock hold alone.
Workload pull_from_busy_cpu(std::uint32_t pullers) {
  Workload w;
  w.tasks.push_back(TaskSpec{.name = "A", .program = {Step::compute(1ms), Step::end()}, .start_cpu = 0});
  for (std::uint32_t i = 0; i < pullers; ++i)
    w.tasks.push_back(TaskSpec{.name = "B" + std::to_string(i), .program = {Step::compute(100us), Step::end()}, .start_cpu = 0});
  for (std::uint32_t i = 0; i < pullers; ++i)
    w.tasks.push_back(TaskSpec{.name = "C" + std::to_string(i), .program = {Step::compute(100us), Step::end()}, .start_cpu = i + 1});
  return w;
}

Costs lock_only(Nanoseconds hold) {
  Costs c = zero_costs();
  c.newidle_base = Nanoseconds{0};
  c.balance_lines = 0;
  // The hold is lock_lines lines at the distance (cpus of one LLC): one
  // line of `hold`.
  c.lock_lines = 1;
  c.line_llc = hold;
  return c;
}

}  // namespace

TEST_CASE("a newidle pull holds the busiest CPU's run-queue lock and stalls the task running there", "[simulator][machine][newidle]") {
  const UniformTopology two{1, 1, 2, 1};
  SECTION("with no hold, nothing is stalled: the timings of the model without the cost") {
    M<> m{two, pull_from_busy_cpu(1), lock_only(Nanoseconds{0})};
    const Report r = m.run_to_completion(1s);
    // A runs 0..1 ms undisturbed; C ends at 100 us, cpu 1 pulls B at once
    // and runs it 100..200 us.
    CHECK(m.task(0).last_ran == 1ms);
    CHECK(m.task(1).last_ran == 200us);
    CHECK(r.newidle_pulls == 1);
    CHECK(r.lock_stall_time == 0us);
    CHECK(m.check_invariants().empty());
  }
  SECTION("with a hold, the task on the CPU pulled from finishes exactly one hold later") {
    M<> m{two, pull_from_busy_cpu(1), lock_only(7us)};
    const Report r = m.run_to_completion(1s);
    // At 100 us cpu 1 takes cpu 0's lock for 7 us: A (900 us left) resumes
    // at 107 us and ends at 1007 us; B starts on cpu 1 when the pull is
    // done, at 107 us, and ends at 207 us.
    CHECK(m.task(0).last_ran == 1ms + 7us);
    CHECK(m.task(1).last_ran == 207us);
    CHECK(r.lock_stall_time == 7us);
    CHECK(r.newidle_time == 7us);  // the puller's balance: the hold only
    // A stall is lost time, not work: A still did exactly 1 ms.
    CHECK(m.task(0).cpu_time == 1ms);
    CHECK(m.check_invariants().empty());
  }
}

TEST_CASE("newidle pullers of the same CPU take its run-queue lock in turn", "[simulator][machine][newidle]") {
  const UniformTopology three{1, 1, 3, 1};
  M<> m{three, pull_from_busy_cpu(2), lock_only(7us)};
  const Report r = m.run_to_completion(1s);
  // cpus 1 and 2 go idle together at 100 us and both pull from cpu 0 (three
  // tasks): cpu 1 first (its event was queued first) holds the lock
  // 100..107 us and runs B0 107..207 us; cpu 2 waits for it, gets the
  // lock's line from cpu 1 (one line in the LLC, 7 us), holds it
  // 114..121 us and runs B1 121..221 us. A is stalled by both holds.
  CHECK(m.task(1).last_ran == 207us);
  CHECK(m.task(2).last_ran == 221us);
  CHECK(m.task(0).last_ran == 1ms + 14us);
  CHECK(r.newidle_pulls == 2);
  CHECK(r.lock_stall_time == 14us);
  // Balancing time: 7 us for cpu 1; 7 us waiting, 7 us for the hand-off
  // and 7 us holding for cpu 2.
  CHECK(r.newidle_time == 28us);
  CHECK(r.lock_wait_time == 14us);
  CHECK(m.check_invariants().empty());
}

namespace {

// A balancer of the kernels before the overload gate (v3.16): every newly
// idle CPU balances.
struct UngatedBalance : taskplace::DefaultBalanceTraits {
  static constexpr bool newidle_overload_gate = false;
};

// One task on each of two CPUs: C ends at 100 us, A at `a`. No CPU ever
// runs two tasks.
Workload one_each(Nanoseconds a) {
  Workload w;
  w.tasks.push_back(TaskSpec{.name = "A", .program = {Step::compute(a), Step::end()}, .start_cpu = 0});
  w.tasks.push_back(TaskSpec{.name = "C", .program = {Step::compute(100us), Step::end()}, .start_cpu = 1});
  return w;
}

}  // namespace

TEST_CASE("a newly idle CPU balances only while some CPU runs two or more tasks", "[simulator][machine][newidle]") {
  const UniformTopology two{1, 1, 2, 1};
  static_assert(M<>::overload_gated);
  static_assert(!Machine<UniformTopology, taskplace::traits::Current, UngatedBalance>::overload_gated);
  // Each balance attempt costs 5 us (one level of two CPUs, newidle_base
  // only, no contention, no lock hold), so a balance shows as time.
  Costs c = lock_only(Nanoseconds{0});
  c.newidle_base = 5us;
  SECTION("no CPU ever runs two: neither newly idle CPU balances, and none spends time on it") {
    M<> m{two, one_each(1ms), c};
    const Report r = m.run_to_completion(1s);
    // C's CPU at 100 us and A's at 1 ms go idle with the overload flag
    // never set: no balance, no cost.
    CHECK(r.newidle_runs == 0);
    CHECK(r.newidle_not_overloaded == 2);
    CHECK(r.newidle_time == 0us);
    CHECK(!m.overload_flag());
    CHECK(m.check_invariants().empty());
  }
  SECTION("the same machine with a pre-2014 balancer balances both times") {
    Machine<UniformTopology, taskplace::traits::Current, UngatedBalance> m{two, one_each(1ms), c};
    const Report r = m.run_to_completion(1s);
    CHECK(r.newidle_runs == 2);
    CHECK(r.newidle_not_overloaded == 0);
    CHECK(r.newidle_time == 10us);  // 2 balances x 5 us, nothing found
    CHECK(m.check_invariants().empty());
  }
  SECTION("a CPU running two sets the flag at once; only a top-level periodic balance clears it") {
    // A (10 ms) and B (100 us) start on cpu 0, C (100 us) on cpu 1: cpu 0
    // runs two from the start. At 100 us cpu 1 balances (5 us) and pulls
    // B; at 205 us B ends and cpu 1 balances again (5 us, nothing to
    // pull): the flag is still set though no CPU runs two any more. cpu
    // 0's first tick, at 4 ms (the default tick), balances the top level
    // (two CPUs make one level), finds none and clears it: when A ends at
    // 10 ms cpu 0 does not balance.
    Workload w = pull_from_busy_cpu(1);
    w.tasks[0].program = {Step::compute(10ms), Step::end()};
    M<> m{two, w, c};
    m.run_until(3ms);
    CHECK(m.overload_flag());
    m.run_until(5ms);
    CHECK(!m.overload_flag());
    const Report r = m.run_to_completion(1s);
    CHECK(r.newidle_not_overloaded == 1);
    CHECK(m.check_invariants().empty());
    Machine<UniformTopology, taskplace::traits::Current> whole{two, w, c};
    const Report rw = whole.run_to_completion(1s);
    CHECK(rw.newidle_runs == 2);
    CHECK(rw.newidle_pulls == 1);
    CHECK(rw.newidle_not_overloaded == 1);
    CHECK(rw.newidle_time == 10us);
    CHECK(whole.task(1).last_ran == 205us);
  }
}

TEST_CASE("a TableTopology machine runs exactly as the UniformTopology it describes", "[simulator][machine][topology]") {
  // 2 nodes x 2 LLCs x 2 cores x 2 threads, numbered nested, as one row per
  // CPU: the same machine, so the same seed must give the same report.
  const UniformTopology uni{2, 2, 2, 2};
  std::vector<std::uint32_t> core, llc, node;
  for (taskplace::CpuId c = 0; c < uni.cpu_count(); ++c) {
    core.push_back(uni.core_of(c));
    llc.push_back(uni.llc_of(c));
    node.push_back(uni.node_of(c));
  }
  const taskplace::TableTopology table{core, llc, node};
  REQUIRE(table.cpu_count() == 16);
  Machine<UniformTopology, taskplace::traits::Current> a{uni, workloads::pgbench(12, 16), Costs{}, 5};
  Machine<taskplace::TableTopology, taskplace::traits::Current> b{table, workloads::pgbench(12, 16), Costs{}, 5};
  const Report ra = a.run(2ms, 20ms), rb = b.run(2ms, 20ms);
  CHECK(ra.completions > 0);
  CHECK(ra.text() == rb.text());
  CHECK(b.check_invariants().empty());
}

TEST_CASE("an asymmetric TableTopology machine conserves work", "[simulator][machine][topology]") {
  // One node; LLC 0 has a 2-thread core and a 1-thread core, LLC 1 one
  // single-thread core: CPUs of unequal core and LLC sizes (an offlined
  // sibling, a cut-down cluster), the shapes UniformTopology cannot give.
  const taskplace::TableTopology topo{{0, 0, 1, 2}, {0, 0, 0, 1}, {0, 0, 0, 0}};
  REQUIRE(topo.core_size(0) == 2);
  REQUIRE(topo.llc_size(3) == 1);
  Machine<taskplace::TableTopology, taskplace::traits::Current> m{topo, workloads::hackbench(4, 1, 5), Costs{}, 1};
  const Report r = m.run_to_completion(Nanoseconds{10'000'000'000});
  REQUIRE(r.all_done.count() > 0);
  for (std::uint32_t i = 0; i < m.task_count(); ++i) CHECK(m.task(i).cpu_time == m.task(i).work);
  CHECK(r.migrations_total() > 0);  // four CPUs, forty tasks: they do move
  CHECK(m.check_invariants().empty());
}
