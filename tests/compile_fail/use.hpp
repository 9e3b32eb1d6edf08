// tests/compile_fail/use.hpp: a placer and a balancer used as a program
// uses them (a wake-up placed, a newidle balance run), so that a bad
// traits member, machine state or pull is refused where a user would meet
// it, not only where the class is named.
#pragma once

#include <cstdint>

#include "taskplace/clock.hpp"
#include "taskplace/idle_balancer.hpp"
#include "taskplace/topology/uniform.hpp"
#include "taskplace/wake_placer.hpp"

namespace compile_fail {

// MachineState R1-R3, nothing optional.
struct Machine {
  bool is_idle(taskplace::CpuId) const noexcept { return true; }
  std::uint32_t nr_running(taskplace::CpuId) const noexcept { return 0; }
  std::uint64_t load(taskplace::CpuId) const noexcept { return 0; }
};

inline const taskplace::UniformTopology topo{1, 1, 4, 2};

// One wake-up through a placer with these traits: the waker on CPU 0, the
// wakee last on CPU 3.
template <class Traits, class M = Machine>
taskplace::Placement place_once(const M& machine = M{}) {
  taskplace::WakePlacer<taskplace::UniformTopology, Traits> placer{topo};
  typename taskplace::WakePlacer<taskplace::UniformTopology, Traits>::task_state waker{}, wakee{};
  return placer.place({.waker = &waker, .waker_key = 1, .wakee = &wakee, .wakee_key = 2, .waking_cpu = 0,
                       .prev_cpu = 3},
                      machine, taskplace::Nanoseconds{0});
}

// One newidle balance of CPU 0 through a balancer with these traits.
template <class Traits, class Pull>
taskplace::BalanceResult balance_once(Pull pull) {
  taskplace::IdleBalancer<taskplace::UniformTopology, Traits> balancer{topo};
  taskplace::ManualClock clock;
  auto st = balancer.make_state(0, clock.now());
  return balancer.balance(0, st, pull, clock);
}

// A pull that finds nothing.
inline constexpr auto no_work = [](std::uint32_t, taskplace::LevelKind, auto) { return false; };

}  // namespace compile_fail
