// Tests of the scheduler parameters in taskplace_sim/costs.hpp, each in
// isolation: base_slice, sleeper_credit, spurious_run, periodic_per_cpu,
// migration_cost and cache_nice_tries. Every test runs a tiny machine with
// the default value and with a changed one (nothing else differs between
// the runs) and checks outcomes computed by hand from the model.
#include <catch2/catch.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>

#include "taskplace/topology/uniform.hpp"
#include "taskplace/wake_placer.hpp"
#include "taskplace_sim/machine.hpp"

using namespace std::chrono_literals;
using taskplace::Nanoseconds;
using taskplace::UniformTopology;
using namespace taskplace_sim;

namespace {

using M = Machine<UniformTopology, taskplace::traits::Current>;

// Default scheduler parameters, but no direct costs: no context switch,
// remote wake-up, refill, message or newidle walk time, so every time
// below is work and scheduling alone.
Costs no_overheads() {
  Costs c;
  c.context_switch = c.remote_wakeup = c.refill_core = c.refill_llc = c.refill_node = Nanoseconds{0};
  c.message_lines = c.balance_lines = c.lock_lines = 0;
  c.wake_path = c.ipi_send = c.newidle_base = Nanoseconds{0};
  c.noise_pct = 0;
  // Every CPU ticks (no NOHZ): the tests below count periodic balances
  // tick by tick, idle CPUs' included.
  c.nohz = false;
  // The cache-hot tests below say which model they use; the rest count
  // periodic balances as the table model does (newidle pulls untested).
  c.cache_hot = CacheHotModel::table;
  return c;
}

// Tasks that compute `work` each and exit, the i-th forked on cpus[i].
Workload computes(Nanoseconds work, std::initializer_list<taskplace::CpuId> cpus) {
  Workload w;
  for (const taskplace::CpuId c : cpus)
    w.tasks.push_back(TaskSpec{.name = "c" + std::to_string(w.tasks.size()),
                               .program = {Step::compute(work), Step::end()},
                               .start_cpu = c});
  return w;
}

}  // namespace

TEST_CASE("base_slice sets how long a CPU-bound task runs before the next queued one", "[simulator][costs]") {
  const UniformTopology one{1, 1, 1, 1};
  const Workload w = computes(9ms, {0, 0});
  const Costs def = no_overheads();
  REQUIRE(def.base_slice == 3ms);
  Costs fine = def;
  fine.base_slice = 1ms;
  M a{one, w, def}, b{one, w, fine};
  const Report ra = a.run_to_completion(1s), rb = b.run_to_completion(1s);
  // 2 tasks x 9 ms on one CPU, equal vruntimes alternate (the queue's first
  // wins a tie). Slice 3 ms: A 0-3, B 3-6, A 6-9, B 9-12, A 12-15 (done),
  // B 15-18: 6 segments, 5 switches (the first pick, at construction, is
  // before the measured window). Slice 1 ms: A runs the even milliseconds
  // 0..16 and ends at 17 ms, B the odd ones and ends at 18 ms: 18
  // segments, 17 switches, 12 more than with 3 ms.
  CHECK(ra.context_switches == 5);
  CHECK(rb.context_switches == 17);
  CHECK(a.task(0).last_ran == 15ms);
  CHECK(b.task(0).last_ran == 17ms);
  // The CPU does the same 18 ms of work either way, without preempting.
  CHECK(ra.all_done == 18ms);
  CHECK(rb.all_done == 18ms);
  CHECK(ra.preemptions == 0);
  CHECK(rb.preemptions == 0);
  CHECK(a.check_invariants().empty());
  CHECK(b.check_invariants().empty());
}

TEST_CASE("a task whose slice ends while its vruntime is still the least keeps its CPU, no switch",
          "[simulator][costs]") {
  // B computes 0-6 ms (vruntime 6 ms) while A sleeps; A wakes at 6 ms,
  // placed at vruntime 0 (its lag, within the 12 ms credit), leads by 6 ms
  // > 4 ms and preempts. Its slice ends at 9 ms with vruntime 3 ms < B's
  // 6 ms: the kernel's pick returns A itself, so A runs on to 12 ms and
  // exits; B runs 12-18 ms. Switches in the window: to A at 6, to B at 12
  // (a re-pick at 9 would be a third).
  const UniformTopology one{1, 1, 1, 1};
  Workload w;
  w.tasks.push_back(TaskSpec{.name = "A", .program = {Step::sleep(6ms), Step::compute(6ms), Step::end()}});
  w.tasks.push_back(TaskSpec{.name = "B", .program = {Step::compute(12ms), Step::end()}});
  M m{one, w, no_overheads()};
  const Report r = m.run_to_completion(1s);
  CHECK(r.preemptions == 1);
  CHECK(r.context_switches == 2);
  CHECK(m.task(0).last_ran == 12ms);
  CHECK(r.all_done == 18ms);
  CHECK(m.check_invariants().empty());
}

TEST_CASE("sleeper_credit bounds how far behind min_vruntime a woken sleeper is placed",
          "[simulator][costs]") {
  const UniformTopology one{1, 1, 1, 1};
  // The sleeper goes first: it blocks at 0 for 20 ms with vruntime 0. The
  // hog then runs alone 0-20 ms; at the wake-up (20 ms) its vruntime, and
  // with it min_vruntime (brought up to date first, as update_curr does
  // before place_entity), is 20 ms. The sleeper's own lag (0 - 20 ms) is
  // clamped to min_vruntime - sleeper_credit, and it preempts when the hog
  // leads it by more than wakeup_granularity (default 4 ms). A task whose
  // slice ends while its vruntime is still the least keeps the CPU.
  Workload w;
  w.tasks.push_back(
      TaskSpec{.name = "sleeper", .program = {Step::sleep(20ms), Step::compute(10ms), Step::end()}});
  w.tasks.push_back(TaskSpec{.name = "hog", .program = {Step::compute(50ms), Step::end()}});
  const Costs def = no_overheads();
  REQUIRE(def.sleeper_credit == 12ms);
  REQUIRE(def.wakeup_granularity == 4ms);
  Costs some = def, none = def;
  some.sleeper_credit = 5ms;
  none.sleeper_credit = Nanoseconds{0};
  M a{one, w, def}, b{one, w, some}, c{one, w, none};
  const Report ra = a.run_to_completion(1s), rb = b.run_to_completion(1s), rc = c.run_to_completion(1s);
  // Credit 12 ms: placed at 8 ms, the hog leads by 12 ms > 4 ms: preempted
  // at 20 ms. The sleeper's vruntime reaches 18 ms < 20 ms after its 10 ms,
  // so it runs them in one go, 20-30 ms.
  CHECK(ra.preemptions == 1);
  CHECK(a.task(0).last_ran == 30ms);
  // Credit 5 ms: placed at 15 ms, lead 5 ms > 4 ms: preempts at 20 ms and
  // runs 20-26 ms (vruntime 21 ms > the hog's 20 ms), the hog 26-29 ms
  // (23), the sleeper 29-32 ms (24), the hog 32-35 ms (26), the sleeper's
  // last 1 ms 35-36 ms.
  CHECK(rb.preemptions == 1);
  CHECK(b.task(0).last_ran == 36ms);
  // Credit 0: placed at 20 ms, lead 0 < 4 ms: no preemption; it waits
  // for the hog's slice to end at 21 ms (hog 21 ms, sleeper 20 ms) and
  // then alternates with it by 3 ms slices, each putting the runner ahead:
  // 21-24, 27-30, 33-36, 39-40 ms.
  CHECK(rc.preemptions == 0);
  CHECK(c.task(0).last_ran == 40ms);
  // 60 ms of work on one CPU end at 60 ms whatever the order.
  CHECK(ra.all_done == 60ms);
  CHECK(rb.all_done == 60ms);
  CHECK(rc.all_done == 60ms);
  CHECK(a.check_invariants().empty());
  CHECK(b.check_invariants().empty());
  CHECK(c.check_invariants().empty());
}

TEST_CASE("a wake-up made by a task's first steps after its pick preempts it past wakeup_granularity",
          "[simulator][costs]") {
  const UniformTopology one{1, 1, 1, 1};
  // B waits at once (vruntime 0). A computes 5 ms and waits; C computes
  // 6 ms and wakes A. Slices of 3 ms: A 0-3, C 3-6, A 6-8 (waits, vruntime
  // 5 ms), C 8-11 (wakes A: lead 1 ms, no preemption; C ends). A is picked
  // at 11 ms and its first step wakes B, placed at vruntime 0: A leads by
  // 5 ms > 4 ms, so A is preempted there and then (it has not run), B runs
  // 11-12 ms, A 12-22 ms. Without the preemption B would wait for A's
  // slice to end and finish at 15 ms.
  Workload w;
  w.tasks.push_back(TaskSpec{.name = "B", .program = {Step::wait(), Step::compute(1ms), Step::end()}});
  w.tasks.push_back(TaskSpec{
      .name = "A", .program = {Step::compute(5ms), Step::wait(), Step::send(0, true), Step::compute(10ms), Step::end()}});
  w.tasks.push_back(TaskSpec{.name = "C", .program = {Step::compute(6ms), Step::send(1, true), Step::end()}});
  const Costs def = no_overheads();
  REQUIRE(def.wakeup_granularity == 4ms);
  M m{one, w, def};
  const Report r = m.run_to_completion(1s);
  CHECK(r.preemptions == 1);
  CHECK(m.task(0).last_ran == 12ms);
  CHECK(m.task(1).last_ran == 22ms);
  CHECK(m.check_invariants().empty());
  // With a granularity of 6 ms the 5 ms lead does not preempt.
  Costs coarse = def;
  coarse.wakeup_granularity = 6ms;
  M n{one, w, coarse};
  const Report rn = n.run_to_completion(1s);
  CHECK(rn.preemptions == 0);
  CHECK(n.task(0).last_ran == 15ms);
}

TEST_CASE("spurious_run is the CPU time a spuriously woken task burns before it sleeps again",
          "[simulator][costs]") {
  const UniformTopology one{1, 1, 1, 1};
  // W0 and W1 wait for a message. N computes 1 ms, nudges a random member
  // of {W0, W1} (permille 1000: every time) and sleeps 1 ms, 10 times, then
  // sends each waiter its message and exits. The nudged waiter runs while N
  // sleeps, so every nudge finds both waiters waiting again.
  Workload w;
  w.tasks.push_back(TaskSpec{.name = "W0", .program = {Step::wait(), Step::end()}});
  w.tasks.push_back(TaskSpec{.name = "W1", .program = {Step::wait(), Step::end()}});
  w.tasks.push_back(TaskSpec{.name = "N",
                             .program = {Step::compute(1ms), Step::nudge(0, 1000), Step::sleep(1ms),
                                         Step::loop(9), Step::send(0), Step::send(1), Step::end()}});
  w.groups = {{0, 1}};
  const Costs def = no_overheads();
  REQUIRE(def.spurious_run == 2us);
  Costs slow = def;
  slow.spurious_run = 300us;
  M a{one, w, def}, b{one, w, slow};
  const Report ra = a.run_to_completion(1s), rb = b.run_to_completion(1s);
  // 10 nudges x spurious_run between the waiters (which one each nudge
  // picks is the seed's): 20 us by default, 3 ms with 300 us.
  CHECK(a.task(0).cpu_time + a.task(1).cpu_time == 10 * 2us);
  CHECK(b.task(0).cpu_time + b.task(1).cpu_time == 10 * 300us);
  // Busy time: N's 10 x 1 ms plus the spurious runs.
  CHECK(ra.busy_cpu_time == 10ms + 20us);
  CHECK(rb.busy_cpu_time == 10ms + 3ms);
  // The spurious runs fit in N's sleeps: N's 10 x (1 ms + 1 ms) end at 20
  // ms either way, and the waiters exit then on their messages.
  CHECK(ra.all_done == 20ms);
  CHECK(rb.all_done == 20ms);
  CHECK(a.check_invariants().empty());
  CHECK(b.check_invariants().empty());
}

TEST_CASE("periodic_per_cpu is accounted once per CPU looked at by each periodic balance",
          "[simulator][costs]") {
  // 2 LLCs of 2 CPUs: level 0 spans an LLC (2 CPUs), level 1 the node (4
  // CPUs). One task per CPU: no queue, no pull, every due level is looked at.
  const UniformTopology topo{1, 2, 2, 1};
  const Workload w = computes(30ms, {0, 1, 2, 3});
  const Costs def = no_overheads();
  REQUIRE(def.periodic_per_cpu == 100ns);
  REQUIRE(def.tick == 4ms);
  Costs dear = def;
  dear.periodic_per_cpu = 1us;
  M a{topo, w, def}, b{topo, w, dear};
  const Report ra = a.run(Nanoseconds{0}, 19ms), rb = b.run(Nanoseconds{0}, 19ms);
  // CPU c ticks at 4 + c ms, then every 4 ms: 4 ticks each up to 19 ms.
  // Each tick balances level 0 (2 CPUs), every second one level 1 (4
  // CPUs): per CPU 4 x 2 + 2 x 4 = 16 CPUs looked at, 64 for the machine.
  CHECK(ra.periodic_time == 64 * 100ns);
  CHECK(rb.periodic_time == 64 * 1us);
  CHECK(ra.periodic_pulls == 0);
  CHECK(rb.periodic_pulls == 0);
  // Accounted, not charged: each task still ends after its 30 ms of work.
  CHECK(a.run_to_completion(1s).all_done == 30ms);
  CHECK(b.run_to_completion(1s).all_done == 30ms);
  CHECK(a.check_invariants().empty());
  CHECK(b.check_invariants().empty());
}

namespace {

// A and B (20 ms each) start on cpu 0 of two, cpu 1 has nothing: only cpu
// 1's periodic balance can move one of them. With 4 ms slices A runs 0-4,
// B 4-8, A 8-12, B 12-16 ms, ...; cpu 1 ticks at 6, 10, 14, ... ms (tick 4
// ms, staggered by 4 ms x 1/2), never at a switch, and always finds the
// queued task last ran 2 ms ago. A task pulled at 6 ms runs on cpu 1 at
// once; neither CPU ever runs two again.
Workload two_on_cpu0() { return computes(20ms, {0, 0}); }

Costs four_ms_slices() {
  Costs c = no_overheads();
  c.base_slice = 4ms;
  return c;
}

}  // namespace

TEST_CASE("migration_cost decides whether a queued task is cache hot for the periodic balance",
          "[simulator][costs]") {
  const UniformTopology two{1, 1, 2, 1};
  const Costs def = four_ms_slices();
  REQUIRE(def.migration_cost == 500us);
  REQUIRE(def.cache_nice_tries == 1);
  Costs edge = def, hot = def;
  edge.migration_cost = 2ms;        // "ran within": 2 ms ago is not within 2 ms
  hot.migration_cost = 2ms + 1ns;
  M a{two, two_on_cpu0(), def}, b{two, two_on_cpu0(), edge}, c{two, two_on_cpu0(), hot};
  const Report ra = a.run_to_completion(1s), rb = b.run_to_completion(1s), rc = c.run_to_completion(1s);
  // Cold (500 us, and 2 ms): cpu 1 pulls A (queued, 4 ms done) at its first
  // tick, 6 ms: A ends there at 6 + 16 = 22 ms; B, running since 4 ms, ends
  // at 24 ms.
  for (const auto* m : {&a, &b}) {
    INFO("migration_cost " << m->costs().migration_cost.count() << " ns");
    CHECK(m->task(0).last_ran == 22ms);
    CHECK(m->task(0).last_cpu == 1);
    CHECK(m->task(1).last_ran == 24ms);
  }
  CHECK(ra.all_done == 24ms);
  CHECK(rb.all_done == 24ms);
  // Hot (2 ms + 1 ns): the balances at 6 and 10 ms fail (cache_nice_tries
  // 1: a hot task is pulled once more than 1 balance failed); at 14 ms A
  // (8 ms done, last ran at 12 ms) is pulled anyway and ends at 14 + 12 =
  // 26 ms; B (6 ms done) ends at 14 + 14 = 28 ms.
  CHECK(c.task(0).last_ran == 26ms);
  CHECK(c.task(0).last_cpu == 1);
  CHECK(c.task(1).last_ran == 28ms);
  CHECK(rc.all_done == 28ms);
  // One pull, to another core of the LLC, in every case.
  for (const Report* r : {&ra, &rb, &rc}) {
    CHECK(r->periodic_pulls == 1);
    CHECK(r->migrations[static_cast<std::size_t>(Distance::llc)] == 1);
    CHECK(r->migrations_total() == 1);
  }
  CHECK(a.check_invariants().empty());
  CHECK(b.check_invariants().empty());
  CHECK(c.check_invariants().empty());
}

TEST_CASE("cache_nice_tries is how many periodic balances a cache-hot task resists before it is pulled",
          "[simulator][costs]") {
  const UniformTopology two{1, 1, 2, 1};
  // The queued task always last ran 2 ms before cpu 1's tick: with a 3 ms
  // migration_cost it is always hot.
  Costs def = four_ms_slices();
  def.migration_cost = 3ms;
  REQUIRE(def.cache_nice_tries == 1);
  Costs eager = def, stubborn = def;
  eager.cache_nice_tries = 0;
  stubborn.cache_nice_tries = 1000;
  M a{two, two_on_cpu0(), def}, b{two, two_on_cpu0(), eager}, c{two, two_on_cpu0(), stubborn};
  const Report ra = a.run_to_completion(1s), rb = b.run_to_completion(1s), rc = c.run_to_completion(1s);
  // 1 (default): fails at 6 and 10 ms, pulls A at 14 ms (see above): A ends
  // at 26 ms on cpu 1, B at 28 ms.
  CHECK(ra.periodic_pulls == 1);
  CHECK(a.task(0).last_cpu == 1);
  CHECK(a.task(0).last_ran == 26ms);
  CHECK(a.task(1).last_ran == 28ms);
  CHECK(ra.all_done == 28ms);
  CHECK(a.cpu(1).hot.nr_balance_failed[0] == 0);  // reset by the pull (one level: the LLC)
  // 0: fails at 6 ms only; at 10 ms A runs (since 8 ms) and B (4 ms done,
  // last ran at 8 ms) is pulled: B ends at 10 + 16 = 26 ms on cpu 1, A (6
  // ms done) at 10 + 14 = 24 ms on cpu 0.
  CHECK(rb.periodic_pulls == 1);
  CHECK(b.task(1).last_cpu == 1);
  CHECK(b.task(1).last_ran == 26ms);
  CHECK(b.task(0).last_cpu == 0);
  CHECK(b.task(0).last_ran == 24ms);
  CHECK(rb.all_done == 26ms);
  // 1000: never pulled. Both share cpu 0 by 4 ms slices: A ends at 36 ms,
  // B at 40 ms. cpu 1's balances at 6, 10, ..., 34 ms (8 of them) found
  // only a hot task; from 36 ms cpu 0 runs one and there is nothing to pull.
  CHECK(rc.periodic_pulls == 0);
  CHECK(rc.migrations_total() == 0);
  CHECK(c.task(0).last_ran == 36ms);
  CHECK(c.task(1).last_ran == 40ms);
  CHECK(rc.all_done == 40ms);
  CHECK(c.cpu(1).hot.nr_balance_failed[0] == 8);
  CHECK(a.check_invariants().empty());
  CHECK(b.check_invariants().empty());
  CHECK(c.check_invariants().empty());
}

TEST_CASE("failed periodic balances are counted per level, as the kernel counts them per domain",
          "[simulator][costs]") {
  // 4 CPUs in 2 LLCs of 2; both tasks (100 ms each) on cpu 0 and always
  // hot (migration_cost 1 s), cache_nice_tries 1. Cpu 1 ticks at 5, 9, 13
  // ms; its LLC level balances every tick, the machine level every second
  // one. Per level: the LLC level fails at 5 and 9 ms, the machine level
  // at 9, and the LLC level's third balance, at 13 ms, pulls. One count
  // for both levels would reach 2 at 9 ms and pull there, at the machine
  // level. Cpus 2 and 3 (ticks at 6, 10, 14 and 7, 11, 15 ms) fail their
  // machine-level balances at 10 and 11 ms and pull no earlier than 18.
  const UniformTopology topo{1, 2, 2, 1};
  Costs c = no_overheads();
  c.migration_cost = 1s;
  REQUIRE(c.cache_nice_tries == 1);
  M m{topo, computes(100ms, {0, 0}), c};
  Report r = m.run(Nanoseconds{0}, 12ms);
  CHECK(r.periodic_pulls == 0);
  CHECK(m.cpu(1).hot.nr_balance_failed[0] == 2);
  CHECK(m.cpu(1).hot.nr_balance_failed[1] == 1);
  m.run_until(14ms);
  r = m.report();
  CHECK(r.periodic_pulls == 1);
  CHECK(m.cpu(1).hot.nr_balance_failed[0] == 0);  // reset by its pull
  CHECK(m.cpu(1).curr >= 0);
  CHECK(m.check_invariants().empty());
}

TEST_CASE("the kernel's cache-hot model holds hot tasks against newidle pulls too, and never between SMT siblings",
          "[simulator][costs]") {
  // Both models through taskplace::TaskHot; every task is hot
  // (migration_cost 1 s). Tests as above: ticks at 6, 10, 14 ms on cpu 1.
  Costs table = four_ms_slices();
  table.migration_cost = 1s;
  REQUIRE(table.cache_hot == CacheHotModel::table);
  Costs kernel = table;
  kernel.cache_hot = CacheHotModel::kernel;

  SECTION("newidle: a CPU that runs dry takes a hot task in the table's model only") {
    // cpu 1's own task ends at 1 ms; cpu 0 runs A with B queued.
    const UniformTopology two{1, 1, 2, 1};
    Workload w = two_on_cpu0();
    w.tasks.push_back(TaskSpec{.name = "short", .program = {Step::compute(1ms), Step::end()}, .start_cpu = 1});
    M a{two, w, table}, b{two, w, kernel};
    const Report ra = a.run(Nanoseconds{0}, 12ms), rb = b.run(Nanoseconds{0}, 12ms);
    // Table: the newidle pull at 1 ms takes B (no hot test there).
    CHECK(ra.newidle_pulls == 1);
    CHECK(ra.periodic_pulls == 0);
    // Kernel: the newidle pull refuses B (and never counts); the periodic
    // balances at 6 and 10 ms refuse too, counting 2.
    CHECK(rb.newidle_pulls == 0);
    CHECK(rb.periodic_pulls == 0);
    CHECK(b.cpu(1).hot.nr_balance_failed[0] == 2);
    // At 14 ms the count (2) exceeds the LLC's 1: the periodic balance pulls.
    b.run_until(15ms);
    CHECK(b.report().periodic_pulls == 1);
    CHECK(b.cpu(1).hot.nr_balance_failed[0] == 0);
    CHECK(a.check_invariants().empty());
    CHECK(b.check_invariants().empty());
  }
  SECTION("SMT: siblings share every cache, so the kernel's model pulls at the first balance") {
    const UniformTopology smt{1, 1, 1, 2};  // one core, two threads: the only level is SMT
    M a{smt, two_on_cpu0(), table}, b{smt, two_on_cpu0(), kernel};
    const Report ra = a.run(Nanoseconds{0}, 7ms), rb = b.run(Nanoseconds{0}, 7ms);
    CHECK(ra.periodic_pulls == 0);  // AllLevels2007: hot between siblings too; fails at 6 ms
    CHECK(a.cpu(1).hot.nr_balance_failed[0] == 1);
    CHECK(rb.periodic_pulls == 1);  // v5.10: never hot between siblings
    CHECK(b.check_invariants().empty());
  }
}
