// taskplace/tsc_clock.hpp: TscClock, the CPU's time-stamp counter read as
// a Clock (steady_clock where the TSC cannot be trusted).
//
// Kernel analogue: x86's native_sched_clock() (the TSC scaled by a cyc2ns
// multiply and shift, what the rq clock reads). Its own header, not in the
// umbrella taskplace/taskplace.hpp: on x86-64 it includes the compiler's
// <cpuid.h>, which the core headers keep out of every consumer.
//
//   #include <taskplace/tsc_clock.hpp>
//   const taskplace::TscClock clock;  // calibrates for ~2 ms
#pragma once

#include "taskplace/detail/config.hpp"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <limits>
#include <type_traits>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <cpuid.h>
// TscClock reads the time-stamp counter here; elsewhere it is steady_clock.
#define TASKPLACE_DETAIL_X86_TSC 1
#else
#define TASKPLACE_DETAIL_X86_TSC 0
#endif

#include "taskplace/clock.hpp"
#include "taskplace/concepts.hpp"
#include "taskplace/types.hpp"

namespace taskplace {

namespace detail {

inline std::int64_t steady_ns() noexcept { return SteadyClock{}.now().count(); }

#if TASKPLACE_DETAIL_X86_TSC
// Returns: whether the CPU declares an invariant TSC (CPUID 0x80000007, EDX
// bit 8): one that ticks at a constant rate in every P-, C- and T-state, so
// that a count of ticks is a count of time. Linux reads the same bit for
// its constant_tsc and nonstop_tsc flags.
inline bool invariant_tsc() noexcept {
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (__get_cpuid(0x80000000u, &a, &b, &c, &d) == 0 || a < 0x80000007u) return false;
  if (__get_cpuid(0x80000007u, &a, &b, &c, &d) == 0) return false;
  return (d & (1u << 8)) != 0;
}

// One TSC reading and the steady_clock time it was taken at: the middle of
// the two steady reads around it, within +-width/2.
struct TscSample {
  std::int64_t ns = 0;
  std::uint64_t tsc = 0;
  std::int64_t width = std::numeric_limits<std::int64_t>::max();
};

// Returns: the tightest bracket of a few tries (a try that an interrupt or
// a preempted vCPU widened is dropped). The fences keep the TSC read
// between the two steady reads.
inline TscSample tsc_sample() noexcept {
  TscSample best;
  for (int i = 0; i < 8; ++i) {
    const std::int64_t before = steady_ns();
    __builtin_ia32_lfence();
    const std::uint64_t tsc = __builtin_ia32_rdtsc();
    __builtin_ia32_lfence();
    const std::int64_t after = steady_ns();
    if (after - before < best.width) best = {before + (after - before) / 2, tsc, after - before};
  }
  return best;
}
#endif

}  // namespace detail

// The CPU's time-stamp counter in nanoseconds, on steady_clock's epoch: the
// kernel's x86 sched_clock (native_sched_clock(): the TSC times a cyc2ns
// multiplier, shifted) in user space. Where the TSC cannot be trusted it
// reads steady_clock instead; uses_tsc() says which.
//
// Why: a worker loop that stamps every task it runs reads the clock once or
// twice a task. On a KVM guest whose clocksource is kvm-clock a
// steady_clock read goes through the vDSO's pvclock page, a raw RDTSC
// does not; TscClock::now() is the RDTSC plus a multiply and a shift, and
// costs about what the RDTSC costs (docs/benchmarks.md, "Clock reads":
// BM_clock_steady against BM_clock_tsc).
//
// When it uses the TSC: x86-64 with an invariant TSC (CPUID 0x80000007 EDX
// bit 8), and a calibration that passes its sanity checks (a rate between
// 100 MHz and 100 GHz, an error bound under 1/1024). Anywhere else (another
// architecture, no invariant TSC, a failed calibration, or the
// steady_fallback tag) now() is SteadyClock::now() behind one predictable
// branch.
//
// Calibration (the constructor): a (steady_clock, TSC) pair, the TSC read
// bracketed by two steady reads (the tightest of eight tries); a busy wait
// of the calibration window (default 2 ms, at least 100 us); a second pair.
// The rate is the ratio of the two differences, kept as `mult`, ns per
// tick in 32.32 fixed point:
//   now() = base_ns + ((tsc - base_tsc) * mult) >> 32
// with base_ns the second pair's steady time, base_tsc its TSC, and a
// 128-bit product (no overflow, no precision lost to a pre-shift).
//
// Accuracy: the rate is steady_clock's to within the calibration's error,
// about the read jitter over the window (two brackets of tens of ns over
// 2 ms: 1e-4 or better). A duration measured with TscClock is right to that
// fraction, and its readings drift from steady_clock's by at most that
// fraction of the time since construction (plus half a bracket at the
// start): 1e-4 is 0.1 ms after 1 s, 6 ms after a minute. Compare a
// TscClock reading with a SteadyClock one only approximately; mix readings
// of the two clocks in one policy state only where that drift is harmless.
// Each TscClock has its own calibration: two constructed apart differ
// likewise; copies agree exactly. Two sources of drift are outside the
// calibration: NTP slews CLOCK_MONOTONIC (up to 500 ppm) and not the TSC,
// and a rate that changes after construction (a virtual machine moved to a
// host of another TSC frequency without TSC scaling) is not followed;
// construct a new clock where that matters.
//
// Monotonicity: never decreases on one CPU. Across CPUs it is as monotonic
// as the TSCs are synchronised (the kernel's sched_clock_cpu() has the same
// property; on current hardware and KVM, within tens of cycles). A thread
// that migrates to a CPU whose TSC lags may read a slightly earlier time;
// every policy reads a backwards step as no time passing (concepts.hpp,
// Clock I1; docs/reliability.md). The TSC read is not fenced, like the
// kernel's: it may be taken a few tens of cycles early or late relative to
// the surrounding instructions.
//
// Range: 2^63 TSC ticks after construction (about 97 years at 3 GHz)
// before the difference wraps.
//
// A trivially copyable value of 24 bytes: copies share the calibration and
// read the same timeline, so a pool calibrates once and hands each worker a
// copy (no sharing, no false sharing on the read path).
//
//   const taskplace::TscClock clock;          // ~2 ms: calibrates
//   std::vector<taskplace::TscClock> per_worker(n, clock);
//   tracker.idle_end(state, per_worker[w].now());
class TscClock {
 public:
  // Tag: read steady_clock, never the TSC (tests, or to rule the TSC out).
  struct steady_fallback_t {
    explicit steady_fallback_t() = default;
  };
  static constexpr steady_fallback_t steady_fallback{};

  // default 2 ms: an error of about 1e-4 with reads of tens of ns.
  static constexpr Nanoseconds default_calibration{2'000'000};
  // A shorter window is lengthened to this (1e-3 with such reads).
  static constexpr Nanoseconds min_calibration{100'000};
  // A longer window is shortened to this: at 1 s the read jitter is below
  // 1e-7, far under NTP's slew (rate_error_inverse), so a longer wait buys
  // nothing, and hours::max() must not spin for 292 years.
  static constexpr Nanoseconds max_calibration{1'000'000'000};
  // How far its rate may be from steady_clock's, as 1/rate_error_inverse:
  // the calibration refuses an error bound over 1/1024 (about 0.1%), and
  // NTP may slew CLOCK_MONOTONIC by up to 500 ppm (under 1/2048) after it.
  // A deadline on this clock that must not come early by steady_clock
  // adds 1/rate_error_inverse of its delay (the pool's sleeps do).
  static constexpr std::int64_t rate_error_inverse = 512;

  // Effects: TscClock(default_calibration).
  TscClock() noexcept : TscClock(default_calibration) {}

  // Effects: calibrates the TSC against steady_clock over `calibration`
  // (clamped to [min_calibration, max_calibration]; a duration past
  // nanoseconds' range saturates first), busy-waiting on this thread; on
  // failure, or where there is no invariant TSC, the clock reads
  // steady_clock.
  // Complexity: the window plus about 20 clock reads; a few
  // microseconds where the TSC is not used. Thread-safety: none needed
  // (touches no shared state).
  explicit TscClock(SaturatingNanoseconds calibration) noexcept {
#if TASKPLACE_DETAIL_X86_TSC
    calibrate(std::clamp<Nanoseconds>(calibration, min_calibration, max_calibration));
#else
    (void)calibration;
#endif
  }

  // Effects: a clock that reads steady_clock. Complexity: O(1).
  constexpr explicit TscClock(steady_fallback_t) noexcept {}

  // Returns: nanoseconds on steady_clock's epoch: the TSC scaled by the
  // calibration, or SteadyClock::now() where uses_tsc() is false.
  // Complexity: one RDTSC, a 64 x 64-bit multiply and a shift; no lock, no
  // system call, no memory written. Thread-safety: const, reads only this
  // object; any number of threads may call it concurrently.
  Nanoseconds now() const noexcept {
#if TASKPLACE_DETAIL_X86_TSC
    if (mult_ != 0) [[likely]] {
      __extension__ using i128 = __int128;
      // Signed: a TSC a few ticks behind base_tsc_ (another CPU's, just
      // after construction) reads as a little earlier, not as 2^64 ticks on.
      const auto ticks = static_cast<std::int64_t>(__builtin_ia32_rdtsc() - base_tsc_);
      const i128 product = static_cast<i128>(ticks) * static_cast<std::int64_t>(mult_);
      const i128 scaled = product >> shift;
      return Nanoseconds{base_ns_ + static_cast<std::int64_t>(scaled)};
    }
#endif
    return SteadyClock{}.now();
  }

  // Returns: true where now() reads the TSC, false where it reads
  // steady_clock. Complexity: O(1). Thread-safety: const.
  bool uses_tsc() const noexcept { return mult_ != 0; }

  // Returns: the process's TscClock, calibrated over the default window by
  // the first call (which spins that long); every later call, from any
  // thread, returns the same clock at once. One calibration for all the
  // pools, schedulers and stamps of a program, so that their readings lie
  // on one timeline. Copy it where it is read often (a copy skips the
  // static's guard). Thread-safety: any threads (a function-local static).
  static const TscClock& process() noexcept {
    static const TscClock clock{};
    return clock;
  }

 private:
#if TASKPLACE_DETAIL_X86_TSC
  void calibrate(Nanoseconds window) noexcept {
    if (!detail::invariant_tsc()) return;
    const detail::TscSample first = detail::tsc_sample();
    while (detail::steady_ns() - first.ns < window.count()) __builtin_ia32_pause();
    const detail::TscSample second = detail::tsc_sample();

    const std::int64_t ns = second.ns - first.ns;
    const std::uint64_t ticks = second.tsc - first.tsc;
    // Sanity: time passed on both clocks, the TSC did not jump back (or
    // wrap), and the two half-brackets are under 1/1024 of the window (the
    // rate's error bound; rate_error_inverse adds NTP's slew to it).
    if (ns <= 0 || ticks == 0 || ticks > std::uint64_t{std::numeric_limits<std::int64_t>::max()}) return;
    if ((first.width + second.width) / 2 > ns / 1024) return;
    __extension__ using u128 = unsigned __int128;
    const u128 hz = static_cast<u128>(ticks) * 1'000'000'000u / static_cast<std::uint64_t>(ns);
    if (hz < 100'000'000u || hz > u128{100'000'000'000u}) return;
    // ns per tick in 32.32 fixed point: with hz in [1e8, 1e11] the mult
    // lies in [2^25, 2^36], so its rounding is 2^-25 at worst, far below
    // the calibration's own error. A constant shift makes the scaling a
    // multiply and one double-word shift (now() is on every run's path).
    const u128 mult = (static_cast<u128>(ns) << shift) / ticks;
    if (mult == 0 || mult > u128{std::numeric_limits<std::int64_t>::max()}) return;
    base_tsc_ = second.tsc;
    base_ns_ = second.ns;
    mult_ = static_cast<std::uint64_t>(mult);
  }
#endif

  // The scale's fixed-point position: now() is base_ns_ + (ticks * mult_) >> shift.
  static constexpr unsigned shift = 32;
  // Invariant: mult_ == 0 (steady_clock) or 1 <= mult_ <= INT64_MAX.
  // Off x86-64 only mult_ is read (it stays 0).
  [[maybe_unused]] std::uint64_t base_tsc_ = 0;
  [[maybe_unused]] std::int64_t base_ns_ = 0;
  std::uint64_t mult_ = 0;
};
static_assert(Clock<TscClock>);
static_assert(std::is_trivially_copyable_v<TscClock>);

}  // namespace taskplace
