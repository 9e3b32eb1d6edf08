// WakeAffine2008 (placer/wake_affine.hpp): the 2008 kernels' wake_affine()
// with the avg_overlap gate on sync wake-ups, in its three variants of
// Smith 2008 (2.6.25/2.6.26-rc unchecked, the 2.6.26 balanced fix, the hint
// ignored with SYNC_WAKEUPS off), and its composition in traits::Linux2008.
// Golden values are the rule's formulas worked by hand:
//   this = load(waking) - waker (sync), balanced = 100 * (this + wakee)
//   <= (100 + (pct - 100) / 2) * load(prev).
#include <catch2/catch.hpp>

#include <chrono>
#include <cstdint>
#include <limits>

#include "taskplace/placer/wake_affine.hpp"
#include "taskplace/testing/machine.hpp"
#include "taskplace/topology/uniform.hpp"
#include "taskplace/wake_placer.hpp"

using namespace taskplace;
using namespace std::chrono_literals;
using testing::ScriptedMachine;

namespace {
// q6600_2008: two LLCs {0, 1} and {2, 3}, no SMT (the 2008 imbalance_pct
// 125 -> 112).
// westmere_12cpu_2013: CPU c and c + 6 are SMT siblings (110 -> 105).
const UniformTopology q6600 = presets::q6600_2008();
const UniformTopology westmere = presets::westmere_12cpu_2013();

struct Case {
  CpuId waking = 0, prev = 2;
  bool sync = true;
  std::uint64_t wakee = 1024, waker = 1024;
  Nanoseconds waker_overlap = 0ns, wakee_overlap = 0ns;
};

template <class V, class T, class M>
AffineDecision decide(const T& t, const M& m, Case c, WakeAffine2008<V> a = {}) {
  return a.decide(AffineInput<T, M>{t, m, c.waking, c.prev, c.sync, c.wakee, c.waker,
                                    c.waker_overlap, c.wakee_overlap});
}
using sync_affine::Unchecked2008;
using sync_affine::Balanced2008;
using sync_affine::Ignored2008;
}  // namespace

TEST_CASE("2.6.25's unchecked rule pulls a short-overlap sync wakee onto a loaded CPU", "[wake_affine_2008]") {
  // Smith 2008's regression: the client's CPU runs 4 tasks, prev is idle.
  ScriptedMachine<> m{4};
  m.busy(0, 4, 4096);
  auto d = decide<Unchecked2008>(q6600, m, {});
  CHECK(d.target == 0);
  CHECK(d.reason == AffineReason::sync_overlap);
  // The 2.6.26 fix: this = 4096 - 1024 = 3072; 100 * 4096 <= 112 * 0 is
  // false, so no pull; then 3072 <= 0 fails and it is not balanced: prev.
  d = decide<Balanced2008>(q6600, m, {});
  CHECK(d.target == 2);
  CHECK(d.reason == AffineReason::load_prev);
  // SYNC_WAKEUPS off: the hint is ignored, the waker is not discounted: prev.
  d = decide<Ignored2008>(q6600, m, {});
  CHECK(d.target == 2);
  CHECK(d.reason == AffineReason::load_prev);
}

TEST_CASE("the balanced fix still pulls when the waker is all the waking CPU carries", "[wake_affine_2008]") {
  ScriptedMachine<> m{4};
  m.busy(0, 1, 1024).busy(2, 1, 1024);
  // this = 1024 - 1024 = 0; 100 * (0 + 1024) = 102400 <= 112 * 1024 = 114688.
  CHECK(decide<Balanced2008>(q6600, m, {}).reason == AffineReason::sync_overlap);
  CHECK(decide<Unchecked2008>(q6600, m, {}).reason == AffineReason::sync_overlap);
  // Ignored2008: this = 1024; 100 * 2048 = 204800 > 114688; 1024 <= 1024 but
  // 1024 + 1024 > 1024 per task: prev.
  CHECK(decide<Ignored2008>(q6600, m, {}).reason == AffineReason::load_prev);
}

TEST_CASE("the overlap gate is strict at migration_cost and needs both tasks", "[wake_affine_2008]") {
  ScriptedMachine<> m{4};
  m.busy(0, 3, 3072);  // prev idle: only the overlap pull can take the waking CPU
  Case c;
  c.waker_overlap = 499'999ns;
  c.wakee_overlap = 499'999ns;
  CHECK(decide<Unchecked2008>(q6600, m, c).reason == AffineReason::sync_overlap);
  c.waker_overlap = 500us;  // kernel: avg_overlap < sysctl_sched_migration_cost
  CHECK(decide<Unchecked2008>(q6600, m, c).reason == AffineReason::load_prev);
  c.waker_overlap = 0ns;
  c.wakee_overlap = 500us;
  CHECK(decide<Unchecked2008>(q6600, m, c).reason == AffineReason::load_prev);
  // Unknown overlaps (the AffineInput default) never count as short.
  c.wakee_overlap = Nanoseconds::max();
  c.waker_overlap = Nanoseconds::max();
  CHECK(decide<Unchecked2008>(q6600, m, c).reason == AffineReason::load_prev);
  // Not sync: no overlap pull either.
  c = Case{};
  c.sync = false;
  CHECK(decide<Unchecked2008>(q6600, m, c).reason == AffineReason::load_prev);
  // migration_cost is a tunable of the rule: 100 us makes 200 us long.
  c = Case{};
  c.waker_overlap = 200us;
  CHECK(decide<Unchecked2008>(q6600, m, c, {.migration_cost = 100us}).reason == AffineReason::load_prev);
  CHECK(decide<Unchecked2008>(q6600, m, c).reason == AffineReason::sync_overlap);
}

TEST_CASE("the 2008 load test: a light waking CPU, or balanced, pulls", "[wake_affine_2008]") {
  ScriptedMachine<> m{4};
  Case c;
  c.sync = false;
  // Both idle: this 0 <= prev 0 and 0 + 0 <= 0 per task (no task running): pull.
  CHECK(decide<Balanced2008>(q6600, m, c).reason == AffineReason::load_waking);
  // waking 2048 over 2 tasks (1024 each), prev 2048: 2048 <= 2048 but
  // 4096 > 1024; balanced: 100 * (2048 + 1024) = 307200 > 112 * 2048 = 229376: prev.
  m.busy(0, 2, 2048).busy(2, 2, 2048);
  CHECK(decide<Balanced2008>(q6600, m, c).reason == AffineReason::load_prev);
  // A weightless wakee: 204800 <= 229376, balanced: pull.
  c.wakee = 0;
  CHECK(decide<Balanced2008>(q6600, m, c).reason == AffineReason::load_waking);
}

TEST_CASE("a waking CPU that runs nothing counts one task's weight per task", "[wake_affine_2008]") {
  // cpu_avg_load_per_task: 1024 with nothing running. Idle waking CPU, prev
  // 900: this 0 <= 900 and 0 + 900 <= 1024: pull, although 100 * (0 +
  // 1024) = 102400 > 112 * 900 = 100800 is not balanced. With a per-task
  // figure of 0 the wakee would stay.
  ScriptedMachine<> m{4};
  m.busy(2, 1, 900);
  Case c;
  c.sync = false;
  CHECK(decide<Balanced2008>(q6600, m, c).reason == AffineReason::load_waking);
  // A waking CPU running one task of 1024 against prev 900: 1024 > 900
  // fails the first rule and 100 * 2048 > 100800 the balance: prev.
  m.busy(0, 1, 1024);
  CHECK(decide<Balanced2008>(q6600, m, c).reason == AffineReason::load_prev);
}

TEST_CASE("the balance test is inclusive and uses 5% between SMT siblings", "[wake_affine_2008]") {
  ScriptedMachine<> m{12};
  Case c;
  c.waking = 0;
  c.prev = 6;  // siblings: 100 + (110 - 100) / 2 = 105
  c.waker_overlap = 1s;  // long: only the balance decides
  // prev 2000: 105 * 2000 = 210000. this = load(0) - 1024.
  m.busy(6, 2, 2000).busy(0, 2, 2100);  // 100 * (1076 + 1024) = 210000 <= 210000
  CHECK(decide<Balanced2008>(westmere, m, c).reason == AffineReason::load_waking);
  m.busy(0, 2, 2101);  // 210100 > 210000
  CHECK(decide<Balanced2008>(westmere, m, c).reason == AffineReason::load_prev);
  // The same loads between non-siblings 0 and 1: 112 * 2000 = 224000, pulls.
  c.prev = 1;
  m.busy(1, 2, 2000);
  CHECK(decide<Balanced2008>(westmere, m, c).reason == AffineReason::load_waking);
}

TEST_CASE("the 2008 rule clamps the waker's discount and huge loads", "[wake_affine_2008]") {
  ScriptedMachine<> m{4};
  constexpr auto huge = std::numeric_limits<std::uint64_t>::max();
  Case c;
  c.waker_overlap = 1s;
  // The waker weighs more than the waking CPU's load: this clamps at 0
  // instead of wrapping; 100 * 1024 <= 112 * 1024: pull.
  m.busy(0, 1, 10).busy(2, 1, 1024);
  c.waker = 5000;
  CHECK(decide<Balanced2008>(q6600, m, c).reason == AffineReason::load_waking);
  // Loads clamp at 2^48: 100 * (2^48 - 1024 + 1024) <= 112 * 2^48, no overflow.
  m.busy(0, 2, huge).busy(2, 2, huge);
  c.waker = 1024;
  CHECK(decide<Balanced2008>(q6600, m, c).reason == AffineReason::load_waking);
}

TEST_CASE("the 2008 balance test is exact for any imbalance_pct", "[wake_affine_2008]") {
  // Found by the policies fuzz target: pct 3,590,324,224 makes the factor
  // 1,795,162,162; times prev's clamped 2^48 that is ~2^78, which a 64-bit
  // product wrapped, and the rule kept prev although 100 * (this + wakee)
  // is far smaller.
  ScriptedMachine<> m{4};
  constexpr auto huge = std::numeric_limits<std::uint64_t>::max();
  m.busy(0, 1, huge).busy(2, 1, std::uint64_t{60472006713393601});
  Case c;
  c.sync = false;
  c.waking = 0;
  c.prev = 2;
  // this = 2^48 (clamped), + 1024, * 100 ~ 2^54.6 <= ~2^78: balanced, pull.
  CHECK(decide<Balanced2008>(q6600, m, c, {.imbalance_pct = 3'590'324'224u}).reason == AffineReason::load_waking);
  // The default factor 112: 100 * 2^48 + 102400 <= 112 * 2^48 against a
  // prev clamped at 2^48: balanced too.
  m.busy(2, 1, huge);
  CHECK(decide<Balanced2008>(q6600, m, c).reason == AffineReason::load_waking);
  // A light prev is not: 100 * (2^48 + 1024) > 112 * 1000, and 2^48 > 1000.
  m.busy(2, 1, 1000);
  CHECK(decide<Balanced2008>(q6600, m, c).reason == AffineReason::load_prev);
}

TEST_CASE("traits::Linux2008 measures overlaps through the placer", "[wake_affine_2008]") {
  using Placer = WakePlacer<UniformTopology, traits::Linux2008<Unchecked2008>>;
  static_assert(Placer::tracking_overlap && !WakePlacer<UniformTopology>::tracking_overlap);
  static_assert(std::is_empty_v<WakePlacer<UniformTopology>::overlap_policy::state>);
  Placer placer{q6600};
  ScriptedMachine<> m{4};
  m.busy(0, 3, 3072);  // the waker's CPU is loaded, prev idle
  Placer::task_state a, b;
  const auto wake = [&](Nanoseconds now) {
    return placer.place({.waker = &a, .waker_key = 1, .wakee = &b, .wakee_key = 2,
                         .waking_cpu = 0, .prev_cpu = 2, .sync = true},
                        m, now);
  };
  // Both start short (0): the unchecked rule pulls onto the loaded CPU.
  auto p = wake(1ms);
  CHECK(p.cpu == 0);
  CHECK(p.affine == AffineReason::sync_overlap);
  CHECK(p.reason == WakeReason::no_search);
  // The waker runs on 600 us after each wake-up; at its 14th sleep its
  // average reaches 507,471 ns (see overlap_tracker.test.cpp).
  placer.task_sleeps(a, 1ms + 600us);
  for (int k = 2; k <= 13; ++k) {
    const Nanoseconds t{k * 1'000'000LL};
    CHECK(wake(t).affine == AffineReason::sync_overlap);
    placer.task_sleeps(a, t + 600us);
  }
  CHECK(OverlapTracker::average(a.overlap) == 494253ns);
  CHECK(wake(14ms).affine == AffineReason::sync_overlap);
  placer.task_sleeps(a, 14ms + 600us);
  CHECK(OverlapTracker::average(a.overlap) == 507471ns);
  p = wake(15ms);  // the waker is no longer "about to sleep": prev stays
  CHECK(p.cpu == 2);
  CHECK(p.affine == AffineReason::load_prev);
  // The wakee, which never woke anyone, is still short.
  CHECK(OverlapTracker::average(b.overlap) == 0ns);
  // A wake-up from outside any task (no waker) never takes the overlap pull.
  p = placer.place({.wakee = &b, .wakee_key = 2, .waking_cpu = 0, .prev_cpu = 2, .sync = true}, m, 16ms);
  CHECK(p.affine == AffineReason::load_prev);
  CHECK(testing::check_placement(q6600, m, AnyCpu{},
                                 {.waking_cpu = 0, .prev_cpu = 2, .search_enabled = false, .sync = true}, p)
            .empty());
}
