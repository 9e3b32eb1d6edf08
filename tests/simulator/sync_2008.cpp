// Tests of the 2008 sync wake-up rule (traits::Linux2008, Smith 2008) running
// inside the simulator: the placer's decisions for a ping-pong pair and for
// a 1:N waker, computed by hand from WakeAffine2008's three rules, and the
// overlap the simulator measures for them.
#include <catch2/catch.hpp>

#include <chrono>
#include <vector>

#include "taskplace/topology/uniform.hpp"
#include "taskplace/wake_placer.hpp"
#include "taskplace_sim/machine.hpp"

using namespace std::chrono_literals;
using taskplace::AffineReason;
using taskplace::CpuId;
using taskplace::Nanoseconds;
using taskplace::OverlapTracker;
using taskplace::TaskKey;
using taskplace::UniformTopology;
using namespace taskplace_sim;

namespace {

struct Decision {
  TaskKey waker, wakee;
  CpuId waking, prev, cpu;
  AffineReason affine;
};

// Where the recorder writes; set by the test that runs the machine.
std::vector<Decision>* decisions = nullptr;

struct Recorder {
  void operator()(const taskplace::WakeEvent& e) const {
    if (decisions != nullptr)
      decisions->push_back({e.waker, e.wakee, e.waking_cpu, e.prev_cpu, e.placement.cpu, e.placement.affine});
  }
};

template <class Variant>
struct Traced2008 : taskplace::traits::Linux2008<Variant> {
  using Hook = Recorder;
};

template <class Variant>
using M = Machine<UniformTopology, Traced2008<Variant>>;

// The Q6600 of Smith 2008: 4 CPUs, two LLCs of two cores; no two of its
// CPUs are SMT siblings, so the load test's imbalance is 100 + (125 - 100)
// / 2 = 112 (tunables::imbalance_pct_2008).
const UniformTopology q6600 = taskplace::presets::q6600_2008();

// A ping-pong pair on different LLCs: ping (key 1) on CPU 0 computes
// 10 us and writes to pong (key 2, CPU 2) with the sync hint, then waits
// for the answer; pong answers with the sync hint.
Workload ping_pong() {
  Workload w;
  w.tasks.push_back(TaskSpec{.name = "ping",
                             .program = {Step::compute(10us), Step::send(1, true), Step::wait(), Step::count(), Step::loop()},
                             .start_cpu = 0});
  w.tasks.push_back(TaskSpec{.name = "pong",
                             .program = {Step::wait(), Step::compute(10us), Step::respond(true), Step::loop()},
                             .start_cpu = 2});
  return w;
}

// A 1:N waker: the waker (key 1, CPU 0) computes 10 us, then writes to A
// (key 2, CPU 1) and B (key 3, CPU 2) with the sync hint, back to back,
// and waits for both answers. H (key 4) is a CPU hog that shares CPU 1
// with A: A, first in CPU 1's queue, runs its wait at time 0 and sleeps,
// leaving H running there.
Workload one_to_two() {
  Workload w;
  w.tasks.push_back(TaskSpec{.name = "waker",
                             .program = {Step::compute(10us), Step::send(1, true), Step::send(2, true), Step::wait(),
                                         Step::wait(), Step::count(), Step::loop()},
                             .start_cpu = 0});
  for (CpuId c : {CpuId{1}, CpuId{2}})
    w.tasks.push_back(TaskSpec{.name = c == 1 ? "A" : "B",
                               .program = {Step::wait(), Step::compute(20us), Step::reply(true), Step::loop()},
                               .start_cpu = c});
  w.tasks.push_back(TaskSpec{.name = "H", .program = {Step::compute(100ms), Step::end()}, .start_cpu = 1});
  return w;
}

template <class Variant>
std::vector<Decision> run(Workload w, Nanoseconds until) {
  std::vector<Decision> log;
  decisions = &log;
  M<Variant> m{q6600, std::move(w)};
  m.run_until(until);
  decisions = nullptr;
  REQUIRE(m.check_invariants().empty());
  return log;
}

}  // namespace

namespace s8 = taskplace::sync_affine;

TEST_CASE("2008 sync rule in the simulator: a ping-pong pair's first wake-up", "[simulator][sync_affine]") {
  // The first wake-up: ping (CPU 0, running) wakes pong (asleep, last ran
  // on CPU 2). Neither has slept after waking another yet, so both average
  // overlaps are 0, below migration_cost (500 us). Loads are 1024 per
  // runnable task and the wakee's weight is 1024 (the 2008 kernel's
  // p->se.load.weight): this = 1024 (ping), prev = 0.
  const Nanoseconds until = 2ms;  // before the first balancing tick (4 ms)
  SECTION("unchecked: sync and both overlaps short, so pull (rule 1)") {
    const auto d = run<s8::Unchecked2008>(ping_pong(), until);
    REQUIRE(d.size() > 10);
    CHECK(d[0].waker == 1);
    CHECK(d[0].wakee == 2);
    CHECK(d[0].waking == 0);
    CHECK(d[0].prev == 2);
    CHECK(d[0].affine == AffineReason::sync_overlap);
    CHECK(d[0].cpu == 0);
    // The pair now shares CPU 0; every later wake-up is on the wakee's own
    // CPU and needs no decision.
    for (std::size_t i = 1; i < d.size(); ++i) CHECK(d[i].affine == AffineReason::same_cpu);
  }
  SECTION("balanced: the sync pull needs 100 x (0 + 1024) <= 112 x 0, false; the load test pulls (rule 2)") {
    // Rule 2: this less the waker (0) <= prev (0) and 0 + 0 <= the waking
    // CPU's load per task (1024): an idle prev does not keep the wakee.
    const auto d = run<s8::Balanced2008>(ping_pong(), until);
    REQUIRE(d.size() > 10);
    CHECK(d[0].affine == AffineReason::load_waking);
    CHECK(d[0].cpu == 0);
    for (std::size_t i = 1; i < d.size(); ++i) CHECK(d[i].affine == AffineReason::same_cpu);
  }
  SECTION("sync ignored: this = 1024 is neither <= prev (0) nor balanced, so prev (rule 3)") {
    const auto d = run<s8::Ignored2008>(ping_pong(), until);
    REQUIRE(d.size() > 10);
    CHECK(d[0].affine == AffineReason::load_prev);
    CHECK(d[0].cpu == 2);
    // The pair stays apart: each wake-up comes from a CPU running only the
    // waker (1024) to the wakee's idle CPU (0), rule 3 every time.
    for (std::size_t i = 1; i < d.size(); ++i) {
      CHECK(d[i].affine == AffineReason::load_prev);
      CHECK(d[i].cpu == d[i].prev);
    }
  }
}

TEST_CASE("2008 sync rule in the simulator: the overlap of tasks that sleep as they wake is their wake path", "[simulator][sync_affine]") {
  // Each task's wake-up of the other is its last step before it waits, so
  // it sleeps once its own wake path (Costs::wake_path, 1 us; the pair
  // shares a CPU, so no IPI, and the 2008 rule has no search) is done:
  // every sample is 1000 ns, and update_avg's integer step (sample - avg)
  // / 8 stops the average at 993 ns, the first value within 7 ns of the
  // sample: far below migration_cost (500 us).
  // (The simulator's pgbench client and backends do the same; see
  // docs/simulator.md, pgbench-2008-sync.)
  M<s8::Unchecked2008> m{q6600, ping_pong()};
  m.run_until(2ms);
  CHECK(m.task(0).ps.overlap.woke == false);  // closed by the sleep that followed
  CHECK(OverlapTracker::average(m.task(0).ps.overlap) == 993ns);
  CHECK(OverlapTracker::average(m.task(1).ps.overlap) == 993ns);
}

TEST_CASE("2008 sync rule in the simulator: a 1:N waker stacks its wakees only without the balance test", "[simulator][sync_affine]") {
  // Smith 2008's bug in miniature. At ~13 us the waker (CPU 0) wakes A
  // (prev CPU 1, where H runs: prev = 1024), then at once B (prev CPU 2,
  // idle: prev = 0). Both overlaps are 0 throughout (the waker's average
  // is read before its stamp and does not change until it sleeps).
  // The wake-ups come at 13 us (a 3 us switch into the waker, 10 us of
  // work); no answer can come before 13 + 20 us, so by 22 us the log holds
  // these two decisions and nothing else.
  const Nanoseconds until = 22us;
  SECTION("unchecked: both wakees pulled onto the waker's CPU (rule 1 twice)") {
    const auto d = run<s8::Unchecked2008>(one_to_two(), until);
    REQUIRE(d.size() == 2);
    CHECK(d[0].wakee == 2);
    CHECK(d[0].prev == 1);
    CHECK(d[0].affine == AffineReason::sync_overlap);
    CHECK(d[0].cpu == 0);
    CHECK(d[1].wakee == 3);
    CHECK(d[1].prev == 2);
    CHECK(d[1].affine == AffineReason::sync_overlap);
    CHECK(d[1].cpu == 0);
  }
  SECTION("balanced: A pulled (rule 1), B refused and left on its idle CPU (rule 3)") {
    // A: this = 1024 - 1024 = 0; 100 x (0 + 1024) = 102400 <= 112 x 1024
    // = 114688: balanced, so the sync pull. B: CPU 0 now holds the waker
    // and A, this = 2048 - 1024 = 1024; 100 x 2048 <= 112 x 0 fails, and
    // 1024 <= 0 fails: prev.
    const auto d = run<s8::Balanced2008>(one_to_two(), until);
    REQUIRE(d.size() == 2);
    CHECK(d[0].affine == AffineReason::sync_overlap);
    CHECK(d[0].cpu == 0);
    CHECK(d[1].affine == AffineReason::load_prev);
    CHECK(d[1].cpu == 2);
  }
  SECTION("sync ignored: neither pulled (rule 3 twice)") {
    // A: this = 1024 (the waker), 100 x 2048 > 112 x 1024, and
    // 1024 + 1024 > 1024 per task: prev. B: this = 1024 again (A went to
    // CPU 1), prev = 0: prev.
    const auto d = run<s8::Ignored2008>(one_to_two(), until);
    REQUIRE(d.size() == 2);
    CHECK(d[0].affine == AffineReason::load_prev);
    CHECK(d[0].cpu == 1);
    CHECK(d[1].affine == AffineReason::load_prev);
    CHECK(d[1].cpu == 2);
  }
}
