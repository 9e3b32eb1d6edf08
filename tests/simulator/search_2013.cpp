// Tests of taskplace_sim/search_2013.hpp: the v3.10 idle-sibling search on
// Wang 2013's box (6 cores x 2 threads, SMT numbered last: core k holds CPUs
// k and k + 6), each case computed by hand from the v3.9-v4.8 rules: idle
// target; idle prev sharing the cache; the first wholly idle core in ring
// order after the target's; the target's idle sibling; the target.
#include <catch2/catch.hpp>

#include "taskplace/testing/machine.hpp"
#include "taskplace/topology/uniform.hpp"
#include "taskplace_sim/search_2013.hpp"

using taskplace::CpuId;
using taskplace::WakeReason;
using taskplace_sim::SiblingSearch2013;

namespace {

using Machine = taskplace::testing::ScriptedMachine<>;

taskplace::SearchResult search(const Machine& m, CpuId target, CpuId prev) {
  static const auto topo = taskplace::presets::westmere_12cpu_2013();
  static const taskplace::AnyCpu any{};
  CpuId recent = taskplace::no_cpu;
  return SiblingSearch2013{}.search(taskplace::SearchInput<taskplace::UniformTopology, Machine, taskplace::AnyCpu, void>{
      topo, m, any, nullptr, 1, taskplace::Nanoseconds{0}, target, prev, &recent});
}

}  // namespace

TEST_CASE("the v3.10 search returns an idle target", "[simulator][search_2013]") {
  Machine m{12};
  m.busy(7);
  const auto r = search(m, 3, 7);
  CHECK(r.cpu == 3);
  CHECK(r.reason == WakeReason::idle_target);
}

TEST_CASE("the v3.10 search takes an idle prev sharing the cache before any idle core", "[simulator][search_2013]") {
  // Target 0 busy (the waker), prev 7 idle, cores 2..5 wholly idle: v3.9's
  // "don't be stupid" check returns prev, whatever is idle elsewhere.
  Machine m{12};
  m.busy(0);
  const auto r = search(m, 0, 7);
  CHECK(r.cpu == 7);
  CHECK(r.reason == WakeReason::idle_prev);
  CHECK(r.scanned == 0);
}

TEST_CASE("with prev busy the v3.10 search takes the first idle core after the target's", "[simulator][search_2013]") {
  // Busy: 4 (target), 1 (prev), 11 (core 5). Wholly idle: cores 0, 2, 3.
  // The ring starts at the target's core 4: core 5 is busy, core 0 is the
  // first wholly idle one (2 cores looked at); its first CPU is 0.
  Machine m{12};
  m.busy(4).busy(1).busy(11);
  const auto r = search(m, 4, 1);
  CHECK(r.cpu == 0);
  CHECK(r.reason == WakeReason::idle_core);
  CHECK(r.scanned == 2);
  // From target 1 (core 1) the ring goes on to core 2 at once.
  m.idle(4).busy(1).busy(5);
  const auto s = search(m, 1, 5);
  CHECK(s.cpu == 2);
  CHECK(s.scanned == 1);
}

TEST_CASE("with no idle core the v3.10 search takes the target's idle sibling, else the target", "[simulator][search_2013]") {
  // One thread of every core busy: 0..5; prev 8 busy too.
  Machine m{12};
  for (CpuId c = 0; c < 6; ++c) m.busy(c);
  m.busy(8);
  const auto r = search(m, 3, 8);
  CHECK(r.cpu == 9);  // the other thread of core 3
  CHECK(r.reason == WakeReason::idle_scan);
  CHECK(r.scanned == 5);
  m.busy(9);
  const auto s = search(m, 3, 8);
  CHECK(s.cpu == 3);
  CHECK(s.reason == WakeReason::target_busy);
}

TEST_CASE("the v3.10 search takes a wholly idle core's first allowed CPU", "[simulator][search_2013]") {
  // Target 0 and prev 1 busy; core 1 (CPUs 1, 7) is not wholly idle, core 2
  // (2, 8) is. With CPU 2 not allowed, the wakee gets 8, the core's first
  // allowed CPU (the kernel's cpumask_first_and of group and affinity).
  static const auto topo = taskplace::presets::westmere_12cpu_2013();
  Machine m{12};
  m.busy(0).busy(1);
  const auto not2 = [](CpuId c) { return c != 2; };
  CpuId recent = taskplace::no_cpu;
  const auto r = SiblingSearch2013{}.search(
      taskplace::SearchInput<taskplace::UniformTopology, Machine, decltype(not2), void>{
          topo, m, not2, nullptr, 1, taskplace::Nanoseconds{0}, 0, 1, &recent});
  CHECK(r.cpu == 8);
  CHECK(r.reason == WakeReason::idle_core);
}
