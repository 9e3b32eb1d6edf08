// sis_walk::IdleGroup2013 (placer/idle_group_2013.hpp): v3.12's
// select_idle_sibling(), and traits::Linux2013Kernel's path around it.
// Golden values follow that kernel's semantics by hand: the target, an
// idle cache-affine prev, then for_each_lower_domain(sd_llc): the groups of
// each domain as a ring from the target's own (sched_group->next, built in
// the order of each group's first CPU), the first wholly idle one not
// holding the target, its first allowed CPU (cpumask_first_and).
#include <catch2/catch.hpp>

#include <vector>

#include "taskplace/placer/idle_group_2013.hpp"
#include "taskplace/testing/machine.hpp"
#include "taskplace/topology/table.hpp"
#include "taskplace/topology/uniform.hpp"
#include "taskplace/wake_placer.hpp"

using namespace taskplace;
using testing::CpuMask;
using testing::ScriptedMachine;
using sis_walk::IdleGroup2013;

namespace {
// westmere: one LLC of 12 CPUs, core k = {k, k + 6} (siblings last).
const UniformTopology westmere = presets::westmere_12cpu_2013();

template <class T, class M, class F = AnyCpu>
SearchResult search(const T& t, const M& m, CpuId target, CpuId prev, const F& allowed = F{},
                    CpuId* recent_out = nullptr) {
  CpuId recent = 5;
  const SearchResult r =
      IdleGroup2013{}.search(SearchInput<T, M, F, void>{t, m, allowed, nullptr, 1, Nanoseconds{0}, target, prev, &recent});
  if (recent_out != nullptr) *recent_out = recent;
  return r;
}
}  // namespace

TEST_CASE("v3.12's search takes an idle target, then an idle cache-affine prev", "[idle_group_2013]") {
  ScriptedMachine<> m{12};
  m.all_busy().idle(2).idle(7);
  CHECK(search(westmere, m, 2, 7).reason == WakeReason::idle_target);
  const SearchResult r = search(westmere, m, 3, 7);
  CHECK(r.cpu == 7);
  CHECK(r.reason == WakeReason::idle_prev);
  // No recent_used_cpu in v3.12: the wakee's recent CPU is left alone.
  CpuId recent = no_cpu;
  search(westmere, m, 3, 4, AnyCpu{}, &recent);
  CHECK(recent == 5);
}

TEST_CASE("v3.12's search walks the LLC's cores as a ring from the target's core", "[idle_group_2013]") {
  // Target 2 (core {2, 8}), prev 3 busy. Cores 0 {0, 6} and 4 {4, 10}
  // wholly idle: the ring from core 2 meets 3, then 4: CPU 4, after two
  // cores tested.
  ScriptedMachine<> m{12};
  m.all_busy().idle(0).idle(6).idle(4).idle(10);
  SearchResult r = search(westmere, m, 2, 3);
  CHECK(r.cpu == 4);
  CHECK(r.reason == WakeReason::idle_core);
  CHECK(r.scanned == 2);
  // Target 5 (core {5, 11}): the ring wraps to core 0, and the group's
  // first CPU is 0 (today's select_idle_core() walks CPUs from 6 and
  // returns the CPU it met, 6).
  r = search(westmere, m, 5, 3);
  CHECK(r.cpu == 0);
  CHECK(r.reason == WakeReason::idle_core);
  CHECK(r.scanned == 1);
  // Target 11, the second sibling of core 5: the ring starts at the core,
  // not at the CPU: the same answer.
  CHECK(search(westmere, m, 11, 3).cpu == 0);
}

TEST_CASE("v3.12's search takes a whole idle core before the target's idle sibling", "[idle_group_2013]") {
  // Target 2 busy, its sibling 8 idle; core 4 wholly idle, core 3 half
  // idle. The LLC level comes first: CPU 4; the sibling only when no core
  // of the LLC is wholly idle.
  ScriptedMachine<> m{12};
  m.all_busy().idle(8).idle(4).idle(10).idle(3);
  CHECK(search(westmere, m, 2, 1).cpu == 4);
  m.busy(10);
  const SearchResult r = search(westmere, m, 2, 1);
  CHECK(r.cpu == 8);
  CHECK(r.reason == WakeReason::idle_scan);
  CHECK(r.scanned == 6);  // five other cores, then the sibling
  // Nothing idle but half cores: the target.
  m.busy(8);
  CHECK(search(westmere, m, 2, 1).reason == WakeReason::target_busy);
  CHECK(search(westmere, m, 2, 1).cpu == 2);
}

TEST_CASE("v3.12's search returns a whole idle core's first allowed CPU", "[idle_group_2013]") {
  ScriptedMachine<> m{12};
  m.all_busy().idle(4).idle(10);
  // The mask refuses 4: the group still counts (it intersects the mask),
  // and cpumask_first_and gives 10.
  CHECK(search(westmere, m, 2, 3, CpuMask::only(12, {2, 3, 10})).cpu == 10);
  // The mask refuses the whole core: not looked at.
  const SearchResult r = search(westmere, m, 2, 3, CpuMask::only(12, {2, 3, 5}));
  CHECK(r.reason == WakeReason::target_busy);
  CHECK(r.scanned == 2);  // cores 3 and 5 hold an allowed CPU
  // An idle target or prev the mask refuses is not taken (the library's
  // rule; the kernel took it and select_fallback_rq() moved the task).
  m.idle(2);
  CHECK(search(westmere, m, 2, 3, CpuMask::only(12, {3, 4, 10})).cpu == 4);
}

TEST_CASE("v3.12's search has no LLC domain in a one-CPU LLC, and one SMT domain in a one-core LLC",
          "[idle_group_2013]") {
  const UniformTopology singles{1, 4, 1, 1};  // four LLCs of one CPU
  ScriptedMachine<> m{4};
  m.all_busy().idle(1);
  CHECK(search(singles, m, 0, 2).reason == WakeReason::target_busy);
  const UniformTopology one_core{1, 2, 1, 2};  // two LLCs, each one core of two threads
  ScriptedMachine<> n{4};
  n.all_busy();
  CpuId sibling = no_cpu;
  for (auto c : one_core.core_cpus(0))
    if (c != 0) sibling = static_cast<CpuId>(c);
  REQUIRE(one_core.llc_size(0) == 2);
  n.idle(sibling);
  const SearchResult r = search(one_core, n, 0, 0);
  CHECK(r.cpu == sibling);
  CHECK(r.reason == WakeReason::idle_scan);
}

TEST_CASE("the cpu_power of a mixed machine weighs v3.12's load test", "[idle_group_2013][wake_affine_2013]") {
  // CPUs 0 and 1 one core (power 1178 / 2 = 589 each), CPU 2 a core alone
  // (1024); one LLC. Waking 2, prev 0, this 1024, the wakee 1024, prev
  // 1800: 100 * 589 * 2048 = 120627200 <= 112 * 1024 * 1800 = 206438400:
  // balanced, pull. Equal powers would not pull: 204800 > 201600.
  const TableTopology mixed({0, 0, 1}, {0, 0, 0}, {0, 0, 0});
  ScriptedMachine<> m{3};
  m.busy(0, 1, 1800).busy(1, 1, 1024).busy(2, 1, 1024);
  const WakeAffine2013 a;
  CHECK(WakeAffine2013::power(mixed, 0) == 589);
  CHECK(WakeAffine2013::power(mixed, 2) == 1024);
  CHECK(a.decide(AffineInput<TableTopology, ScriptedMachine<>>{mixed, m, 2, 0, false, 1024, 1024}).target == 2);
  const UniformTopology flat{1, 1, 3, 1};
  CHECK(a.decide(AffineInput<UniformTopology, ScriptedMachine<>>{flat, m, 2, 0, false, 1024, 1024}).target == 0);
}

TEST_CASE("Linux2013Kernel neither pulls nor searches when the waking CPU is refused", "[idle_group_2013]") {
  // v3.12's select_task_rq_fair(): no affine domain without the waking CPU
  // in the mask, so prev as it is, however busy, with core 4 wholly idle.
  using Placer = WakePlacer<UniformTopology, traits::Linux2013Kernel>;
  const Placer placer{westmere};
  Placer::task_state waker, wakee;
  ScriptedMachine<> m{12};
  m.all_busy().idle(4).idle(10);
  const auto mask = CpuMask::only(12, {3, 4, 10});
  Placement p = placer.place({.waker = &waker, .waker_key = 1, .wakee = &wakee, .wakee_key = 2, .waking_cpu = 0,
                              .prev_cpu = 3},
                             m, Nanoseconds{1}, mask);
  CHECK(p.affine == AffineReason::waking_not_allowed);
  CHECK(p.cpu == 3);
  CHECK(p.reason == WakeReason::no_search);
  // The waking CPU allowed: prev's core is busy, the load test keeps prev
  // (this 1024 + 1024 against prev 1024 at 112%), and the search finds
  // core 4.
  p = placer.place({.waker = &waker, .waker_key = 1, .wakee = &wakee, .wakee_key = 2, .waking_cpu = 0, .prev_cpu = 3},
                   m, Nanoseconds{2}, CpuMask::all(12));
  CHECK(p.affine == AffineReason::load_prev);
  CHECK(p.cpu == 4);
  CHECK(p.reason == WakeReason::idle_core);
  // Today's kernel searches from prev in the first case too.
  using Now = WakePlacer<UniformTopology, traits::Current>;
  const Now now{westmere};
  Now::task_state a, b;
  CHECK(now.place({.waker = &a, .waker_key = 1, .wakee = &b, .wakee_key = 2, .waking_cpu = 0, .prev_cpu = 3}, m,
                  Nanoseconds{1}, mask)
            .reason != WakeReason::no_search);
}
