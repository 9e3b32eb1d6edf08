// Fault class: a callback of the wake decision throws (a MachineState
// member, the CpuFilter, the hook). WakePlacer::place() gives the strong
// guarantee in every build: the exception propagates, and no task state
// and no counter changed. This file is built twice: test_faults_exceptions
// (checked, as every test) and test_faults_exceptions_unchecked
// (TASKPLACE_CHECKED=0, as a release build), which must agree.
#if defined(TASKPLACE_TEST_UNCHECKED)
#undef TASKPLACE_CHECKED
#define TASKPLACE_CHECKED 0
#endif

#include <catch2/catch.hpp>

#include <chrono>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "taskplace/kit/machine.hpp"
#include "taskplace/topology/uniform.hpp"
#include "taskplace/wake_placer.hpp"

using namespace taskplace;
using namespace std::chrono_literals;

#if defined(TASKPLACE_TEST_UNCHECKED)
static_assert(TASKPLACE_CHECKED == 0, "this build must be unchecked");
#else
static_assert(TASKPLACE_CHECKED == 1, "this build must be checked");
#endif

namespace {

// Which callback throws.
enum class Member { none, is_idle, nr_running, load, llc_utilization_pct, has_idle_core, reservation, filter, hook };

const char* name(Member m) {
  switch (m) {
    case Member::none: return "none";
    case Member::is_idle: return "is_idle";
    case Member::nr_running: return "nr_running";
    case Member::load: return "load";
    case Member::llc_utilization_pct: return "llc_utilization_pct";
    case Member::has_idle_core: return "has_idle_core";
    case Member::reservation: return "reservation";
    case Member::filter: return "filter";
    case Member::hook: return "hook";
  }
  return "?";
}

struct Boom : std::runtime_error {
  using std::runtime_error::runtime_error;
};

Member throwing = Member::none;  // read by every callback below

void maybe_throw(Member m) {
  if (throwing == m) throw Boom(name(m));
}

struct Hook {
  void operator()(const WakeEvent&) const { maybe_throw(Member::hook); }
};

struct Traits : DefaultWakeTraits {
  using Reservation = CacheHotReservation<sis_cache::HalveLong2023, OwnerOnly>;
  using Overlap = OverlapTracker;
  using Stats = PlainStats;
  using Hook = ::Hook;
};

using Topo = UniformTopology;
using Placer = WakePlacer<Topo, Traits>;
using CpuState = Placer::reservation_policy::cpu_state;

// Every CPU busy but CPU 3: a wake-up from CPU 0 whose wakee ran on CPU 2
// goes through the affine step (a sync wake-up reads nr_running, a plain
// one the loads), then the whole search (the LLC's utilisation, the
// idle-core hint, the scan that finds CPU 3 and asks its reservation).
// None of its members is noexcept, as a user's need not be.
struct Machine {
  std::vector<CpuState> states = std::vector<CpuState>(8);
  bool is_idle(CpuId c) const {
    maybe_throw(Member::is_idle);
    return c == 3;
  }
  std::uint32_t nr_running(CpuId c) const {
    maybe_throw(Member::nr_running);
    return c == 3 ? 0 : 1;
  }
  std::uint64_t load(CpuId c) const {
    maybe_throw(Member::load);
    return c == 3 ? 0 : 1024;
  }
  std::uint32_t llc_utilization_pct(CpuId) const {
    maybe_throw(Member::llc_utilization_pct);
    return 50;
  }
  bool has_idle_core(CpuId) const {
    maybe_throw(Member::has_idle_core);
    return true;
  }
  const CpuState& reservation(CpuId c) const {
    maybe_throw(Member::reservation);
    return states[c];
  }
};
static_assert(MachineState<Machine> && HasLlcUtilization<Machine> && HasIdleCoreHint<Machine>);

struct Filter {
  bool operator()(CpuId) const {
    maybe_throw(Member::filter);
    return true;
  }
};

// Everything place() may write, as numbers.
std::vector<std::int64_t> snapshot(const Placer& p, const Placer::task_state& waker,
                                   const Placer::task_state& wakee) {
  std::vector<std::int64_t> v{
      static_cast<std::int64_t>(waker.flips.flips.load()), static_cast<std::int64_t>(waker.flips.last_wakee.load()),
      waker.flips.decay_stamp_ns.load(), waker.overlap.avg.count(), waker.overlap.woke_at.count(),
      waker.overlap.woke, wakee.sleep.last_dequeue.count(), wakee.sleep.sleep_avg.count(), wakee.sleep.asleep,
      static_cast<std::int64_t>(wakee.recent_cpu), static_cast<std::int64_t>(wakee.flips.flips.load())};
  for (std::size_t i = 0; i < static_cast<std::size_t>(WakeCounter::count_); ++i)
    v.push_back(static_cast<std::int64_t>(p.stats().get(static_cast<WakeCounter>(i))));
  return v;
}

}  // namespace

TEST_CASE("a throwing callback leaves every state as it was, and the exception propagates",
          "[faults][exceptions][wake_placer]") {
  const Topo topo(1, 1, 4, 2);  // 8 CPUs, one LLC, cores of 2
  const Placer placer{topo};
  const Machine machine;
  const Filter filter;

  // Both builds agree: place() is not noexcept, so an exception from a
  // callback propagates instead of ending the program.
  Placer::task_state w0, e0;
  static_assert(!noexcept(placer.place(Placer::Wakeup{.wakee = &e0}, machine, 0ns, filter)));

  for (Member m : {Member::is_idle, Member::nr_running, Member::load, Member::llc_utilization_pct,
                   Member::has_idle_core, Member::reservation, Member::filter, Member::hook}) {
    DYNAMIC_SECTION(name(m)) {
      // A history: the waker has woken others, the wakee sleeps (a sample
      // pending) and has a recent CPU.
      throwing = Member::none;
      Placer::task_state waker, wakee, other;
      placer.place({.waker = &waker, .waker_key = 1, .wakee = &other, .wakee_key = 3, .waking_cpu = 0, .prev_cpu = 1},
                   machine, 1s, filter);
      auto states = machine.states;  // task_sleeps wants a writable CPU state
      placer.task_sleeps(wakee, 2, states[2], false, 3s - 80us);
      wakee.recent_cpu = 7;
      const auto before = snapshot(placer, waker, wakee);
      REQUIRE(wakee.sleep.asleep);

      // Not a load-balanced wake-up for `load`: a sync one goes by
      // nr_running and never reads the loads.
      const Placer::Wakeup w{.waker = &waker, .waker_key = 1, .wakee = &wakee, .wakee_key = 2, .waking_cpu = 0,
                             .prev_cpu = 2, .sync = m != Member::load};
      throwing = m;
      CHECK_THROWS_AS(placer.place(w, machine, 3s, filter), Boom);
      throwing = Member::none;
      CHECK(snapshot(placer, waker, wakee) == before);  // nothing changed

      // The same wake-up without the exception is committed whole.
      const Placement p = placer.place(w, machine, 3s, filter);
      CHECK(p.cpu == 3);
      CHECK(p.reason == WakeReason::idle_scan);
      CHECK(snapshot(placer, waker, wakee) != before);
      CHECK(waker.flips.last_wakee.load() == 2);
      CHECK(waker.overlap.woke);
      CHECK_FALSE(wakee.sleep.asleep);        // the sleep was sampled
      CHECK(wakee.sleep.sleep_avg == 10us);   // an 80 us sample, short: update_avg(0, 80 us) = 80 / 8
      CHECK(wakee.recent_cpu == 2);           // the search set it to prev
      CHECK(placer.stats().get(WakeCounter::wakeups) == 2);
    }
  }
  throwing = Member::none;
}

#if TASKPLACE_CHECKED
TEST_CASE("a failed precondition changes nothing either (checked builds)", "[faults][exceptions][wake_placer]") {
  const Topo topo(1, 1, 4, 2);
  const Placer placer{topo};
  const Machine machine;
  Placer::task_state waker, wakee;
  const auto before = snapshot(placer, waker, wakee);
  CHECK_THROWS_AS(placer.place({.waker = &waker, .wakee = &wakee, .waking_cpu = 8}, machine, 1s), PreconditionError);
  CHECK(snapshot(placer, waker, wakee) == before);
}
#endif

#if defined(TASKPLACE_TEST_UNCHECKED)
// Bad input in a release build: an out-of-range worker of kit::Machine
// reaches the counters at its index modulo bit_ceil(workers), never memory
// outside the machine (the checked build throws: tests/kit/machine.test.cpp).
TEST_CASE("unchecked: kit::Machine keeps an out-of-range worker in its counters", "[faults][kit]") {
  kit::Machine m{3};  // counters for 4
  m.running(3);       // the fourth counters, which no worker uses
  CHECK(m.nr_running(7) == 1);
  CHECK(m.at(Nanoseconds{0}).nr_running(3) == 1);
  m.queued(5);  // worker 1's
  CHECK(m.nr_running(1) == 1);
  m.worker(6).running();  // worker 2's
  CHECK(m.nr_running(2) == 1);
  m.worker(6).stopped();
  CHECK(m.is_idle(0));
  CHECK(m.is_idle(2));
}
#endif
