// taskplace/clock.hpp: the portable clocks the library ships.
//
// Kernel analogue: sched_clock_cpu() for SteadyClock, jiffies for
// CoarseClock. Policies never read a clock themselves: they take `now` as
// an argument, so the embedder reads the clock once per decision and tests
// pass any time they like. The composed balancer times its pull attempts
// with a Clock. The TSC clock (TscClock, x86's sched_clock) has its own
// header, taskplace/tsc_clock.hpp, outside the umbrella header.
//
//   taskplace::SteadyClock clock;
//   tracker.idle_end(state, clock.now());
#pragma once

#include "taskplace/detail/config.hpp"

#include <chrono>
#include <cstdint>
#include <ctime>
#include <utility>

#include "taskplace/concepts.hpp"
#include "taskplace/types.hpp"

namespace taskplace {

// std::chrono::steady_clock in nanoseconds: CLOCK_MONOTONIC, read through
// the vDSO; TscClock (taskplace/tsc_clock.hpp) reads the same time for
// less (what each read costs: docs/benchmarks.md, "Clock reads").
struct SteadyClock {
  Nanoseconds now() const noexcept {
    return std::chrono::duration_cast<Nanoseconds>(
        std::chrono::steady_clock::now().time_since_epoch());
  }
};
static_assert(Clock<SteadyClock>);

// CLOCK_MONOTONIC_COARSE: a few nanoseconds a read, resolution one timer tick
// (1-4 ms). Enough for the once-a-second flip decay and the cost decay; too
// coarse to time a single balance attempt.
struct CoarseClock {
  Nanoseconds now() const noexcept {
    timespec ts{};
#ifdef CLOCK_MONOTONIC_COARSE
    ::clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
#else
    ::clock_gettime(CLOCK_MONOTONIC, &ts);
#endif
    return Nanoseconds{static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 +
                       ts.tv_nsec};
  }
};
static_assert(Clock<CoarseClock>);

// A clock that moves only when told to: for tests and simulations. Every
// argument is a SaturatingNanoseconds: a std::chrono duration past
// nanoseconds' range (hours::max()) saturates, as do the moves.
// Thread-safety: none; share one per test thread.
class ManualClock {
 public:
  constexpr ManualClock() = default;
  constexpr explicit ManualClock(SaturatingNanoseconds start) noexcept : now_(start) {}

  constexpr Nanoseconds now() const noexcept { return now_; }
  // Effects: moves the clock by `d`, saturating at Nanoseconds::max() (and
  // min()): a clock at the end of time stays there instead of wrapping to
  // the minimum, which would read as a clock gone backwards by 584 years.
  // A negative `d` moves it backwards on purpose (policies treat that as
  // no time passing). Complexity: O(1).
  constexpr void advance(SaturatingNanoseconds d) noexcept {
    now_ = Nanoseconds{detail::saturating_add_ns(now_.count(), d.count())};
  }
  // Effects: the clock reads `t` from now on.
  constexpr void set(SaturatingNanoseconds t) noexcept { now_ = t; }

 private:
  Nanoseconds now_{0};
};
static_assert(Clock<ManualClock>);

// A clock read taken once, when first asked for, and the same value after:
// the time a placement passes to WakePlacer::place (which asks only when
// its decision needs it: not for a settled pair's quiet replay) and shares
// with a machine state that reads the same moment. Holds a pointer to the
// clock. Thread-safety: none; one per placement.
//
//   const taskplace::ReadOnce now{clock};
//   placer.place(w, MyMachine{state, now}, now);   // MyMachine calls now() if it must
template <Clock C>
class ReadOnce {
 public:
  explicit ReadOnce(const C& c) noexcept : c_(&c) {}
  explicit ReadOnce(const C&&) = delete;  // a temporary clock would dangle
  // Returns: the clock's now() at the first call; that value after.
  Nanoseconds operator()() const noexcept(noexcept(std::declval<const C&>().now())) {
    if (!read_) {
      t_ = c_->now();
      read_ = true;
    }
    return t_;
  }
  // Returns: whether the clock was read.
  bool read() const noexcept { return read_; }

 private:
  const C* c_;
  mutable Nanoseconds t_{0};
  mutable bool read_ = false;
};

}  // namespace taskplace
