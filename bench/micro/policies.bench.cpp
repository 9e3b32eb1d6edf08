// bench/micro/policies.bench.cpp: nanoseconds per policy decision, each next
// to a hand-written baseline on raw integers (the zero-overhead yardstick).
//
//   (a) FlipCounter::record + WideDetector::wide with LlcFactor on a
//       UniformTopology (the first two steps of every wake-up);
//   (b) one newidle gate decision: should_balance + may_visit_level;
//   (c) one reservation check: CacheHotReservation::reserved_against;
//   and a clock read: SteadyClock against TscClock (no baseline).
//
//   scripts/bench micro        # builds, runs with repetitions, prints ratios
//   build-bench/bench/micro/taskplace_bench_policies --benchmark_filter=flip
#include <benchmark/benchmark.h>

#include "cases.hpp"
#if __has_include("taskplace/tsc_clock.hpp")
#include "taskplace/tsc_clock.hpp"
#endif
#include "taskplace/clock.hpp"

namespace {

// 12 CPUs, one LLC: Wang 2013's machine.
constexpr taskplace::UniformTopology westmere = taskplace::presets::westmere_12cpu_2013();

void BM_flip_wide_policy(benchmark::State& st) {
  const auto in = bench::flip_wide_inputs(westmere.cpu_count());
  bench::FlipWidePolicy p{&westmere};
  std::uint32_t i = 0;
  for (auto _ : st) {
    bool wide = p(in[i++ & bench::ring_mask]);
    benchmark::DoNotOptimize(wide);
  }
  st.SetItemsProcessed(st.iterations());
}
BENCHMARK(BM_flip_wide_policy);

void BM_flip_wide_baseline(benchmark::State& st) {
  const auto in = bench::flip_wide_inputs(westmere.cpu_count());
  bench::FlipWideBaseline b{westmere.llc_size(0)};
  // The LLC size is a run-time value for the baseline too.
  benchmark::DoNotOptimize(b.llc_size);
  std::uint32_t i = 0;
  for (auto _ : st) {
    bool wide = b(in[i++ & bench::ring_mask]);
    benchmark::DoNotOptimize(wide);
  }
  st.SetItemsProcessed(st.iterations());
}
BENCHMARK(BM_flip_wide_baseline);

#if TASKPLACE_BENCH_HAVE_NEWIDLE
// 224 CPUs, three levels (SMT, LLC, machine): Chen 2023's machine.
constexpr taskplace::UniformTopology spr = taskplace::presets::sapphire_rapids_2x56x2();

void BM_newidle_gate_policy(benchmark::State& st) {
  const std::uint32_t levels = spr.level_count(0);
  const auto in = bench::gate_inputs(levels);
  bench::GatePolicy p{bench::gate_histories(levels), levels};
  std::uint32_t i = 0;
  for (auto _ : st) {
    bool go = p(in[i++ & bench::ring_mask]);
    benchmark::DoNotOptimize(go);
  }
  st.SetItemsProcessed(st.iterations());
}
BENCHMARK(BM_newidle_gate_policy);

void BM_newidle_gate_baseline(benchmark::State& st) {
  const std::uint32_t levels = spr.level_count(0);
  const auto in = bench::gate_inputs(levels);
  bench::GateBaseline b{bench::gate_histories(levels), levels};
  std::uint32_t i = 0;
  for (auto _ : st) {
    bool go = b(in[i++ & bench::ring_mask]);
    benchmark::DoNotOptimize(go);
  }
  st.SetItemsProcessed(st.iterations());
}
BENCHMARK(BM_newidle_gate_baseline);

void BM_newidle_gate_raw(benchmark::State& st) {
  const std::uint32_t levels = spr.level_count(0);
  const auto in = bench::gate_inputs(levels);
  bench::GateRawBaseline b{bench::gate_histories(levels), levels};
  std::uint32_t i = 0;
  for (auto _ : st) {
    bool go = b(in[i++ & bench::ring_mask]);
    benchmark::DoNotOptimize(go);
  }
  st.SetItemsProcessed(st.iterations());
}
BENCHMARK(BM_newidle_gate_raw);
#endif

#if TASKPLACE_BENCH_HAVE_RESERVATION
void BM_reservation_policy(benchmark::State& st) {
  const auto in = bench::reservation_inputs();
  bench::ReservationPolicy p{};
  std::uint32_t i = 0;
  for (auto _ : st) {
    bool hot = p(in[i++ & bench::ring_mask]);
    benchmark::DoNotOptimize(hot);
  }
  st.SetItemsProcessed(st.iterations());
}
BENCHMARK(BM_reservation_policy);

void BM_reservation_baseline(benchmark::State& st) {
  const auto in = bench::reservation_inputs();
  bench::ReservationBaseline b{};
  std::uint32_t i = 0;
  for (auto _ : st) {
    bool hot = b(in[i++ & bench::ring_mask]);
    benchmark::DoNotOptimize(hot);
  }
  st.SetItemsProcessed(st.iterations());
}
BENCHMARK(BM_reservation_baseline);
#endif

// A clock read as the pool's workers, the Boost.Fiber algorithm and the
// workloads' latency stamps take it: steady_clock (SteadyClock) against the
// process's TscClock (the TSC where it is invariant, steady_clock elsewhere).
void BM_clock_steady(benchmark::State& st) {
  const taskplace::SteadyClock clock;
  for (auto _ : st) benchmark::DoNotOptimize(clock.now());
  st.SetItemsProcessed(st.iterations());
}
BENCHMARK(BM_clock_steady);

void BM_clock_tsc(benchmark::State& st) {
  const taskplace::TscClock& clock = taskplace::TscClock::process();
  st.counters["tsc"] = clock.uses_tsc() ? 1 : 0;
  for (auto _ : st) benchmark::DoNotOptimize(clock.now());
  st.SetItemsProcessed(st.iterations());
}
BENCHMARK(BM_clock_tsc);

}  // namespace

BENCHMARK_MAIN();
