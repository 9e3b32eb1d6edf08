// tests/placer/ping_pong_pair.hpp: a waker/wakee pair on a 2-CPU machine
// for the placer's tests of CostGate and SettledPair: A on worker 0 wakes
// B (last on b_cpu, where each placement leaves it) and sleeps `overlap`
// later; B runs `run`, then sleeps. The clock the placer is given counts
// its reads.
#pragma once

#include <chrono>
#include <cstdint>

#include "taskplace/kit/machine.hpp"
#include "taskplace/topology/uniform.hpp"
#include "taskplace/wake_placer.hpp"

namespace placer_test {

inline constexpr taskplace::TaskKey key_a = 1, key_b = 2, key_c = 3;

template <class Traits>
struct Pair {
  using Placer = taskplace::WakePlacer<taskplace::UniformTopology, Traits>;
  taskplace::UniformTopology topo{1, 1, 2, 1};
  Placer placer{topo};
  typename Placer::task_state a{}, b{};
  taskplace::CpuId b_cpu;
  taskplace::Nanoseconds now = std::chrono::milliseconds{1};
  int clock_reads = 0;

  explicit Pair(taskplace::CpuId b_starts_on = 0) : b_cpu(b_starts_on) {}
  Pair(const Pair&) = delete;  // the placer points at topo

  // A round: A runs `run`, wakes B (as `waker`, A's key by default),
  // sleeps `overlap` later; B runs `run` and sleeps.
  taskplace::Placement round(taskplace::kit::Machine& m, taskplace::Nanoseconds overlap,
                             taskplace::Nanoseconds run, taskplace::TaskKey waker = key_a) {
    placer.task_runs(a, now);
    now += run;
    m.running(0);
    const taskplace::Placement p =
        placer.place({.waker = &a, .waker_key = waker, .wakee = &b, .wakee_key = key_b, .waking_cpu = 0,
                      .prev_cpu = b_cpu, .sync = true},
                     m.at(now), [this] { return ++clock_reads, now; });
    b_cpu = p.cpu;
    now += overlap;
    placer.task_sleeps(a, now);
    placer.task_runs(b, now);
    now += run;
    placer.task_sleeps(b, now);
    return p;
  }
};

}  // namespace placer_test
