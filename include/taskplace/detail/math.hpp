// taskplace/detail/math.hpp: the small arithmetic every heuristic shares.
//
// update_avg is the kernel's EWMA (kernel/sched: update_avg, weight 1/8);
// elapsed() is the "a clock that goes backwards means no time passed" rule;
// the saturating helpers keep counters from wrapping.
#pragma once

#include "taskplace/detail/config.hpp"

#include <cstdint>
#include <limits>

#include "taskplace/types.hpp"

namespace taskplace::detail {

// avg += (sample - avg) / 8, computed in signed arithmetic like the kernel
// (s64 diff). Division truncates toward zero, as C's does.
constexpr Nanoseconds update_avg(Nanoseconds avg, Nanoseconds sample) noexcept {
  const std::int64_t diff = sample.count() - avg.count();
  return Nanoseconds{avg.count() + diff / 8};
}

// Time from `since` to `now`; zero when the clock went backwards, and the
// largest duration when the true difference does not fit (stamps at opposite
// ends of the 64-bit range): the subtraction is done in unsigned arithmetic,
// so it never overflows.
constexpr Nanoseconds elapsed(Nanoseconds since, Nanoseconds now) noexcept {
  if (now <= since) return Nanoseconds::zero();
  const std::uint64_t d =
      static_cast<std::uint64_t>(now.count()) - static_cast<std::uint64_t>(since.count());
  constexpr auto max = static_cast<std::uint64_t>(Nanoseconds::max().count());
  return Nanoseconds{static_cast<std::int64_t>(d > max ? max : d)};
}

// now > stamp + period, without overflow for every pair of 64-bit stamps:
// the difference of now > stamp is taken in 64 unsigned bits, never
// saturated, so a period of Nanoseconds::max() still elapses once more than
// that much time has passed. A clock that went backwards (or stood still)
// elapses nothing. Precondition: period >= 0 (a negative one reads as a
// huge period: no time is long enough, still defined).
constexpr bool strictly_after(Nanoseconds now, Nanoseconds stamp, Nanoseconds period) noexcept {
  if (now <= stamp) return false;
  const std::uint64_t diff = static_cast<std::uint64_t>(now.count()) - static_cast<std::uint64_t>(stamp.count());
  return diff > static_cast<std::uint64_t>(period.count());
}
static_assert(strictly_after(Nanoseconds::max(), Nanoseconds{-1}, Nanoseconds::max()));
static_assert(!strictly_after(Nanoseconds::max(), Nanoseconds{0}, Nanoseconds::max()));

// a + 1 without wrapping past the maximum (branch-free: adds 0 at the top).
constexpr std::uint32_t saturating_inc(std::uint32_t a) noexcept {
  return a + static_cast<std::uint32_t>(a != std::numeric_limits<std::uint32_t>::max());
}

// a + b for counters, clamped at the maximum instead of wrapping.
constexpr std::uint32_t saturating_add(std::uint32_t a, std::uint32_t b) noexcept {
  return a > std::numeric_limits<std::uint32_t>::max() - b ? std::numeric_limits<std::uint32_t>::max() : a + b;
}

// Sum of two durations, clamped at the maximum (or minimum) representable:
// the public taskplace::saturating_add (types.hpp), an overload beside the
// counters' one above.
using taskplace::saturating_add;

// Product of two 32-bit values, exact in 64 bits (never overflows).
constexpr std::uint64_t wide_mul(std::uint32_t a, std::uint32_t b) noexcept {
  return static_cast<std::uint64_t>(a) * static_cast<std::uint64_t>(b);
}

// The sign of a * b - x, exact for every input: the product is formed in
// two 64-bit halves (a 96-bit value at most), so it never wraps.
constexpr int compare_product(std::uint64_t a, std::uint32_t b, std::uint64_t x) noexcept {
  const std::uint64_t low = (a & 0xffffffffu) * b;  // < 2^64
  const std::uint64_t high = (a >> 32) * b;         // < 2^64, weight 2^32
  const std::uint64_t lo = low + (high << 32);
  const std::uint64_t hi = (high >> 32) + (lo < low ? 1u : 0u);
  if (hi != 0) return 1;
  return lo > x ? 1 : (lo < x ? -1 : 0);
}

// The 128-bit product of two 64-bit values, as {high, low} halves.
struct Wide128 {
  std::uint64_t hi, lo;
};
constexpr Wide128 mul_128(std::uint64_t a, std::uint64_t b) noexcept {
  const std::uint64_t a0 = a & 0xffffffffu, a1 = a >> 32, b0 = b & 0xffffffffu, b1 = b >> 32;
  const std::uint64_t p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
  const std::uint64_t mid = (p00 >> 32) + (p01 & 0xffffffffu) + (p10 & 0xffffffffu);  // < 3 * 2^32
  return {p11 + (p01 >> 32) + (p10 >> 32) + (mid >> 32), (mid << 32) | (p00 & 0xffffffffu)};
}
// Returns: the sign of a * b - c * d, in exact arithmetic.
constexpr int compare_products(std::uint64_t a, std::uint64_t b, std::uint64_t c, std::uint64_t d) noexcept {
  const Wide128 x = mul_128(a, b), y = mul_128(c, d);
  if (x.hi != y.hi) return x.hi > y.hi ? 1 : -1;
  return x.lo > y.lo ? 1 : (x.lo < y.lo ? -1 : 0);
}

}  // namespace taskplace::detail
