// 025_sync_2008.cpp: Smith 2008's fight in one screen. In 2008 a sync
// wake-up (a socket write) pulled the wakee onto the waker's CPU when both
// tasks ran only briefly after waking others (avg_overlap below 500 us).
// pgbench's client and backends all do, so 2.6.25 stacked every backend on
// the client's CPU; 2.6.26 added a balance test to the pull; clearing the
// SYNC_WAKEUPS feature bit ignored the hint altogether.
//
// The client runs on CPU 0 of a Q6600 and wakes 4 backends whose last CPUs
// are 1, 2, 3 and 1. Each pulled backend adds to CPU 0's runnable load.
#include <cstdint>
#include <cstdio>

#include <taskplace/taskplace.hpp>
#include <taskplace/testing/machine.hpp>

using namespace std::chrono_literals;
namespace tp = taskplace;

// Returns: how many tasks CPU 0 runs after the four wake-ups.
template <class Variant>
std::uint32_t run(const char* name) {
  const auto topo = tp::presets::q6600_2008();
  using Placer = tp::WakePlacer<tp::UniformTopology, tp::traits::Linux2008<Variant>>;
  const Placer placer{topo};
  tp::testing::ScriptedMachine<> m{4};
  m.busy(0, 1, 1024);  // the client
  typename Placer::task_state client, backend[4];
  const tp::CpuId prev[4] = {1, 2, 3, 1};
  std::printf("%-10s", name);
  for (int i = 0; i < 4; ++i) {
    const auto p = placer.place({.waker = &client, .waker_key = 1, .wakee = &backend[i],
                                 .wakee_key = tp::TaskKey(10 + i), .waking_cpu = 0, .prev_cpu = prev[i],
                                 .sync = true},
                                m, 1ms);
    std::printf("  backend %d -> CPU %u (%s)", i, p.cpu, tp::to_string(p.affine));
    if (p.cpu == 0) m.busy(0, m.nr_running(0) + 1, m.load(0) + 1024);
  }
  std::printf("\n           CPU 0 runs %u tasks\n", m.nr_running(0));
  return m.nr_running(0);
}

int main() {
  // 2.6.25: every backend stacks on CPU 0 (the client plus 4).
  const auto unchecked = run<tp::sync_affine::Unchecked2008>("2.6.25");
  // 2.6.26: the first backend's pull is not balanced (100 * 1024 > 112 * 0),
  // but the load test takes it (CPU 0 carries no more than prev); then CPU
  // 0 is heavier than every prev and the rest stay.
  const auto balanced = run<tp::sync_affine::Balanced2008>("2.6.26");
  // Sync off: the client is not discounted, so CPU 0 is never lighter.
  const auto ignored = run<tp::sync_affine::Ignored2008>("sync off");
  return unchecked == 5 && balanced == 2 && ignored == 1 ? 0 : 1;
}
