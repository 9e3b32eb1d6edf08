// taskplace/detail/divisor.hpp: division of 32-bit CPU ids by a divisor
// fixed at construction, without a divide instruction.
//
// UniformTopology divides every CPU id by threads per core, cores per LLC
// and so on, on every wake-up. Those divisors are known once the topology
// is built, so the quotient is a multiply and a shift (Lemire, Kaser and
// Kurz, "Faster remainder by direct computation", 2019): with
// m = ceil(2^64 / d), n / d = floor(m * n / 2^64) for every 32-bit n and
// every d in [2, 2^32). d = 1 is kept apart (m would not fit).
//
//   constexpr taskplace::detail::Divisor by56{56};
//   static_assert(by56.div(223) == 3 && by56.mod(223) == 55);
#pragma once

#include "taskplace/detail/config.hpp"

#include <cstdint>

namespace taskplace::detail {

// The high 64 bits of a 64 x 32-bit product, m * n / 2^64, from two 32 x 32
// products (portable, constexpr); where the compiler has a 128-bit type,
// one wide multiply.
constexpr std::uint64_t mul_hi_u64_u32_portable(std::uint64_t m, std::uint32_t n) noexcept {
  const std::uint64_t lo = (m & 0xffffffffu) * n;  // < 2^64
  const std::uint64_t hi = (m >> 32) * n;          // < 2^64
  return (hi + (lo >> 32)) >> 32;                  // hi + (lo >> 32) < 2^64: no carry lost
}

constexpr std::uint64_t mul_hi_u64_u32(std::uint64_t m, std::uint32_t n) noexcept {
#if defined(__SIZEOF_INT128__)
  __extension__ using u128 = unsigned __int128;
  return static_cast<std::uint64_t>((static_cast<u128>(m) * n) >> 64);
#else
  return mul_hi_u64_u32_portable(m, n);
#endif
}

// Invariant: value() >= 1; div(n) == n / value() and mod(n) == n % value()
// for every 32-bit n.
class Divisor {
 public:
  // Precondition: d >= 1 (a 0 is read as 1, so that division stays defined).
  constexpr explicit Divisor(std::uint32_t d = 1) noexcept
      : d_(d == 0 ? 1u : d), m_(d_ == 1 ? 0 : ~std::uint64_t{0} / d_ + 1) {}

  constexpr std::uint32_t value() const noexcept { return d_; }
  // Returns: n / value(). Complexity: O(1), one multiply. Thread-safety: pure.
  constexpr std::uint32_t div(std::uint32_t n) const noexcept {
    return m_ == 0 ? n : static_cast<std::uint32_t>(mul_hi_u64_u32(m_, n));
  }
  // Returns: n % value(). Complexity: O(1), two multiplies.
  constexpr std::uint32_t mod(std::uint32_t n) const noexcept { return n - div(n) * d_; }

  friend constexpr bool operator==(const Divisor& a, const Divisor& b) noexcept { return a.d_ == b.d_; }

 private:
  std::uint32_t d_;
  std::uint64_t m_;  // ceil(2^64 / d) for d >= 2; 0 for d == 1
};

}  // namespace taskplace::detail
