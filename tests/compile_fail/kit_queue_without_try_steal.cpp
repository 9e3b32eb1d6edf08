// expect: kit::Stealer: the queues must be callable
// A runtime's queue with a size but no try_steal: refused by the kit's
// WorkerQueue concept with its message, not deep inside the steal.
#include <cstddef>

#include "taskplace/clock.hpp"
#include "taskplace/kit/idle.hpp"
#include "taskplace/topology/uniform.hpp"

struct Queue {
  std::size_t size() const { return 0; }
};

void use() {
  const taskplace::UniformTopology topo{1, 1, 2, 1};
  taskplace::kit::Stealer<taskplace::UniformTopology> thief{topo, 0};
  Queue qs[2];
  auto queues = [&](taskplace::CpuId c) -> Queue& { return qs[c]; };
  (void)thief.periodic(queues, taskplace::kit::NoLastRan{}, taskplace::ManualClock{});
}
