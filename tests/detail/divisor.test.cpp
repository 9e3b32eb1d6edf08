// Tests for taskplace/detail/divisor.hpp: division by a divisor fixed at
// construction, checked against the division operator.
#include "taskplace/detail/divisor.hpp"

#include <catch2/catch.hpp>

#include <cstdint>
#include <random>
#include <vector>

using taskplace::detail::Divisor;

static_assert(Divisor{56}.div(223) == 3 && Divisor{56}.mod(223) == 55);
static_assert(Divisor{1}.div(0xffffffffu) == 0xffffffffu && Divisor{1}.mod(7) == 0);
static_assert(Divisor{0}.value() == 1);  // 0 is read as 1: never a division by zero
static_assert(Divisor{3}.div(0xffffffffu) == 0x55555555u);

namespace {
// Divisors of every kind: 1, powers of two, the shapes' odd and even
// non-powers (3, 6, 7, 12, 56, 112, 224), and the extremes.
const std::vector<std::uint32_t> divisors = {
    1u,  2u,   3u,   4u,   5u,   6u,    7u,    8u,          10u,         12u,         16u,
    20u, 40u,  56u,  80u,  100u, 112u,  224u,  256u,        4096u,       65537u,      0x7fffffffu,
    0x80000000u,   0x80000001u, 0xfffffffeu, 0xffffffffu};
}  // namespace

TEST_CASE("a divisor divides like the operator for every small numerator", "[divisor]") {
  for (std::uint32_t d : divisors) {
    const Divisor by{d};
    CHECK(by.value() == d);
    std::uint32_t bad = 0;
    for (std::uint32_t n = 0; n < 70'000; ++n)
      bad += (by.div(n) != n / d) + (by.mod(n) != n % d);
    CHECK(bad == 0);
  }
}

TEST_CASE("a divisor divides like the operator at the top of the range", "[divisor]") {
  std::mt19937 rng(12);
  for (std::uint32_t d : divisors) {
    const Divisor by{d};
    std::uint32_t bad = 0;
    for (std::uint32_t k = 0; k < 70'000; ++k) {
      const std::uint32_t n = 0xffffffffu - k;
      bad += (by.div(n) != n / d) + (by.mod(n) != n % d);
      const auto r = static_cast<std::uint32_t>(rng());
      bad += (by.div(r) != r / d) + (by.mod(r) != r % d);
      // Around the multiples of d, where a rounding error would show first.
      const std::uint64_t m = std::uint64_t{d} * (rng() % (std::uint64_t{0xffffffffu} / d + 1));
      for (std::uint64_t x : {m, m + 1, m - 1}) {
        if (x > 0xffffffffu) continue;
        const auto v = static_cast<std::uint32_t>(x);
        bad += (by.div(v) != v / d) + (by.mod(v) != v % d);
      }
    }
    CHECK(bad == 0);
  }
}

TEST_CASE("random divisors agree with the operator", "[divisor]") {
  std::mt19937 rng(13);
  std::uint32_t bad = 0;
  for (int k = 0; k < 200'000; ++k) {
    std::uint32_t d = static_cast<std::uint32_t>(rng()) >> (rng() % 32);
    if (d == 0) d = 1;
    const Divisor by{d};
    const auto n = static_cast<std::uint32_t>(rng());
    bad += (by.div(n) != n / d) + (by.mod(n) != n % d);
  }
  CHECK(bad == 0);
}

TEST_CASE("the portable high multiply matches the wide one", "[divisor]") {
  std::mt19937_64 rng(14);
  std::uint32_t bad = 0;
  for (int k = 0; k < 200'000; ++k) {
    const std::uint64_t m = rng();
    const auto n = static_cast<std::uint32_t>(rng());
    bad += taskplace::detail::mul_hi_u64_u32_portable(m, n) != taskplace::detail::mul_hi_u64_u32(m, n);
  }
  // And against the definition on the extremes.
  CHECK(taskplace::detail::mul_hi_u64_u32_portable(~std::uint64_t{0}, 0xffffffffu) == 0xfffffffeu);
  CHECK(taskplace::detail::mul_hi_u64_u32_portable(std::uint64_t{1} << 32, 1u << 31) == 0u);
  CHECK(taskplace::detail::mul_hi_u64_u32_portable(std::uint64_t{1} << 63, 2u) == 1u);
  CHECK(bad == 0);
}
