// taskplace_sim/report.hpp: what one simulated run measured.
//
// Throughput in the workload's unit, latency percentiles, migrations by
// distance, time CPUs sat idle while tasks waited, balancing time, and the
// placer's and balancer's schedstat-like counters (PlainStats).
//
//   Report r = machine.report();
//   std::cout << r.text();   // byte-identical for the same seed
#pragma once

#include <array>
#include <cstdint>
#include <cstdio>
#include <string>

#include "taskplace/stats.hpp"
#include "taskplace/types.hpp"

namespace taskplace_sim {

using taskplace::Nanoseconds;

// How far a task moved when it started running on a CPU other than its
// last one.
enum class Distance : std::uint8_t { same_cpu, smt, llc, other_llc, other_node, count_ };

constexpr const char* to_string(Distance d) noexcept {
  switch (d) {
    case Distance::same_cpu: return "same_cpu";
    case Distance::smt: return "smt";
    case Distance::llc: return "llc";
    case Distance::other_llc: return "other_llc";
    case Distance::other_node: return "other_node";
    default: return "unknown";
  }
}

inline constexpr std::size_t wake_counter_count = static_cast<std::size_t>(taskplace::WakeCounter::count_);
inline constexpr std::size_t balance_counter_count =
    static_cast<std::size_t>(taskplace::BalanceCounter::count_);

struct Report {
  std::string config;
  std::string unit;
  Nanoseconds measured{0};         // length of the measured window
  Nanoseconds end_time{0};         // simulated time at the end of the run
  Nanoseconds all_done{-1};        // when the last task exited; -1: some never did
  std::uint64_t events = 0;        // events processed in the measured window
  std::uint64_t events_all = 0;    // events processed since the machine was built
  std::uint64_t completions = 0;   // count steps in the measured window
  double throughput = 0;           // completions per simulated second
  Nanoseconds p50{0}, p90{0}, p99{0}, max_latency{0};
  std::array<std::uint64_t, static_cast<std::size_t>(Distance::count_)> migrations{};
  Nanoseconds idle_while_runnable{0};  // integral of min(idle CPUs, waiting tasks)
  Nanoseconds busy_cpu_time{0};        // task run time, all CPUs
  Nanoseconds newidle_time{0};         // CPU time spent in newidle pulls
  Nanoseconds lock_stall_time{0};      // running tasks' time stalled by pullers' lock holds
  Nanoseconds lock_wait_time{0};       // pullers' time spinning for a held run-queue lock, hand-offs included
  Nanoseconds periodic_time{0};        // accounted cost of periodic balances
  std::uint64_t newidle_runs = 0, newidle_skipped = 0, newidle_pulls = 0;
  std::uint64_t newidle_stale = 0;     // newidle pulls whose busiest CPU had no task left under its lock
  std::uint64_t newidle_not_overloaded = 0;  // newly idle with no CPU overloaded: no balance
  std::uint64_t periodic_pulls = 0;
  std::uint64_t preemptions = 0, context_switches = 0;
  Nanoseconds wake_path_time{0};       // wakers' CPU time on their wake paths
  Nanoseconds capacity_time{0};        // refills of what over-full L3s evicted
  std::uint64_t signals_coalesced = 0; // signals that found one pending
  std::uint64_t sends_blocked = 0;     // sends that found a full mailbox
  Nanoseconds warmup{0};               // run_steady: the warm-up's length
  bool steady = true;                  // run_steady: false if it never settled
  std::array<std::uint64_t, wake_counter_count> wake{};
  std::array<std::uint64_t, balance_counter_count> balance{};

  std::uint64_t wake_count(taskplace::WakeCounter c) const { return wake[static_cast<std::size_t>(c)]; }
  std::uint64_t balance_count(taskplace::BalanceCounter c) const {
    return balance[static_cast<std::size_t>(c)];
  }
  std::uint64_t migrations_total() const {
    std::uint64_t s = 0;
    for (std::size_t i = 1; i < migrations.size(); ++i) s += migrations[i];
    return s;
  }

  // Returns: a deterministic multi-line description (no wall-clock data).
  std::string text() const {
    std::string s;
    char buf[256];
// A literal format at every call, so the compiler checks each one.
#define TASKPLACE_SIM_LINE(...)                 \
  do {                                          \
    std::snprintf(buf, sizeof buf, __VA_ARGS__); \
    s += buf;                                   \
  } while (0)
    TASKPLACE_SIM_LINE("config %s\n", config.c_str());
    TASKPLACE_SIM_LINE("  throughput %.1f %s over %.3f ms (%llu completions)\n", throughput, unit.c_str(),
         static_cast<double>(measured.count()) / 1e6, static_cast<unsigned long long>(completions));
    TASKPLACE_SIM_LINE("  latency p50 %.1f us p90 %.1f us p99 %.1f us max %.1f us\n", us(p50), us(p90), us(p99),
         us(max_latency));
    if (all_done.count() >= 0) TASKPLACE_SIM_LINE("  all tasks done at %.3f ms\n", static_cast<double>(all_done.count()) / 1e6);
    TASKPLACE_SIM_LINE("  migrations");
    for (std::size_t i = 1; i < migrations.size(); ++i)
      TASKPLACE_SIM_LINE(" %s=%llu", to_string(static_cast<Distance>(i)), static_cast<unsigned long long>(migrations[i]));
    TASKPLACE_SIM_LINE("\n  idle-while-runnable %.3f ms, busy %.3f ms, switches %llu, preemptions %llu\n",
         ms(idle_while_runnable), ms(busy_cpu_time), static_cast<unsigned long long>(context_switches),
         static_cast<unsigned long long>(preemptions));
    TASKPLACE_SIM_LINE("  newidle %llu runs, %llu skipped, %llu not overloaded, %llu pulls, %llu found the busiest emptied, %.3f ms, %.3f ms of tasks stalled, %.3f ms spinning for locks; periodic %llu pulls, %.3f ms\n",
         static_cast<unsigned long long>(newidle_runs), static_cast<unsigned long long>(newidle_skipped),
         static_cast<unsigned long long>(newidle_not_overloaded),
         static_cast<unsigned long long>(newidle_pulls), static_cast<unsigned long long>(newidle_stale), ms(newidle_time), ms(lock_stall_time), ms(lock_wait_time),
         static_cast<unsigned long long>(periodic_pulls), ms(periodic_time));
    TASKPLACE_SIM_LINE("  wake paths %.3f ms, L3 capacity refills %.3f ms, %llu signals coalesced, %llu sends blocked\n",
         ms(wake_path_time), ms(capacity_time), static_cast<unsigned long long>(signals_coalesced),
         static_cast<unsigned long long>(sends_blocked));
    TASKPLACE_SIM_LINE("  placer");
    for (std::size_t i = 0; i < wake.size(); ++i)
      if (wake[i] != 0)
        TASKPLACE_SIM_LINE(" %s=%llu", taskplace::to_string(static_cast<taskplace::WakeCounter>(i)),
             static_cast<unsigned long long>(wake[i]));
    TASKPLACE_SIM_LINE("\n  balancer");
    for (std::size_t i = 0; i < balance.size(); ++i)
      if (balance[i] != 0)
        TASKPLACE_SIM_LINE(" %s=%llu", taskplace::to_string(static_cast<taskplace::BalanceCounter>(i)),
             static_cast<unsigned long long>(balance[i]));
    TASKPLACE_SIM_LINE("\n  events %llu (%llu with the warm-up), simulated %.3f ms\n",
         static_cast<unsigned long long>(events), static_cast<unsigned long long>(events_all), ms(end_time));
#undef TASKPLACE_SIM_LINE
    return s;
  }

  static double us(Nanoseconds d) { return static_cast<double>(d.count()) / 1e3; }
  static double ms(Nanoseconds d) { return static_cast<double>(d.count()) / 1e6; }
};

}  // namespace taskplace_sim
