// expect: kit::Stealer: last_ran must be callable
// A last_ran that answers an integer, not taskplace::Nanoseconds.
#include <cstddef>
#include <cstdint>

#include "taskplace/clock.hpp"
#include "taskplace/kit/idle.hpp"
#include "taskplace/topology/uniform.hpp"

struct Queue {
  std::size_t size() const { return 0; }
  template <class Pick>
  int* try_steal(const Pick&) { return nullptr; }
  int* try_steal() { return nullptr; }
};

void use() {
  const taskplace::UniformTopology topo{1, 1, 2, 1};
  taskplace::kit::Stealer<taskplace::UniformTopology> thief{topo, 0};
  Queue qs[2];
  auto queues = [&](taskplace::CpuId c) -> Queue& { return qs[c]; };
  auto last_ran = [](int* const&) { return std::int64_t{0}; };
  (void)thief.periodic(queues, last_ran, taskplace::ManualClock{});
}
