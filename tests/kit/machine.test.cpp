// kit::Machine: a MachineState over per-worker counters, the overload flag
// and the wake-up cost per worker.
#include "taskplace/kit/machine.hpp"

#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "taskplace/topology/uniform.hpp"
#include "taskplace/wake_placer.hpp"

using taskplace::Nanoseconds;
using taskplace::Overload;
using taskplace::kit::IdleState;
using taskplace::kit::Machine;
using taskplace::kit::WakeCosts;

TEST_CASE("the counters answer as the kernel's runqueue does", "[kit][machine]") {
  Machine m{4};
  CHECK(m.is_idle(0));
  CHECK(m.nr_running(0) == 0);
  m.running(0);
  CHECK_FALSE(m.is_idle(0));  // kernel available_idle_cpu: something runs
  CHECK(m.nr_running(0) == 1);
  m.queued(0);
  m.queued(0);
  CHECK(m.nr_running(0) == 3);  // rq->nr_running: running plus queued
  CHECK(m.load(0) == 3 * 1024);  // one nice-0 weight per runnable task
  m.dequeued(0);
  m.stopped(0);
  CHECK(m.nr_running(0) == 1);
  m.dequeued(0);
  CHECK(m.is_idle(0));
  CHECK_THROWS_AS(Machine{0}, std::invalid_argument);
}

TEST_CASE("a worker's handle updates the counters as the calls that take the worker do", "[kit][machine]") {
  Machine m{3};
  m.queued(1);
  m.queued(1);
  auto w = m.worker(1);
  w.dequeued();  // a run's start: its task leaves the queue, the worker runs it
  w.running();
  CHECK(m.queued_on(1) == 1);
  CHECK(m.nr_running(1) == 2);
  CHECK(m.idle_state(1) == IdleState::busy);
  w.stopped();  // its end, then the wait: spin, park, awake
  w.spinning();
  CHECK(m.nr_running(1) == 1);
  CHECK(m.idle_state(1) == IdleState::spinning);
  w.dequeued();
  w.parked();
  CHECK(m.is_idle(1));
  CHECK(m.idle_state(1) == IdleState::parked);
  w.awake();
  CHECK(m.idle_state(1) == IdleState::busy);
  w.preempted_until(Nanoseconds{500});
  CHECK_FALSE(m.at(Nanoseconds{499}).is_idle(1));
  CHECK(m.at(Nanoseconds{500}).is_idle(1));
  // The others' counters are untouched.
  CHECK(m.is_idle(0));
  CHECK(m.is_idle(2));
  CHECK(m.at(Nanoseconds{0}).is_idle(2));
}

TEST_CASE("an out-of-range worker is a precondition error", "[kit][machine]") {
  // Checked builds (every test): PreconditionError; release builds stay in
  // the machine's counters (tests/faults/exceptions.test.cpp, unchecked).
  Machine m{3};
  CHECK_THROWS_AS(m.running(3), taskplace::PreconditionError);
  CHECK_THROWS_AS((void)m.nr_running(7), taskplace::PreconditionError);
  CHECK_THROWS_AS((void)m.at(Nanoseconds{0}).is_idle(3), taskplace::PreconditionError);
  CHECK_THROWS_AS((void)m.worker(3), taskplace::PreconditionError);
  CHECK(m.is_idle(0));  // nothing was counted
}

TEST_CASE("a preempted worker is not idle for the placer until the window ends", "[kit][machine]") {
  Machine m{2};
  m.preempted_until(1, Nanoseconds{1000});
  CHECK(m.at(Nanoseconds{999}).is_idle(0));
  CHECK_FALSE(m.at(Nanoseconds{999}).is_idle(1));  // kernel: vcpu_is_preempted()
  CHECK(m.at(Nanoseconds{1000}).is_idle(1));
  CHECK(m.is_idle(1));  // the plain view ignores preemptions
}

TEST_CASE("the overload flag is set by a queue a thief could take from, cleared by a refresh", "[kit][machine]") {
  Machine m{3};
  CHECK(m.overload() == Overload::none);
  // One queued task on an idle worker: it runs it next, nothing to steal
  // (kernel: a busiest queue needs two or more tasks).
  CHECK_FALSE(m.queued(1));
  CHECK(m.overload() == Overload::none);
  CHECK_FALSE(m.can_give(1));
  m.running(1);
  CHECK(m.can_give(1));
  CHECK(m.queued(1));         // running + 2 queued: set, and this call set it
  CHECK_FALSE(m.queued(1));   // already set: only the first says so
  CHECK(m.overload() == Overload::some);
  m.refresh_overload();
  CHECK(m.overload() == Overload::some);  // worker 1 still can give
  m.dequeued(1);
  m.dequeued(1);
  m.dequeued(1);
  m.refresh_overload();
  CHECK(m.overload() == Overload::none);
}

TEST_CASE("a wake-up costs what the worker's idle state says", "[kit][machine]") {
  Machine m{3, WakeCosts{.spinning = Nanoseconds{90}, .parked = Nanoseconds{30'000}}};
  m.spinning(0);
  m.parked(1);
  m.running(2);
  CHECK(m.idle_state(0) == IdleState::spinning);
  CHECK(m.wake_cost(0) == Nanoseconds{90});
  CHECK(m.wake_cost(1) == Nanoseconds{30'000});
  CHECK(m.wake_cost(2) == Nanoseconds{0});
  m.awake(1);
  CHECK(m.wake_cost(1) == Nanoseconds{0});
  CHECK(m.at(Nanoseconds{0}).wake_cost(0) == Nanoseconds{90});
}

TEST_CASE("the wakee load matches the machine's runnable-only load unit", "[kit][machine]") {
  using Current = taskplace::WakePlacer<taskplace::UniformTopology, taskplace::traits::Current>;
  using Old = taskplace::WakePlacer<taskplace::UniformTopology, taskplace::traits::Linux2008<>>;
  STATIC_REQUIRE(taskplace::kit::wakee_load<Current> == 0);    // WakeAffine: the sleeper is in no load
  STATIC_REQUIRE(taskplace::kit::wakee_load<Old> == 1024);     // WakeAffine2008 reads the wakee's weight
}

TEST_CASE("the placer reads the machine: an idle worker is chosen over a busy one", "[kit][machine]") {
  using Placer = taskplace::WakePlacer<taskplace::UniformTopology, taskplace::traits::Current>;
  taskplace::UniformTopology topo{1, 1, 4, 1};  // one LLC of 4 cores
  Placer placer{topo};
  Machine m{4};
  for (taskplace::CpuId c = 0; c < 4; ++c) m.running(c);
  m.stopped(2);  // only worker 2 is idle
  Placer::task_state wakee{};
  const auto p = placer.place({.wakee = &wakee, .wakee_key = 1, .waking_cpu = 0, .prev_cpu = 1,
                               .wakee_load = taskplace::kit::wakee_load<Placer>},
                              m.at(Nanoseconds{0}), Nanoseconds{0});
  CHECK(p.cpu == 2);  // kernel select_idle_sibling: the idle CPU of the LLC
}

TEST_CASE("concurrent queueings and dequeueings keep the counts", "[kit][machine][concurrency]") {
  Machine m{2};
  constexpr int per = 20'000;
  std::vector<std::thread> ts;
  for (int t = 0; t < 4; ++t)
    ts.emplace_back([&] {
      for (int i = 0; i < per; ++i) {
        m.queued(1);
        (void)m.nr_running(1);
        (void)m.overload();
        m.dequeued(1);
      }
    });
  for (auto& t : ts) t.join();
  CHECK(m.queued_on(1) == 0);
}

TEST_CASE("a wake-up from off the pool wakes from the wakee's last worker", "[kit][machine]") {
  using taskplace::kit::off_pool_waking_cpu;
  STATIC_REQUIRE(off_pool_waking_cpu(3, 1, 4) == 3);                 // its prev: same_cpu, prev's LLC searched
  STATIC_REQUIRE(off_pool_waking_cpu(taskplace::no_cpu, 1, 4) == 1);  // never ran: the runtime's hint
  STATIC_REQUIRE(off_pool_waking_cpu(9, 7, 4) == 0);                  // neither valid: worker 0
}

TEST_CASE("over a topology, the machine samples each LLC's busy share once a period", "[kit][machine]") {
  using namespace std::chrono_literals;
  taskplace::UniformTopology topo{1, 2, 4, 1};  // LLC 0: workers 0-3, LLC 1: 4-7
  Machine m{8};
  for (taskplace::CpuId c : {0u, 1u, 2u}) m.running(c);
  m.queued(4);  // a queued task counts as busy, as in the kernel's nr_running
  const auto t0 = Nanoseconds{1'000'000};
  CHECK(m.at(t0, topo, 4ms).llc_utilization_pct(3) == 75);
  CHECK(m.at(t0, topo, 4ms).llc_utilization_pct(6) == 25);
  m.stopped(0);
  m.stopped(1);
  // Within the period every worker of the LLC reads the sample ...
  CHECK(m.at(t0 + 3ms, topo, 4ms).llc_utilization_pct(1) == 75);
  // ... and a period later a new one.
  CHECK(m.at(t0 + 4ms, topo, 4ms).llc_utilization_pct(1) == 25);
  // Without a topology the view has no LLC input (the search's budget is
  // then the whole LLC).
  STATIC_REQUIRE(!taskplace::HasLlcUtilization<Machine::At>);
  STATIC_REQUIRE(taskplace::HasLlcUtilization<Machine::AtLlc<taskplace::UniformTopology>>);
}

TEST_CASE("a busy LLC's sample stops the idle search (SIS_UTIL)", "[kit][machine]") {
  using namespace std::chrono_literals;
  using Placer = taskplace::WakePlacer<taskplace::UniformTopology, taskplace::traits::Current>;
  taskplace::UniformTopology topo{1, 1, 8, 1};  // one LLC of 8 cores
  Placer placer{topo};
  Machine m{8};
  for (taskplace::CpuId c = 0; c < 8; ++c) m.running(c);
  const Nanoseconds t0{1'000'000};
  CHECK(m.at(t0, topo, 4ms).llc_utilization_pct(0) == 100);  // sampled: all busy
  m.stopped(6);
  Placer::task_state a{}, b{};
  const Placer::Wakeup w{.wakee = &a, .wakee_key = 1, .waking_cpu = 0, .prev_cpu = 1,
                         .wakee_load = taskplace::kit::wakee_load<Placer>};
  // kernel select_idle_cpu(): SIS_UTIL's budget for a fully busy LLC is
  // no scan; without the input the walk finds worker 6.
  const auto with = placer.place(w, m.at(t0 + 1ms, topo, 4ms), t0 + 1ms);
  CHECK(with.scanned == 0);
  CHECK(with.cpu != 6);
  auto w2 = w;
  w2.wakee = &b;
  w2.wakee_key = 2;
  const auto without = placer.place(w2, m.at(t0 + 1ms), t0 + 1ms);
  CHECK(without.cpu == 6);
  CHECK(without.scanned > 0);
}
