// taskplace_sim/latency_histogram.hpp: request latencies in bounded memory.
//
// A log-linear histogram: values below 2048 ns are counted exactly, larger
// ones in buckets 1/1024 of their size wide (each power of two split into
// 1024 equal buckets), so a quantile is exact below 2.048 us and within
// 0.1% above; the largest value is kept exactly. Memory depends on the
// largest value seen (8 KB per power of two above 2048 ns, at most 55,296
// buckets in all), not on how many were recorded: a simulation's memory
// stays linear in its CPUs and tasks however long it runs.
//
//   taskplace_sim::LatencyHistogram h;
//   h.record(1500);
//   h.record(250000);
//   const std::int64_t p50 = h.quantile(0.5);  // nearest rank, lower bound of the bucket
#pragma once

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace taskplace_sim {

class LatencyHistogram {
 public:
  static constexpr int exact_bits = 11;  // values below 2^11 are exact
  static constexpr std::uint64_t exact_limit = std::uint64_t{1} << exact_bits;
  static constexpr std::uint64_t sub_buckets = exact_limit / 2;  // per power of two above

  // Effects: counts one value. A negative value counts as 0.
  // Complexity: O(1), amortised over the growth of the bucket array.
  void record(std::int64_t value) {
    const std::uint64_t v = value < 0 ? 0 : static_cast<std::uint64_t>(value);
    const std::size_t i = index_of(v);
    if (i >= counts_.size()) counts_.resize(i + 1, 0);
    ++counts_[i];
    ++count_;
    if (v > max_) max_ = v;
  }

  std::uint64_t count() const noexcept { return count_; }
  bool empty() const noexcept { return count_ == 0; }
  // Effects: forgets every value, keeps the bucket array's memory.
  void clear() noexcept {
    std::fill(counts_.begin(), counts_.end(), 0);
    count_ = 0;
    max_ = 0;
  }

  // Returns: the q-quantile (q in [0, 1], clamped) by nearest rank: the
  // value of rank round(q x (count - 1)) in sorted order, as the lower
  // bound of its bucket (exact below 2048 ns); q = 1 gives the exact
  // maximum; 0 when empty. Complexity: O(buckets).
  std::int64_t quantile(double q) const noexcept {
    if (count_ == 0) return 0;
    q = std::clamp(q, 0.0, 1.0);
    if (q >= 1.0) return static_cast<std::int64_t>(max_);
    auto k = static_cast<std::uint64_t>(q * static_cast<double>(count_ - 1) + 0.5);
    if (k >= count_) k = count_ - 1;
    std::uint64_t seen = 0;
    for (std::size_t i = 0; i < counts_.size(); ++i) {
      seen += counts_[i];
      if (seen > k) return static_cast<std::int64_t>(std::min(lower_bound_of(i), max_));
    }
    return static_cast<std::int64_t>(max_);
  }

  // Returns: the bytes the bucket array holds.
  std::size_t memory_bytes() const noexcept { return counts_.capacity() * sizeof(std::uint64_t); }

  // Returns: the bucket of value v, and the smallest value of bucket i.
  static std::size_t index_of(std::uint64_t v) noexcept {
    if (v < exact_limit) return static_cast<std::size_t>(v);
    const int shift = static_cast<int>(std::bit_width(v)) - exact_bits;  // >= 1
    const std::uint64_t top = v >> shift;                              // in [sub_buckets, exact_limit)
    return static_cast<std::size_t>(exact_limit + static_cast<std::uint64_t>(shift - 1) * sub_buckets +
                                    (top - sub_buckets));
  }
  static std::uint64_t lower_bound_of(std::size_t i) noexcept {
    if (i < exact_limit) return i;
    const std::uint64_t j = i - exact_limit;
    const int shift = static_cast<int>(j / sub_buckets) + 1;
    return (sub_buckets + j % sub_buckets) << shift;
  }

 private:
  std::vector<std::uint64_t> counts_;
  std::uint64_t count_ = 0, max_ = 0;
};

}  // namespace taskplace_sim
