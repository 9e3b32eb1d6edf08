// WakeAffine2013 (placer/wake_affine.hpp): v3.12's wake_affine(). Golden
// values are its rule worked by hand, on a machine of equal cpu_power
// (q6600: LLCs {0, 1} and {2, 3}, no SMT, imbalance_pct 125 -> 112):
//   this = load(waking) - waker (sync), balanced = this <= 0 ||
//   100 * (this + wakee) <= 112 * load(prev); pull when balanced or when
//   this <= prev && this + prev <= load(waking) / nr_running(waking).
#include <catch2/catch.hpp>

#include <cstdint>
#include <limits>

#include "taskplace/placer/wake_affine.hpp"
#include "taskplace/testing/machine.hpp"
#include "taskplace/topology/uniform.hpp"

using namespace taskplace;
using testing::ScriptedMachine;

namespace {
const UniformTopology q6600 = presets::q6600_2008();
const UniformTopology westmere = presets::westmere_12cpu_2013();  // core k = {k, k + 6}

template <class T>
AffineDecision decide(const T& t, const ScriptedMachine<>& m, CpuId waking, CpuId prev, bool sync,
                      std::uint64_t wakee = 1024, std::uint64_t waker = 1024) {
  return WakeAffine2013{}.decide(AffineInput<T, ScriptedMachine<>>{t, m, waking, prev, sync, wakee, waker});
}
}  // namespace

TEST_CASE("v3.12's wake_affine has no idle test: the loads alone decide", "[wake_affine_2013]") {
  // Waking 0 idle (load 0), prev 2 idle too: this = 0, balanced: pull
  // (v4.15's wake_affine_idle() would keep the idle prev).
  ScriptedMachine<> m{4};
  CHECK(decide(q6600, m, 0, 2, false).target == 0);
  CHECK(decide(q6600, m, 0, 2, false).reason == AffineReason::load_waking);
  // Waking 0 busy (2048, two tasks), prev 2 idle: 100 * 3072 > 112 * 0,
  // and 2048 <= 0 fails: prev.
  m.busy(0, 2, 2048);
  CHECK(decide(q6600, m, 0, 2, false).reason == AffineReason::load_prev);
}

TEST_CASE("v3.12's sync wake-up takes the waker's weight off, below zero too", "[wake_affine_2013]") {
  ScriptedMachine<> m{4};
  m.busy(0, 1, 512).busy(2, 1, 4096);
  // this = 512 - 1024 = -512 <= 0: balanced, pull.
  CHECK(decide(q6600, m, 0, 2, true).target == 0);
  // Not sync: this = 512; 100 * 1536 = 153600 <= 112 * 4096 = 458752: pull.
  CHECK(decide(q6600, m, 0, 2, false).target == 0);
  // prev lighter: 153600 > 112 * 1024; 512 <= 1024 but 1536 > 512 per task: prev.
  m.busy(2, 1, 1024);
  CHECK(decide(q6600, m, 0, 2, false).target == 2);
}

TEST_CASE("v3.12's load-per-task test pulls a wake-up the balance test refuses", "[wake_affine_2013]") {
  // Waking 0 runs one task of 4096; sync with a waker of 3072: this =
  // 1024. prev 2 carries 1024. balanced: 100 * (1024 + 1024) = 204800 >
  // 112 * 1024 = 114688: no. But this <= prev (1024 <= 1024) and this +
  // prev = 2048 <= 4096 / 1: pull.
  ScriptedMachine<> m{4};
  m.busy(0, 1, 4096).busy(2, 1, 1024);
  CHECK(decide(q6600, m, 0, 2, true, 1024, 3072).target == 0);
  // Two tasks on the waking CPU: 4096 / 2 = 2048 still holds 2048: pull;
  // three: 1365 < 2048: prev.
  m.busy(0, 2, 4096);
  CHECK(decide(q6600, m, 0, 2, true, 1024, 3072).target == 0);
  m.busy(0, 3, 4096);
  CHECK(decide(q6600, m, 0, 2, true, 1024, 3072).target == 2);
  // An empty runqueue's load per task is 0 (2008's read 1024): with load
  // 512 left on it, this = 512 <= prev 1024 but 1536 > 0: prev.
  m.busy(0, 0, 512);
  CHECK(decide(q6600, m, 0, 2, false, 1024).target == 2);
}

TEST_CASE("v3.12's balance test ties toward the pull and reads 110 between SMT siblings", "[wake_affine_2013]") {
  // q6600: 100 * (this + w) == 112 * prev pulls (<=): this 96, w 16, prev 100.
  ScriptedMachine<> m{4};
  m.busy(0, 1, 96).busy(2, 1, 100);
  CHECK(decide(q6600, m, 0, 2, false, 16).target == 0);
  m.busy(2, 1, 99);  // 11200 > 11088; 96 <= 99 but 195 > 96: prev
  CHECK(decide(q6600, m, 0, 2, false, 16).target == 2);
  // westmere siblings 0 and 6: 110 -> 105; cpu_power 589 both sides.
  ScriptedMachine<> w{12};
  w.all_busy().busy(0, 1, 100).busy(6, 1, 100).busy(1, 1, 100);
  CHECK(decide(westmere, w, 0, 6, false, 5).target == 0);   // 10500 <= 10500
  CHECK(decide(westmere, w, 0, 6, false, 6).target == 6);   // 10600 > 10500; 200+... > 100: prev
  CHECK(decide(westmere, w, 0, 1, false, 5).target == 0);   // not siblings: 112 -> 10500 <= 11200
  CHECK(decide(westmere, w, 0, 1, false, 13).target == 1);  // 11300 > 11200
}

TEST_CASE("v3.12's load test clamps loads and compares exactly", "[wake_affine_2013]") {
  ScriptedMachine<> m{4};
  constexpr auto huge = std::numeric_limits<std::uint64_t>::max();
  m.busy(0, 1, huge).busy(2, 1, huge);
  // Both clamp at 2^48: 100 * (2^48 + 1024) > 112 * 2^48? No: pull.
  CHECK(decide(q6600, m, 0, 2, false).target == 0);
  CHECK(decide(q6600, m, 0, 2, false, huge).target == 2);  // 100 * 2^49 > 112 * 2^48
}
