// 050_stats.cpp: read the schedstat-like counters of the placer and the
// balancer.
//
// Counters are off by default (NoStats: every add compiles away). Swap the
// Stats member of the traits: PlainStats for a placer owned by one worker,
// AtomicStats for one shared by many. Then stats().get(counter) reads them
// and to_string(counter) names them.
#include <cstdint>
#include <cstdio>
#include <random>
#include <vector>

#include <taskplace/taskplace.hpp>

using taskplace::CpuId;

struct Machine {
  std::vector<std::uint32_t> running;
  bool is_idle(CpuId c) const { return running[c] == 0; }
  std::uint32_t nr_running(CpuId c) const { return running[c]; }
  std::uint64_t load(CpuId c) const { return running[c] * 1024u; }
};

struct CountedWake : taskplace::DefaultWakeTraits {
  using Stats = taskplace::PlainStats;
};
struct CountedBalance : taskplace::DefaultBalanceTraits {
  using Stats = taskplace::PlainStats;
};

int main() {
  const taskplace::UniformTopology topology = taskplace::presets::two_node_80cpu();
  const taskplace::WakePlacer<taskplace::UniformTopology, CountedWake> placer{topology};
  using Task = decltype(placer)::task_state;

  // Half of the 80 CPUs busy at random; 64 tasks waking one another at random.
  std::mt19937 rng(42);
  Machine machine{std::vector<std::uint32_t>(topology.cpu_count())};
  for (auto& r : machine.running) r = rng() & 1;
  std::vector<Task> tasks(64);
  std::vector<CpuId> last_cpu(tasks.size());
  for (auto& c : last_cpu) c = static_cast<CpuId>(rng() % topology.cpu_count());
  for (std::uint32_t i = 0; i < 2000; ++i) {
    const auto a = rng() % tasks.size(), b = rng() % tasks.size();
    const auto p = placer.place({.waker = &tasks[a], .waker_key = a + 1, .wakee = &tasks[b],
                                 .wakee_key = b + 1, .waking_cpu = last_cpu[a],
                                 .prev_cpu = last_cpu[b]},
                                machine, taskplace::Nanoseconds{std::int64_t{10'000} * (i + 1)});
    last_cpu[b] = p.cpu;
  }
  std::printf("WakePlacer on %u CPUs, 2000 wake-ups:\n", topology.cpu_count());
  for (std::uint8_t k = 0; k < static_cast<std::uint8_t>(taskplace::WakeCounter::count_); ++k) {
    const auto c = static_cast<taskplace::WakeCounter>(k);
    std::printf("  %-18s %6llu\n", taskplace::to_string(c),
                static_cast<unsigned long long>(placer.stats().get(c)));
  }

  const taskplace::IdleBalancer<taskplace::UniformTopology, CountedBalance> balancer{topology};
  taskplace::ManualClock clock{std::chrono::seconds{1}};
  auto st = balancer.make_state(0, clock.now());
  for (int i = 0; i < 100; ++i) {
    // Attempts find nothing and cost 30 us, but the first one met a
    // contended lock and took 400 us: each level remembers that maximum.
    // Idle periods stay short (40 us after the balance), so avg_idle falls
    // below the first level's cost and the entry gate refuses to try.
    balancer.balance(0, st, [&](std::uint32_t, taskplace::LevelKind, const auto&) {
      clock.advance(std::chrono::microseconds{i == 0 ? 400 : 30});
      return false;
    }, clock);
    clock.advance(std::chrono::microseconds{40});
    balancer.idle_end(st, clock.now());
    if (i % 10 == 9) balancer.tick(st, clock.now());  // the periodic decay
  }
  std::printf("IdleBalancer, 100 newidle balances of cpu 0:\n");
  for (std::uint8_t k = 0; k < static_cast<std::uint8_t>(taskplace::BalanceCounter::count_); ++k) {
    const auto c = static_cast<taskplace::BalanceCounter>(k);
    std::printf("  %-18s %6llu\n", taskplace::to_string(c),
                static_cast<unsigned long long>(balancer.stats().get(c)));
  }
  return placer.stats().get(taskplace::WakeCounter::wakeups) == 2000 &&
                 balancer.stats().get(taskplace::BalanceCounter::entry_gate_skips) > 0
             ? 0
             : 1;
}
