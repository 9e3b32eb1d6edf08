// bench/micro/placer.bench.cpp: how the composed decisions scale with the
// machine: nanoseconds per WakePlacer::place (traits::Current) and per
// IdleBalancer::balance on UniformTopology machines of 12 to 4096 CPUs.
//
// Shapes (nodes x LLCs per node x cores per LLC x threads per core):
//   12   = 1 x 1 x 6 x 2    seed 000's Westmere, one 12-CPU LLC
//   80   = 2 x 1 x 20 x 2   seed 004's two-node box, 40-CPU LLCs
//   224  = 2 x 1 x 56 x 2   seed 002's Sapphire Rapids, 112-CPU LLCs
//   1024 = 8 x 4 x 16 x 2   32-CPU LLCs (chiplet-style), 32 LLCs
//   4096 = 16 x 8 x 16 x 2  32-CPU LLCs, 128 LLCs
// Machine states: every CPU idle, every CPU busy, and half of the CPUs busy
// at random (fixed seed), with llc_utilization_pct the busy share of each
// LLC (SIS_UTIL). Waker, wakee, waking CPU and prev CPU vary per iteration.
//
//   build-bench/bench/micro/taskplace_bench_placer --benchmark_filter=half/224
#include <benchmark/benchmark.h>

#include <cstdint>
#include <random>
#include <vector>

#if __has_include("taskplace/policy/cache_hot_reservation.hpp") && \
    __has_include("taskplace/policy/newidle_cost_tracker.hpp")
#include "taskplace/idle_balancer.hpp"
#include "taskplace/topology/uniform.hpp"
#include "taskplace/wake_placer.hpp"

namespace {

using taskplace::CpuId;
using taskplace::Nanoseconds;
using taskplace::UniformTopology;

UniformTopology shape(std::int64_t cpus) {
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
  const UniformTopology* topo;
  std::vector<std::uint8_t> busy;
  std::vector<std::uint32_t> llc_util;  // indexed by llc_of

  ByteMachine(const UniformTopology& t, Load load, std::uint32_t seed = 7)
      : topo(&t), busy(t.cpu_count()), llc_util(t.llc_count()) {
    std::mt19937 rng(seed);
    for (auto& b : busy)
      b = load == Load::busy ? 1 : load == Load::idle ? 0 : static_cast<std::uint8_t>(rng() & 1);
    std::vector<std::uint32_t> n(t.llc_count());
    for (CpuId c = 0; c < t.cpu_count(); ++c) n[t.llc_of(c)] += busy[c];
    for (std::uint32_t l = 0; l < t.llc_count(); ++l)
      llc_util[l] = n[l] * 100 / (t.cpu_count() / t.llc_count());
  }
  bool is_idle(CpuId c) const noexcept { return busy[c] == 0; }
  std::uint32_t nr_running(CpuId c) const noexcept { return busy[c]; }
  std::uint64_t load(CpuId c) const noexcept { return std::uint64_t{busy[c]} * 1024; }
  std::uint32_t llc_utilization_pct(CpuId c) const noexcept { return llc_util[topo->llc_of(c)]; }
};
static_assert(taskplace::MachineState<ByteMachine>);
static_assert(taskplace::HasLlcUtilization<ByteMachine>);

struct WakeInput {
  std::uint16_t waker, wakee;
  CpuId waking, prev;
};

constexpr std::uint32_t ring = 4096;
constexpr std::uint32_t tasks = 1024;

std::vector<WakeInput> wake_inputs(const UniformTopology& t, std::uint32_t seed = 11) {
  std::mt19937 rng(seed);
  std::vector<WakeInput> v(ring);
  for (auto& w : v) {
    w.waker = static_cast<std::uint16_t>(rng() % tasks);
    // One wake-up in two goes to the waker's partner, so flip counts differ
    // and both the wide and the affine branches are exercised.
    w.wakee = static_cast<std::uint16_t>(rng() % 2 ? (w.waker ^ 1u) : rng() % tasks);
    w.waking = static_cast<CpuId>(rng() % t.cpu_count());
    // prev: near the waker (same LLC) half of the time, anywhere otherwise.
    const auto llc = t.llc_cpus(w.waking);
    w.prev = rng() % 2 ? static_cast<CpuId>(llc[rng() % llc.size()])
                       : static_cast<CpuId>(rng() % t.cpu_count());
  }
  return v;
}

using Placer = taskplace::WakePlacer<UniformTopology, taskplace::traits::Current>;

void BM_place(benchmark::State& st, Load load) {
  const UniformTopology topo = shape(st.range(0));
  const ByteMachine machine(topo, load);
  const Placer placer{topo};
  std::vector<Placer::task_state> ts(tasks);
  const auto in = wake_inputs(topo);
  std::int64_t now = 10'000'000'000;
  std::uint32_t i = 0;
  std::uint64_t scanned = 0;
  for (auto _ : st) {
    const WakeInput& w = in[i++ & (ring - 1)];
    now += 3'000;
    const auto p = placer.place({.waker = &ts[w.waker], .waker_key = w.waker + 1u,
                                 .wakee = &ts[w.wakee], .wakee_key = w.wakee + 1u,
                                 .waking_cpu = w.waking, .prev_cpu = w.prev},
                                machine, Nanoseconds{now});
    scanned += p.scanned;
    benchmark::DoNotOptimize(p);
  }
  st.counters["cpus"] = static_cast<double>(topo.cpu_count());
  st.counters["scanned"] = benchmark::Counter(static_cast<double>(scanned), benchmark::Counter::kAvgIterations);
  st.SetItemsProcessed(st.iterations());
}

void cpu_args(benchmark::internal::Benchmark* b) {
  for (std::int64_t n : {12, 80, 224, 1024, 4096}) b->Arg(n);
}
BENCHMARK_CAPTURE(BM_place, idle, Load::idle)->Apply(cpu_args);
BENCHMARK_CAPTURE(BM_place, busy, Load::busy)->Apply(cpu_args);
BENCHMARK_CAPTURE(BM_place, half, Load::half)->Apply(cpu_args);

// A clock that costs one add: each read moves 1 us forward, so every pull
// attempt "costs" 1 us and the budget lets every level be visited.
struct StepClock {
  mutable std::int64_t t = 1'000'000'000;
  Nanoseconds now() const noexcept { return Nanoseconds{t += 1'000}; }
};
static_assert(taskplace::Clock<StepClock>);

void BM_balance(benchmark::State& st) {
  const UniformTopology topo = shape(st.range(0));
  using Balancer = taskplace::IdleBalancer<UniformTopology>;
  const Balancer balancer{topo};
  StepClock clock;
  constexpr std::uint32_t cpus = 64;  // states of 64 CPUs spread over the machine
  std::vector<Balancer::state> states;
  std::vector<CpuId> ids;
  for (std::uint32_t k = 0; k < cpus; ++k) {
    ids.push_back(static_cast<CpuId>(std::uint64_t{k} * topo.cpu_count() / cpus));
    states.push_back(balancer.make_state(ids.back(), clock.now()));
  }
  std::uint32_t i = 0;
  std::uint64_t visited = 0;
  for (auto _ : st) {
    const std::uint32_t k = i++ & (cpus - 1);
    const auto r = balancer.balance(
        ids[k], states[k], [](std::uint32_t, taskplace::LevelKind, const auto&) { return false; },
        clock);
    visited += r.levels_visited;
    benchmark::DoNotOptimize(r);
  }
  st.counters["levels"] = benchmark::Counter(static_cast<double>(visited), benchmark::Counter::kAvgIterations);
  st.SetItemsProcessed(st.iterations());
}
BENCHMARK(BM_balance)->Apply(cpu_args);

}  // namespace
#else
#include <cstdio>
static void BM_unavailable(benchmark::State& st) {
  for (auto _ : st) benchmark::DoNotOptimize(st.iterations());
  st.SkipWithError("the placer or balancer headers are not available in this tree");
}
BENCHMARK(BM_unavailable);
#endif

BENCHMARK_MAIN();
