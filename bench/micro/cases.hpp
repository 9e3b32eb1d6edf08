// bench/micro/cases.hpp: the measured operations of the policy
// micro-benchmarks, each next to a hand-written baseline that computes the
// same thing directly on raw integers.
//
// Shared by policies.bench.cpp (nanoseconds per call, Google Benchmark) and
// callgrind_driver.cpp (instructions per call, valgrind). Each case keeps a
// ring of pre-generated inputs so that the compiler cannot fold the work.
//
//   bench::FlipWideCase c{bench::inputs(4096, 12)};
//   bool wide = c.policy(i);   // vs c.baseline(i)
#pragma once

#include <chrono>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "taskplace/policy/flip_counter.hpp"
#include "taskplace/policy/llc_factor.hpp"
#include "taskplace/policy/wide_detector.hpp"
#include "taskplace/topology/uniform.hpp"

#if __has_include("taskplace/policy/newidle_cost_tracker.hpp")
#include "taskplace/policy/newidle_cost_tracker.hpp"
#define TASKPLACE_BENCH_HAVE_NEWIDLE 1
#else
#define TASKPLACE_BENCH_HAVE_NEWIDLE 0
#endif
#if __has_include("taskplace/policy/cache_hot_reservation.hpp")
#include "taskplace/policy/cache_hot_reservation.hpp"
#define TASKPLACE_BENCH_HAVE_RESERVATION 1
#else
#define TASKPLACE_BENCH_HAVE_RESERVATION 0
#endif

namespace bench {

using taskplace::Nanoseconds;

// Ring size of every pre-generated input array: a power of two, so the
// index is a mask, and small enough to stay in L1/L2.
inline constexpr std::uint32_t ring = 4096;
inline constexpr std::uint32_t ring_mask = ring - 1;

// ---------------------------------------------------------------------------
// (a) FlipCounter::record + WideDetector::wide with LlcFactor.
//
// A waker (one of 64) wakes a wakee (one of 256) at a rising time with
// occasional gaps past the decay period; then the wide test runs on the
// waker's and the wakee's counts with the waking CPU's LLC size.
struct FlipWideInput {
  std::uint16_t waker;   // index into the waker states
  std::uint16_t wakee;   // index into the wakee states (also its TaskKey - 1)
  std::uint32_t cpu;     // the waking CPU
  std::int64_t now_ns;   // the wake-up time
};

inline std::vector<FlipWideInput> flip_wide_inputs(std::uint32_t cpus, std::uint32_t seed = 1) {
  std::mt19937 rng(seed);
  std::vector<FlipWideInput> v(ring);
  std::int64_t t = 5'000'000'000;
  for (auto& in : v) {
    // Mostly a few microseconds apart, one in 64 a 1.5 s gap (a decay).
    t += (rng() % 64 == 0) ? 1'500'000'000 : static_cast<std::int64_t>(rng() % 20'000);
    in.waker = static_cast<std::uint16_t>(rng() % 64);
    // Half of the wake-ups go to the waker's usual partner (ping-pong), half
    // to a random one (1:N), so both branches of the flip test are taken.
    in.wakee = static_cast<std::uint16_t>(rng() % 2 ? in.waker : 64 + rng() % 192);
    in.cpu = static_cast<std::uint32_t>(rng() % cpus);
    in.now_ns = t;
  }
  return v;
}

// The policy path: exactly what WakePlacer's steps 1 and 2 call.
struct FlipWidePolicy {
  using Flips = taskplace::FlipCounter<>;
  const taskplace::UniformTopology* topo;
  Flips flips{};
  std::vector<Flips::state> wakers = std::vector<Flips::state>(64);
  std::vector<Flips::state> wakees = std::vector<Flips::state>(256);

  bool operator()(const FlipWideInput& in) {
    auto& w = wakers[in.waker];
    flips.record(w, taskplace::TaskKey{in.wakee} + 1, Nanoseconds{in.now_ns});
    return taskplace::WideDetector<>::wide(flips.flips(w), flips.flips(wakees[in.wakee]),
                                           taskplace::LlcFactor::factor(*topo, in.cpu));
  }
};

// The zero-overhead baseline: a hand-written struct and the formulas of
// record_wakee(), wake_wide() and sd_llc_size inline (halving decay after
// more than a period, flip on a new partner, saturating; symmetric rule with
// the LLC size).
struct RawFlips {
  std::uintptr_t last_wakee = 0;
  std::uint32_t flips = 0;
  std::int64_t stamp = 0;
};

struct FlipWideBaseline {
  std::uint32_t llc_size;        // cached per machine, as sd_llc_size is
  std::int64_t period_ns = 1'000'000'000;
  std::vector<RawFlips> wakers = std::vector<RawFlips>(64);
  std::vector<RawFlips> wakees = std::vector<RawFlips>(256);

  bool operator()(const FlipWideInput& in) {
    RawFlips& w = wakers[in.waker];
    // A backwards clock must not decay (same defined behaviour as the policy).
    if (in.now_ns > w.stamp && static_cast<std::uint64_t>(in.now_ns - w.stamp) >
                                   static_cast<std::uint64_t>(period_ns)) {
      w.flips >>= 1;
      w.stamp = in.now_ns;
    }
    const std::uintptr_t key = std::uintptr_t{in.wakee} + 1;
    if (w.last_wakee != key) {
      w.last_wakee = key;
      w.flips += (w.flips != 0xffffffffu);
    }
    const std::uint32_t e = wakees[in.wakee].flips;
    const std::uint32_t hi = w.flips > e ? w.flips : e;
    const std::uint32_t lo = w.flips > e ? e : w.flips;
    return lo >= llc_size && std::uint64_t{hi} >= std::uint64_t{llc_size} * lo;
  }
};

// ---------------------------------------------------------------------------
// (b) One newidle gate decision: should_balance, then may_visit_level for
// one level with the cost spent so far.
struct GateInput {
  std::uint16_t cpu;     // index into the per-CPU states
  std::uint8_t level;    // the level about to be visited
  std::int64_t spent_ns; // cost already spent on smaller levels
};

inline std::vector<GateInput> gate_inputs(std::uint32_t levels, std::uint32_t seed = 2) {
  std::mt19937 rng(seed);
  std::vector<GateInput> v(ring);
  for (auto& in : v) {
    in.cpu = static_cast<std::uint16_t>(rng() % 64);
    in.level = static_cast<std::uint8_t>(rng() % levels);
    in.spent_ns = static_cast<std::int64_t>(rng() % 400'000);
  }
  return v;
}

// Per-CPU histories both paths are built from: avg_idle between 50 us and
// 2 ms, each level's maximum cost between 5 us and 300 us.
struct GateHistory {
  std::int64_t avg_idle_ns;
  std::int64_t cost_ns[taskplace::max_levels];
};

inline std::vector<GateHistory> gate_histories(std::uint32_t levels, std::uint32_t seed = 3) {
  std::mt19937 rng(seed);
  std::vector<GateHistory> v(64);
  for (auto& h : v) {
    h.avg_idle_ns = 50'000 + static_cast<std::int64_t>(rng() % 1'950'000);
    for (std::uint32_t i = 0; i < taskplace::max_levels; ++i)
      h.cost_ns[i] = i < levels ? 5'000 + static_cast<std::int64_t>(rng() % 295'000) : 0;
  }
  return v;
}

// The baselines: the v5.16 gates of newidle_balance() inline:
//   enter iff avg_idle >= cost[0]; visit level i iff avg_idle >= spent + cost[i].
struct RawNewidle {
  std::int64_t avg_idle;
  std::int64_t cost[taskplace::max_levels];
  std::uint32_t levels;
};

inline std::vector<RawNewidle> raw_newidle(const std::vector<GateHistory>& hs, std::uint32_t levels) {
  std::vector<RawNewidle> v;
  for (const auto& h : hs) {
    RawNewidle r{h.avg_idle_ns, {}, levels};
    for (std::uint32_t i = 0; i < taskplace::max_levels; ++i) r.cost[i] = h.cost_ns[i];
    v.push_back(r);
  }
  return v;
}

// The formula alone, assuming what the policy may not: spent >= 0, a level
// the CPU has, and a sum that cannot overflow (GateRawBaseline, the
// callgrind driver's "raw" variant).
struct GateRawBaseline {
  std::vector<RawNewidle> cpus;
  GateRawBaseline(const std::vector<GateHistory>& hs, std::uint32_t levels) : cpus(raw_newidle(hs, levels)) {}
  bool operator()(const GateInput& in) const {
    const RawNewidle& s = cpus[in.cpu];
    if (s.avg_idle < s.cost[0]) return false;
    return s.avg_idle >= in.spent_ns + s.cost[in.level];
  }
};

// The same formula with the outcomes the policy documents for any input,
// written by hand the cheapest way: a level the CPU lacks is refused, a
// negative spent reads as 0, and the budget compares avg_idle - spent with
// the cost, which is exact for non-negative inputs and forms no sum that
// could overflow (the difference taken modulo 2^64, as the policy does).
struct GateBaseline {
  std::vector<RawNewidle> cpus;
  GateBaseline(const std::vector<GateHistory>& hs, std::uint32_t levels) : cpus(raw_newidle(hs, levels)) {}
  bool operator()(const GateInput& in) const {
    const RawNewidle& s = cpus[in.cpu];
    if (s.avg_idle < s.cost[0]) return false;
    if (in.level >= s.levels) return false;
    const std::int64_t spent = in.spent_ns < 0 ? 0 : in.spent_ns;
    const auto left = static_cast<std::uint64_t>(s.avg_idle) - static_cast<std::uint64_t>(spent);
    return static_cast<std::int64_t>(left) >= s.cost[in.level];
  }
};

#if TASKPLACE_BENCH_HAVE_NEWIDLE
// The policy path: NewidleCostTracker<> (today's kernel: newidle_gate::FirstLevel2022,
// level_budget::Spent2014) on states carrying the same histories, written into the
// public state fields as an embedder restoring a snapshot would.
struct GatePolicy {
  using Tracker = taskplace::NewidleCostTracker<>;
  Tracker tracker{};
  std::vector<Tracker::state> cpus;
  GatePolicy(const std::vector<GateHistory>& hs, std::uint32_t levels) {
    for (const auto& h : hs) {
      auto st = tracker.make_state(levels, Nanoseconds{0});
      st.avg_idle = Nanoseconds{h.avg_idle_ns};
      for (std::uint32_t i = 0; i < levels; ++i) st.max_cost[i] = Nanoseconds{h.cost_ns[i]};
      cpus.push_back(st);
    }
  }
  bool operator()(const GateInput& in) const {
    const auto& st = cpus[in.cpu];
    return tracker.should_balance(st) &&
           tracker.may_visit_level(st, in.level, Nanoseconds{in.spent_ns});
  }
};
#endif

// ---------------------------------------------------------------------------
// (c) One reservation check: may the idle scan take this CPU for this
// wakee, or is it kept warm for a short sleeper?
struct ReservationInput {
  std::uint16_t cpu;       // index into the per-CPU states
  std::uintptr_t asker;    // the wakee asking
  std::int64_t now_ns;
};

// 64 CPUs whose reservations end between 0 and 400 us after 1 s; asks at
// times around that, so about half of the checks find a live reservation.
inline std::vector<std::int64_t> reservation_hot_until(std::uint32_t seed = 4) {
  std::mt19937 rng(seed);
  std::vector<std::int64_t> v(64);
  for (auto& h : v) h = 1'000'000'000 + static_cast<std::int64_t>(rng() % 400'000);
  return v;
}

inline std::vector<ReservationInput> reservation_inputs(std::uint32_t seed = 5) {
  std::mt19937 rng(seed);
  std::vector<ReservationInput> v(ring);
  for (auto& in : v) {
    in.cpu = static_cast<std::uint16_t>(rng() % 64);
    in.asker = 1 + rng() % 256;
    in.now_ns = 1'000'000'000 + static_cast<std::int64_t>(rng() % 400'000);
  }
  return v;
}

#if TASKPLACE_BENCH_HAVE_RESERVATION
// The policy path: CacheHotReservation<> (HalveLong2023, AnyTaskMayTake). Its
// cpu_state is the timeout alone (AnyTaskMayTake stores no owner; the
// owner given below is dropped), 8 bytes like the baseline's.
struct ReservationPolicy {
  using Reservation = taskplace::CacheHotReservation<>;
  Reservation reservation{};
  std::vector<Reservation::cpu_state> cpus;
  ReservationPolicy() {
    std::uintptr_t owner = 1;
    for (auto h : reservation_hot_until()) cpus.push_back({Nanoseconds{h}, owner++});
  }
  bool operator()(const ReservationInput& in) const {
    return reservation.reserved_against(cpus[in.cpu], in.asker, Nanoseconds{in.now_ns});
  }
};
#endif

// The baseline: Chen 2023's test inline, "skip while now < hot_until".
struct ReservationBaseline {
  std::vector<std::int64_t> hot_until = reservation_hot_until();
  bool operator()(const ReservationInput& in) const { return in.now_ns < hot_until[in.cpu]; }
};

}  // namespace bench
