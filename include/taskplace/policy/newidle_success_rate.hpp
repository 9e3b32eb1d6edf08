// taskplace/policy/newidle_success_rate.hpp: of the levels a newidle
// balance may afford, which are worth trying, given how often each found
// work before?
//
// Provides AttemptEveryLevel (try every level the cost budget allows: the
// kernel before v6.18, and taskplace's default), NewidleSuccessRate<Variant>
// with the variants success_rate::Proportional2025 and
// success_rate::ProportionalRate2026, and the generator SuccessRateRng.
// Kernel analogue: sd->newidle_call, sd->newidle_success, sd->newidle_ratio
// (and, v7.0, sd->newidle_stamp), update_newidle_stats() and the NI_RANDOM /
// NI_RATE features of sched_balance_newidle() in kernel/sched/fair.c:
// Peter Zijlstra's "Proportional newidle balance" (Nov 2025, v6.18) and
// "More complex proportional newidle balance" (Feb 2026, v7.0).
//
//   taskplace::NewidleSuccessRate<> rate;  auto s = rate.make_state(3, clock.now(), cpu);
//   if (auto w = rate.roll(s, level, now)) { bool got = pull(level); rate.record(s, level, got, w, clock.now()); }
//
// Why it exists: a CPU that goes idle thousands of times a second pays for
// a pull attempt at every level its cost budget allows, and the cost budget
// only sees how long an attempt takes, never whether it found anything. A
// workload whose CPUs wake each other in storms (schbench: 20% of CPU time
// in failed newidle balances) needs a penalty for failing cheaply and often;
// bumping the level's cost on failure (v6.17) did that but cost SPECjbb 6%
// and was reverted. The success rate does it per level instead: a level
// that rarely finds work is tried rarely, at random, and a success found
// at reduced odds counts as much as the attempts it stands for.
#pragma once

#include "taskplace/detail/config.hpp"

#include <algorithm>
#include <array>
#include <cstdint>

#include "taskplace/concepts.hpp"
#include "taskplace/detail/assert.hpp"
#include "taskplace/detail/math.hpp"
#include "taskplace/fwd.hpp"
#include "taskplace/policy/newidle_cost_tracker.hpp"
#include "taskplace/types.hpp"

namespace taskplace {

// ---------------------------------------------------------------------------
// The per-state generator: xorshift64* (Vigna, 2014; a published formula).
// Deterministic for a given seed, so a balancer's decisions replay exactly
// (the kernel uses a per-CPU prandom state for the same dice). Kept in the
// state, which one thread owns, so no sharing and no locking.
class SuccessRateRng {
 public:
  constexpr SuccessRateRng() noexcept = default;
  // Any seed, 0 included: splitmix64's finaliser spreads it, and the state
  // is forced odd so it is never the generator's one fixed point, 0.
  constexpr explicit SuccessRateRng(std::uint64_t seed) noexcept : x_(mix(seed) | 1u) {}
  // Returns: the next 32 random bits. Complexity: O(1).
  constexpr std::uint32_t next() noexcept {
    x_ ^= x_ >> 12;
    x_ ^= x_ << 25;
    x_ ^= x_ >> 27;
    return static_cast<std::uint32_t>((x_ * 0x2545F4914F6CDD1Dull) >> 32);
  }
  constexpr bool operator==(const SuccessRateRng&) const noexcept = default;

 private:
  static constexpr std::uint64_t mix(std::uint64_t z) noexcept {
    z += 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  std::uint64_t x_ = 0x9E3779B97F4A7C15ull;
};

// ---------------------------------------------------------------------------
// AttemptEveryLevel: every level the cost budget allows is tried (the
// kernel from 2009 to v6.17, and taskplace's default: see "Default" in
// docs/policies/newidle_success_rate.md for why). An empty state, so a
// balancer with it carries nothing extra and compiles to the plain walk.
struct AttemptEveryLevel {
  struct state {
    constexpr bool operator==(const state&) const noexcept = default;
  };
  static constexpr state make_state(std::uint32_t, Nanoseconds, std::uint64_t) noexcept { return {}; }
  // Returns: 1, try the level, a success weighing one attempt.
  static constexpr std::uint32_t roll(state&, std::uint32_t, Nanoseconds) noexcept { return 1; }
  static constexpr void record(state&, std::uint32_t, bool, std::uint32_t, Nanoseconds) noexcept {}
};
static_assert(NewidleAttemptPolicy<AttemptEveryLevel>);

namespace success_rate {
// v6.18 (Nov 2025, NI_RANDOM): try a level with probability (2 + ratio) /
// 1024, ratio being its successes per 1024 calls over a halving window.
struct Proportional2025 {
  static constexpr bool rate_term = false;       // the ratio is the success count alone
  static constexpr bool always_at_full = false;  // the dice are thrown even at ratio 1024
};
// v7.0 (Feb 2026, NI_RATE): when a window closes, add one to the ratio per
// 2^22 ns (~4.2 ms) the window took, so a level whose 512 calls took
// about 4.3 s (2^32 ns) or more reads 1024 whatever it found ("a few workloads (easyWave, fio)
// have a fairly low success rate on newidle balance, but still benefit
// greatly from having it anyway"; they balance rarely, so it is cheap);
// and a level at 1024 is always tried, no dice.
struct ProportionalRate2026 {
  static constexpr bool rate_term = true;
  static constexpr bool always_at_full = true;
};
static_assert(SuccessRateVariant<Proportional2025>);
static_assert(SuccessRateVariant<ProportionalRate2026>);
}  // namespace success_rate

// ---------------------------------------------------------------------------
// NewidleSuccessRate: per level, the share of calls that found work, and a
// 1024-sided die against it.
//
// Per level: `calls` and `successes` since the window last closed, and
// `ratio`, the successes of the last window, 0..1024 (kernel: newidle_call,
// newidle_success, newidle_ratio). Each call counts one: a level skipped by
// the die counts a call with no success; a level tried counts a call and,
// if it pulled, `weight` successes, the inverse of the odds it was tried
// at, rounded (so that the estimate is not biased by trying less often).
// When `calls` reaches 1024 the window closes: ratio = min(1024,
// successes [+ the rate term]), then calls and successes halve, so the
// next window closes after 512 more calls with half the past still in it.
// A fresh level starts at 512 calls, 256 successes, ratio 512 (50%).
//
// The die: d uniform in 0..1023; the level is skipped when d > 1 + ratio
// (so ratio 0 still tries 2 calls in 1024, ratio >= 1023 always tries),
// and a success then weighs round(1024 / (1 + ratio)).
//
// An aggregate with no tunables: the numbers are the kernel's.
template <SuccessRateVariant Variant>  // default in fwd.hpp
class NewidleSuccessRate {
 public:
  using variant = Variant;
  static constexpr std::uint32_t window = 1024;        // kernel: newidle_call >= 1024 closes it
  static constexpr std::uint32_t full = 1024;          // ratio of a level that always finds work
  static constexpr int rate_shift = 22;                // v7.0: one ratio point per 2^22 ns of window

  struct level_stats {
    std::uint32_t calls = window / 2;     // kernel sd_init: 512
    std::uint32_t successes = window / 4; // 256: a 50% start
    std::uint32_t ratio = full / 2;       // 512
    Nanoseconds window_start{0};          // when the window last closed (v7.0 newidle_stamp)
    constexpr bool operator==(const level_stats&) const noexcept = default;
  };

  // Per-CPU state, owned by that CPU's worker.
  // Invariant: ratio <= 1024 (count() keeps it; a hand-filled larger value
  //   reads as 1024); calls < 1024 between calls.
  struct state {
    std::array<level_stats, max_levels> levels{};
    SuccessRateRng rng{};
    LevelCount level_count{};
    constexpr bool operator==(const state&) const noexcept = default;
  };

  // Returns: a fresh state for `level_count` levels at `now`, every level at
  //   50%, the die seeded with `seed` (a balancer passes the CPU id, so CPUs
  //   do not throw the same dice). Precondition (checked): level_count <=
  //   max_levels; unchecked builds clamp. Complexity: O(max_levels).
  state make_state(std::uint32_t level_count, Nanoseconds now, std::uint64_t seed) const TASKPLACE_NOEXCEPT {
    TASKPLACE_EXPECTS(level_count <= max_levels, "level_count must be <= max_levels");
    state s;
    s.level_count = level_count;
    for (auto& l : s.levels) l.window_start = now;
    s.rng = SuccessRateRng{seed};
    return s;
  }

  // Returns: 0 to skip `level` (counted as a call without success), or the
  //   weight a success at it will carry (>= 1). A level at ratio 1024 is
  //   always tried with weight 1 under ProportionalRate2026.
  // Precondition (checked): level < level_count; unchecked builds answer 1
  //   (try, weight 1) and count nothing. Complexity: O(1).
  // Thread-safety: one thread per state.
  std::uint32_t roll(state& s, std::uint32_t level, Nanoseconds now) const TASKPLACE_NOEXCEPT {
    TASKPLACE_EXPECTS(level < s.level_count, "level must be < level_count");
    if (level >= s.level_count) return 1;
    level_stats& l = s.levels[level];
    const std::uint32_t ratio = std::min(l.ratio, full);
    if constexpr (Variant::always_at_full) {
      if (ratio >= full) return 1;
    }
    const std::uint32_t d = s.rng.next() % window;
    const std::uint32_t w = 1 + ratio;
    if (d > w) {
      count(l, 0, now);
      return 0;
    }
    return (window + w / 2) / w;
  }

  // Effects: `level` was tried (roll returned `weight`) and pulled or not:
  //   counts a call with weight successes if it pulled, none otherwise.
  //   A weight of 0 reads as 1. The kernel counts an attempt only when its
  //   timed cost is non-zero, which is how it tells the attempt from the
  //   periodic decay that passes 0; here those are separate calls, so every
  //   attempt counts, also one a coarse clock timed at 0.
  // Precondition (checked): level < level_count; unchecked builds ignore
  //   the call. Complexity: O(1). Thread-safety: one thread per state.
  void record(state& s, std::uint32_t level, bool pulled, std::uint32_t weight, Nanoseconds now) const TASKPLACE_NOEXCEPT {
    TASKPLACE_EXPECTS(level < s.level_count, "level must be < level_count");
    if (level >= s.level_count) return;
    count(s.levels[level], pulled ? std::max<std::uint32_t>(weight, 1) : 0, now);
  }

  // Returns: level's ratio, 0..1024 (0 for a level >= level_count).
  std::uint32_t ratio(const state& s, std::uint32_t level) const noexcept {
    return level < s.level_count ? std::min(s.levels[level].ratio, full) : 0;
  }

 private:
  // One call with `success` successes; closes the window at 1024 calls.
  // Sums saturate (a hand-filled state may hold anything).
  static void count(level_stats& l, std::uint32_t success, Nanoseconds now) noexcept {
    l.calls = detail::saturating_inc(l.calls);
    l.successes = detail::saturating_add(l.successes, success);
    if (l.calls < window) return;
    std::uint64_t r = l.successes;
    if constexpr (Variant::rate_term) {
      // A clock that went backwards reads as no time (kernel: delta < 0 -> 0).
      r += static_cast<std::uint64_t>(detail::elapsed(l.window_start, now).count()) >> rate_shift;
    }
    l.window_start = now;
    l.ratio = static_cast<std::uint32_t>(std::min<std::uint64_t>(r, full));
    l.calls /= 2;
    l.successes /= 2;
  }
};
static_assert(NewidleAttemptPolicy<NewidleSuccessRate<success_rate::Proportional2025>>);
static_assert(NewidleAttemptPolicy<NewidleSuccessRate<success_rate::ProportionalRate2026>>);

}  // namespace taskplace
