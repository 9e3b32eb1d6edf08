// TscClock (tsc_clock.hpp) read on this machine, against
// steady_clock. The fault cases (backwards, extreme and wrapped readings)
// are in tests/faults/clock.test.cpp.
#include <catch2/catch.hpp>

#include <sched.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <type_traits>

#include "taskplace/tsc_clock.hpp"

using namespace taskplace;
using namespace std::chrono_literals;

namespace {

// Pins the calling thread to the CPU it is on, for its lifetime, and puts
// the old mask back; where the OS refuses, the thread stays unpinned.
class PinToThisCpu {
 public:
  PinToThisCpu() {
    const int cpu = ::sched_getcpu();
    if (cpu < 0 || ::sched_getaffinity(0, sizeof(old_), &old_) != 0) return;
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    pinned_ = ::sched_setaffinity(0, sizeof(one), &one) == 0;
  }
  ~PinToThisCpu() {
    if (pinned_) ::sched_setaffinity(0, sizeof(old_), &old_);
  }
  PinToThisCpu(const PinToThisCpu&) = delete;
  PinToThisCpu& operator=(const PinToThisCpu&) = delete;
  bool pinned() const { return pinned_; }

 private:
  cpu_set_t old_{};
  bool pinned_ = false;
};

// A TscClock reading and the steady_clock time it was taken at (the middle
// of two steady reads around it, within +-width/2): the tightest of a few.
struct Pair {
  Nanoseconds steady{0};
  Nanoseconds tsc{0};
  Nanoseconds width = Nanoseconds::max();
};

Pair read_pair(const TscClock& clock) {
  const SteadyClock steady;
  Pair best;
  for (int i = 0; i < 5; ++i) {
    const Nanoseconds before = steady.now();
    const Nanoseconds t = clock.now();
    const Nanoseconds after = steady.now();
    if (after - before < best.width) best = {before + (after - before) / 2, t, after - before};
  }
  return best;
}

Nanoseconds abs_ns(Nanoseconds d) { return d < 0ns ? -d : d; }

// The flags line of /proc/cpuinfo, or nothing where the file is absent.
bool cpuinfo_flags(std::string& flags) {
  std::ifstream in("/proc/cpuinfo");
  if (!in) return false;
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("flags", 0) == 0) {
      flags.assign(1, ' ').append(line, line.find(':') + 1).append(1, ' ');
      return true;
    }
  }
  return true;  // present, with no flags line (not x86): flags stays empty
}

bool has_flag(const std::string& flags, const std::string& flag) {
  return flags.find(" " + flag + " ") != std::string::npos;
}

}  // namespace

static_assert(std::is_trivially_copyable_v<TscClock>);
static_assert(Clock<TscClock>);

TEST_CASE("a TSC clock never goes backwards on one thread over many reads", "[clock]") {
  const PinToThisCpu pin;  // one CPU: the guarantee is per CPU
  if (!pin.pinned()) WARN("could not pin the thread; reading unpinned");
  const TscClock clock{500us};
  Nanoseconds last = clock.now();
  std::int64_t backwards = 0;
  for (int i = 0; i < 200'000; ++i) {
    const Nanoseconds t = clock.now();
    if (t < last) ++backwards;
    last = t;
  }
  CHECK(backwards == 0);
}

TEST_CASE("a TSC clock measures a sleep as steady_clock does, within 1%", "[clock]") {
  const TscClock clock;
  const Pair start = read_pair(clock);
  std::this_thread::sleep_for(20ms);
  const Pair end = read_pair(clock);
  const Nanoseconds steady = end.steady - start.steady;
  const Nanoseconds tsc = end.tsc - start.tsc;
  // 1% of the interval, plus where in each bracket the TSC read fell.
  const Nanoseconds tolerance = steady / 100 + (start.width + end.width) / 2;
  INFO("steady " << steady.count() << " ns, tsc " << tsc.count() << " ns, uses_tsc " << clock.uses_tsc());
  CHECK(steady >= 20ms);
  CHECK(abs_ns(tsc - steady) <= tolerance);
}

TEST_CASE("a TSC clock reads close to steady_clock right after construction", "[clock]") {
  const TscClock clock;
  const Pair p = read_pair(clock);
  INFO("offset " << (p.tsc - p.steady).count() << " ns, bracket " << p.width.count() << " ns");
  CHECK(abs_ns(p.tsc - p.steady) <= 1ms + p.width);
}

TEST_CASE("a copy of a TSC clock, read on another thread, reads the original's timeline", "[clock]") {
  const TscClock original{500us};
  const TscClock copy = original;
  CHECK(copy.uses_tsc() == original.uses_tsc());
  // Same thread, back to back: the copy sits between two original reads
  // (pinned, so that all three come from one CPU's TSC).
  {
    const PinToThisCpu pin;
    const Nanoseconds before = original.now();
    const Nanoseconds t = copy.now();
    const Nanoseconds after = original.now();
    CHECK(before <= t);
    CHECK(t <= after);
  }
  // Another thread: its read happens after the first original read and
  // before the second (thread start and join order them), tens of
  // microseconds apart, far more than any TSC skew between CPUs.
  const Nanoseconds before = original.now();
  Nanoseconds on_thread{0};
  std::thread reader([&] { on_thread = copy.now(); });
  reader.join();
  const Nanoseconds after = original.now();
  CHECK(before <= on_thread);
  CHECK(on_thread <= after);
}

TEST_CASE("a TSC clock uses the TSC where the CPU declares it constant and nonstop", "[clock]") {
  // A calibration refuses an error bound over 1/1024, which a thread
  // preempted in all of its bracketing tries could exceed on a loaded
  // machine: the first of three that succeeds stands.
  TscClock clock{500us};
  for (int retry = 0; retry < 2 && !clock.uses_tsc(); ++retry) clock = TscClock{500us};
  std::string flags;
  if (!cpuinfo_flags(flags)) {
    WARN("/proc/cpuinfo is absent: the TSC's flags are unknown, uses_tsc() not checked");
    return;
  }
#if defined(__x86_64__)
  if (has_flag(flags, "constant_tsc") && has_flag(flags, "nonstop_tsc")) {
    CHECK(clock.uses_tsc());
  } else {
    WARN("this CPU does not list constant_tsc and nonstop_tsc: uses_tsc() not checked");
  }
#else
  CHECK_FALSE(clock.uses_tsc());  // no TSC off x86-64
#endif
}

TEST_CASE("a TSC clock forced to fall back reads steady_clock", "[clock]") {
  constexpr TscClock clock{TscClock::steady_fallback};
  CHECK_FALSE(clock.uses_tsc());
  const SteadyClock steady;
  for (int i = 0; i < 100; ++i) {
    const Nanoseconds before = steady.now();
    const Nanoseconds t = clock.now();
    const Nanoseconds after = steady.now();
    REQUIRE(before <= t);
    REQUIRE(t <= after);
  }
  // A copy falls back too.
  const TscClock copy = clock;
  CHECK_FALSE(copy.uses_tsc());
}

TEST_CASE("a calibration window below the minimum is lengthened to it", "[clock]") {
  for (const Nanoseconds window : {Nanoseconds{0}, Nanoseconds{-1s}}) {
    const auto start = std::chrono::steady_clock::now();
    const TscClock clock{window};
    const auto took = std::chrono::steady_clock::now() - start;
    INFO("window " << window.count() << " ns, took " << Nanoseconds(took).count() << " ns");
    if (clock.uses_tsc()) CHECK(took >= TscClock::min_calibration);
  }
}

TEST_CASE("a calibration window past the maximum is shortened to it, hours::max() included", "[clock]") {
  // hours::max() does not fit nanoseconds: it saturates (SaturatingNanoseconds),
  // then the window is cut to max_calibration (1 s), not spun for 292 years.
  // CTest's timeout would catch a constructor that spins on.
  static_assert(TscClock::max_calibration == std::chrono::seconds{1});
  const TscClock clock{std::chrono::hours::max()};
  const Nanoseconds a = clock.now();
  const Nanoseconds b = SteadyClock{}.now();
  CHECK(a <= b + std::chrono::milliseconds{10});  // a clock, reading steady_clock's epoch
}

TEST_CASE("the process's TSC clock is one calibration every thread shares", "[clock]") {
  const TscClock* here = &TscClock::process();
  const TscClock* there = nullptr;
  Nanoseconds on_thread{0};
  const Nanoseconds before = TscClock::process().now();
  std::thread([&] {
    there = &TscClock::process();
    on_thread = there->now();
  }).join();
  const Nanoseconds after = here->now();
  CHECK(here == there);
  CHECK(before <= on_thread);
  CHECK(on_thread <= after);
  // A copy reads the same timeline (the pools copy it into themselves).
  const TscClock copy = TscClock::process();
  CHECK(copy.uses_tsc() == here->uses_tsc());
  const Nanoseconds c = copy.now();
  CHECK(after <= c);
  CHECK(c <= here->now());
}
