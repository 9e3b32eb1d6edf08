// taskplace_pool/options.hpp: the pool's options (PoolOptions, Pinning)
// and what it reports (PoolStats, ShutdownReport). Part of pool.hpp.
#pragma once

#include "taskplace/detail/config.hpp"

#include <chrono>
#include <cstdint>
#include <optional>

#include "taskplace/kit/machine.hpp"
#include "taskplace/kit/trace.hpp"
#include "taskplace/policy/task_hot.hpp"
#include "taskplace/types.hpp"
#include "taskplace_pool/core.hpp"

namespace taskplace_pool {

using namespace std::chrono_literals;

// How workers are pinned to CPUs.
enum class Pinning : std::uint8_t {
  automatic,         // pin worker c to os_cpu(c) (or c); run unpinned if refused
  off,               // never pin
  simulate_failure,  // behave as if the OS refused every pin (for tests)
};

// Every duration here is a taskplace::SaturatingNanoseconds: one that does
// not fit nanoseconds (hours::max()) saturates at Nanoseconds::max().
struct PoolOptions {
  Pinning pinning = Pinning::automatic;
  // default 4ms; kernel: TICK_NSEC at HZ=250 (scheduler_tick, nohz kick).
  taskplace::SaturatingNanoseconds tick = 4ms;
  // default 20us; kernel: none (cpuidle's poll state); how long a worker
  // with nothing to do spins before it parks on its futex.
  taskplace::SaturatingNanoseconds spin_before_park = 20us;
  // A worker with queued work at its tick wakes one parked worker, which
  // steals (kernel nohz_balancer_kick). default true. A worker running a
  // long task has no tick (tasks are not interrupted), so two more cases
  // stand in for the ticks it misses: a queueing that leaves a worker
  // with a task a thief can take (the overload flag set) kicks a parked
  // worker at once, and a worker that parks while the flag is set wakes
  // after one tick and balances as if kicked. Without them, tasks queued
  // behind a task that runs for 100 ms wait the 100 ms while other
  // workers sleep.
  bool kick_idle_on_tick = true;
  // default 1us; kernel: the thread's timer slack (PR_SET_TIMERSLACK,
  // 50us unless set). How late the kernel may end a parked worker's futex
  // wait for its next timer: the precision of sleep_for. 0: leave the
  // thread's own slack.
  taskplace::SaturatingNanoseconds timer_slack = 1us;
  // default 50us; kernel: none. A worker that finds it lost its CPU for
  // longer than this (a gap in its spin loop, a late return from its
  // futex) counts as preempted: its CPU is shared with other threads.
  taskplace::SaturatingNanoseconds preempt_gap = 50us;
  // default 8ms (two ticks); kernel: vcpu_is_preempted() in
  // available_idle_cpu(). How long after a preemption the placer is told
  // that the worker is not idle, however empty its queue. 0: never.
  taskplace::SaturatingNanoseconds preempted_for = 8ms;
  // default true; kernel: the root domain's overload flag (v3.16). A
  // worker that runs dry balances only while some worker holds two or
  // more tasks, one of them queued (running plus queued; the hand-off
  // slot's task is no thief's): the flag is set when a queueing makes one
  // so and cleared at a tick that finds none. false: every newly idle
  // worker balances (Overload::unknown).
  bool overload_gate = true;
  // default: measured; kernel: none (cpuidle's exit latencies, the
  // migration cost). What waking a spinning or a parked worker costs and
  // a cache line's round trip between workers (taskplace::kit::WakeCosts),
  // read by the rules that weigh a move in these costs (traits::Runtime's
  // CostGate). All zero: measured once per process at the first pool
  // whose policies read them (taskplace::kit::measured_costs(), about
  // 60 ms).
  taskplace::kit::WakeCosts costs{};
  // default: the policy set's (on for traits::Runtime, off for the
  // kernel's: taskplace::kit::hot_steals_default); kernel: task_hot() in
  // can_migrate_task(). A steal leaves a task that ran within
  // task_hot.migration_cost on its worker until that level's periodic
  // balances (a tick's kick) have found only such tasks more than
  // cache_nice_tries times in a row; newidle steals never count
  // (taskplace::TaskHot). Off: a steal takes the victim's newest queued
  // task, hot or not.
  std::optional<bool> cache_hot_steals{};
  // default: the policy set's (the kernel's 500us and {0, 1, 1, 1, 2},
  // with the runtime's migration cost, 25us, for traits::Runtime:
  // taskplace::kit::task_hot_default). The test's tunables; its rule is
  // the pool's BalanceTraits' Hot member (task_hot::SmtExempt2020 by
  // default, TaskHot<task_hot::AllLevels2007> for the classic one).
  std::optional<taskplace::TaskHot<>> task_hot{};
  // default null; kernel: the sched tracepoints. Where the placers and
  // balancers record their decisions when the pool's traits carry
  // taskplace::kit::ChromeTraceHook (TracedPool, or kit::Traced<...> as
  // either traits set); null: the sink installed (ChromeTrace::Install)
  // when the pool was constructed, if any. The trace must outlive the pool.
  taskplace::kit::ChromeTrace* trace = nullptr;
};

// Counters summed over the workers; each is a relaxed atomic.
struct PoolStats {
  std::uint64_t tasks_run = 0;       // resumptions
  std::uint64_t migrations = 0;      // resumed on another worker than last time
  std::uint64_t wakeups = 0;         // placements of woken tasks
  std::uint64_t affine_wakeups = 0;  // ... onto the waking worker itself
  std::uint64_t steal_attempts = 0;  // victims with a task to give that balance pulls looked into
  std::uint64_t steals = 0;          // tasks stolen
  std::uint64_t hot_skips = 0;       // queued tasks a steal left as cache hot (cache_hot_steals)
  std::uint64_t parks = 0;           // futex sleeps
  std::uint64_t kicks = 0;           // periodic balances for a busy worker: parked workers kicked
                                     // (a tick, an overload), workers about to park with one overloaded
  std::uint64_t spawned = 0;
  std::uint64_t completed = 0;
  std::uint64_t failed = 0;          // tasks that ended with an exception
};

// What shutdown() found.
struct ShutdownReport {
  std::uint64_t completed = 0;  // tasks that ran to the end
  std::uint64_t abandoned = 0;  // tasks still waiting on something nobody will signal
};

}  // namespace taskplace_pool
