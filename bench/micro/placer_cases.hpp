// bench/micro/placer_cases.hpp: the machines, machine states and wake-up
// inputs of the placer scaling benchmark.
//
// Shared by placer.bench.cpp (nanoseconds per decision, Google Benchmark)
// and callgrind_driver.cpp (instructions per decision, valgrind).
//
//   const auto topo = bench::shape(224);
//   bench::PlaceCase c{topo, bench::Load::half};
//   const taskplace::Placement p = c(i);   // the i-th wake-up of the ring
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "taskplace/topology/uniform.hpp"
#include "taskplace/wake_placer.hpp"

namespace bench {

// Shapes (nodes x LLCs per node x cores per LLC x threads per core, nested
// numbering):
//   12   = 1 x 1 x 6 x 2    Wang 2013's Westmere, one 12-CPU LLC
//   80   = 2 x 1 x 20 x 2   Fleming 2017's two-node box, 40-CPU LLCs
//   224  = 2 x 1 x 56 x 2   Chen 2023's Sapphire Rapids, 112-CPU LLCs
//   1024 = 8 x 4 x 16 x 2   32-CPU LLCs (chiplet-style), 32 LLCs
//   4096 = 16 x 8 x 16 x 2  32-CPU LLCs, 128 LLCs
inline taskplace::UniformTopology shape(std::int64_t cpus) {
  switch (cpus) {
    case 12: return {1, 1, 6, 2};
    case 80: return {2, 1, 20, 2};
    case 224: return {2, 1, 56, 2};
    case 1024: return {8, 4, 16, 2};
    default: return {16, 8, 16, 2};  // 4096
  }
}

enum class Load { idle, busy, half };

// A MachineState over one byte per CPU (1 = running a task), with the
// utilisation of each LLC precomputed, as a pool would keep it.
struct ByteMachine {
  const taskplace::UniformTopology* topo;
  std::vector<std::uint8_t> busy;
  std::vector<std::uint32_t> llc_util;  // indexed by llc_of

  ByteMachine(const taskplace::UniformTopology& t, Load load, std::uint32_t seed = 7)
      : topo(&t), busy(t.cpu_count()), llc_util(t.llc_count()) {
    std::mt19937 rng(seed);
    for (auto& b : busy)
      b = load == Load::busy ? 1 : load == Load::idle ? 0 : static_cast<std::uint8_t>(rng() & 1);
    std::vector<std::uint32_t> n(t.llc_count());
    for (taskplace::CpuId c = 0; c < t.cpu_count(); ++c) n[t.llc_of(c)] += busy[c];
    for (std::uint32_t l = 0; l < t.llc_count(); ++l)
      llc_util[l] = n[l] * 100 / (t.cpu_count() / t.llc_count());
  }
  bool is_idle(taskplace::CpuId c) const noexcept { return busy[c] == 0; }
  std::uint32_t nr_running(taskplace::CpuId c) const noexcept { return busy[c]; }
  std::uint64_t load(taskplace::CpuId c) const noexcept { return std::uint64_t{busy[c]} * 1024; }
  std::uint32_t llc_utilization_pct(taskplace::CpuId c) const noexcept {
    return llc_util[topo->llc_of(c)];
  }
};
static_assert(taskplace::MachineState<ByteMachine>);
static_assert(taskplace::HasLlcUtilization<ByteMachine>);

struct WakeInput {
  std::uint16_t waker, wakee;
  taskplace::CpuId waking, prev;
};

inline constexpr std::uint32_t wake_ring = 4096;
inline constexpr std::uint32_t wake_tasks = 1024;

inline std::vector<WakeInput> wake_inputs(const taskplace::UniformTopology& t, std::uint32_t seed = 11) {
  std::mt19937 rng(seed);
  std::vector<WakeInput> v(wake_ring);
  for (auto& w : v) {
    w.waker = static_cast<std::uint16_t>(rng() % wake_tasks);
    // One wake-up in two goes to the waker's partner, so flip counts differ
    // and both the wide and the affine branches are exercised.
    w.wakee = static_cast<std::uint16_t>(rng() % 2 ? (w.waker ^ 1u) : rng() % wake_tasks);
    w.waking = static_cast<taskplace::CpuId>(rng() % t.cpu_count());
    // prev: near the waker (same LLC) half of the time, anywhere otherwise.
    const auto llc = t.llc_cpus(w.waking);
    w.prev = rng() % 2 ? static_cast<taskplace::CpuId>(llc[rng() % llc.size()])
                       : static_cast<taskplace::CpuId>(rng() % t.cpu_count());
  }
  return v;
}

// One placer on one machine state; call i places the i-th wake-up of the
// ring, 3 us after the previous one. With a placer that measures run
// durations (traits::SisCurrent), every task has run 10 us once before the
// ring starts, so WakeOnCurrent reads short tasks and goes on to the flip
// and last-wakee tests (which the ring's mixed partners fail: the common
// path of that rule).
template <class Traits>
struct BasicPlaceCase {
  using Placer = taskplace::WakePlacer<taskplace::UniformTopology, Traits>;
  ByteMachine machine;
  Placer placer;
  std::vector<typename Placer::task_state> tasks = std::vector<typename Placer::task_state>(wake_tasks);
  std::vector<WakeInput> in;
  std::int64_t now = 10'000'000'000;

  BasicPlaceCase(const taskplace::UniformTopology& topo, Load load)
      : machine(topo, load), placer(topo), in(wake_inputs(topo)) {
    if constexpr (Placer::tracking_duration) {
      for (auto& t : tasks) {
        placer.task_runs(t, taskplace::Nanoseconds{now - 20'000});
        placer.task_sleeps(t, taskplace::Nanoseconds{now - 10'000});
      }
    }
  }

  taskplace::Placement operator()(std::uint32_t i) {
    const WakeInput& w = in[i & (wake_ring - 1)];
    now += 3'000;
    return placer.place({.waker = &tasks[w.waker], .waker_key = w.waker + 1u,
                         .wakee = &tasks[w.wakee], .wakee_key = w.wakee + 1u,
                         .waking_cpu = w.waking, .prev_cpu = w.prev},
                        machine, taskplace::Nanoseconds{now});
  }
};
using PlaceCase = BasicPlaceCase<taskplace::traits::Current>;
// traits::Runtime with every wake-up judged (no SettledPair).
struct RuntimeJudged : taskplace::traits::Runtime {
  using Settle = taskplace::NoSettle;
};
using SisPlaceCase = BasicPlaceCase<taskplace::traits::SisCurrent<>>;

// A ping-pong pair on the 12-CPU shape, half busy: tasks 0 and 1 wake each
// other in turn, waking CPU 0, prev CPU 1, 3 us apart; each runs 10 us
// between sleeps. Before the first measured call the pair has settled (2 s
// of its exchange, so its flips have decayed to 0): under
// traits::SisCurrent every call is a wake-up WakeOnCurrent keeps, under
// traits::Current the usual decision. A set with CostGate (traits::Runtime)
// keeps the pair on the waking CPU, so there prev is CPU 0, where the set
// settles it: 7 of 8 calls replay the verdict (SettledPair), the 8th is
// judged; RuntimeJudged judges every call.
template <class Traits>
struct PairCase {
  using Placer = taskplace::WakePlacer<taskplace::UniformTopology, Traits>;
  taskplace::UniformTopology topo = shape(12);
  ByteMachine machine{topo, Load::half};
  Placer placer{topo};
  mutable typename Placer::task_state tasks[2]{};
  std::int64_t now = 10'000'000'000;
  static constexpr taskplace::CpuId prev = Placer::fast_gate ? 0 : 1;

  PairCase() {
    for (int i = 0; i < 3; ++i) (void)(*this)(static_cast<std::uint32_t>(i));
    now += 2'000'000'000;
    for (int i = 0; i < 3; ++i) (void)(*this)(static_cast<std::uint32_t>(i));
    machine.busy[0] = 1;  // the waker runs on CPU 0, alone
  }
  taskplace::Placement operator()(std::uint32_t i) {
    runs(i);
    const taskplace::Placement p = decide(i);
    sleeps(i);
    return p;
  }
  // The three parts, for a count of the decision alone.
  void runs(std::uint32_t i) {
    now += 3'000;
    placer.task_runs(tasks[i & 1u], taskplace::Nanoseconds{now - 10'000});
  }
  taskplace::Placement decide(std::uint32_t i) const {
    const std::uint32_t a = i & 1u, b = a ^ 1u;
    return placer.place({.waker = &tasks[a], .waker_key = a + 1u, .wakee = &tasks[b], .wakee_key = b + 1u,
                         .waking_cpu = 0, .prev_cpu = prev, .sync = true},
                        machine, taskplace::Nanoseconds{now});
  }
  void sleeps(std::uint32_t i) { placer.task_sleeps(tasks[i & 1u], taskplace::Nanoseconds{now}); }
};

}  // namespace bench
