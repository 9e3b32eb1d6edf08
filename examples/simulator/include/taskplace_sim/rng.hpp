// taskplace_sim/rng.hpp: the simulator's own pseudo-random numbers.
//
// splitmix64 to seed, xoshiro256** to draw (Blackman and Vigna, public
// domain algorithms, written here from their published description). The
// same seed gives the same stream on every platform: the simulator never
// touches std::random_device or the standard distributions, whose output
// differs between standard libraries.
//
//   taskplace_sim::Rng rng{42};
//   auto d = rng.exponential(Nanoseconds{100'000});   // mean 100 us
#pragma once

#include <cmath>
#include <cstdint>

#include "taskplace/types.hpp"

namespace taskplace_sim {

using taskplace::Nanoseconds;

class Rng {
 public:
  explicit constexpr Rng(std::uint64_t seed) noexcept {
    std::uint64_t x = seed;
    for (auto& w : s_) w = splitmix64(x);
  }

  // Returns: the next 64 random bits. Complexity: O(1).
  constexpr std::uint64_t next() noexcept {
    const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const std::uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }

  // Returns: uniform in [0, n); 0 when n == 0. Multiply-shift, no modulo bias
  // worth speaking of for the n (< 2^32) the simulator uses.
  constexpr std::uint32_t below(std::uint32_t n) noexcept {
    return static_cast<std::uint32_t>(((next() >> 32) * std::uint64_t{n}) >> 32);
  }

  // Returns: true with probability permille / 1000.
  constexpr bool chance(std::uint32_t permille) noexcept { return below(1000) < permille; }

  // Returns: uniform double in [0, 1).
  double uniform() noexcept { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

  // Returns: an exponentially distributed duration with the given mean,
  // at least 1 ns (a zero-length step would be no step).
  Nanoseconds exponential(Nanoseconds mean) noexcept {
    const double u = uniform();
    const double v = -std::log1p(-u) * static_cast<double>(mean.count());
    const auto ns = static_cast<std::int64_t>(v);
    return Nanoseconds{ns < 1 ? 1 : ns};
  }

 private:
  static constexpr std::uint64_t rotl(std::uint64_t x, int k) noexcept {
    return (x << k) | (x >> (64 - k));
  }
  static constexpr std::uint64_t splitmix64(std::uint64_t& x) noexcept {
    std::uint64_t z = (x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  std::uint64_t s_[4]{};
};

}  // namespace taskplace_sim
