// detail/math.hpp: compare_product, the exact comparison of a 64-bit value
// times a 32-bit factor with a 64-bit value (the affine rules' load tests).
#include <catch2/catch.hpp>

#include <cstdint>
#include <limits>

#include "taskplace/detail/math.hpp"

using taskplace::detail::compare_product;

TEST_CASE("compare_product is the sign of a * b - x", "[detail][math]") {
  CHECK(compare_product(0, 0, 0) == 0);
  CHECK(compare_product(3, 4, 12) == 0);
  CHECK(compare_product(3, 4, 11) == 1);
  CHECK(compare_product(3, 4, 13) == -1);
  CHECK(compare_product(7, 0, 0) == 0);
  CHECK(compare_product(0, 7, 1) == -1);
}

TEST_CASE("compare_product is exact where a 64-bit product wraps", "[detail][math]") {
  constexpr std::uint64_t max64 = std::numeric_limits<std::uint64_t>::max();
  constexpr std::uint32_t max32 = std::numeric_limits<std::uint32_t>::max();
  // 2^48 * 2^31 = 2^79: a 64-bit product would wrap to 0.
  CHECK(compare_product(std::uint64_t{1} << 48, 1u << 31, max64) == 1);
  // 2^32 * 2^32 = 2^64 exactly: one more than the largest 64-bit value.
  CHECK(compare_product(std::uint64_t{1} << 32, 0u + (1u << 31), max64) == -1);  // 2^63
  CHECK(compare_product(std::uint64_t{1} << 33, 1u << 31, max64) == 1);           // 2^64
  // (2^64 - 1) * 1 against itself; * 2 exceeds it; the largest inputs.
  CHECK(compare_product(max64, 1, max64) == 0);
  CHECK(compare_product(max64, 2, max64) == 1);
  CHECK(compare_product(max64, max32, max64) == 1);
  // A carry out of the low half: (2^32 + 1) * (2^32 - 1) = 2^64 - 1.
  CHECK(compare_product((std::uint64_t{1} << 32) + 1, max32, max64) == 0);
  CHECK(compare_product((std::uint64_t{1} << 32) + 1, max32, max64 - 1) == 1);
}
