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
  m.busy(3);
  r = search(westmere, m, 0, 0);
  CHECK(r.cpu == 1);
  CHECK(r.reason == WakeReason::idle_scan);
  CHECK(r.scanned == 12);
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
  // 90% busy: budget 0. Core 3 = {3, 9} idle and the hint says so: the
  // kernel scans the whole LLC for it regardless of the budget.
  m.all_busy().idle(3).idle(9).utilization(90).idle_core_hint(true);
  auto r = search(westmere, m, 0, 0);
  CHECK(r.cpu == 3);
  CHECK(r.reason == WakeReason::idle_core);
  // Hint false: no core search, and the budget (0) stops the CPU scan.
  m.idle_core_hint(false);
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
  // 90% busy: SIS_UTIL budget 0, but the hint widens the scan to the 12
  // CPUs. The only idle core, {3, 9}, is reserved for another task until
  // 10us (Chen 2023 treats a hot CPU as not idle in select_idle_core and in
  // the CPU scan), so it is no whole idle core for this wakee.
  using R = CacheHotReservation<TestType>;
  const R res{};
  ScriptedMachine<true, true, typename R::cpu_state> m{12};
  m.all_busy().idle(3).idle(9).utilization(90).idle_core_hint(true);
  m.reservation_state(3).hot_until = 10us;
  m.reservation_state(9).hot_until = 10us;
  CpuId recent = no_cpu;
  const AnyCpu any{};
  const auto r = IdleSiblingSearch{}.search(
      SearchInput<UniformTopology, decltype(m), AnyCpu, R>{westmere, m, any, &res, 20, 1us, 0, 0, &recent});
  CHECK(r.scanned == 12);
  if constexpr (std::is_same_v<TestType, sis_cache::HalveLong2023>) {
    // HalveLong2023 guards half the scan, CPUs 1..6 from target 0: 3 is skipped, 9
    // (the 8th looked at) is taken.
    CHECK(r.cpu == 9);
    CHECK(r.reason == WakeReason::idle_scan);
    CHECK(r.reservation_skips == 1);
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
  // A core with a forbidden sibling is not a whole idle core: core 2 =
  // {2, 8}, 2 idle but not allowed.
  m.idle(2);
  r = search(westmere, m, 4, 5, mask);
  CHECK(r.reason == WakeReason::idle_scan);
}

TEST_CASE("every wake reason has a name", "[select_idle_sibling]") {
  for (int r = 0; r <= static_cast<int>(WakeReason::current_cpu); ++r)
    CHECK(std::string(to_string(static_cast<WakeReason>(r))) != "unknown");
}
