// taskplace_sim/placer_view.hpp: the MachineState the WakePlacer reads
// (concepts.hpp R1-R3, O1, O3): the simulated machine seen as the
// placer's state adapter.
//
// Kernel analogue: what select_task_rq_fair() reads of the run queues:
// idle_cpu(), rq->nr_running, the load, the LLC's utilisation and (with a
// reservation policy) the per-CPU reservation; and a runtime's costs:
// what waking each CPU costs (spinning or parked) and a line's round trip.
//
// load(c) is 1024 x runnable tasks (sleepers left out, as the affine
// input docs prescribe with wakee_load = 0); llc_utilization_pct is the
// share of the LLC's CPUs that have a task (running, queued or on its
// way; a CPU busy in a newidle balance has none, as PELT's util_avg does
// not count it), from a per-LLC count the machine keeps up to date (never
// recounted).
//
//   const taskplace::Placement p = placer.place(wakeup, MachineView<Machine>{&m}, now);
#pragma once

#include <cstdint>

#include "taskplace/types.hpp"

namespace taskplace_sim {

template <class M>
struct MachineView {
  const M* m;
  // The machine's idle bitmap, which refresh() keeps equal to idle_now(c)
  // (the invariant check compares them): the LLC walk reads one line for
  // 64 CPUs, not a CPU record and a run queue for each.
  bool is_idle(taskplace::CpuId c) const { return (m->idle_bits_[c / 64] >> (c % 64)) & 1u; }
  std::uint32_t nr_running(taskplace::CpuId c) const { return m->nr_running(c); }
  std::uint64_t load(taskplace::CpuId c) const { return std::uint64_t{1024} * m->nr_running(c); }
  std::uint32_t llc_utilization_pct(taskplace::CpuId c) const {
    const auto size = m->cost_.llc_size(c);
    return 100u * m->llc_busy_[m->cost_.llc_of(c)] / size;
  }
  const auto& reservation(taskplace::CpuId c) const { return m->rst_[c]; }
  // What getting a new task running on c costs (the kit's Machine::wake_cost):
  // 0 on a CPU with a task, a line on a spinning one, remote_wakeup on a
  // parked one (every idle one under WakeModel::kernel).
  taskplace::Nanoseconds wake_cost(taskplace::CpuId c) const {
    if (!m->idle_now(c)) return taskplace::Nanoseconds{0};
    return m->parked(c) ? m->costs_.remote_wakeup : m->costs_.line_llc;
  }
  // A cache line's round trip between two workers of one L3: the floor of
  // any hand-off.
  taskplace::Nanoseconds crossing_cost() const { return 2 * m->costs_.line_llc; }
};

}  // namespace taskplace_sim
