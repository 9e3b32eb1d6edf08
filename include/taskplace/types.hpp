// taskplace/types.hpp: vocabulary types shared by every header.
//
// Provides the CPU and task identifiers, the balance-level kinds, the time
// type (nanoseconds, as everywhere in the kernel's scheduler) and the
// exception types that bad input raises.
//
//   taskplace::CpuId cpu = 3;
//   taskplace::Nanoseconds now = clock.now();
#pragma once

#include "taskplace/detail/config.hpp"

#include <chrono>
#include <cstdint>
#include <limits>
#include <ratio>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace taskplace {

// A dense CPU index in [0, topology.cpu_count()). Topologies built from the
// operating system keep their own mapping to OS CPU numbers.
using CpuId = std::uint32_t;

// "No CPU": returned by searches that found nothing, used as "unknown".
inline constexpr CpuId no_cpu = std::numeric_limits<CpuId>::max();

// Opaque identity of a task, compared for equality only (the kernel compares
// task_struct pointers). 0 means "no task". Embedders typically pass
// reinterpret_cast<TaskKey>(task_pointer) or a task id + 1.
using TaskKey = std::uintptr_t;
inline constexpr TaskKey no_task = 0;

// The most balance levels a CPU may have (SMT, cluster, LLC, node, and a few
// NUMA distances). Per-CPU state sized by it lives in fixed arrays.
inline constexpr std::uint32_t max_levels = 8;

// Every time stamp and duration in the library: signed 64-bit nanoseconds
// since the clock's epoch. Signed, so that "a clock went backwards" is
// visible as a negative difference instead of a huge unsigned one.
using Nanoseconds = std::chrono::nanoseconds;

// Returns: `d` in nanoseconds, saturated instead of overflowing: at or past
//   2^63 ns (about 292 years: hours::max(), a double of 1e300 s) it is
//   Nanoseconds::max(), at or before -2^63 ns Nanoseconds::min(), a NaN is
//   0; every other value is the one duration_cast gives (rounded toward
//   zero). std::chrono's own conversion of such a value (hours::max() to
//   nanoseconds) overflows a signed 64-bit product: undefined behaviour,
//   in practice a wrapped value (0 for hours::max()). Every duration a user
//   hands the library as a setting goes through this function (see
//   SaturatingNanoseconds and NonNegativeNanoseconds below).
// Complexity: O(1), exact 128-bit arithmetic for integral counts.
// Thread-safety: pure.
//   taskplace::saturating_ns(std::chrono::hours::max()) == taskplace::Nanoseconds::max()
template <class Rep, class Period>
constexpr Nanoseconds saturating_ns(const std::chrono::duration<Rep, Period>& d) noexcept {
  using Ratio = std::ratio_divide<Period, std::nano>;  // nanoseconds per tick: num / den
  constexpr auto max = std::numeric_limits<std::int64_t>::max();
  constexpr auto min = std::numeric_limits<std::int64_t>::min();
  if constexpr (std::chrono::treat_as_floating_point_v<Rep>) {
    const long double ns = static_cast<long double>(d.count()) * static_cast<long double>(Ratio::num) /
                           static_cast<long double>(Ratio::den);
    if (ns != ns) return Nanoseconds::zero();
    if (ns >= 0x1p63L) return Nanoseconds::max();
    if (ns <= -0x1p63L) return Nanoseconds::min();
    return Nanoseconds{static_cast<std::int64_t>(ns)};
  } else {
    static_assert(std::is_integral_v<Rep> && sizeof(Rep) <= sizeof(std::int64_t),
                  "taskplace::saturating_ns: the count must be an integer of at most 64 bits, or "
                  "floating point");
    // |count| <= 2^64 and num < 2^63: the product fits 128 signed bits.
    __extension__ using i128 = __int128;
    const i128 ns =
        static_cast<i128>(d.count()) * static_cast<i128>(Ratio::num) / static_cast<i128>(Ratio::den);
    if (ns > max) return Nanoseconds::max();
    if (ns < min) return Nanoseconds::min();
    return Nanoseconds{static_cast<std::int64_t>(ns)};
  }
}

namespace detail {

// a + b, a - b, a * k, a / k on 64-bit nanosecond counts, saturating at the
// ends of the range instead of overflowing. a / 0 reads as the largest
// value of a's sign (0 / 0 as 0): a setting divided by zero is "as long as
// it gets", not a trap.
constexpr std::int64_t saturating_add_ns(std::int64_t a, std::int64_t b) noexcept {
  std::int64_t r = 0;
  if (__builtin_add_overflow(a, b, &r)) return b > 0 ? std::numeric_limits<std::int64_t>::max()
                                                     : std::numeric_limits<std::int64_t>::min();
  return r;
}
constexpr std::int64_t saturating_sub_ns(std::int64_t a, std::int64_t b) noexcept {
  std::int64_t r = 0;
  if (__builtin_sub_overflow(a, b, &r)) return b < 0 ? std::numeric_limits<std::int64_t>::max()
                                                     : std::numeric_limits<std::int64_t>::min();
  return r;
}
constexpr std::int64_t saturating_mul_ns(std::int64_t a, std::int64_t k) noexcept {
  std::int64_t r = 0;
  if (__builtin_mul_overflow(a, k, &r)) return (a < 0) != (k < 0) ? std::numeric_limits<std::int64_t>::min()
                                                                 : std::numeric_limits<std::int64_t>::max();
  return r;
}
constexpr std::int64_t saturating_div_ns(std::int64_t a, std::int64_t k) noexcept {
  if (k == 0) return a > 0 ? std::numeric_limits<std::int64_t>::max()
                           : a < 0 ? std::numeric_limits<std::int64_t>::min() : 0;
  if (k == -1) return saturating_sub_ns(0, a);  // min / -1 does not fit
  return a / k;
}

// The one implementation behind NonNegativeNanoseconds and
// SaturatingNanoseconds: a Nanoseconds that holds [Floor, max()], set
// from any std::chrono duration through saturating_ns and clamped at
// Floor, with compound assignments that saturate and clamp likewise.
// Self is the derived type (the compound assignments return it).
template <class Self, std::int64_t Floor>
struct ClampedNanoseconds : Nanoseconds {
  constexpr ClampedNanoseconds() noexcept : Nanoseconds(0) {}
  template <class Rep, class Period>
    requires std::is_convertible_v<std::chrono::duration<Rep, Period>, Nanoseconds>
  constexpr ClampedNanoseconds(const std::chrono::duration<Rep, Period>& d) noexcept
      : Nanoseconds(clamp(saturating_ns(d).count())) {}

  constexpr Self& operator+=(const Nanoseconds& d) noexcept {
    return set(saturating_add_ns(count(), d.count()));
  }
  constexpr Self& operator-=(const Nanoseconds& d) noexcept {
    return set(saturating_sub_ns(count(), d.count()));
  }
  constexpr Self& operator*=(const rep& k) noexcept { return set(saturating_mul_ns(count(), k)); }
  constexpr Self& operator/=(const rep& k) noexcept { return set(saturating_div_ns(count(), k)); }
  Self& operator%=(const rep&) = delete;
  Self& operator%=(const Nanoseconds&) = delete;
  Self& operator++() = delete;
  Self operator++(int) = delete;
  Self& operator--() = delete;
  Self operator--(int) = delete;

 private:
  static constexpr Nanoseconds clamp(std::int64_t v) noexcept { return Nanoseconds(v < Floor ? Floor : v); }
  constexpr Self& set(std::int64_t v) noexcept {
    static_cast<Nanoseconds&>(*this) = clamp(v);
    return static_cast<Self&>(*this);
  }
};

}  // namespace detail

// Returns: the time `t` plus the duration `d` (or any two durations'
//   sum), saturated instead of overflowing: Nanoseconds::max() when the
//   sum is past the top of the range, Nanoseconds::min() below the
//   bottom; the exact sum otherwise. For an embedding's deadlines and
//   windows built from a clock's `now` and a setting that may be "never"
//   (Nanoseconds::max(): a spin that lasts until work comes, a timeout
//   that never fires): `now + d` in std::chrono overflows a signed 64-bit
//   count there (undefined behaviour, in practice a time in the past).
// Complexity: O(1). Thread-safety: pure.
//   taskplace::saturating_add(now, taskplace::Nanoseconds::max()) == taskplace::Nanoseconds::max()
constexpr Nanoseconds saturating_add(Nanoseconds t, Nanoseconds d) noexcept {
  return Nanoseconds{detail::saturating_add_ns(t.count(), d.count())};
}

// A duration setting: every tunable and option of the library that a user
// sets (migration_cost, decay periods, the pool's and Boost.Fiber
// group's options) has this type, or NonNegativeNanoseconds below. Publicly
// a Nanoseconds: every read (count(), comparisons, arithmetic giving a
// Nanoseconds) works on it unchanged. Setting it from a std::chrono
// duration that does not fit nanoseconds (hours::max(), "never") saturates
// at Nanoseconds::max() / min() (saturating_ns) instead of overflowing; the
// compound assignments += -= *= /= saturate too (x / 0 is max() for x > 0,
// min() for x < 0, 0 for 0); ++, --, %= are deleted. The plain operators
// (d * k, d + e) are std::chrono's and give a plain Nanoseconds.
// Time stamps and measured durations (`now`, a tracker's averages) stay
// plain Nanoseconds: a Clock produces them, in nanoseconds already.
// Invariant: none beyond Nanoseconds' (negative values allowed).
//   taskplace::SaturatingNanoseconds never = std::chrono::hours::max();  // Nanoseconds::max()
struct SaturatingNanoseconds
    : detail::ClampedNanoseconds<SaturatingNanoseconds, std::numeric_limits<std::int64_t>::min()> {
  using ClampedNanoseconds::ClampedNanoseconds;
};

// A duration tunable that is never negative: a negative value becomes zero
// where it is set (construction or assignment), so that a policy reads it
// on its hot path without clamping it again; a value past the top of the
// range saturates at Nanoseconds::max(), as SaturatingNanoseconds does.
// The compound assignments saturate and clamp as well (p *= INT64_MAX is
// max(), not a wrapped value); ++, -- and %= are deleted.
// Invariant: count() >= 0.
//   taskplace::NonNegativeNanoseconds p = -5s;   // p == 0s
struct NonNegativeNanoseconds : detail::ClampedNanoseconds<NonNegativeNanoseconds, 0> {
  using ClampedNanoseconds::ClampedNanoseconds;
};

// The kinds of balance level, smallest span first (kernel: the sched domain
// levels SMT, CLS, MC, PKG/NUMA).
enum class LevelKind : std::uint8_t {
  smt,      // hardware threads of one core
  cluster,  // cores sharing a mid-level cache (kernel CLS)
  llc,      // CPUs sharing the last-level cache (kernel MC)
  node,     // CPUs of one NUMA node or package
  machine,  // every CPU of the topology
};

constexpr const char* to_string(LevelKind k) noexcept {
  switch (k) {
    case LevelKind::smt: return "smt";
    case LevelKind::cluster: return "cluster";
    case LevelKind::llc: return "llc";
    case LevelKind::node: return "node";
    case LevelKind::machine: return "machine";
  }
  return "unknown";
}

// Raised when a topology is constructed from inconsistent data. The message
// names the CPU and the rule it breaks, e.g.
// "cpu 5: SMT siblings share an LLC (sibling 4 is in llc 0, cpu 5 in llc 1)".
class TopologyError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// Raised when a sysfs (or fake sysfs) file is missing or malformed. The
// message names the file.
class SysfsError : public std::runtime_error {
 public:
  SysfsError(const std::string& file, const std::string& what)
      : std::runtime_error(file + ": " + what), file_(file) {}
  const std::string& file() const noexcept { return file_; }

 private:
  std::string file_;
};

// Raised by a checked precondition (see detail/assert.hpp): an out-of-range
// CPU id, a level index past level_count(), and the like.
class PreconditionError : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

}  // namespace taskplace
