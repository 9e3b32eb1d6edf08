// NewidleSuccessRate (policy/newidle_success_rate.hpp): the window of 1024
// calls and its halving, the ratio, the die and the weight of a success, the
// v7.0 rate term and "always at 1024", seeds, and bad input. Golden values
// are computed from the rules of "sched/fair: Proportional newidle balance"
// (v6.18) and "More complex proportional newidle balance" (v7.0) as each
// comment shows.
#include <catch2/catch.hpp>

#include <cstdint>
#include <random>

#include "taskplace/policy/newidle_success_rate.hpp"
#include "taskplace/testing/idle_conformance.hpp"

using namespace taskplace;
using namespace std::chrono_literals;

namespace {
using Rate2025 = NewidleSuccessRate<success_rate::Proportional2025>;
using Rate2026 = NewidleSuccessRate<success_rate::ProportionalRate2026>;
using Both = std::tuple<Rate2025, Rate2026>;

// A level held at `ratio` with an empty window, so that the rolls below
// never close it and the odds stay put.
template <class R>
void hold(typename R::state& s, std::uint32_t level, std::uint32_t ratio) {
  s.levels[level].ratio = ratio;
  s.levels[level].calls = 0;
  s.levels[level].successes = 0;
}
}  // namespace

TEMPLATE_LIST_TEST_CASE("a fresh level starts at a 50% success rate", "[newidle_success_rate]", Both) {
  // Kernel sd_init: newidle_call 512, newidle_success 256, newidle_ratio 512.
  const TestType rate;
  const auto s = rate.make_state(3, 5s, 7);
  CHECK(s.level_count == 3);
  for (std::uint32_t i = 0; i < 3; ++i) {
    CHECK(rate.ratio(s, i) == 512);
    CHECK(s.levels[i].calls == 512);
    CHECK(s.levels[i].successes == 256);
    CHECK(s.levels[i].window_start == 5s);
  }
  CHECK(rate.ratio(s, 3) == 0);  // past level_count
}

TEMPLATE_LIST_TEST_CASE("the window closes at 1024 calls and halves", "[newidle_success_rate]", Both) {
  const TestType rate;
  auto s = rate.make_state(1, 0s, 1);
  // 512 attempts that all pull, weight 1, no time passing: at the 512th the
  // calls reach 1024 with 256 + 512 = 768 successes, so ratio = 768; then
  // calls 512, successes 384.
  for (int i = 0; i < 511; ++i) rate.record(s, 0, true, 1, 0s);
  CHECK(rate.ratio(s, 0) == 512);  // not closed yet: 1023 calls
  CHECK(s.levels[0].calls == 1023);
  rate.record(s, 0, true, 1, 0s);
  CHECK(rate.ratio(s, 0) == 768);
  CHECK(s.levels[0].calls == 512);
  CHECK(s.levels[0].successes == 384);
  // 512 failures: 384 successes at the close -> ratio 384, then 192.
  for (int i = 0; i < 512; ++i) rate.record(s, 0, false, 1, 0s);
  CHECK(rate.ratio(s, 0) == 384);
  CHECK(s.levels[0].successes == 192);
  // And again: 192 -> ratio 192, a level that stops finding work halves
  // its ratio every 512 calls.
  for (int i = 0; i < 512; ++i) rate.record(s, 0, false, 1, 0s);
  CHECK(rate.ratio(s, 0) == 192);
}

TEMPLATE_LIST_TEST_CASE("a success weighs the inverse of the odds it was tried at", "[newidle_success_rate]", Both) {
  // 512 successes of weight 2 from a fresh level: 256 + 1024 = 1280 at the
  // close, capped at 1024.
  const TestType rate;
  auto s = rate.make_state(1, 0s, 1);
  for (int i = 0; i < 512; ++i) rate.record(s, 0, true, 2, 0s);
  CHECK(rate.ratio(s, 0) == 1024);
  CHECK(s.levels[0].successes == 640);  // 1280 / 2: the window keeps the raw count
  // A weight of 0 with a pull reads as 1.
  auto t = rate.make_state(1, 0s, 1);
  rate.record(t, 0, true, 0, 0s);
  CHECK(t.levels[0].successes == 257);
}

TEMPLATE_LIST_TEST_CASE("the die skips with odds 1 - (2 + ratio) / 1024 and weighs a try round(1024 / (1 + ratio))",
                        "[newidle_success_rate]", Both) {
  const TestType rate;
  // ratio: expected weight (1024 + w / 2) / w with w = 1 + ratio.
  struct Row {
    std::uint32_t ratio, weight;
  };
  const Row rows[] = {{0, 1024},   // (1024 + 0) / 1
                      {100, 10},   // 1074 / 101 = 10.6
                      {255, 4},    // 1152 / 256 = 4.5
                      {511, 2},    // 1280 / 512 = 2.5
                      {1021, 1}};  // 1535 / 1022 = 1.502 (ratio 1022 and up: always tried)
  for (const auto& row : rows) {
    auto s = rate.make_state(1, 0s, 42);
    constexpr int rolls = 200'000;
    int tried = 0;
    for (int i = 0; i < rolls; ++i) {
      hold<TestType>(s, 0, row.ratio);
      const std::uint32_t w = rate.roll(s, 0, 0s);
      if (w != 0) {
        ++tried;
        REQUIRE(w == row.weight);
      } else {
        REQUIRE(s.levels[0].calls == 1);  // a skip counts a call, no success
        REQUIRE(s.levels[0].successes == 0);
      }
    }
    // Tried when d in 0..1+ratio: p = (2 + ratio) / 1024. Binomial bounds
    // of 6 standard deviations (a fixed seed makes the count exact anyway).
    const double p = (2.0 + row.ratio) / 1024.0;
    const double mean = p * rolls, sd = std::sqrt(rolls * p * (1 - p));
    INFO("ratio " << row.ratio << ": tried " << tried << ", expected " << mean);
    CHECK(tried > mean - 6 * sd);
    CHECK(tried < mean + 6 * sd);
  }
  // From ratio 1022 on, 1 + ratio >= 1023 >= d: every roll tries.
  auto s = rate.make_state(1, 0s, 42);
  for (int i = 0; i < 10'000; ++i) {
    hold<TestType>(s, 0, 1022);
    REQUIRE(rate.roll(s, 0, 0s) == 1);
  }
}

TEST_CASE("at ratio 1024 the 2026 rule always tries without a die; 2025 throws it and always tries", "[newidle_success_rate]") {
  const Rate2026 r26;
  auto s = r26.make_state(1, 0s, 9);
  hold<Rate2026>(s, 0, 1024);
  const auto rng_before = s.rng;
  for (int i = 0; i < 1000; ++i) CHECK(r26.roll(s, 0, 0s) == 1);
  CHECK(s.rng == rng_before);  // no die thrown
  const Rate2025 r25;
  auto t = r25.make_state(1, 0s, 9);
  hold<Rate2025>(t, 0, 1024);
  const auto t_before = t.rng;
  for (int i = 0; i < 1000; ++i) CHECK(r25.roll(t, 0, 0s) == 1);  // d <= 1023 < 1025; (1024 + 512) / 1025 = 1
  CHECK_FALSE(t.rng == t_before);
  // A hand-filled ratio above 1024 reads as 1024.
  hold<Rate2026>(s, 0, 5000);
  CHECK(r26.ratio(s, 0) == 1024);
  CHECK(r26.roll(s, 0, 0s) == 1);
}

TEST_CASE("the 2026 rate term adds one point per 2^22 ns the window took", "[newidle_success_rate]") {
  const Rate2025 r25;
  const Rate2026 r26;
  // From a fresh level (256 successes), 512 failed attempts close the
  // window at `close`: ratio = 256 + (close - start) >> 22 under 2026.
  struct Row {
    Nanoseconds took;
    std::uint32_t ratio;
  };
  const Row rows[] = {{0s, 256},
                      {1s, 256 + 238},        // 1e9 / 4194304 = 238.4
                      {250ms, 256 + 59},      // 2.5e8 / 4194304 = 59.6
                      {4s, 1024}};            // 256 + 953, capped
  for (const auto& row : rows) {
    auto a = r25.make_state(1, 10s, 3);
    auto b = r26.make_state(1, 10s, 3);
    for (int i = 0; i < 512; ++i) {
      r25.record(a, 0, false, 1, 10s + row.took);
      r26.record(b, 0, false, 1, 10s + row.took);
    }
    CHECK(r25.ratio(a, 0) == 256);  // 2025: successes alone
    CHECK(r26.ratio(b, 0) == row.ratio);
    CHECK(b.levels[0].window_start == 10s + row.took);
  }
  // A clock that went backwards: no time, no rate term.
  auto c = r26.make_state(1, 10s, 3);
  for (int i = 0; i < 512; ++i) r26.record(c, 0, false, 1, 1s);
  CHECK(r26.ratio(c, 0) == 256);
  // Stamps at opposite ends of the range do not overflow.
  auto d = r26.make_state(1, Nanoseconds::min(), 3);
  for (int i = 0; i < 512; ++i) r26.record(d, 0, false, 1, Nanoseconds::max());
  CHECK(r26.ratio(d, 0) == 1024);
}

TEMPLATE_LIST_TEST_CASE("the ratio tracks the share of attempts that find work", "[newidle_success_rate]", Both) {
  // A level that finds work with probability q, driven through roll and
  // record: the inverse-odds weights keep the estimate at about 1024 * q
  // although most calls are skipped. Mean of the ratio over 200 windows,
  // within 15% (each window holds ~512 calls, ~(2 + 1024q) / 2 attempts).
  // The weights are whole numbers, so at high ratios (weight 1 or 2 for
  // 1.4 or 2.6) the estimate swings and reads low: about 720 for q = 0.75
  // with this seed; that is the formula, not noise.
  const TestType rate;
  for (const double q : {0.25, 0.75}) {
    auto s = rate.make_state(1, 0s, 11);
    std::mt19937 found{5};
    std::bernoulli_distribution hit{q};
    double sum = 0;
    int windows = 0;
    std::uint32_t last_calls = s.levels[0].calls;
    while (windows < 200) {
      const std::uint32_t w = rate.roll(s, 0, 0s);
      if (w != 0) rate.record(s, 0, hit(found), w, 0s);
      if (s.levels[0].calls < last_calls) {  // the window closed
        sum += rate.ratio(s, 0);
        ++windows;
      }
      last_calls = s.levels[0].calls;
    }
    INFO("q " << q << ": mean ratio " << sum / windows);
    CHECK(sum / windows > 0.85 * 1024 * q);
    CHECK(sum / windows < 1.15 * 1024 * q);
  }
}

TEMPLATE_LIST_TEST_CASE("the same seed throws the same dice, another seed others", "[newidle_success_rate]", Both) {
  const TestType rate;
  auto a = rate.make_state(1, 0s, 3);
  auto b = rate.make_state(1, 0s, 3);
  auto c = rate.make_state(1, 0s, 4);
  int differ = 0;
  for (int i = 0; i < 2000; ++i) {
    hold<TestType>(a, 0, 255);
    hold<TestType>(b, 0, 255);
    hold<TestType>(c, 0, 255);
    const auto x = rate.roll(a, 0, 0s);
    CHECK(x == rate.roll(b, 0, 0s));
    differ += x != rate.roll(c, 0, 0s);
  }
  CHECK(differ > 100);  // p(try) = 1/4: two independent streams disagree ~37% of the time
  CHECK(a == b);
  // Seed 0 is a seed like any other (the state is never the generator's
  // fixed point).
  SuccessRateRng zero{0};
  const auto first = zero.next();
  CHECK(first != zero.next());
}

TEMPLATE_LIST_TEST_CASE("bad input: levels out of range, counters at their limits", "[newidle_success_rate]", Both) {
  const TestType rate;
  CHECK_THROWS_AS(rate.make_state(max_levels + 1, 0s, 0), PreconditionError);
  auto s = rate.make_state(2, 0s, 0);
  CHECK_THROWS_AS(rate.roll(s, 2, 0s), PreconditionError);
  CHECK_THROWS_AS(rate.record(s, 2, true, 1, 0s), PreconditionError);
  // Saturating counts in a hand-filled state: successes stay at UINT32_MAX,
  // the window closes, ratio caps at 1024, both halve.
  s.levels[0].calls = 1023;
  s.levels[0].successes = UINT32_MAX - 10;
  rate.record(s, 0, true, 1024, 0s);
  CHECK(rate.ratio(s, 0) == 1024);
  CHECK(s.levels[0].successes == UINT32_MAX / 2);
  CHECK(s.levels[0].calls == 512);
  s.levels[1].calls = UINT32_MAX;
  rate.record(s, 1, false, 1, 0s);
  CHECK(s.levels[1].calls == UINT32_MAX / 2);
}

TEST_CASE("AttemptEveryLevel tries every level with weight 1 and keeps no state", "[newidle_success_rate]") {
  static_assert(std::is_empty_v<AttemptEveryLevel::state>);
  const AttemptEveryLevel a;
  auto s = a.make_state(3, 0s, 0);
  for (std::uint32_t i = 0; i < 3; ++i) CHECK(a.roll(s, i, 0s) == 1);
  a.record(s, 0, true, 1, 0s);
}

namespace {
// A policy that never tries a level that failed once: breaks I2.
struct GivesUp {
  struct state {
    std::array<bool, max_levels> dead{};
  };
  state make_state(std::uint32_t, Nanoseconds, std::uint64_t) const { return {}; }
  std::uint32_t roll(state& s, std::uint32_t level, Nanoseconds) const { return s.dead[level] ? 0 : 1; }
  void record(state& s, std::uint32_t level, bool pulled, std::uint32_t, Nanoseconds) const {
    if (!pulled) s.dead[level] = true;
  }
};
// A policy whose die ignores the seed and the state (a counter shared by
// every state): breaks I1.
struct SharedDie {
  struct state {};
  inline static std::uint32_t calls = 0;
  state make_state(std::uint32_t, Nanoseconds, std::uint64_t) const { return {}; }
  std::uint32_t roll(state&, std::uint32_t, Nanoseconds) const { return ++calls % 2; }
  void record(state&, std::uint32_t, bool, std::uint32_t, Nanoseconds) const {}
};
}  // namespace

TEST_CASE("the conformance kit accepts the shipped attempt policies and names what a broken one breaks",
          "[newidle_success_rate][testing]") {
  CHECK(testing::check_attempt_policy<AttemptEveryLevel>().empty());
  CHECK(testing::check_attempt_policy<Rate2025>().empty());
  CHECK(testing::check_attempt_policy<Rate2026>().empty());
  // GivesUp shuts off every level that failed once. With one level, level
  // 0 always finds work and stays on; with 8, levels 1-6 fail their first
  // try (they find work every third) and level 7 never finds any: 7 levels
  // shut off.
  const auto gave_up = testing::check_attempt_policy<GivesUp>();
  REQUIRE(gave_up.size() == 7);
  for (const auto& v : gave_up) CHECK(v.rule.find("I2") != std::string::npos);
  CHECK(gave_up[0].detail.find("level 1 of 8") != std::string::npos);
  const auto shared = testing::check_attempt_policy<SharedDie>();
  REQUIRE_FALSE(shared.empty());
  CHECK(shared[0].rule.find("I1") != std::string::npos);
}
