// taskplace_sim/costs.hpp: every cost and scheduler constant of the
// simulated machine, with its default and where the default comes from.
//
// One set of defaults serves every scenario: nothing is tuned per
// experiment. docs/simulator.md repeats this table with the reasoning.
//
//   taskplace_sim::Costs costs;                     // the defaults
//   costs.refill_llc = Nanoseconds{0};              // a machine with free migrations
#pragma once

#include <chrono>
#include <cstdint>

#include "taskplace/types.hpp"

namespace taskplace_sim {

using namespace std::chrono_literals;
using taskplace::Nanoseconds;

// Which cache-hot test the balances apply (both through taskplace::TaskHot).
enum class CacheHotModel : std::uint8_t {
  // The model the scenario table was measured with: the periodic balance
  // only, Costs::cache_nice_tries for every level, SMT moves tested too
  // (task_hot::AllLevels2007), and a balance that finds nothing to pull keeps
  // the level's count. The newidle pull takes the least recently run task.
  table,
  // The kernel's: both balances test (newidle refusals never add to the
  // count), sd_init()'s tries per level (SMT 0, cluster/LLC/package 1,
  // NUMA 2; Costs::cache_nice_tries unused), no task hot between SMT
  // siblings (v5.10), and a balance that finds nothing resets the count.
  kernel,
};

struct Costs {
  // --- the fair scheduler (CFS/EEVDF-like) ---------------------------------
  // Time a task may run while others wait. default 3ms; kernel:
  // sysctl_sched_base_slice (EEVDF, v6.6: 0.75 ms x (1 + log2 ncpu) on
  // big boxes, 3 ms on the 8+ CPU machines the seeds used).
  Nanoseconds base_slice = 3ms;
  // A woken task preempts the running one when its vruntime is more than
  // this much smaller (also when the waker has just been picked: it
  // leaves the CPU before running). default 4ms; kernel: sysctl_sched_wakeup_granularity
  // of CFS (v3.9-era wakeup_preempt_entity): 1 ms x (1 + log2 ncpu), ncpu
  // capped at 8 (SCHED_TUNABLESCALING_LOG), i.e. 4 ms on the 8+ CPU
  // machines of the seeds, scaled like base_slice above.
  Nanoseconds wakeup_granularity = 4ms;
  // How far behind min_vruntime a woken sleeper may be placed. default
  // 12ms; kernel: place_entity with GENTLE_FAIR_SLEEPERS: sched_latency / 2,
  // sched_latency 6 ms x (1 + log2 ncpu) = 24 ms on 8+ CPUs.
  Nanoseconds sleeper_credit = 12ms;

  // --- direct costs ------------------------------------------------------------
  // CPU time lost switching to a task (including from idle). default 3us;
  // lmbench lat_ctx / perf bench sched pipe on 2008-2013 x86: 2-5 us.
  Nanoseconds context_switch = 3us;
  // Delay before a task woken onto another CPU is queued there (IPI, idle
  // exit from C1). default 4us; IPI 1-2 us plus C1 exit 1-2 us on x86.
  Nanoseconds remote_wakeup = 4us;
  // CPU time a spuriously woken task runs before it sleeps again (a lock
  // handoff that found nothing to do). default 2us.
  Nanoseconds spurious_run = 2us;

  // Speed of a hardware thread, in percent, while another thread of its
  // core runs a task. default 60 (a core then does 1.2x the work of one
  // thread: Intel's "up to 30%" for Hyper-Threading, 15-25% typical).
  std::uint32_t smt_speed_pct = 60;

  // --- cache warmth --------------------------------------------------------------
  // A task's working set is warm on the CPU it last ran on and in that
  // CPU's LLC. Moving pays a refill, growing with distance; scaled by the
  // task's footprint (permille of one "unit" working set of ~256 KB).
  // Refill of the private caches (L1/L2) from the LLC. default 8us: 256 KB
  // at ~32 GB/s.
  Nanoseconds refill_core = 8us;
  // Extra refill of the LLC share from memory, when the LLC changes.
  // default 20us: 256 KB of LLC misses, ~80 ns each, 8-way parallel.
  Nanoseconds refill_llc = 20us;
  // Extra when the node changes (remote memory, lines pulled across the
  // interconnect). default 15us: remote DRAM ~1.7x local latency.
  Nanoseconds refill_node = 15us;
  // Other tasks' run time on a CPU that fully evicts an absent task's
  // private cache share. default 1ms: a 256 KB L2 is rewritten in well
  // under a millisecond by a busy neighbour.
  Nanoseconds cache_cool = 1ms;
  // Cost to the receiver of a message whose sender ran on another CPU
  // (the data's cache lines move): same LLC, other LLC, other node.
  // defaults 1us / 3us / 6us: a few dozen lines at 40/100/200 ns.
  Nanoseconds message_llc = 1us;
  Nanoseconds message_other_llc = 3us;
  Nanoseconds message_node = 6us;

  // --- load balancing ------------------------------------------------------------
  // Periodic balance interval of level i: tick * (i + 1). default 4ms;
  // kernel: balance_interval starts at the domain weight in ms, 4 ms is
  // the HZ=250 tick.
  Nanoseconds tick = 4ms;
  // Cost of one newidle pull attempt at a level spanning n CPUs:
  // (newidle_base + n * newidle_per_cpu) * (1 + contention_pct/100 * k),
  // k = other CPUs of that span balancing at the same time (they take the
  // same run-queue locks). defaults 2us, 250ns, 50%: Low 2013 reports
  // machine-level costs of tens of us on an 8-socket box.
  Nanoseconds newidle_base = 2us;
  Nanoseconds newidle_per_cpu = 250ns;
  std::uint32_t contention_pct = 50;
  // Time a newidle pull holds the run-queue lock of the CPU it pulls from
  // (the level's busiest), after the walk above: the double lock of both
  // queues, the scan of the busiest queue's tasks and the detach/attach of
  // the one pulled. The CPU pulled from cannot schedule meanwhile, so the
  // task running there is delayed (stalled) by that much, and balancers
  // pulling from the same CPU take the lock in turn, each spinning until
  // it is free (Low 2013, RFC 3/3: "acquiring the rq locks can potentially
  // prevent other CPUs from running something useful"). default 3us:
  // a dozen or so cache lines of another socket's run queue, task and
  // lock at ~200-250 ns each (remote-socket latency on 2013 multi-socket
  // x86), about one context switch. 0: pulls take no lock, stall nothing.
  Nanoseconds newidle_lock_hold = 3us;
  // Cost per CPU looked at by a periodic balance (accounted, not charged).
  Nanoseconds periodic_per_cpu = 100ns;
  // The kernel's yardstick, used by the periodic pull's cache-hot test: a
  // queued task that ran within this time is not pulled; a balance that
  // finds only such tasks fails (see cache_nice_tries). The newidle pull
  // ignores it. default 500us; kernel: sysctl_sched_migration_cost.
  Nanoseconds migration_cost = 500us;
  // A hot task is pulled anyway once more than this many periodic balances
  // of the level failed (found only cache-hot tasks): with 1, at the third
  // balance. The same for every level (the kernel's sd_init() gives SMT 0
  // and NUMA 2; taskplace::TaskHot's defaults do). default 1; kernel:
  // sd->cache_nice_tries, compared with the domain's nr_balance_failed.
  std::uint32_t cache_nice_tries = 1;
  // default table (see CacheHotModel); `taskplace_demo --cache-hot kernel`.
  CacheHotModel cache_hot = CacheHotModel::table;
};

}  // namespace taskplace_sim
