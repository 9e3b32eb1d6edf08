// taskplace/tunables.hpp: every tunable and switch of the library, once,
// with its default, its unit and its kernel analogue (the kernel keeps such
// a table in kernel/sched/features.h and the sysctl_sched_* variables).
//
// Policies take these as defaults of their members; change them per policy
// object, not here.
//
//   taskplace::FlipCounter<> f{.period = taskplace::tunables::flip_decay_period};
#pragma once

#include "taskplace/detail/config.hpp"

#include <array>
#include <chrono>
#include <cstdint>

#include "taskplace/types.hpp"

namespace taskplace::tunables {

using namespace std::chrono_literals;

// Cost of migrating a task, the yardstick of every "is it worth it" test.
// default 500us; kernel: sysctl_sched_migration_cost.
inline constexpr Nanoseconds migration_cost = 500us;

// The least a user-space runtime pays to move a task to another worker: a
// cache line's round trip between cores (the message and the task's state
// cross), for a machine state that does not measure it (CostGate, O6).
// 100-300 ns between cores of one x86 socket, more across sockets or a
// virtual machine's vCPUs; the embedding kit measures it (kit::calibrate).
// default 250ns; kernel: none (its yardstick is migration_cost).
inline constexpr Nanoseconds crossing_cost = 250ns;

// A user-space runtime's migration cost: what a moved task pays to refill
// a 256 KB working set (a core's L2) from the LLC and memory, 8 us at the
// LLC's bandwidth plus 20 us of misses 8-way parallel, rounded down (the
// simulator's refill figures, docs/simulator.md). The cache-hot test of
// the runtime set's steals reads it (kit::task_hot_default), and the
// simulator's user-space preset. A hardware figure, not one the kit
// measures: a refill depends on the working set, which no runtime knows.
// default 25us; kernel: none (its figure is migration_cost).
inline constexpr Nanoseconds runtime_migration_cost = 25us;

// How often flips decay. default 1s; kernel: HZ jiffies in record_wakee.
inline constexpr Nanoseconds flip_decay_period = 1s;

// The base of the CFS minimum granularity before EEVDF: 0.75 ms, scaled by
// 1 + log2(min(CPUs, 8)) (SCHED_TUNABLESCALING_LOG), so 3 ms from 8 CPUs
// on. Read by sis_current::Granularity2023. kernel: sysctl_sched_min_granularity
// (normalized_sysctl_sched_min_granularity).
inline constexpr Nanoseconds min_granularity_base = 750us;

// How often a level's max newidle cost decays. default 1s; kernel: HZ in
// update_newidle_cost / rebalance_domains.
inline constexpr Nanoseconds cost_decay_period = 1s;

// Initial avg_idle: 2 * migration_cost; kernel: rq->avg_idle at boot.
inline constexpr Nanoseconds initial_avg_idle = 2 * migration_cost;

// Early cap on a level's recorded cost (Low 2013 patch 2/3), off by default.
inline constexpr Nanoseconds early_cost_cap = 5 * migration_cost;

// Load-test bias toward the previous CPU, in percent above 100; the kernel
// applies half of it. default 117 (8% bias); kernel: sd->imbalance_pct of
// the LLC domain. 110 (5%) at the SMT level.
inline constexpr std::uint32_t imbalance_pct = 117;
inline constexpr std::uint32_t smt_imbalance_pct = 110;
// The 2008 kernels' (2.6.2x): 125 (12% bias) in the MC and CPU domains'
// initialisers, 110 at the SMT level. Default of WakeAffine2008.
inline constexpr std::uint32_t imbalance_pct_2008 = 125;

// Utilisation at which the LLC scan budget reaches zero: the budget is
// llc_size * (1 - (1.17*u)^2), zero at u = 1/1.17, about 85%.
// kernel: SIS_UTIL (v6.0, 2022), sd_llc_shared->nr_idle_scan.
inline constexpr std::uint32_t sis_util_scale_pct = 117;

// A level moves a cache-hot task once more than this many of its periodic
// balances in a row failed, indexed by LevelKind {smt, cluster, llc, node,
// machine}.
// default {0, 1, 1, 1, 2}; kernel: sd->cache_nice_tries from sd_init()
// (v3.16): 0 for SMT, 1 for cache-sharing and package levels, 2 for NUMA
// (the machine level exists only above a node).
inline constexpr std::array<std::uint32_t, 5> cache_nice_tries = {0, 1, 1, 1, 2};

// Queued tasks a balance judges at most, one pull (TaskHot::find_movable).
// default 32; kernel: sysctl_sched_nr_migrate (env->loop_max).
inline constexpr std::uint32_t nr_migrate = 32;

// The task a CPU will run next (its wake-up buddy) is cache hot for a
// balance whose destination has tasks. default on; kernel: CACHE_HOT_BUDDY.
inline constexpr bool cache_hot_buddy = true;

}  // namespace taskplace::tunables
