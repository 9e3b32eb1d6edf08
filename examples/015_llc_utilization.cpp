// 015_llc_utilization.cpp: the optional SIS_UTIL input of a machine state
// (MachineState O1, llc_utilization_pct), kept as one sample per LLC.
//
// One LLC of 56 CPUs, 42 of them busy (75%). Task A on CPU 0 wakes task B,
// which last ran on CPU 0 too, so the idle-sibling search must scan for an
// idle CPU; the idle ones are the last 14. Without O1 the scan walks the
// whole LLC and finds CPU 42 after 42 looks. With O1 the kernel's budget,
// 56 * (1 - (1.17 * 0.75)^2) = 12 CPUs, stops it first: at 75% busy a scan
// rarely pays for itself, and the wakee stays on its busy target. The
// busy share comes from a LlcUtilizationSample, counted once and then
// reused for a period, as the kernel's nr_idle_scan is between balances.
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <memory>

#include <taskplace/taskplace.hpp>

using namespace std::chrono_literals;
using taskplace::CpuId;

// The shared part of a pool: one word per worker, written by that worker.
struct Workers {
  explicit Workers(std::uint32_t n) : running(std::make_unique<std::atomic<std::uint32_t>[]>(n)) {}
  std::unique_ptr<std::atomic<std::uint32_t>[]> running;
  bool idle(CpuId c) const { return running[c].load(std::memory_order_relaxed) == 0; }
};

// R1-R3 only: the search may look at every CPU of the LLC.
struct PlainMachine {
  const Workers* w;
  bool is_idle(CpuId c) const { return w->idle(c); }
  std::uint32_t nr_running(CpuId c) const { return w->running[c].load(std::memory_order_relaxed); }
  std::uint64_t load(CpuId c) const { return std::uint64_t{nr_running(c)} * 1024; }
};

// R1-R3 plus O1, judged at the wake-up's time `now`. One sample for the
// one LLC here; a pool with several keeps one on each LLC's first worker.
struct SampledMachine : PlainMachine {
  const taskplace::UniformTopology* topo;
  taskplace::LlcUtilizationSample* sample;
  taskplace::Nanoseconds now;
  std::uint32_t llc_utilization_pct(CpuId c) const {
    return sample->read(
        topo->llc_cpus(c), [this](CpuId x) { return !is_idle(x); }, now, 4ms);
  }
};
static_assert(taskplace::MachineState<SampledMachine> &&
              taskplace::HasLlcUtilization<SampledMachine>);

int main() {
  const taskplace::UniformTopology topology{1, 1, 56, 1};  // 1 node, 1 LLC, 56 cores, no SMT
  const taskplace::WakePlacer<taskplace::UniformTopology> placer{topology};
  Workers workers{56};
  for (CpuId c = 0; c < 42; ++c) workers.running[c] = 1;  // CPUs 0-41 busy, 42-55 idle

  decltype(placer)::task_state a, b;
  auto wake = [&](const auto& machine, taskplace::Nanoseconds now) {
    b.recent_cpu = taskplace::no_cpu;  // no recently used CPU to try first
    return placer.place(
        {.waker = &a, .waker_key = 1, .wakee = &b, .wakee_key = 2, .waking_cpu = 0, .prev_cpu = 0},
        machine, now);
  };

  const auto plain = wake(PlainMachine{&workers}, 1s);
  std::printf("without O1: cpu %u (%s), %u CPUs scanned\n", plain.cpu,
              taskplace::to_string(plain.reason), plain.scanned);

  taskplace::LlcUtilizationSample sample;
  const auto at = [&](taskplace::Nanoseconds now) {
    return SampledMachine{{&workers}, &topology, &sample, now};
  };
  const auto sampled = wake(at(1s), 1s);
  std::printf("with O1:    cpu %u (%s), %u CPUs scanned; the LLC is %u%% busy, budget %u\n",
              sampled.cpu, taskplace::to_string(sampled.reason), sampled.scanned, sample.pct(),
              taskplace::sis_util_budget(56, sample.pct()));

  // Half the busy workers go idle. Within the period the sample stands for
  // the LLC (no worker is read); a period later it is counted again.
  for (CpuId c = 21; c < 42; ++c) workers.running[c] = 0;
  const auto within = wake(at(1s + 3ms), 1s + 3ms);
  const std::uint32_t pct_within = sample.pct();
  const auto after = wake(at(1s + 4ms), 1s + 4ms);
  std::printf(
      "3 ms later: %u%% (the sample), %u CPUs scanned; 4 ms later: %u%% busy, cpu %u (%s)\n",
      pct_within, within.scanned, sample.pct(), after.cpu, taskplace::to_string(after.reason));

  const bool shown = plain.reason == taskplace::WakeReason::idle_scan && plain.cpu == 42 &&
                     sampled.reason == taskplace::WakeReason::target_busy &&
                     sampled.scanned == 12 && pct_within == 75 && within.scanned == 12 &&
                     sample.pct() == 37 && after.reason == taskplace::WakeReason::idle_scan &&
                     after.cpu == 21;
  return shown ? 0 : 1;
}
