// 055_trace.cpp: record every decision as Chrome trace JSON.
//
// kit::Traced<Traits> puts kit::ChromeTraceHook in a traits set; a hook
// built while a ChromeTrace is installed records into it. Two threads
// share one placer (one trace, no lock), a balancer records its newidle
// balances beside them, and the trace is written to stdout (or the file
// given as the first argument): open it in Perfetto (ui.perfetto.dev) or
// replay it with taskplace-replay.
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <thread>
#include <vector>

#include <taskplace/kit/trace.hpp>
#include <taskplace/taskplace.hpp>

using taskplace::CpuId;
namespace kit = taskplace::kit;

struct Machine {  // every CPU busy but CPU 5
  bool is_idle(CpuId c) const { return c == 5; }
  std::uint32_t nr_running(CpuId c) const { return c == 5 ? 0 : 1; }
  std::uint64_t load(CpuId c) const { return c == 5 ? 0 : 1024; }
};

struct Shared : kit::Traced<taskplace::traits::Current> {
  using Stats = taskplace::AtomicStats;  // two threads count into one placer
};

int main(int argc, char** argv) {
  const taskplace::UniformTopology topology = taskplace::presets::westmere_12cpu_2013();
  kit::ChromeTrace trace{1024, "055_trace"};  // room for 1024 events; more would count as dropped
  kit::ChromeTrace::Install on{trace};        // hooks built in this scope record into `trace`
  const taskplace::WakePlacer<taskplace::UniformTopology, Shared> placer{topology};
  const taskplace::IdleBalancer<taskplace::UniformTopology, kit::Traced<taskplace::DefaultBalanceTraits>> balancer{
      topology};

  std::vector<std::thread> threads;
  for (CpuId t = 0; t < 2; ++t)
    threads.emplace_back([&, t] {
      std::vector<decltype(placer)::task_state> tasks(4);
      for (std::uint32_t i = 0; i < 50; ++i) {
        const std::uint32_t a = i % 4, b = (i + 1) % 4;
        placer.place({.waker = &tasks[a], .waker_key = 10u * t + a + 1, .wakee = &tasks[b],
                      .wakee_key = 10u * t + b + 1, .waking_cpu = t, .prev_cpu = static_cast<CpuId>(6 + t),
                      .sync = true},
                     Machine{}, taskplace::Nanoseconds{std::int64_t{1'000'000} + 2'000 * i});
      }
    });
  for (auto& th : threads) th.join();

  taskplace::ManualClock clock{std::chrono::seconds{1}};
  auto st = balancer.make_state(3, clock.now());
  balancer.balance(3, st, [&](std::uint32_t, taskplace::LevelKind, const auto&) {
    clock.advance(std::chrono::microseconds{20});
    return true;  // found work at the first level
  }, clock);

  if (argc > 1) {
    if (!trace.write_file(argv[1])) return 1;
  } else {
    trace.write(std::cout);
  }
  std::fprintf(stderr, "%zu events recorded, %llu dropped\n", trace.recorded(),
               static_cast<unsigned long long>(trace.dropped()));
  // 100 wake-ups and one balance, none dropped.
  return trace.recorded() == 101 && trace.dropped() == 0 &&
                 placer.stats().get(taskplace::WakeCounter::wakeups) == 100
             ? 0
             : 1;
}
