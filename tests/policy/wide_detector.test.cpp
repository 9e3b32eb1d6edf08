// Tests for taskplace/policy/wide_detector.hpp (kernel wake_wide) and the
// wide-rule part of taskplace/testing/flip_conformance.hpp.
#include "taskplace/policy/wide_detector.hpp"

#include <catch2/catch.hpp>

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <limits>
#include <string>
#include <tuple>
#include <type_traits>

#include "taskplace/testing/flip_conformance.hpp"

using taskplace::wide::MasterOnly2017;
using taskplace::wide::Symmetric2015;
using taskplace::wide::OneSided2013;
using taskplace::WideDetector;

namespace {

constexpr std::uint32_t u32_max = std::numeric_limits<std::uint32_t>::max();

using AllRules = std::tuple<OneSided2013, Symmetric2015, MasterOnly2017>;
using SymmetricRules = std::tuple<Symmetric2015, MasterOnly2017>;

struct Row {
  std::uint32_t w, e, f;
  bool wide;
};

// Flip counts for grid tests: edges, factor-sized values, overflow edges.
constexpr std::uint32_t grid[] = {0,    1,       2,           3,        11,      12,
                                  13,   144,     155,         156,      157,     4095,
                                  4096, 4097,    1u << 20,    (1u << 20) - 1,    1u << 31,
                                  u32_max - 1,   u32_max};
constexpr std::uint32_t grid_factors[] = {1, 2, 12, 16, 256, 4096, u32_max};

}  // namespace

TEST_CASE("OneSided2013 follows e > f && w > f*e", "[wide_detector]") {
  // Each row computed by hand from v3.12's wake_wide(), OneSided2013.
  const Row rows[] = {
      {40, 2, 12, false},     // e = 2 > 12 fails: a wakee of few partners is never wide
      {300, 13, 12, true},    // 13 > 12; 300 > 12*13 = 156
      {157, 13, 12, true},    // 157 > 156
      {156, 13, 12, false},   // 156 > 156 fails: strict, unlike Symmetric2015
      {300, 12, 12, false},   // e = 12 > 12 fails: strict
      {13, 300, 12, false},   // one-sided: a worker waking its dispatcher: 13 > 3600 fails
      {0, 0, 12, false},      // nothing switches
      {3, 2, 1, true},        // f = 1: 2 > 1; 3 > 2
      {2, 2, 1, false},       // 2 > 2 fails
      {5, 1, 1, false},       // e = 1 > 1 fails
      {16781313, 4097, 4096, true},   // 4097 > 4096; 16781313 > 4096*4097 = 16781312
      {16781312, 4097, 4096, false},  // equal product: strict
      {u32_max, 4096, 4096, false},   // e = 4096 > 4096 fails
  };
  for (const Row& r : rows) {
    INFO("w=" << r.w << " e=" << r.e << " f=" << r.f);
    CHECK(OneSided2013::wide(r.w, r.e, r.f) == r.wide);
  }
}

TEST_CASE("Symmetric2015 follows lo >= f && hi >= f*lo", "[wide_detector]") {
  // Each row computed by hand from today's wake_wide(), Symmetric2015.
  const Row rows[] = {
      {40, 2, 12, false},     // lo = 2 >= 12 fails
      {300, 13, 12, true},    // lo 13 >= 12; hi 300 >= 156
      {156, 13, 12, true},    // 156 >= 156: inclusive
      {155, 13, 12, false},   // 155 >= 156 fails
      {300, 12, 12, true},    // lo = 12 >= 12: inclusive, where OneSided2013 says no
      {13, 300, 12, true},    // symmetric: hi = 300, lo = 13, where OneSided2013 says no
      {11, 300, 12, false},   // lo = 11 >= 12 fails
      {0, 0, 12, false},      // lo = 0
      {1, 1, 1, true},        // f = 1: 1 >= 1; 1 >= 1
      {0, 5, 1, false},       // lo = 0 >= 1 fails
      {16781312, 4097, 4096, true},   // 4097 >= 4096; 16781312 >= 4096*4097
      {16781311, 4097, 4096, false},  // one short of the product
      {u32_max, 4095, 4096, false},   // lo = 4095 >= 4096 fails
  };
  for (const Row& r : rows) {
    INFO("w=" << r.w << " e=" << r.e << " f=" << r.f);
    CHECK(Symmetric2015::wide(r.w, r.e, r.f) == r.wide);
  }
}

TEST_CASE("MasterOnly2017 follows hi >= f*lo", "[wide_detector]") {
  // Each row computed by hand from Fleming 2017's wake_wide(), MasterOnly2017.
  const Row rows[] = {
      {40, 2, 12, true},      // 40 >= 24
      {24, 2, 12, true},      // 24 >= 24: inclusive
      {23, 2, 12, false},     // 23 >= 24 fails
      {2, 40, 12, true},      // symmetric
      {155, 13, 12, false},   // 155 >= 156 fails
      {1, 1, 12, false},      // 1 >= 12 fails
      {0, 0, 12, true},       // lo == 0: always wide (Fleming 2017's caveat)
      {0, 5, 12, true},       // lo == 0
      {7, 0, 4096, true},     // lo == 0, any factor
      {1, 1, 1, true},        // f = 1: hi >= lo always holds
      {4096, 1, 4096, true},  // 4096 >= 4096
      {4095, 1, 4096, false}, // 4095 >= 4096 fails
      {u32_max, 1, u32_max, true},  // UINT32_MAX >= UINT32_MAX * 1
  };
  for (const Row& r : rows) {
    INFO("w=" << r.w << " e=" << r.e << " f=" << r.f);
    CHECK(MasterOnly2017::wide(r.w, r.e, r.f) == r.wide);
  }
}

TEST_CASE("flips near UINT32_MAX times factor 4096 do not overflow", "[wide_detector]") {
  // 4096 * 2^20 = 2^32 does not fit in 32 bits; computed in 32 bits it would
  // wrap to 0 and every row marked false below would read as wide.
  constexpr std::uint32_t m = 1u << 20;
  CHECK_FALSE(OneSided2013::wide(u32_max, m, 4096));       // UINT32_MAX > 2^32 fails
  CHECK(OneSided2013::wide(u32_max, m - 1, 4096));          // > 2^32 - 4096
  CHECK_FALSE(Symmetric2015::wide(u32_max, m, 4096));   // UINT32_MAX >= 2^32 fails
  CHECK(Symmetric2015::wide(u32_max, m - 1, 4096));     // >= 2^32 - 4096
  CHECK_FALSE(MasterOnly2017::wide(u32_max, m, 4096));
  CHECK(MasterOnly2017::wide(u32_max, m - 1, 4096));
  // UINT32_MAX * 4096 would wrap to 0xFFFFF000 < UINT32_MAX.
  CHECK_FALSE(Symmetric2015::wide(u32_max, u32_max, 4096));
  CHECK_FALSE(MasterOnly2017::wide(u32_max, u32_max, 4096));
  CHECK_FALSE(OneSided2013::wide(u32_max, u32_max, 4096));
  // UINT32_MAX squared would wrap to 1.
  CHECK_FALSE(MasterOnly2017::wide(u32_max, u32_max, u32_max));
  CHECK_FALSE(Symmetric2015::wide(u32_max, u32_max, u32_max));
}

TEST_CASE("a factor of zero is read as one", "[wide_detector]") {
  // FactorPolicy I1 promises f >= 1; the rules clamp 0 to 1 (documented).
  // Without the clamp Symmetric2015 would say 0 >= 0 && 0 >= 0 -> wide, and
  // OneSided2013 would say 1 > 0 && 2 > 0 -> wide.
  CHECK_FALSE(Symmetric2015::wide(0, 0, 0));  // as f = 1: lo = 0 >= 1 fails
  CHECK_FALSE(OneSided2013::wide(2, 1, 0));       // as f = 1: e = 1 > 1 fails
  CHECK(OneSided2013::wide(3, 2, 0));             // as f = 1: 2 > 1; 3 > 2
  for (std::uint32_t w : grid)
    for (std::uint32_t e : grid) {
      INFO("w=" << w << " e=" << e);
      CHECK(OneSided2013::wide(w, e, 0) == OneSided2013::wide(w, e, 1));
      CHECK(Symmetric2015::wide(w, e, 0) == Symmetric2015::wide(w, e, 1));
      CHECK(MasterOnly2017::wide(w, e, 0) == MasterOnly2017::wide(w, e, 1));
    }
}

TEMPLATE_LIST_TEST_CASE("zero flips on both sides", "[wide_detector]", AllRules) {
  // Two fresh tasks: only MasterOnly2017 calls it wide (0 >= f*0).
  constexpr bool expected = std::is_same_v<TestType, MasterOnly2017>;
  for (std::uint32_t f : grid_factors) CHECK(TestType::wide(0, 0, f) == expected);
}

TEMPLATE_LIST_TEST_CASE("the symmetric rules do not care who wakes whom", "[wide_detector]",
                        SymmetricRules) {
  for (std::uint32_t w : grid)
    for (std::uint32_t e : grid)
      for (std::uint32_t f : grid_factors) {
        INFO("w=" << w << " e=" << e << " f=" << f);
        CHECK(TestType::wide(w, e, f) == TestType::wide(e, w, f));
      }
}

TEST_CASE("OneSided2013 is one-sided", "[wide_detector]") {
  // The same pair as above, either way round: the dispatcher (300 flips)
  // waking a busy worker (13) is wide, the worker waking it is not.
  CHECK(OneSided2013::wide(300, 13, 12));
  CHECK_FALSE(OneSided2013::wide(13, 300, 12));
}

TEMPLATE_LIST_TEST_CASE("a bigger factor never makes a wake-up wider", "[wide_detector]",
                        AllRules) {
  // Every rule's threshold grows with f (Wang 2013: "bigger node will
  // lead to more pull"), so wide at f implies wide at any f' < f.
  for (std::uint32_t w : grid)
    for (std::uint32_t e : grid)
      for (std::size_t i = 1; i < std::size(grid_factors); ++i) {
        INFO("w=" << w << " e=" << e << " f=" << grid_factors[i]);
        if (TestType::wide(w, e, grid_factors[i])) CHECK(TestType::wide(w, e, grid_factors[i - 1]));
      }
}

TEST_CASE("a dispatcher with 40 flips waking a worker with 2 on a 12-CPU LLC", "[wide_detector]") {
  // Wang 2013 shape: pgbench's one client process serving backends on a
  // 12-CPU box, factor = sd_llc_size = 12. The dispatcher switched partners
  // 40 times this period, the worker twice.
  constexpr std::uint32_t dispatcher = 40, worker = 2, f = 12;
  // OneSided2013: needs e > f; the worker's 2 flips are far below 12, so the
  // pull is still tried (affine).
  CHECK_FALSE(OneSided2013::wide(dispatcher, worker, f));
  // Symmetric2015: needs lo >= f; lo = 2 < 12, so also affine. Only a worker
  // that itself switches 12 or more times makes the relation 1:N here.
  CHECK_FALSE(Symmetric2015::wide(dispatcher, worker, f));
  // MasterOnly2017: only hi >= f*lo, 40 >= 24: wide. This is Fleming 2017's
  // point: a master with quiet slaves spreads them out.
  CHECK(MasterOnly2017::wide(dispatcher, worker, f));
  // Once the worker flips 12 times and the dispatcher reaches 12*12 = 144,
  // today's rule agrees; OneSided2013 wants e > 12 and w > f*e, i.e. 13 and 157.
  CHECK(Symmetric2015::wide(144, 12, f));
  CHECK_FALSE(OneSided2013::wide(144, 12, f));
  CHECK(OneSided2013::wide(157, 13, f));
}

TEMPLATE_LIST_TEST_CASE("WideDetector forwards to its rule", "[wide_detector]", AllRules) {
  using D = WideDetector<TestType>;
  STATIC_REQUIRE(std::is_same_v<typename D::rule_type, TestType>);
  STATIC_REQUIRE(taskplace::WideRule<D>);
  for (std::uint32_t w : grid)
    for (std::uint32_t e : grid)
      for (std::uint32_t f : grid_factors) CHECK(D::wide(w, e, f) == TestType::wide(w, e, f));
}

TEST_CASE("the default WideDetector is today's symmetric rule", "[wide_detector]") {
  STATIC_REQUIRE(std::is_same_v<WideDetector<>::rule_type, Symmetric2015>);
  // Distinguishes it from the others: (300, 12, 12) is wide only under it
  // and MasterOnly2017; (40, 2, 12) only under MasterOnly2017.
  CHECK(WideDetector<>::wide(300, 12, 12));
  CHECK_FALSE(WideDetector<>::wide(40, 2, 12));
}

TEMPLATE_LIST_TEST_CASE("the shipped rules pass the conformance kit",
                        "[wide_detector][conformance]", AllRules) {
  const auto v = taskplace::testing::check_wide_rule<TestType>();
  CHECK(v.empty());
  const auto d = taskplace::testing::check_wide_rule<WideDetector<TestType>>();
  CHECK(d.empty());
}

namespace {
// Deliberately broken: divides by the factor, undefined at f = 0.
struct DividingRule {
  static constexpr bool wide(std::uint32_t w, std::uint32_t e, std::uint32_t f) noexcept {
    return w / f > e;
  }
};
}  // namespace

TEST_CASE("a rule that divides by the factor is reported at factor zero",
          "[wide_detector][conformance]") {
  const auto v = taskplace::testing::check_wide_rule<DividingRule>();
  // The kit's grid: 10 waker counts x 10 wakee counts at factor 0.
  REQUIRE(v.size() == 100);
  for (const auto& x : v) {
    CHECK(x.rule == "WideRule I1: defined for every 32-bit input");
    CHECK(x.detail.find(", 0) is not a constant expression") != std::string::npos);
    CHECK(x.cpu == taskplace::no_cpu);
  }
  CHECK(v.front().detail == "wide(0, 0, 0) is not a constant expression");
}
