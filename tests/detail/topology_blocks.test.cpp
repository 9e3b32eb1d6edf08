// Tests for taskplace/detail/topology_blocks.hpp: CpuBlocks, the computed
// CPU range of UniformTopology.
#include "taskplace/detail/topology_blocks.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

using taskplace::CpuId;
using taskplace::detail::CpuBlocks;

static_assert(CpuBlocks{2, 2, 8, 4}[2] == 10);
static_assert(CpuBlocks{2, 2, 8, 4}.lower_bound_index(11) == 3);
static_assert(CpuBlocks{5, 4, 0, 4}.back() == 8);

TEST_CASE("elements follow base + (i / width) * stride + i % width", "[topology_blocks]") {
  // One block (nested numbering), two (SMT-2 x86 numbering), more (SMT-4),
  // and width 1 (an x86 core), each element by index and by iterator.
  for (std::uint32_t width : {1u, 3u, 7u, 56u})
    for (std::uint32_t blocks : {1u, 2u, 3u, 4u, 8u})
      for (std::uint32_t base : {0u, 5u}) {
        const std::uint32_t stride = blocks == 1 ? 0 : width + 3;
        const CpuBlocks b{base, width, stride, width * blocks};
        std::uint32_t bad = 0;
        auto it = b.begin();
        for (std::uint32_t i = 0; i < b.count; ++i, ++it) {
          const CpuId want = base + (i / width) * stride + i % width;
          bad += b[i] != want;
          bad += *it != want;
          bad += b.begin()[i] != want;
        }
        CHECK(bad == 0);
        CHECK(it == b.end());
      }
}

TEST_CASE("lower_bound_index is the index lower_bound finds", "[topology_blocks]") {
  for (std::uint32_t width : {1u, 2u, 5u, 56u})
    for (std::uint32_t blocks : {1u, 2u, 3u})
      for (std::uint32_t gap : {0u, 1u, 9u}) {
        const std::uint32_t stride = blocks == 1 ? 0 : width + gap;
        const CpuBlocks b{4, width, stride, width * blocks};
        const std::vector<CpuId> v(b.begin(), b.end());
        REQUIRE(std::is_sorted(v.begin(), v.end()));
        std::uint32_t bad = 0;
        // Members, the gaps between blocks, and values below and past the range.
        for (CpuId c = 0; c < v.back() + 5; ++c) {
          const auto want = static_cast<std::uint32_t>(std::lower_bound(v.begin(), v.end(), c) - v.begin());
          bad += b.lower_bound_index(c) != want;
          bad += taskplace::detail::lower_bound_index(b, c) != want;
          bad += taskplace::detail::lower_bound_index(v, c) != want;  // the generic search
        }
        CHECK(bad == 0);
      }
  CHECK(CpuBlocks{}.lower_bound_index(3) == 0);  // empty
}

TEST_CASE("range_contains finds exactly the members of an ascending CPU range", "[topology_blocks]") {
  using taskplace::detail::range_contains;
  // The x86 SMT-2 shape: 2,3,10,11.
  const CpuBlocks b{2, 2, 8, 4};
  const std::vector<CpuId> v = {2, 3, 10, 11};
  for (CpuId c = 0; c < 16; ++c) {
    const bool want = c == 2 || c == 3 || c == 10 || c == 11;
    CHECK(range_contains(b, c) == want);
    CHECK(range_contains(std::span<const CpuId>(v), c) == want);
  }
  CHECK_FALSE(range_contains(std::span<const CpuId>{}, 0));
}
