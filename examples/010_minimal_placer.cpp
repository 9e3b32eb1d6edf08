// 010_minimal_placer.cpp: the smallest use of WakePlacer.
//
// A 4-core, 8-thread machine with one shared L3 (UniformTopology), a machine
// state over one counter per CPU, and one wake-up: task A on CPU 0 wakes
// task B, which last ran on CPU 5. The placer answers with a CPU and the
// reasons for it.
#include <cstdint>
#include <cstdio>
#include <vector>

#include <taskplace/taskplace.hpp>

// What the placer needs to know about the machine right now (MachineState):
// whether a CPU is idle, how many tasks it runs, and its load.
struct Machine {
  std::vector<std::uint32_t> running;  // tasks on each CPU
  bool is_idle(taskplace::CpuId c) const { return running[c] == 0; }
  std::uint32_t nr_running(taskplace::CpuId c) const { return running[c]; }
  std::uint64_t load(taskplace::CpuId c) const { return running[c] * 1024u; }
};

int main() {
  const taskplace::UniformTopology topology{1, 1, 4, 2};  // 1 node, 1 LLC, 4 cores x 2 threads
  const taskplace::WakePlacer<taskplace::UniformTopology> placer{topology};

  // CPUs 0 (A runs there) and 5 (someone else took B's old CPU) are busy.
  Machine machine{{1, 0, 0, 0, 0, 1, 0, 0}};

  // Per-task state lives in the embedder's task objects.
  decltype(placer)::task_state a, b;
  const auto p = placer.place({.waker = &a, .waker_key = 1, .wakee = &b, .wakee_key = 2,
                               .waking_cpu = 0, .prev_cpu = 5},
                              machine, taskplace::Nanoseconds{1'000'000});

  std::printf("A on cpu 0 wakes B (last on cpu 5, now busy)\n");
  std::printf("  wide:   %s\n", p.wide ? "yes" : "no");
  std::printf("  target: cpu %u (%s)\n", p.target, taskplace::to_string(p.affine));
  std::printf("  cpu:    %u (%s, %u CPUs scanned)\n", p.cpu, taskplace::to_string(p.reason),
              p.scanned);
  // The target is busy; an idle CPU sharing its cache is better.
  return machine.is_idle(p.cpu) ? 0 : 1;
}
