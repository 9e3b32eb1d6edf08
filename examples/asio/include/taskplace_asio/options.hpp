// taskplace_asio/options.hpp: the Asio runtime's options and counters
// (Runtime, runtime.hpp).
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>

#include "taskplace/kit/machine.hpp"
#include "taskplace/policy/task_hot.hpp"
#include "taskplace/types.hpp"

namespace taskplace_asio {

using taskplace::CpuId;
using taskplace::Nanoseconds;

struct Options {
  // How long an idle worker polls its queue and the others' before it
  // blocks in its io_context (a wake-up of a blocked thread costs a futex
  // round trip). default 20 us; kernel: the cpuidle poll state.
  Nanoseconds idle_spin{std::chrono::microseconds{20}};
  // While it spins, how often it looks at the others' queues (the newidle
  // balance looked when it ran dry). A wake-up the placer kept on a busy
  // worker (the waker's, which ends next) is then not taken at once by a
  // spinning neighbour. default 5 us; kernel: the idle balance's interval.
  Nanoseconds idle_balance{std::chrono::microseconds{5}};
  // How long a blocked worker sleeps at most before it looks at the other
  // workers' queues again. default 1 ms; kernel: the nohz idle-balance kick.
  Nanoseconds idle_poll{std::chrono::milliseconds{1}};
  // Handlers a worker runs from its queue before it polls its io_context
  // (timers, sockets). default 16.
  std::uint32_t poll_every = 16;
  // What waking a spinning or a blocked worker costs and a cache line's
  // round trip between workers (the placer's MachineState O5, O6), read by
  // rules that weigh a move in these costs (traits::Runtime's CostGate).
  // All zero: measured once per process at the first runtime whose
  // policies read them (taskplace::kit::measured_costs()).
  taskplace::kit::WakeCosts costs{};
  // default: the policy set's (on for traits::Runtime, off for the
  // kernel's: taskplace::kit::hot_steals_default); kernel: task_hot() in
  // can_migrate_task(). A steal leaves a handler whose task ran within
  // task_hot.migration_cost, until that level's periodic balances have
  // found only such handlers more than cache_nice_tries times in a row
  // with the victim's queue never drained between them
  // (taskplace::TaskHot, kit::WorkerQueue::drains). Off: a steal takes the
  // victim's oldest handler.
  std::optional<bool> cache_hot_steals{};
  // default: the policy set's (the kernel's 500us and {0, 1, 1, 1, 2},
  // with the runtime's migration cost, 25us, for traits::Runtime:
  // taskplace::kit::task_hot_default). The test's tunables; its rule is
  // the runtime's BalanceTraits' Hot member.
  std::optional<taskplace::TaskHot<>> task_hot{};
};

struct Stats {
  std::uint64_t handlers = 0;    // handlers run
  std::uint64_t migrations = 0;  // handlers of a task run on another worker than its last
  std::uint64_t steals = 0;      // handlers an idle worker took from another's queue
  std::uint64_t remote = 0;      // wake-ups placed on another worker than the waking one
  std::uint64_t unparks = 0;     // wake-ups that ended a worker's sleep in its io_context
};

}  // namespace taskplace_asio
