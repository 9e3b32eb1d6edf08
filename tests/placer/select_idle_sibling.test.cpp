// Decision table of the idle-sibling search (placer/select_idle_sibling.hpp):
// every WakeReason it produces, the SIS_UTIL budget computed by hand, the
// idle-core hint, recent_cpu, affinity, and the scan order.
#include <catch2/catch.hpp>

#include <cstdint>
#include <string>
#include <type_traits>

#include "taskplace/placer/select_idle_sibling.hpp"
#include "taskplace/policy/cache_hot_reservation.hpp"
#include "taskplace/testing/machine.hpp"
#include "taskplace/topology/uniform.hpp"

using namespace taskplace;
using namespace std::chrono_literals;
using testing::CpuMask;
using testing::ScriptedMachine;

namespace {
// westmere: one LLC of 12 CPUs, core k = {k, k + 6}. eight_socket: LLCs of
// 10 CPUs {0..9}, {10..19}, ..., no SMT. q6600: LLCs {0, 1}, {2, 3}.
const UniformTopology westmere = presets::westmere_12cpu_2013();
const UniformTopology eight = presets::eight_socket_80core();
const UniformTopology q6600 = presets::q6600_2008();

template <class T, class M, class F = AnyCpu>
SearchResult search(const T& t, const M& m, CpuId target, CpuId prev, CpuId& recent,
                    const F& allowed = F{}, IdleSiblingSearch s = {}) {
  return s.search(SearchInput<T, M, F, void>{t, m, allowed, nullptr, 1, Nanoseconds{0}, target,
                                             prev, &recent});
}
template <class T, class M, class F = AnyCpu>
SearchResult search(const T& t, const M& m, CpuId target, CpuId prev, const F& allowed = F{},
                    IdleSiblingSearch s = {}) {
  CpuId recent = no_cpu;
  return search(t, m, target, prev, recent, allowed, s);
}
}  // namespace

TEST_CASE("the SIS_UTIL budget shrinks with the square of utilisation", "[select_idle_sibling]") {
  // budget = llc * (1 - (1.17 u)^2), truncated.
  CHECK(sis_util_budget(56, 0) == 56);    // nothing busy: the whole LLC
  CHECK(sis_util_budget(56, 50) == 36);   // 56 * (1 - 0.585^2) = 56 * 0.657775 = 36.8
  CHECK(sis_util_budget(12, 50) == 7);    // 12 * 0.657775 = 7.9
  CHECK(sis_util_budget(112, 25) == 102); // 112 * (1 - 0.2925^2) = 112 * 0.914444 = 102.4
  CHECK(sis_util_budget(8, 70) == 2);     // 8 * (1 - 0.819^2) = 8 * 0.329239 = 2.6
  CHECK(sis_util_budget(56, 84) == 1);    // 56 * (1 - 0.9828^2) = 56 * 0.034104 = 1.9
  CHECK(sis_util_budget(56, 85) == 0);    // 56 * (1 - 0.9945^2) = 56 * 0.010970 = 0.6
  CHECK(sis_util_budget(224, 85) == 2);   // 224 * 0.010970 = 2.46: a big LLC still scans
  CHECK(sis_util_budget(224, 86) == 0);   // 1.17 * 0.86 = 1.0062 > 1: zero at 86% for any size
  CHECK(sis_util_budget(224, 100) == 0);
  CHECK(sis_util_budget(224, 250) == 0);  // over 100% reads as 100%
  CHECK(sis_util_budget(0, 0) == 0);
  // Large LLCs do not overflow: 2^32 - 1 CPUs at 0%.
  CHECK(sis_util_budget(0xFFFFFFFFu, 0) == 0xFFFFFFFFu);
}

TEST_CASE("the fast paths take the target, then prev, then the recent CPU", "[select_idle_sibling]") {
  ScriptedMachine<> m{12};
  // Rule: target idle -> target.
  auto r = search(westmere, m, 4, 5);
  CHECK(r.cpu == 4);
  CHECK(r.reason == WakeReason::idle_target);
  CHECK(r.scanned == 0);
  // Rule: target busy, prev idle and sharing cache -> prev.
  m.busy(4);
  r = search(westmere, m, 4, 5);
  CHECK(r.cpu == 5);
  CHECK(r.reason == WakeReason::idle_prev);
  // Rule: both busy, the recent CPU idle and sharing cache -> recent; the
  // wakee's recent CPU becomes prev.
  m.busy(5);
  CpuId recent = 9;
  r = search(westmere, m, 4, 5, recent);
  CHECK(r.cpu == 9);
  CHECK(r.reason == WakeReason::idle_recent);
  CHECK(recent == 5);
}

TEST_CASE("the recent CPU is skipped when disabled, unknown, prev, busy or far", "[select_idle_sibling]") {
  ScriptedMachine<> m{12};
  m.all_busy().idle(9);
  CpuId recent = 9;
  IdleSiblingSearch no_recent;
  no_recent.use_recent_cpu = false;
  // Disabled: the scan finds 9 instead (reason idle_scan), recent still updated.
  auto r = search(westmere, m, 4, 5, recent, AnyCpu{}, no_recent);
  CHECK(r.cpu == 9);
  CHECK(r.reason == WakeReason::idle_scan);
  CHECK(recent == 5);
  // Unknown recent CPU: no_cpu is not looked at.
  recent = no_cpu;
  r = search(westmere, m, 4, 5, recent);
  CHECK(r.reason == WakeReason::idle_scan);
  // In another LLC: q6600 target 0, recent 3 idle: not cache-shared.
  ScriptedMachine<> q{4};
  q.all_busy().idle(3);
  recent = 3;
  r = search(q6600, q, 0, 1, recent);
  CHECK(r.reason == WakeReason::target_busy);
  CHECK(r.cpu == 0);
}

TEST_CASE("prev in another LLC is not a fast path", "[select_idle_sibling]") {
  ScriptedMachine<> m{4};
  m.busy(0).busy(1);
  // prev 2 idle, but LLC {2, 3} is not the target's {0, 1}; the scan of
  // {0, 1} finds nothing.
  const auto r = search(q6600, m, 0, 2);
  CHECK(r.cpu == 0);
  CHECK(r.reason == WakeReason::target_busy);
  CHECK(r.scanned == 2);
}

TEST_CASE("on SMT the scan prefers a whole idle core to an idle CPU", "[select_idle_sibling]") {
  ScriptedMachine<> m{12};
  // Only core 3 = {3, 9} is wholly idle; CPU 1 is idle but its sibling 7 runs.
  m.all_busy().idle(1).idle(3).idle(9);
  auto r = search(westmere, m, 0, 0);
  CHECK(r.cpu == 3);
  CHECK(r.reason == WakeReason::idle_core);
  CHECK(r.scanned == 3);  // 1, 2, 3
  // No whole idle core: the first idle CPU seen, after the whole budget.
  // The walk tests each core once (kernel: select_idle_core() and the
  // cpumask_andnot in select_idle_cpu()), so it counts 6 steps, one per
  // core (1..6 from target 0; 7..11 and 0 are siblings already tested),
  // not the 12 CPUs of the LLC.
  m.busy(3);
  r = search(westmere, m, 0, 0);
  CHECK(r.cpu == 1);
  CHECK(r.reason == WakeReason::idle_scan);
  CHECK(r.scanned == 6);
  // search_idle_core off: the first idle CPU ends the scan.
  m.idle(3);
  IdleSiblingSearch cpu_only;
  cpu_only.search_idle_core = false;
  r = search(westmere, m, 0, 0, AnyCpu{}, cpu_only);
  CHECK(r.cpu == 1);
  CHECK(r.reason == WakeReason::idle_scan);
  CHECK(r.scanned == 1);
}

TEST_CASE("without SMT the scan stops at the first idle CPU, wrapping round the LLC", "[select_idle_sibling]") {
  ScriptedMachine<> m{80};
  m.all_busy().idle(4);
  auto r = search(eight, m, 0, 0);
  CHECK(r.cpu == 4);
  CHECK(r.reason == WakeReason::idle_scan);
  CHECK(r.scanned == 4);  // 1, 2, 3, 4
  // From target 8 the order is 9, 0, 1, 2: it wraps inside LLC {0..9}.
  m.busy(4).idle(2);
  r = search(eight, m, 8, 8);
  CHECK(r.cpu == 2);
  CHECK(r.scanned == 4);
  // An idle CPU of another LLC is never found.
  m.busy(2).idle(15);
  r = search(eight, m, 8, 8);
  CHECK(r.reason == WakeReason::target_busy);
  CHECK(r.cpu == 8);
  CHECK(r.scanned == 10);
}

TEST_CASE("the SIS_UTIL budget limits how far the scan looks", "[select_idle_sibling]") {
  ScriptedMachine<true> m{80};
  // LLC 10 at 50%: 10 * 0.657775 = 6.6 -> 6 CPUs, 1..6 from target 0.
  m.all_busy().utilization(50).idle(7);
  auto r = search(eight, m, 0, 0);
  CHECK(r.reason == WakeReason::target_busy);
  CHECK(r.scanned == 6);
  m.busy(7).idle(6);
  r = search(eight, m, 0, 0);
  CHECK(r.cpu == 6);
  CHECK(r.reason == WakeReason::idle_scan);
  // 86%: budget 0, nothing scanned although CPU 6 is idle.
  m.utilization(86);
  r = search(eight, m, 0, 0);
  CHECK(r.reason == WakeReason::target_busy);
  CHECK(r.scanned == 0);
  // The fast paths ignore the budget: an idle prev still wins at 100%.
  m.utilization(100);
  r = search(eight, m, 0, 6);
  CHECK(r.cpu == 6);
  CHECK(r.reason == WakeReason::idle_prev);
}

TEST_CASE("the idle-core hint widens or skips the core search", "[select_idle_sibling]") {
  ScriptedMachine<true, true> m{12};
  // 70% busy: budget 12 * (1 - 0.819^2) = 3.9 -> 3. Core 3 = {3, 9} idle
  // and the hint says so: the kernel walks the whole LLC for it, the
  // budget bounds only the CPU walk (select_idle_cpu(): nr is counted
  // down in the CPU branch only). (This case used 90% before; at 90% the
  // budget is 0 and the kernel stops before any walk: see the SIS_UTIL
  // zero-budget test.)
  m.all_busy().idle(3).idle(9).utilization(70).idle_core_hint(true);
  auto r = search(westmere, m, 0, 0);
  CHECK(r.cpu == 3);
  CHECK(r.reason == WakeReason::idle_core);
  // Hint false: no core search, and the budget (3: CPUs 1, 2, 3) finds 3
  // as an idle CPU.
  m.idle_core_hint(false);
  r = search(westmere, m, 0, 0);
  CHECK(r.cpu == 3);
  CHECK(r.reason == WakeReason::idle_scan);
  CHECK(r.scanned == 3);
  // At 90% the budget is 0: nothing is walked.
  m.utilization(90);
  r = search(westmere, m, 0, 0);
  CHECK(r.reason == WakeReason::target_busy);
  CHECK(r.scanned == 0);
  // Hint false at 0% busy: the CPU scan stops at the first idle CPU (1),
  // even though core 3 is whole.
  m.utilization(0).idle(1);
  r = search(westmere, m, 0, 0);
  CHECK(r.cpu == 1);
  CHECK(r.reason == WakeReason::idle_scan);
  CHECK(r.scanned == 1);
}

TEMPLATE_TEST_CASE("with the idle-core hint the reservation guard covers the whole scan", "[select_idle_sibling][chen2023]",
                   sis_cache::EverySleep2023, sis_cache::ShortSleeps2023, sis_cache::HalveLong2023) {
  // 70% busy: SIS_UTIL budget 3, but the hint widens the walk to the whole
  // LLC. The only idle core, {3, 9}, is reserved for another task until
  // 10us (Chen 2023 treats a hot CPU as not idle in select_idle_core and in
  // the CPU scan), so it is no whole idle core for this wakee. (This case
  // used 90% before: a zero budget now ends the search before any walk, as
  // select_idle_cpu() does.) The walk tests the 6 cores once each (kernel:
  // select_idle_core(), cpumask_andnot), so it counts 6 steps, not 12;
  // both CPUs of core {3, 9} are looked at in its step, the third, which
  // every variant guards (HalveLong2023 guards 12 / 2 = 6 steps): 9 is no
  // longer met as the 8th CPU of a CPU-by-CPU walk, so HalveLong2023 now
  // decides as ShortSleeps2023 here (its half-guard: the CPU-walk case below).
  using R = CacheHotReservation<TestType>;
  const R res{};
  ScriptedMachine<true, true, typename R::cpu_state> m{12};
  m.all_busy().idle(3).idle(9).utilization(70).idle_core_hint(true);
  m.reservation_state(3).hot_until = 10us;
  m.reservation_state(9).hot_until = 10us;
  CpuId recent = no_cpu;
  const AnyCpu any{};
  const auto r = IdleSiblingSearch{}.search(
      SearchInput<UniformTopology, decltype(m), AnyCpu, R>{westmere, m, any, &res, 20, 1us, 0, 0, &recent});
  CHECK(r.scanned == 6);
  if constexpr (std::is_same_v<TestType, sis_cache::HalveLong2023>) {
    CHECK(r.cpu == 3);
    CHECK(r.reason == WakeReason::hot_fallback);
    CHECK(r.reservation_skips == 2);
  } else if constexpr (std::is_same_v<TestType, sis_cache::ShortSleeps2023>) {
    CHECK(r.cpu == 3);  // every idle CPU hot: the first one met
    CHECK(r.reason == WakeReason::hot_fallback);
    CHECK(r.reservation_skips == 2);
  } else {
    CHECK(r.cpu == 0);  // EverySleep2023 stacks on the busy target
    CHECK(r.reason == WakeReason::target_busy);
    CHECK(r.reservation_skips == 2);
  }
}

TEMPLATE_TEST_CASE("without the idle-core hint HalveLong2023 guards half the CPU walk", "[select_idle_sibling][chen2023]",
                   sis_cache::EverySleep2023, sis_cache::ShortSleeps2023, sis_cache::HalveLong2023) {
  // Hint false at 0% busy: no core search, the CPU walk 1, 2, ..., 11, 0
  // with the budget 12. CPUs 3 and 9 are idle and reserved against this
  // wakee; prev 0's sibling 6 is busy (select_idle_smt finds nothing).
  using R = CacheHotReservation<TestType>;
  const R res{};
  ScriptedMachine<true, true, typename R::cpu_state> m{12};
  m.all_busy().idle(3).idle(9).utilization(0).idle_core_hint(false);
  m.reservation_state(3).hot_until = 10us;
  m.reservation_state(9).hot_until = 10us;
  CpuId recent = no_cpu;
  const AnyCpu any{};
  const auto r = IdleSiblingSearch{}.search(
      SearchInput<UniformTopology, decltype(m), AnyCpu, R>{westmere, m, any, &res, 20, 1us, 0, 0, &recent});
  if constexpr (std::is_same_v<TestType, sis_cache::HalveLong2023>) {
    // 12 / 2 = 6 guarded steps, CPUs 1..6: 3 is skipped, 9 (the 9th step) taken.
    CHECK(r.cpu == 9);
    CHECK(r.reason == WakeReason::idle_scan);
    CHECK(r.reservation_skips == 1);
    CHECK(r.scanned == 9);
  } else if constexpr (std::is_same_v<TestType, sis_cache::ShortSleeps2023>) {
    CHECK(r.cpu == 3);
    CHECK(r.reason == WakeReason::hot_fallback);
    CHECK(r.reservation_skips == 2);
    CHECK(r.scanned == 12);
  } else {
    CHECK(r.cpu == 0);
    CHECK(r.reason == WakeReason::target_busy);
    CHECK(r.reservation_skips == 2);
    CHECK(r.scanned == 12);
  }
}

TEST_CASE("the search never returns an idle CPU the task may not use", "[select_idle_sibling]") {
  ScriptedMachine<> m{12};
  m.all_busy().idle(4).idle(5).idle(8);
  // Target 4 idle but not allowed; prev 5 idle and allowed -> idle_prev.
  auto mask = CpuMask::only(12, {5, 8});
  auto r = search(westmere, m, 4, 5, mask);
  CHECK(r.cpu == 5);
  CHECK(r.reason == WakeReason::idle_prev);
  // Only 8 allowed: the scan skips 5 and takes 8.
  mask = CpuMask::only(12, {8});
  r = search(westmere, m, 4, 5, mask);
  CHECK(r.cpu == 8);
  CHECK(r.reason == WakeReason::idle_scan);
  // A core with a forbidden sibling is still a whole idle core: core 2 =
  // {2, 8}, 2 idle but not allowed. The kernel's select_idle_core() tests
  // every sibling for idleness, whatever the task's mask; the mask only
  // decides which CPU the walk meets and returns (8). (This case expected
  // idle_scan before, when the library also required every sibling to be
  // allowed.)
  m.idle(2);
  r = search(westmere, m, 4, 5, mask);
  CHECK(r.cpu == 8);
  CHECK(r.reason == WakeReason::idle_core);
}

TEST_CASE("every wake reason has a name", "[select_idle_sibling]") {
  for (int r = 0; r <= static_cast<int>(WakeReason::idle_smt_sibling); ++r)
    CHECK(std::string(to_string(static_cast<WakeReason>(r))) != "unknown");
}

// ---------------------------------------------------------------------------
// The kernel's select_idle_sibling() / select_idle_cpu() /
// select_idle_core() / select_idle_smt() (kernel/sched/fair.c, v6.x), one
// case per rule; each golden value follows those functions by hand.

TEST_CASE("a zero SIS_UTIL budget ends the search before any walk, idle-core hint or not", "[select_idle_sibling][kernel]") {
  // Kernel: select_idle_cpu() reads nr = nr_idle_scan + 1 and returns -1
  // at once when nr == 1 ("overloaded LLC is unlikely to have idle
  // cpu/core"), before the walk and before set_idle_cores(): the hint stays.
  ScriptedMachine<true, true> m{12};
  m.all_busy().idle(3).idle(9).utilization(90).idle_core_hint(true);  // budget 0
  const auto r = search(westmere, m, 0, 0);
  CHECK(r.cpu == 0);
  CHECK(r.reason == WakeReason::target_busy);
  CHECK(r.scanned == 0);
  CHECK(m.has_idle_core(0));
  CHECK(m.idle_core_clears() == 0);
  // The fast paths come first: an idle prev still wins.
  CHECK(search(westmere, m, 0, 3).reason == WakeReason::idle_prev);
}

TEST_CASE("the walk covers only the CPUs the task may use, and counts only those", "[select_idle_sibling][kernel]") {
  // Kernel: select_idle_cpu() walks cpumask_and(LLC span, p->cpus_ptr),
  // and the SIS_UTIL budget counts the CPUs of that walk. LLC {0..9} at
  // 50%: budget 6. The task may use 0, 7, 8, 9; only 9 is idle. The walk
  // from target 0 is 7, 8, 9: found at the third step. (Walking all CPUs
  // and testing the mask inside would spend the budget on 1..6.)
  ScriptedMachine<true> m{80};
  m.all_busy().utilization(50).idle(9);
  const auto mask = CpuMask::only(80, {0, 7, 8, 9});
  const auto r = search(eight, m, 0, 0, mask);
  CHECK(r.cpu == 9);
  CHECK(r.reason == WakeReason::idle_scan);
  CHECK(r.scanned == 3);
  // Nothing idle among the allowed CPUs: the walk ends after its 3 CPUs + the target.
  m.busy(9).idle(5);
  const auto none = search(eight, m, 0, 0, mask);
  CHECK(none.reason == WakeReason::target_busy);
  CHECK(none.scanned == 4);  // 7, 8, 9, 0
}

TEST_CASE("an idle core is one whose siblings are all idle, whatever the mask", "[select_idle_sibling][kernel]") {
  // Kernel: select_idle_core() tests available_idle_cpu() on every CPU of
  // cpu_smt_mask(core); the mask only limits the walk and idle_cpu. The
  // task may use 9 only; core {3, 9} is idle: 9 is returned as an idle
  // core, with the hint set.
  ScriptedMachine<false, true> m{12};
  m.all_busy().idle(3).idle(9).idle_core_hint(true);
  const auto r = search(westmere, m, 0, 0, CpuMask::only(12, {9}));
  CHECK(r.cpu == 9);
  CHECK(r.reason == WakeReason::idle_core);
  CHECK(r.scanned == 1);
}

TEST_CASE("the core walk meets each core at its first CPU from target + 1 and returns that CPU", "[select_idle_sibling][kernel]") {
  // Kernel: for_each_cpu_wrap(cpu, cpus, target + 1) calls
  // select_idle_core(p, cpu, ...) and returns `cpu` for an idle core; a
  // core that is not idle leaves the walk (cpumask_andnot). Westmere
  // numbers siblings last, core k = {k, k + 6}. Target 4: the walk meets 5
  // (core {5, 11}), 6 ({0, 6}), 7 ({1, 7}): core {1, 7} is idle and 7 is
  // returned, not 1, and before core {2, 8} (idle too), which testing each
  // core at its lowest CPU in wrap order (... 11, 0, 1) would not do.
  ScriptedMachine<false, true> m{12};
  m.all_busy().idle(1).idle(7).idle(2).idle(8).idle_core_hint(true);
  const auto r = search(westmere, m, 4, 4);
  CHECK(r.cpu == 7);
  CHECK(r.reason == WakeReason::idle_core);
  CHECK(r.scanned == 3);  // cores {5, 11}, {0, 6}, {1, 7}
  // Nested numbering (core k = {2k, 2k + 1}), target 4: the walk meets 5
  // first, its core {4, 5} holds the busy target; then 6 ({6, 7}), idle.
  const UniformTopology nested{1, 1, 6, 2, CpuNumbering::nested};
  ScriptedMachine<false, true> n{12};
  n.all_busy().idle(5).idle(6).idle(7).idle_core_hint(true);
  const auto q = search(nested, n, 4, 4);
  CHECK(q.cpu == 6);
  CHECK(q.reason == WakeReason::idle_core);
  CHECK(q.scanned == 2);
}

TEST_CASE("no whole idle core although hinted: the first idle CPU the core walk met, and the hint cleared", "[select_idle_sibling][kernel]") {
  // Kernel: select_idle_core() records idle_cpu, the first idle allowed
  // CPU among a core's siblings in ascending order; select_idle_cpu()
  // returns it after the walk and calls set_idle_cores(target, false).
  // Target 0: the walk meets 1 first, core {1, 7}: 1 busy, 7 idle ->
  // idle_cpu = 7, although 2 (core {2, 8}, 8 busy) comes first in CPU order.
  ScriptedMachine<false, true> m{12};
  m.all_busy().idle(7).idle(2).idle_core_hint(true);
  const auto r = search(westmere, m, 0, 0);
  CHECK(r.cpu == 7);
  CHECK(r.reason == WakeReason::idle_scan);
  CHECK(r.scanned == 6);  // the 6 cores, each once
  CHECK_FALSE(m.has_idle_core(0));
  CHECK(m.idle_core_clears() == 1);
  // A whole idle core found: the hint stays.
  m.idle_core_hint(true).idle(8);
  CHECK(search(westmere, m, 0, 0).reason == WakeReason::idle_core);
  CHECK(m.has_idle_core(0));
  CHECK(m.idle_core_clears() == 1);
}

TEST_CASE("select_idle_smt: an idle sibling of prev before the LLC walk", "[select_idle_sibling][kernel]") {
  // Kernel (v5.13+): in select_idle_sibling(), after the target, prev and
  // recent_used_cpu checks, with SMT active, test_idle_cores(target) false
  // and prev sharing the target's cache, select_idle_smt(p, sd, prev)
  // returns an idle allowed sibling of prev in the target's LLC. Target 0,
  // prev 1 (both busy), prev's sibling 7 idle; the LLC walk would find 2.
  ScriptedMachine<true, true> m{12};
  m.all_busy().idle(7).idle(2).idle_core_hint(false);
  auto r = search(westmere, m, 0, 1);
  CHECK(r.cpu == 7);
  CHECK(r.reason == WakeReason::idle_smt_sibling);
  CHECK(r.scanned == 0);
  // Before select_idle_cpu(): a zero budget does not stop it.
  m.utilization(95);
  CHECK(search(westmere, m, 0, 1).cpu == 7);
  m.utilization(0);
  // The recent CPU is checked first.
  CpuId recent = 2;
  r = search(westmere, m, 0, 1, recent);
  CHECK(r.cpu == 2);
  CHECK(r.reason == WakeReason::idle_recent);
  // The hint set: no select_idle_smt, the core walk (no whole idle core:
  // its first idle CPU, 7, met with core {1, 7}; 1 comes first from 0).
  m.idle_core_hint(true);
  r = search(westmere, m, 0, 1);
  CHECK(r.cpu == 7);
  CHECK(r.reason == WakeReason::idle_scan);
  // A sibling the task may not use is not taken: the CPU walk finds 2.
  m.idle_core_hint(false);
  r = search(westmere, m, 0, 1, CpuMask::only(12, {0, 1, 2}));
  CHECK(r.cpu == 2);
  CHECK(r.reason == WakeReason::idle_scan);
  // prev in another LLC: no select_idle_smt (cpus_share_cache(prev,
  // target) false). two_node_80cpu: an LLC per node, core g = {g, g + 40};
  // prev 20's core {20, 60} is in node 1, target 0's LLC is node 0's.
  const UniformTopology two = presets::two_node_80cpu();
  ScriptedMachine<true, true> w{80};
  w.all_busy().idle_core_hint(false).idle(60);
  r = search(two, w, 0, 20);
  CHECK(r.reason == WakeReason::target_busy);
  // Without SMT there is no select_idle_smt either (search_idle_core off
  // reads as an SMT-less machine, as sched_smt_active() false).
  IdleSiblingSearch no_smt;
  no_smt.search_idle_core = false;
  r = search(westmere, m, 0, 1, AnyCpu{}, no_smt);
  CHECK(r.cpu == 2);
  CHECK(r.reason == WakeReason::idle_scan);
}
