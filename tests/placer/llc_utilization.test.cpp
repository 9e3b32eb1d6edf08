// LlcUtilizationSample (placer/llc_utilization.hpp): the busy share of an
// LLC counted at most once a period, the edges of the period, a clock that
// goes backwards, "no time", and the budget the search derives from it.
#include <catch2/catch.hpp>

#include <cstdint>
#include <vector>

#include "taskplace/placer/llc_utilization.hpp"
#include "taskplace/placer/select_idle_sibling.hpp"
#include "taskplace/topology/uniform.hpp"

using namespace taskplace;
using namespace std::chrono_literals;

namespace {
// An LLC of four CPUs whose busy flags the test sets, and a count of the
// flags read (one per CPU per sample).
struct Llc {
  std::vector<CpuId> cpus{4, 5, 6, 7};
  bool busy[8] = {};
  int reads = 0;
  std::uint32_t read(LlcUtilizationSample& s, Nanoseconds now, Nanoseconds period = 4ms) {
    return s.read(cpus, [this](CpuId c) { return ++reads, busy[c]; }, now, period);
  }
};
}  // namespace

TEST_CASE("a sample stands for a period, then the LLC is counted again", "[llc_utilization]") {
  LlcUtilizationSample s;
  Llc llc;
  CHECK(s.taken_at() == Nanoseconds::min());
  llc.busy[5] = true;
  CHECK(llc.read(s, 10ms) == 25);  // 1 of 4 busy
  CHECK(llc.reads == 4);
  CHECK(s.taken_at() == 10ms);
  llc.busy[6] = llc.busy[7] = true;
  CHECK(llc.read(s, 10ms) == 25);  // same time: the sample
  CHECK(llc.read(s, 13ms + 999us) == 25);  // 1 ns short of the 4 ms period
  CHECK(llc.reads == 4);  // no CPU read since
  CHECK(llc.read(s, 14ms) == 75);  // the period has passed: counted again
  CHECK(llc.reads == 8);
  CHECK(s.pct() == 75);
  CHECK(s.taken_at() == 14ms);
  llc.busy[4] = true;
  CHECK(llc.read(s, 20ms) == 100);
}

TEST_CASE("a time before the sample, no time, and a period of zero all count again",
          "[llc_utilization]") {
  LlcUtilizationSample s;
  Llc llc;
  llc.busy[4] = true;
  CHECK(llc.read(s, 1h) == 25);
  llc.busy[4] = false;
  // A clock read on another CPU may be behind the sample's: the sample
  // does not stand for an earlier time, so it is taken again (and the
  // earlier time becomes its time: elapsed() counts backwards as zero).
  CHECK(llc.read(s, 1h - 1ms) == 0);
  CHECK(s.taken_at() == 1h - 1ms);
  llc.busy[4] = true;
  CHECK(llc.read(s, Nanoseconds::max()) == 25);  // no time: always a fresh count
  llc.busy[4] = false;
  CHECK(llc.read(s, Nanoseconds::max()) == 0);
  llc.busy[4] = true;
  CHECK(llc.read(s, 2h, 0ns) == 25);  // a period of zero: every call counts
  llc.busy[4] = false;
  CHECK(llc.read(s, 2h, 0ns) == 0);
  CHECK(llc.read(s, 2h, -1ms) == 0);
}

TEST_CASE("an empty LLC reads 0 and stores nothing", "[llc_utilization]") {
  LlcUtilizationSample s;
  std::vector<CpuId> none;
  CHECK(s.read(none, [](CpuId) { return true; }, 5ms, 4ms) == 0);
  CHECK(s.taken_at() == Nanoseconds::min());
}

TEST_CASE("the sample feeds the SIS_UTIL budget of a whole LLC", "[llc_utilization]") {
  // westmere_12cpu_2013: one LLC of 12 CPUs. 6 of 12 busy = 50%:
  // 12 * (1 - (1.17 * 0.5)^2) = 12 * 0.657775 = 7 CPUs (select_idle_sibling.hpp).
  const UniformTopology t = presets::westmere_12cpu_2013();
  LlcUtilizationSample s;
  const auto pct = s.read(t.llc_cpus(3), [](CpuId c) { return c < 6; }, 1ms, 4ms);
  CHECK(pct == 50);
  CHECK(sis_util_budget(12, pct) == 7);
  // Every CPU sees the same LLC: the sample taken through CPU 3 serves CPU 11.
  CHECK(s.read(t.llc_cpus(11), [](CpuId) { return true; }, 2ms, 4ms) == 50);
}

static_assert(alignof(LlcUtilizationSample) == 64, "a line of its own");
