// taskplace/detail/topology_blocks.hpp: the CpuRange UniformTopology hands
// out, a computed (storage-free) range.
//
// A uniform machine's core, LLC, node and machine are each "the hardware
// threads of a run of consecutive cores". Numbered nested, they are one
// contiguous run of CPUs; numbered the Linux-x86 way (SMT siblings one
// cores-total apart), they are `threads` runs of `width` CPUs, `stride`
// apart. Element i is  base + (i / width) * stride + i % width.
// Producers have at most threads-per-core blocks, so the first two blocks
// are reached without a division (a nested range is one block; an SMT-2
// x86 range two); only SMT-3 and wider pay one divide past the second.
//
//   CpuBlocks b{/*base*/ 2, /*width*/ 2, /*stride*/ 8, /*size*/ 4};  // 2,3,10,11
//   for (CpuId c : b) use(c);
#pragma once

#include "taskplace/detail/config.hpp"

#include <algorithm>
#include <compare>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <ranges>

#include "taskplace/types.hpp"

namespace taskplace::detail {

// Invariant: width >= 1; the elements are ascending when stride >= width
// (or size <= width), which every producer guarantees.
struct CpuBlocks {
  CpuId base = 0;
  std::uint32_t width = 1;
  std::uint32_t stride = 0;
  std::uint32_t count = 0;

  class iterator {
   public:
    using iterator_concept = std::random_access_iterator_tag;
    using iterator_category = std::random_access_iterator_tag;
    using value_type = CpuId;
    using difference_type = std::ptrdiff_t;
    using reference = CpuId;
    using pointer = void;

    constexpr iterator() = default;
    constexpr iterator(const CpuBlocks* r, std::uint32_t i) noexcept
        : base_(r->base), width_(r->width), stride_(r->stride), i_(i) {}

    constexpr CpuId operator*() const noexcept { return at(i_); }
    constexpr CpuId operator[](difference_type n) const noexcept {
      return at(static_cast<std::uint32_t>(static_cast<difference_type>(i_) + n));
    }
    constexpr iterator& operator++() noexcept { ++i_; return *this; }
    constexpr iterator operator++(int) noexcept { auto t = *this; ++i_; return t; }
    constexpr iterator& operator--() noexcept { --i_; return *this; }
    constexpr iterator operator--(int) noexcept { auto t = *this; --i_; return t; }
    constexpr iterator& operator+=(difference_type n) noexcept {
      i_ = static_cast<std::uint32_t>(static_cast<difference_type>(i_) + n);
      return *this;
    }
    constexpr iterator& operator-=(difference_type n) noexcept { return *this += -n; }
    friend constexpr iterator operator+(iterator it, difference_type n) noexcept { return it += n; }
    friend constexpr iterator operator+(difference_type n, iterator it) noexcept { return it += n; }
    friend constexpr iterator operator-(iterator it, difference_type n) noexcept { return it -= n; }
    friend constexpr difference_type operator-(const iterator& a, const iterator& b) noexcept {
      return static_cast<difference_type>(a.i_) - static_cast<difference_type>(b.i_);
    }
    friend constexpr bool operator==(const iterator& a, const iterator& b) noexcept {
      return a.i_ == b.i_;
    }
    friend constexpr std::strong_ordering operator<=>(const iterator& a, const iterator& b) noexcept {
      return a.i_ <=> b.i_;
    }

   private:
    constexpr CpuId at(std::uint32_t i) const noexcept { return element(base_, width_, stride_, i); }
    CpuId base_ = 0;
    std::uint32_t width_ = 1;
    std::uint32_t stride_ = 0;
    std::uint32_t i_ = 0;
  };

  constexpr iterator begin() const noexcept { return {this, 0}; }
  constexpr iterator end() const noexcept { return {this, count}; }
  constexpr std::size_t size() const noexcept { return count; }
  constexpr bool empty() const noexcept { return count == 0; }
  constexpr CpuId operator[](std::size_t i) const noexcept {
    return element(base, width, stride, static_cast<std::uint32_t>(i));
  }
  constexpr CpuId front() const noexcept { return base; }
  constexpr CpuId back() const noexcept { return (*this)[count - 1]; }

  // Returns: the number of elements < c, i.e. the index std::ranges::
  //   lower_bound(*this, c) finds (the index of c when c is an element).
  // Precondition: the elements ascend (the type's invariant).
  // Complexity: O(number of blocks), no division. Thread-safety: pure.
  constexpr std::uint32_t lower_bound_index(CpuId c) const noexcept {
    std::uint32_t below = 0;
    CpuId start = base;
    for (std::uint32_t left = count; left > 0; start += stride) {
      const std::uint32_t w = left < width ? left : width;
      if (c < start) break;  // ascending: every later element is >= start too
      if (c - start < w) return below + (c - start);
      below += w;
      left -= w;
    }
    return below;
  }

  // base + (i / width) * stride + i % width.
  static constexpr CpuId element(CpuId base, std::uint32_t width, std::uint32_t stride,
                                 std::uint32_t i) noexcept {
    if (i < width) return base + i;
    if (i - width < width) return base + stride + (i - width);
    return base + (i / width) * stride + i % width;
  }
};

// The position of c in an ascending CPU range: CpuBlocks computes it per
// block; any other range is searched (std::ranges::lower_bound).
template <class Range>
constexpr std::uint32_t lower_bound_index(const Range& r, CpuId c) {
  if constexpr (requires { { r.lower_bound_index(c) } -> std::convertible_to<std::uint32_t>; }) {
    return r.lower_bound_index(c);
  } else {
    return static_cast<std::uint32_t>(std::ranges::lower_bound(r, c) - std::ranges::begin(r));
  }
}

// Whether the ascending CPU range r holds c (a level's span, say).
template <class Range>
constexpr bool range_contains(const Range& r, CpuId c) {
  const std::uint32_t i = lower_bound_index(r, c);
  return i < std::ranges::size(r) &&
         static_cast<CpuId>(std::ranges::begin(r)[static_cast<std::ptrdiff_t>(i)]) == c;
}

}  // namespace taskplace::detail

// Borrowed: iterators hold copies of the parameters, never a pointer.
template <>
inline constexpr bool std::ranges::enable_borrowed_range<taskplace::detail::CpuBlocks> = true;
