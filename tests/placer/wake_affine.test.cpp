// Decision table of the affine step (placer/wake_affine.hpp): every
// AffineReason of WakeAffine, the load test on both sides of the 8% and the
// SMT 5% bias, the sync variant, and the two baselines.
#include <catch2/catch.hpp>

#include <cstdint>
#include <limits>

#include "taskplace/placer/wake_affine.hpp"
#include "taskplace/testing/machine.hpp"
#include "taskplace/topology/uniform.hpp"

using namespace taskplace;
using testing::ScriptedMachine;

namespace {
// westmere_12cpu_2013: one LLC of 12 CPUs, 6 cores, CPU c and c + 6 are SMT
// siblings. q6600_2008: two LLCs {0, 1} and {2, 3}, no SMT.
const UniformTopology westmere = presets::westmere_12cpu_2013();
const UniformTopology q6600 = presets::q6600_2008();

template <class T, class M>
AffineDecision decide(const T& t, const M& m, CpuId waking, CpuId prev, bool sync = false,
                      std::uint64_t wakee = 1024, std::uint64_t waker = 1024,
                      WakeAffine a = {}) {
  return a.decide(AffineInput<T, M>{t, m, waking, prev, sync, wakee, waker});
}
}  // namespace

TEST_CASE("the idle test prefers an idle prev that shares the waking CPU's cache", "[wake_affine]") {
  ScriptedMachine<> m{12};
  // wake_affine_idle(): waking idle and sharing cache with prev -> prev if idle.
  auto d = decide(westmere, m, 0, 1);
  CHECK(d.target == 1);
  CHECK(d.reason == AffineReason::idle_prev);
  // ... else the waking CPU.
  m.busy(1);
  d = decide(westmere, m, 0, 1);
  CHECK(d.target == 0);
  CHECK(d.reason == AffineReason::idle_waking);
}

TEST_CASE("an idle waking CPU in another LLC does not take the idle shortcut", "[wake_affine]") {
  ScriptedMachine<> m{4};
  m.busy(2, 1, 1024);
  // 0 idle but does not share cache with 2: the load test decides. The
  // wakee's own 1024 is all of prev's load: (0 + 1024) * 100 < (1024 - 1024)
  // * 108 is false, prev stays.
  const auto d = decide(q6600, m, 0, 2);
  CHECK(d.target == 2);
  CHECK(d.reason == AffineReason::load_prev);
}

TEST_CASE("a sync wake-up from a CPU running only the waker pulls", "[wake_affine]") {
  ScriptedMachine<> m{12};
  m.busy(0, 1).busy(1, 3);
  // sync && nr_running(waking) == 1 -> waking.
  auto d = decide(westmere, m, 0, 1, true);
  CHECK(d.target == 0);
  CHECK(d.reason == AffineReason::sync);
  // Not sync: the same machine goes to the load test.
  d = decide(westmere, m, 0, 1, false);
  CHECK(d.reason != AffineReason::sync);
  // Two tasks on the waking CPU: the sync shortcut does not apply; prev idle wins.
  m.busy(0, 2).idle(1);
  d = decide(westmere, m, 0, 1, true);
  CHECK(d.target == 1);
  CHECK(d.reason == AffineReason::prev_idle);
}

TEST_CASE("an idle prev wins over a busy waking CPU", "[wake_affine]") {
  ScriptedMachine<> m{12};
  m.busy(0, 2);
  const auto d = decide(westmere, m, 0, 5);
  CHECK(d.target == 5);
  CHECK(d.reason == AffineReason::prev_idle);
}

TEST_CASE("the load test pulls only below prev's load with the 8% bias", "[wake_affine]") {
  ScriptedMachine<> m{12};
  // CPUs 0 and 1 are different cores of one LLC: imbalance_pct 117, half of
  // 17 is 8, so prev_eff = (load(prev) - wakee) * 108.
  // wakee_load 0: pull iff load(0) * 100 < 1000 * 108 = 108000.
  m.busy(1, 2, 1000);
  m.busy(0, 2, 1079);  // 107900 < 108000: pull
  CHECK(decide(westmere, m, 0, 1, false, 0).reason == AffineReason::load_waking);
  m.busy(0, 2, 1080);  // 108000 < 108000 is false: keep prev
  const auto d = decide(westmere, m, 0, 1, false, 0);
  CHECK(d.reason == AffineReason::load_prev);
  CHECK(d.target == 1);
  // wakee_load 1024, load(prev) 3072: prev_eff = 2048 * 108 = 221184;
  // this_eff = (load(0) + 1024) * 100: 1187 -> 221100 pulls, 1188 -> 221200 keeps.
  m.busy(1, 3, 3072).busy(0, 2, 1187);
  CHECK(decide(westmere, m, 0, 1).reason == AffineReason::load_waking);
  m.busy(0, 2, 1188);
  CHECK(decide(westmere, m, 0, 1).reason == AffineReason::load_prev);
}

TEST_CASE("between SMT siblings the load test uses the 5% bias", "[wake_affine]") {
  ScriptedMachine<> m{12};
  // CPUs 0 and 6 are siblings: smt_imbalance_pct 110, bias (110 - 100) / 2 = 5.
  // wakee 0, load(prev) 1000: pull iff load(0) * 100 < 105000.
  m.busy(6, 2, 1000).busy(0, 2, 1049);
  CHECK(decide(westmere, m, 0, 6, false, 0).reason == AffineReason::load_waking);
  m.busy(0, 2, 1050);
  CHECK(decide(westmere, m, 0, 6, false, 0).reason == AffineReason::load_prev);
  // The same loads between non-siblings 0 and 1 (8% bias) still pull:
  // 105000 < 108000.
  m.busy(1, 2, 1000);
  CHECK(decide(westmere, m, 0, 1, false, 0).reason == AffineReason::load_waking);
}

TEST_CASE("a sync load test discounts the waker and pulls when it is all the load", "[wake_affine]") {
  ScriptedMachine<> m{12};
  // nr_running(0) == 2 so the sync shortcut is off; prev busy.
  // waker_load 1024 > load(0) 500: the waker leaves an (almost) empty CPU: pull.
  m.busy(0, 2, 500).busy(1, 2, 1024);
  CHECK(decide(westmere, m, 0, 1, true).reason == AffineReason::load_waking);
  // load(0) 3000 - waker 1024 = 1976, + wakee 1024 = 3000 -> this_eff 300000.
  // prev_eff = (load(1) - 1024) * 108: 3802 -> 2778 * 108 = 300024 pulls,
  // 3801 -> 2777 * 108 = 299916 keeps.
  m.busy(0, 2, 3000).busy(1, 2, 3802);
  CHECK(decide(westmere, m, 0, 1, true).reason == AffineReason::load_waking);
  m.busy(1, 2, 3801);
  CHECK(decide(westmere, m, 0, 1, true).reason == AffineReason::load_prev);
}

TEST_CASE("huge loads are clamped instead of overflowing", "[wake_affine]") {
  ScriptedMachine<> m{12};
  constexpr auto huge = std::numeric_limits<std::uint64_t>::max();
  // Both clamp to 2^48: 2^48 * 100 < 2^48 * 108, a pull; no wrap-around.
  m.busy(0, 2, huge).busy(1, 2, huge);
  CHECK(decide(westmere, m, 0, 1, false, 0).reason == AffineReason::load_waking);
  // A huge wakee on a light prev: prev_less is 0, never negative: keep prev.
  m.busy(0, 2, 0).busy(1, 2, 10);
  CHECK(decide(westmere, m, 0, 1, false, huge).reason == AffineReason::load_prev);
}

TEST_CASE("an imbalance_pct near UINT32_MAX does not overflow the load test", "[wake_affine]") {
  ScriptedMachine<> m{4};
  // pct 2^31 - 100 makes the factor 100 + (2^31 - 200) / 2 = 2^30; with
  // prev's load 2^40 (wakee 0) prev's side is 2^70, which a 64-bit product
  // wraps to 0, so the wakee stayed on prev. The waking side, 2^40 * 100,
  // is far below 2^70: pull.
  m.busy(0, 2, std::uint64_t{1} << 40).busy(2, 2, std::uint64_t{1} << 40);
  CHECK(decide(q6600, m, 0, 2, false, 0, 1024, WakeAffine{.imbalance_pct = 2'147'483'548u}).reason ==
        AffineReason::load_waking);
  // The largest factor (2,147,483,697) with loads clamped at 2^48: 2^48
  // times it wrapped to 49 * 2^48, below the waking side's 100 * 2^48.
  constexpr auto huge = std::numeric_limits<std::uint64_t>::max();
  m.busy(0, 2, huge).busy(2, 2, huge);
  CHECK(decide(q6600, m, 0, 2, false, 0, 1024, WakeAffine{.imbalance_pct = UINT32_MAX}).reason ==
        AffineReason::load_waking);
}

TEST_CASE("imbalance_pct is a tunable of the policy object", "[wake_affine]") {
  ScriptedMachine<> m{12};
  m.busy(0, 2, 1000).busy(1, 2, 1000);
  // Default 8% bias: 100000 < 108000 pulls.
  CHECK(decide(westmere, m, 0, 1, false, 0).reason == AffineReason::load_waking);
  // imbalance_pct 100: no bias, a tie keeps prev.
  CHECK(decide(westmere, m, 0, 1, false, 0, 0, WakeAffine{.imbalance_pct = 100}).reason ==
        AffineReason::load_prev);
  // ... unless the wake-up is sync: the kernel adds 1 to prev's side
  // (v4.16), so the tie goes to the waking CPU. load(0) 2048 - waker 1024
  // = 1024 -> 102400 against prev's 1024 * 100 = 102400, + 1.
  m.busy(0, 2, 2048).busy(1, 2, 1024);
  CHECK(decide(westmere, m, 0, 1, true, 0, 1024, WakeAffine{.imbalance_pct = 100}).reason ==
        AffineReason::load_waking);
  CHECK(decide(westmere, m, 0, 1, false, 0, 1024, WakeAffine{.imbalance_pct = 100}).reason ==
        AffineReason::load_prev);  // 204800 against 102400
}

TEST_CASE("the baselines always and never pull", "[wake_affine]") {
  ScriptedMachine<> m{12};
  m.busy(0, 5, 9000);
  const AffineInput<UniformTopology, ScriptedMachine<>> in{westmere, m, 0, 1};
  CHECK(affine::Always{}.decide(in).target == 0);
  CHECK(affine::Always{}.decide(in).reason == AffineReason::forced_waking);
  CHECK(affine::Never{}.decide(in).target == 1);
  CHECK(affine::Never{}.decide(in).reason == AffineReason::forced_prev);
  static_assert(wide::Never::wide(1000, 1000, 1) == false);
  static_assert(wide::Always::wide(0, 0, 1000) == true);
}

TEST_CASE("every affine reason has a name", "[wake_affine]") {
  for (int r = 0; r <= static_cast<int>(AffineReason::sync_overlap); ++r)
    CHECK(std::string(to_string(static_cast<AffineReason>(r))) != "unknown");
}
