// Tests for taskplace/policy/flip_counter.hpp (kernel record_wakee) and the
// flip-decay part of taskplace/testing/flip_conformance.hpp.
#include "taskplace/policy/flip_counter.hpp"

#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <limits>
#include <thread>
#include <tuple>
#include <type_traits>
#include <vector>

#include "taskplace/testing/flip_conformance.hpp"

using namespace std::chrono_literals;
using taskplace::FlipCounter;
using taskplace::flip_decay::Halve2014;
using taskplace::Nanoseconds;
using taskplace::flip_storage::Plain;
using taskplace::flip_storage::RelaxedAtomic;
using taskplace::TaskKey;
using taskplace::flip_decay::Wipe2013;

namespace {

using AllFlipCounters =
    std::tuple<FlipCounter<Wipe2013, Plain>, FlipCounter<Halve2014, Plain>,
               FlipCounter<Wipe2013, RelaxedAtomic>,
               FlipCounter<Halve2014, RelaxedAtomic>>;

constexpr std::uint32_t u32_max = std::numeric_limits<std::uint32_t>::max();

// The count one decay leaves of `flips`, from record_wakee(): the 2013
// wipe gives 0, the v3.17 halving gives flips >> 1. Written out per decay,
// not through Decay::apply, so a wrong apply fails here.
template <class Counter>
std::uint32_t after_one_decay(std::uint32_t flips) {
  if constexpr (std::is_same_v<typename Counter::decay_type, Wipe2013>)
    return 0;
  else
    return flips / 2;
}

// Wakes partners 1, 2, ..., n in turn at time `now`: n switches.
template <class Counter>
void wake_n_partners(const Counter& f, typename Counter::state& s, std::uint32_t n,
                     Nanoseconds now) {
  for (std::uint32_t i = 1; i <= n; ++i) f.record(s, TaskKey{i} + 100, now);
}

}  // namespace

TEMPLATE_LIST_TEST_CASE("a fresh state has no flips and no last wakee", "[flip_counter]",
                        AllFlipCounters) {
  const TestType f;
  const typename TestType::state s;
  CHECK(f.flips(s) == 0);
  CHECK(s.last_wakee.load() == taskplace::no_task);
  CHECK(s.decay_stamp_ns.load() == 0);
  CHECK(f.period == 1s);  // tunables::flip_decay_period, the kernel's HZ jiffies
}

TEMPLATE_LIST_TEST_CASE("waking the same partner again never counts", "[flip_counter]",
                        AllFlipCounters) {
  const TestType f;
  typename TestType::state s;
  f.record(s, 7, 10s);
  REQUIRE(f.flips(s) == 1);  // first partner: a switch away from "no task"
  for (int i = 0; i < 5; ++i) f.record(s, 7, 10s + i * 1ms);
  CHECK(f.flips(s) == 1);
  CHECK(s.last_wakee.load() == 7);
}

TEMPLATE_LIST_TEST_CASE("alternating between two partners counts every switch",
                        "[flip_counter]", AllFlipCounters) {
  const TestType f;
  typename TestType::state s;
  // A, B, A, B, A within one period: five switches (the first from no task).
  const TaskKey seq[] = {1, 2, 1, 2, 1};
  for (TaskKey k : seq) f.record(s, k, 10s);
  CHECK(f.flips(s) == 5);
  // A 1:N dispatcher waking 40 distinct workers in one period: 40 more.
  wake_n_partners(f, s, 40, 10s + 500ms);
  CHECK(f.flips(s) == 45);
}

TEMPLATE_LIST_TEST_CASE("the first call decays a zero count when the clock is far from zero",
                        "[flip_counter]", AllFlipCounters) {
  const TestType f;
  typename TestType::state s;
  // Stamp 0, now 10 s: more than a period after the stamp, so the decay runs
  // on a zero count (harmless, as in the kernel whose jiffies start far from
  // zero) and stamps now; then the switch counts.
  f.record(s, 1, 10s);
  CHECK(f.flips(s) == 1);
  CHECK(s.decay_stamp_ns.load() == Nanoseconds{10s}.count());
}

TEMPLATE_LIST_TEST_CASE("the first call within the first period keeps the stamp at zero",
                        "[flip_counter]", AllFlipCounters) {
  const TestType f;
  typename TestType::state s;
  // A clock whose epoch is the pool's start: 300 ms is not more than one
  // period after stamp 0, so no decay, stamp stays 0.
  wake_n_partners(f, s, 6, 300ms);
  CHECK(f.flips(s) == 6);
  CHECK(s.decay_stamp_ns.load() == 0);
  // First decay once now > 0 + 1 s.
  f.record(s, 106, 1s + 1ns);  // 106 is the last partner: no new switch
  CHECK(f.flips(s) == after_one_decay<TestType>(6));
  CHECK(s.decay_stamp_ns.load() == Nanoseconds{1s + 1ns}.count());
}

TEMPLATE_LIST_TEST_CASE("exactly one period later nothing decays, one nanosecond later it does",
                        "[flip_counter]", AllFlipCounters) {
  const TestType f;
  typename TestType::state s;
  wake_n_partners(f, s, 9, 10s);  // stamp = 10 s (first call decayed 0), flips 9
  REQUIRE(f.flips(s) == 9);
  // Kernel: time_after(jiffies, stamp + HZ), strictly after.
  f.record(s, 109, 11s);
  CHECK(f.flips(s) == 9);
  CHECK(s.decay_stamp_ns.load() == Nanoseconds{10s}.count());
  f.record(s, 109, 11s + 1ns);
  CHECK(f.flips(s) == after_one_decay<TestType>(9));  // wipe: 0, halve: 4
  CHECK(s.decay_stamp_ns.load() == Nanoseconds{11s + 1ns}.count());
}

TEMPLATE_LIST_TEST_CASE("the decay runs before the new switch is counted", "[flip_counter]",
                        AllFlipCounters) {
  const TestType f;
  typename TestType::state s;
  wake_n_partners(f, s, 8, 10s);
  // Two seconds later a new partner: decay 8 first, then +1.
  f.record(s, 999, 12s);
  CHECK(f.flips(s) == after_one_decay<TestType>(8) + 1);  // wipe: 1, halve: 5
}

TEMPLATE_LIST_TEST_CASE("three idle periods give one decay, not three", "[flip_counter]",
                        AllFlipCounters) {
  const TestType f;
  typename TestType::state s;
  wake_n_partners(f, s, 8, 10s);
  f.record(s, 108, 13s);  // same partner as last: only the decay can act
  // record_wakee() decays once per call: three idle seconds still give one halving: 4, not 1.
  CHECK(f.flips(s) == after_one_decay<TestType>(8));
  // The next decay needs another full period from 13 s.
  f.record(s, 108, 14s);
  CHECK(f.flips(s) == after_one_decay<TestType>(8));
  f.record(s, 108, 14s + 1ns);
  CHECK(f.flips(s) == after_one_decay<TestType>(after_one_decay<TestType>(8)));
}

TEMPLATE_LIST_TEST_CASE("a steady waker under halving decay settles near twice its rate",
                        "[flip_counter]", AllFlipCounters) {
  if constexpr (std::is_same_v<typename TestType::decay_type, Halve2014>) {
    const TestType f;
    typename TestType::state s;
    // 10 new partners per period, one decay per period boundary; from the
    // recurrence x' = x/2 + 10: 10, 15, 17, 18, 19, 19 (fixed point 2*10-1).
    const std::uint32_t expected[] = {10, 15, 17, 18, 19, 19};
    TaskKey next = 1000;
    for (int period = 0; period < 6; ++period) {
      const Nanoseconds start = 10s + period * (1s + 1ns);
      for (int i = 0; i < 10; ++i) f.record(s, next++, start);
      CHECK(f.flips(s) == expected[period]);
    }
  } else {
    // The 2013 wipe: the count restarts at every period edge.
    const TestType f;
    typename TestType::state s;
    TaskKey next = 1000;
    for (int period = 0; period < 3; ++period) {
      const Nanoseconds start = 10s + period * (1s + 1ns);
      for (int i = 0; i < 10; ++i) f.record(s, next++, start);
      CHECK(f.flips(s) == 10);
    }
  }
}

TEMPLATE_LIST_TEST_CASE("flips saturate at UINT32_MAX instead of wrapping", "[flip_counter]",
                        AllFlipCounters) {
  const TestType f;
  typename TestType::state s;
  f.record(s, 1, 10s);  // stamp 10 s
  s.flips.store(u32_max - 1);
  f.record(s, 2, 10s);
  CHECK(f.flips(s) == u32_max);
  f.record(s, 3, 10s + 1ms);
  f.record(s, 4, 10s + 2ms);
  CHECK(f.flips(s) == u32_max);  // stuck at the top, not 0 or 1
  // A decay still brings it down.
  f.record(s, 4, 11s + 3ms);
  CHECK(f.flips(s) == after_one_decay<TestType>(u32_max));
}

TEMPLATE_LIST_TEST_CASE("a clock that goes backwards is no time passing", "[flip_counter]",
                        AllFlipCounters) {
  const TestType f;
  typename TestType::state s;
  wake_n_partners(f, s, 6, 10s);
  // 5 s before the stamp: no decay, stamp kept (detail::elapsed rule).
  f.record(s, 106, 5s);
  CHECK(f.flips(s) == 6);
  CHECK(s.decay_stamp_ns.load() == Nanoseconds{10s}.count());
  // Far before the epoch, too.
  f.record(s, 106, Nanoseconds::min());
  CHECK(f.flips(s) == 6);
  CHECK(s.decay_stamp_ns.load() == Nanoseconds{10s}.count());
  // Switches still count while the clock is behind.
  f.record(s, 1, 4s);
  CHECK(f.flips(s) == 7);
  // Time measured from the kept stamp: decays only after 11 s.
  f.record(s, 1, 11s);
  CHECK(f.flips(s) == 7);
  f.record(s, 1, 11s + 1ns);
  CHECK(f.flips(s) == after_one_decay<TestType>(7));
}

TEMPLATE_LIST_TEST_CASE("extreme stamps and times never overflow the period test",
                        "[flip_counter]", AllFlipCounters) {
  const TestType f;
  typename TestType::state s;
  // A stamp at the most negative time and now at the most positive: the
  // difference (2^64 - 1 ns) does not fit in int64; it must still read as
  // "far more than a period".
  s.flips.store(10);
  s.decay_stamp_ns.store(std::numeric_limits<std::int64_t>::min());
  f.record(s, 0, Nanoseconds::max());  // wakee 0 == last_wakee: no switch
  CHECK(f.flips(s) == after_one_decay<TestType>(10));
  CHECK(s.decay_stamp_ns.load() == Nanoseconds::max().count());
  // Stamp at the top: nothing is later.
  f.record(s, 0, Nanoseconds::max());
  CHECK(f.flips(s) == after_one_decay<TestType>(10));
}

TEMPLATE_LIST_TEST_CASE("the period is a tunable of the counter object", "[flip_counter]",
                        AllFlipCounters) {
  TestType f;
  f.period = 10ms;
  typename TestType::state s;
  wake_n_partners(f, s, 4, 10s);
  f.record(s, 104, 10s + 10ms);  // exactly one (short) period: no decay
  CHECK(f.flips(s) == 4);
  f.record(s, 104, 10s + 10ms + 1ns);
  CHECK(f.flips(s) == after_one_decay<TestType>(4));
  // A negative period acts as zero: any time that passes decays.
  f.period = -5s;
  s.flips.store(4);
  f.record(s, 104, 10s + 10ms + 1ns);  // same instant: no time passed
  CHECK(f.flips(s) == 4);
  f.record(s, 104, 10s + 10ms + 2ns);
  CHECK(f.flips(s) == after_one_decay<TestType>(4));
}

TEMPLATE_LIST_TEST_CASE("a state copies its values", "[flip_counter]", AllFlipCounters) {
  const TestType f;
  typename TestType::state s;
  wake_n_partners(f, s, 3, 10s);
  typename TestType::state copy = s;
  CHECK(f.flips(copy) == 3);
  CHECK(copy.last_wakee.load() == 103);
  f.record(copy, 1, 10s);
  CHECK(f.flips(copy) == 4);
  CHECK(f.flips(s) == 3);  // independent afterwards
  s = copy;
  CHECK(f.flips(s) == 4);
}

TEST_CASE("a plain counter works in constant expressions", "[flip_counter]") {
  constexpr std::uint32_t flips = [] {
    const FlipCounter<Halve2014, Plain> f;
    FlipCounter<Halve2014, Plain>::state s;
    f.record(s, 1, 10s);
    f.record(s, 2, 10s);
    f.record(s, 3, 10s);
    f.record(s, 3, 12s);  // one halving of 3
    return f.flips(s);
  }();
  STATIC_REQUIRE(flips == 1);
}

TEST_CASE("many threads recording into one atomic state race benignly", "[flip_counter]") {
  const FlipCounter<Halve2014, RelaxedAtomic> halving;
  const FlipCounter<Wipe2013, RelaxedAtomic> wiping{.period = 1ms};
  FlipCounter<Halve2014, RelaxedAtomic>::state s1;
  FlipCounter<Wipe2013, RelaxedAtomic>::state s2;
  constexpr int threads = 4;
  constexpr int calls = 20000;
  std::atomic<int> ready{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      ready.fetch_add(1);
      while (ready.load() < threads) std::this_thread::yield();
      for (int i = 0; i < calls; ++i) {
        // Every call switches partners; time runs forward 1 us per call, so
        // the short-period counter decays now and then.
        const auto key = static_cast<TaskKey>(t * calls + i + 1);
        const Nanoseconds now = 10s + i * 1us;
        halving.record(s1, key, now);
        wiping.record(s2, key, now);
      }
    });
  }
  for (auto& th : pool) th.join();
  constexpr auto total = static_cast<std::uint32_t>(threads * calls);
  // Lost increments are allowed, invented ones are not.
  CHECK(halving.flips(s1) <= total);
  CHECK(halving.flips(s1) >= 1);
  CHECK(wiping.flips(s2) <= total);
  CHECK(s1.decay_stamp_ns.load() >= Nanoseconds{10s}.count());
  // The state is still a working state: a later call decays it as usual.
  const TaskKey last = s2.last_wakee.load();
  wiping.record(s2, last, 11s);
  CHECK(wiping.flips(s2) == 0);
}

TEMPLATE_TEST_CASE("the shipped decays pass the conformance kit", "[flip_counter][conformance]",
                   Wipe2013, Halve2014) {
  const auto v = taskplace::testing::check_flip_decay<TestType>();
  CHECK(v.empty());
}

namespace {
// Deliberately broken: "decay" adds one (and wraps at UINT32_MAX).
struct GrowingDecay {
  static constexpr std::uint32_t apply(std::uint32_t x) noexcept { return x + 1; }
};
// Deliberately broken: not usable in a constant expression.
struct RuntimeDecay {
  static std::uint32_t apply(std::uint32_t x) noexcept { return x / 2; }
};
}  // namespace

TEST_CASE("a decay that increases the count is reported", "[flip_counter][conformance]") {
  const auto v = taskplace::testing::check_flip_decay<GrowingDecay>();
  // 10 samples; every one but UINT32_MAX (which wraps to 0) grows.
  REQUIRE(v.size() == 9);
  CHECK(v.front().rule == "FlipDecay I1: apply(x) <= x");
  CHECK(v.front().detail == "apply(0) = 1");
  CHECK(v.front().cpu == taskplace::no_cpu);
}

TEST_CASE("a decay that is not constexpr is reported", "[flip_counter][conformance]") {
  const auto v = taskplace::testing::check_flip_decay<RuntimeDecay>();
  REQUIRE(v.size() == 10);
  CHECK(v.front().rule == "FlipDecay R1: apply is constexpr and defined");
}

TEMPLATE_LIST_TEST_CASE("a negative period is stored as zero where it is set", "[flip_counter]",
                        AllFlipCounters) {
  // The clamp moved from every record() to the assignment: the counter
  // reads its period as is on the hot path.
  TestType f{.period = -1ms};
  CHECK(f.period == 0ns);
  f.period = 250ms;
  CHECK(f.period == 250ms);
  f.period = -5s;
  CHECK(f.period.count() == 0);
  f.period = Nanoseconds::min();
  CHECK(f.period == 0ns);
  // Zero acts as zero: one nanosecond after the stamp decays.
  typename TestType::state s;
  s.flips.store(8);
  s.decay_stamp_ns.store(1'000);
  f.record(s, s.last_wakee.load(), Nanoseconds{1'000});  // no time passed
  CHECK(f.flips(s) == 8);
  f.record(s, s.last_wakee.load(), Nanoseconds{1'001});
  CHECK(f.flips(s) == after_one_decay<TestType>(8));
}

TEST_CASE("a non-negative duration clamps every way it can be changed", "[flip_counter]") {
  using taskplace::NonNegativeNanoseconds;
  static_assert(NonNegativeNanoseconds{}.count() == 0);
  static_assert(NonNegativeNanoseconds{-3s}.count() == 0);
  static_assert(NonNegativeNanoseconds{2s} == 2s);
  static_assert(std::is_trivially_copyable_v<NonNegativeNanoseconds>);
  static_assert(sizeof(NonNegativeNanoseconds) == sizeof(Nanoseconds));
  NonNegativeNanoseconds d = 1s;
  d -= 3s;
  CHECK(d == 0ns);
  d += 5ms;
  CHECK(d == 5ms);
  d *= -2;
  CHECK(d == 0ns);
  d = 10ms;
  d /= -1;
  CHECK(d == 0ns);
  d = 10ms;
  d /= 2;
  CHECK(d == 5ms);
  // Reads are those of a Nanoseconds: arithmetic gives a plain duration.
  const Nanoseconds sum = d + 1ns;
  CHECK(sum == 5'000'001ns);
  const Nanoseconds& base = d;
  CHECK(base.count() == 5'000'000);
}
