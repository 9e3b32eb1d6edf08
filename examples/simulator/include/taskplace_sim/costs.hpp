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

#include "taskplace/tunables.hpp"
#include "taskplace/types.hpp"

namespace taskplace_sim {

using namespace std::chrono_literals;
using taskplace::Nanoseconds;

// How a wake-up onto another CPU reaches it (Costs::wake_model).
enum class WakeModel : std::uint8_t {
  // The kernel's: every wake-up onto another CPU arrives remote_wakeup later
  // and costs the waker ipi_send, whatever the target is doing.
  kernel,
  // A user-space runtime's: a wake-up onto a busy worker, or an idle one
  // that went idle less than spin_window ago (it still spins on its queue),
  // arrives after one cache line at the two CPUs' distance and costs the
  // waker that line (it writes the target's queue); onto a parked worker
  // (idle for spin_window or longer) it arrives remote_wakeup later (the
  // unpark latency) and costs the waker ipi_send (the futex wake-up).
  runtime,
};

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

  // --- cache lines -------------------------------------------------------------
  // Latency of one cache line another CPU wrote, read from: the same L3,
  // another L3 of the same memory node, another node. Every cost below that
  // moves data between CPUs is counted in these lines. defaults 50 / 100 /
  // 200 ns: a modified line in another core of the same L3 ~40-60 ns and
  // across the socket link ~100-130 ns on two-socket Xeons (Molka et al.
  // 2009, Nehalem-EP; Intel's Memory Latency Checker on later parts),
  // across a Zen CCX ~100 ns, and 2-3 hops on 8-socket glueless boxes
  // ~200-300 ns.
  Nanoseconds line_llc = 50ns;
  Nanoseconds line_other_llc = 100ns;
  Nanoseconds line_node = 200ns;

  // --- the waker's own wake path --------------------------------------------------
  // CPU time a wake-up costs the waking task (try_to_wake_up and
  // select_task_rq on its CPU, the enqueue or the wake list), on top of the
  // lines its idle search reads: each CPU the search looks at costs one
  // line at that CPU's distance (idle_cpu() reads the remote rq).
  // default 1us: perf bench sched pipe's 2-5 us a hop on 2008-2013 x86
  // holds a write system call, a wake-up and a switch; Wang 2013 calls the
  // wake-affine path "time-consuming".
  Nanoseconds wake_path = 1us;
  // Extra to the waker when the wakee goes to another CPU: the reschedule
  // IPI it sends (or the remote wake list's cache lines). default 500ns: an
  // x2APIC ICR write and the wake list's line, ~1000-1500 cycles.
  Nanoseconds ipi_send = 500ns;

  // --- cache warmth --------------------------------------------------------------
  // A task's working set (TaskSpec::footprint_kb) is warm on the CPU it
  // last ran on and in that CPU's L3. Moving pays a refill, growing with
  // distance; the figures are per 256 KB of working set.
  // Refill of the private caches (L1/L2) from the LLC. default 8us: 256 KB
  // at ~32 GB/s.
  Nanoseconds refill_core = 8us;
  // Extra refill of the LLC share from memory, when the L3 changes, and per
  // 256 KB missing from an L3 that holds more than it can (see
  // Hardware::llc_bytes). default 20us: 256 KB of LLC misses, ~80 ns each,
  // 8-way parallel.
  Nanoseconds refill_llc = 20us;
  // Extra when the memory node changes (remote memory, lines pulled across
  // the interconnect). default 15us: remote DRAM ~1.7x local latency.
  Nanoseconds refill_node = 15us;
  // Other tasks' run time on a CPU that fully evicts an absent task's
  // private cache share. default 1ms: a 256 KB L2 is rewritten in well
  // under a millisecond by a busy neighbour.
  Nanoseconds cache_cool = 1ms;
  // Cache lines a message costs its receiver, beside its payload
  // (Step::bytes / 64 lines), when the sender ran on another CPU: the
  // socket buffer or pipe buffer bookkeeping, the wait queue, the
  // sender's task and the lock. default 8.
  std::uint32_t message_lines = 8;

  // --- timing noise --------------------------------------------------------------------
  // Each compute step's length is drawn uniformly within +-noise_pct percent
  // of its nominal value. default 5: measured on this project's machine, a
  // 10 us compute loop's 10th-90th percentile spread is 9.2-10.1 us.
  std::uint32_t noise_pct = 5;

  // --- load balancing ------------------------------------------------------------
  // Periodic balance interval of level i: tick * (i + 1). default 4ms;
  // kernel: balance_interval starts at the domain weight in ms, 4 ms is
  // the HZ=250 tick. Idle CPUs do not tick (NOHZ): a ticking CPU that runs
  // two or more kicks the periodic balance of the idle ones (the kernel's
  // nohz idle balance), at most once a tick.
  Nanoseconds tick = 4ms;
  // Whether idle CPUs stop their tick (NOHZ_IDLE, the kernel's default
  // since CONFIG_NO_HZ in 2.6.21): their periodic balance then runs only
  // when a busy CPU kicks it. default true; false: every CPU ticks.
  bool nohz = true;
  // Cost of one newidle pull attempt at a level: newidle_base plus, for
  // every CPU of the level's span, balance_lines cache lines at that CPU's
  // distance (update_sg_lb_stats reads each CPU's load, nr_running and
  // capacity: a few lines, whose misses overlap, so one line's latency per
  // CPU). No term for concurrent balancers: they contend only where they
  // really meet, on the run-queue lock of the CPU they pull from.
  // defaults 2us, 1: Low 2013 reports machine-level costs of tens of us on
  // its 8-socket box (140 remote CPUs x 200 ns + 20 x 50 ns = 29 us).
  Nanoseconds newidle_base = 2us;
  std::uint32_t balance_lines = 1;
  // Cache lines a newidle pull moves while it holds the run-queue lock of
  // the CPU it pulls from (the double lock, the scan of that queue, the
  // detach/attach of the task), at that CPU's distance: the hold. The CPU
  // pulled from cannot schedule meanwhile, so the task running there is
  // stalled that long, and balancers pulling from the same CPU take the
  // lock in turn (Low 2013, RFC 3/3: "acquiring the rq locks can
  // potentially prevent other CPUs from running something useful").
  // A puller that finds the lock held spins until the holders ahead of it
  // let go, plus one line per hand-off (the lock's line moves from the
  // releasing CPU to the next waiter, at their distance: the queued
  // spinlock's lock word; qspinlock.c).
  // default 12: a dozen lines, 2.4 us across sockets. 0: no hold.
  std::uint32_t lock_lines = 12;
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
  CacheHotModel cache_hot = CacheHotModel::kernel;

  // --- user-space runtimes ----------------------------------------------------------
  // How wake-ups reach another CPU. default kernel (remote_wakeup and
  // ipi_send for every one); runtime in Costs::userspace().
  WakeModel wake_model = WakeModel::kernel;
  // With WakeModel::runtime: how long an idle worker spins on its queue
  // before it parks. 0: it parks at once. default 0 (unused by the kernel
  // model).
  Nanoseconds spin_window{0};

  // Returns: the cost set of a user-space runtime (docs/simulator.md, "The
  // user-space preset", cites each figure): resumes of tens of ns, a cache
  // line round trip between workers of 660 ns (the kit's calibration on
  // this project's 2-CPU virtual machine), a parked worker's unpark of
  // 10 us, idle workers that spin 20 us before parking, no wake-up
  // preemption (a cooperative runtime runs a task until it blocks), and a
  // migration cost and steal costs scaled to those; the hardware's own
  // figures (refills, L3 size, SMT speed, noise) stay.
  static Costs userspace() {
    Costs c;
    c.wake_model = WakeModel::runtime;
    c.spin_window = 20us;      // the pool's spin_before_park
    c.context_switch = 50ns;   // a queue pop and a coroutine resume
    c.remote_wakeup = 10us;    // a parked worker's unpark-to-running latency
    c.ipi_send = 1us;          // the waker's futex(FUTEX_WAKE) that finds a waiter
    c.wake_path = 50ns;        // the placement and a queue push
    c.spurious_run = 200ns;
    c.line_llc = 330ns;        // half the measured line round trip: the line comes over once
    c.line_other_llc = 660ns;  // the defaults' ratios, x2 across L3s
    c.line_node = 1320ns;      // and x4 across nodes
    c.message_lines = 2;       // a channel's slot and its index
    c.wakeup_granularity = 1s; // no wake-up preemption
    c.sleeper_credit = 0ns;
    c.newidle_base = 100ns;    // a steal attempt's own work, beside the lines it reads
    c.lock_lines = 3;          // a steal's CAS on the victim's queue and the task's lines
    c.migration_cost = taskplace::tunables::runtime_migration_cost;  // a 256 KB working set's refill (25 us)
    return c;
  }
};

}  // namespace taskplace_sim
