// 005_readme.cpp: the example of the project's README, compiled as is.
#include <taskplace/taskplace.hpp>
#include <cstdio>

struct Machine {  // your pool's view of its workers: is a CPU idle, how loaded
  int busy[8] = {1, 1, 0, 0, 0, 1, 0, 0};
  bool is_idle(taskplace::CpuId c) const { return busy[c] == 0; }
  std::uint32_t nr_running(taskplace::CpuId c) const { return busy[c] != 0; }
  std::uint64_t load(taskplace::CpuId c) const { return busy[c] != 0 ? 1024 : 0; }
};
int main() {
  taskplace::UniformTopology topo{1, 1, 4, 2};  // 1 node, 1 L3, 4 cores x 2 threads
  taskplace::WakePlacer<taskplace::UniformTopology> placer{topo};
  decltype(placer)::task_state waker, wakee;    // live in your task objects
  auto p = placer.place({.waker = &waker, .waker_key = 1, .wakee = &wakee, .wakee_key = 2,
                         .waking_cpu = 0, .prev_cpu = 1}, Machine{}, taskplace::SteadyClock{}.now());
  std::printf("run on cpu %u: %s\n", p.cpu, taskplace::to_string(p.reason));
}
