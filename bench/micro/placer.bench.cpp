// bench/micro/placer.bench.cpp: how the composed decisions scale with the
// machine: nanoseconds per WakePlacer::place (traits::Current) and per
// IdleBalancer::balance (today's default, and with the success-rate dice)
// on UniformTopology machines of 12 to 4096 CPUs.
//
// Shapes, machine states and inputs are in placer_cases.hpp: every CPU
// idle, every CPU busy, and half of the CPUs busy at random (fixed seed),
// with llc_utilization_pct the busy share of each LLC (SIS_UTIL). Waker,
// wakee, waking CPU and prev CPU vary per iteration.
//
//   build-bench/bench/micro/taskplace_bench_placer --benchmark_filter=half/224
#include <benchmark/benchmark.h>

#include <cstdint>
#include <vector>

#if __has_include("taskplace/policy/cache_hot_reservation.hpp") && \
    __has_include("taskplace/policy/newidle_cost_tracker.hpp")
#include "taskplace/idle_balancer.hpp"

#include "placer_cases.hpp"

namespace {

using taskplace::CpuId;
using taskplace::Nanoseconds;
using taskplace::UniformTopology;
using bench::Load;
using bench::shape;

void BM_place(benchmark::State& st, Load load) {
  const UniformTopology topo = shape(st.range(0));
  bench::PlaceCase c{topo, load};
  std::uint32_t i = 0;
  std::uint64_t scanned = 0;
  for (auto _ : st) {
    const auto p = c(i++);
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

// Every pull finds nothing, as in a wake-up storm where no CPU has work to
// spare. With the success-rate dice (BM_balance_dice, today's kernel) each
// level's ratio falls towards 0 and most levels are passed over: the
// "skipped" counter; the default walks every level the budget allows.
template <class Traits>
void balance_case(benchmark::State& st) {
  const UniformTopology topo = shape(st.range(0));
  using Balancer = taskplace::IdleBalancer<UniformTopology, Traits>;
  const Balancer balancer{topo};
  StepClock clock;
  constexpr std::uint32_t cpus = 64;  // states of 64 CPUs spread over the machine
  std::vector<typename Balancer::state> states;
  std::vector<CpuId> ids;
  for (std::uint32_t k = 0; k < cpus; ++k) {
    ids.push_back(static_cast<CpuId>(std::uint64_t{k} * topo.cpu_count() / cpus));
    states.push_back(balancer.make_state(ids.back(), clock.now()));
  }
  std::uint32_t i = 0;
  std::uint64_t visited = 0, skipped = 0;
  for (auto _ : st) {
    const std::uint32_t k = i++ & (cpus - 1);
    const auto r = balancer.balance(
        ids[k], states[k], [](std::uint32_t, taskplace::LevelKind, const auto&) noexcept { return false; },
        clock);
    visited += r.levels_visited;
    skipped += r.levels_skipped;
    benchmark::DoNotOptimize(r);
  }
  st.counters["levels"] = benchmark::Counter(static_cast<double>(visited), benchmark::Counter::kAvgIterations);
  st.counters["skipped"] = benchmark::Counter(static_cast<double>(skipped), benchmark::Counter::kAvgIterations);
  st.SetItemsProcessed(st.iterations());
}
void BM_balance(benchmark::State& st) { balance_case<taskplace::DefaultBalanceTraits>(st); }
void BM_balance_dice(benchmark::State& st) { balance_case<taskplace::traits::BalanceLinux2026>(st); }
BENCHMARK(BM_balance)->Apply(cpu_args);
BENCHMARK(BM_balance_dice)->Apply(cpu_args);

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
