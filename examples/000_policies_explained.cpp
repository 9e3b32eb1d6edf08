// 000_policies_explained.cpp: the policies deciding on two scripted traces,
// with the reason for every decision.
//
// Machine: 2 nodes, each one L3 shared by 2 cores x 2 threads (8 CPUs; the
// LLC factor is 4). Every CPU runs one task (a loaded server), and wakee
// loads are 0 (the embedder does not count sleeping tasks), so the load
// test would pull any wakee next to its waker.
//
// 1:N trace: a dispatcher D on cpu 0 wakes 16 workers in turn; each worker,
// done, wakes D and then a logger. At first nobody has flips and every
// worker is pulled onto D's cpu 0, where they would all queue (Wang 2013's
// pgbench: one client, many backends). After two rounds the workers switch
// partners often enough (lo >= f) and D far more (hi >= f * lo): the
// wake-ups are wide and every worker stays on its own previous CPU.
//
// Ping-pong trace: A and B wake each other, with the sync hint. Each always
// wakes the same partner: 1 flip, never wide; the affine step keeps the
// pair on one CPU, where the partner that waits is about to sleep.
#include <cstdint>
#include <cstdio>
#include <vector>

#include <taskplace/taskplace.hpp>

using taskplace::CpuId;
using taskplace::TaskKey;

struct Machine {
  std::vector<std::uint32_t> running;
  bool is_idle(CpuId c) const { return running[c] == 0; }
  std::uint32_t nr_running(CpuId c) const { return running[c]; }
  std::uint64_t load(CpuId c) const { return running[c] * 1024u; }
};

using Placer = taskplace::WakePlacer<taskplace::UniformTopology>;

// One decision, explained: the flip counts, the wide rule with its numbers,
// the affine step, the search.
void explain(const char* who, const Placer& placer, const Placer::task_state& waker,
             const Placer::task_state& wakee, CpuId waking, CpuId prev, const taskplace::Placement& p) {
  const std::uint32_t w = placer.flips().flips(waker.flips);
  const std::uint32_t e = placer.flips().flips(wakee.flips);
  const std::uint32_t f = taskplace::LlcFactor::factor(placer.topology(), waking);
  const std::uint32_t hi = w > e ? w : e, lo = w > e ? e : w;
  std::printf("  %s: waker on cpu %u, wakee last on cpu %u\n", who, waking, prev);
  if (lo < f)
    std::printf("    flips waker %u, wakee %u; factor %u: lo %u < f -> not wide\n", w, e, f, lo);
  else if (hi < std::uint64_t{f} * lo)
    std::printf("    flips waker %u, wakee %u; factor %u: hi %u < f*lo %u -> not wide\n", w, e, f,
                hi, f * lo);
  else
    std::printf("    flips waker %u, wakee %u; factor %u: lo %u >= f, hi %u >= f*lo %u -> wide\n",
                w, e, f, lo, hi, f * lo);
  std::printf("    target cpu %u because %s; runs on cpu %u because %s\n", p.target,
              taskplace::to_string(p.affine), p.cpu, taskplace::to_string(p.reason));
}

int main() {
  const taskplace::UniformTopology topology{2, 1, 2, 2};
  const Placer placer{topology};
  Machine machine{std::vector<std::uint32_t>(topology.cpu_count(), 1)};
  std::int64_t now = 1'000'000;  // ns; the trace lasts well under the 1 s decay period

  std::printf("1:N trace: dispatcher D on cpu 0, 16 workers, a logger\n");
  constexpr std::uint32_t workers = 16;
  Placer::task_state dispatcher, logger;
  std::vector<Placer::task_state> worker(workers);
  const TaskKey d_key = 1, logger_key = 2;
  auto worker_key = [](std::uint32_t i) { return TaskKey{10 + i}; };
  auto worker_cpu = [](std::uint32_t i) { return CpuId{4 + i % 4}; };  // node 1
  std::uint32_t wide_in_last_round = 0, pulled_in_first_round = 0;
  for (std::uint32_t round = 1; round <= 4; ++round) {
    std::printf(" round %u\n", round);
    for (std::uint32_t i = 0; i < workers; ++i) {
      now += 10'000;
      const auto p = placer.place({.waker = &dispatcher, .waker_key = d_key, .wakee = &worker[i],
                                   .wakee_key = worker_key(i), .waking_cpu = 0,
                                   .prev_cpu = worker_cpu(i), .wakee_load = 0},
                                  machine, taskplace::Nanoseconds{now});
      if (i < 2) explain("D wakes a worker", placer, dispatcher, worker[i], 0, worker_cpu(i), p);
      if (round == 1 && p.cpu == 0) ++pulled_in_first_round;
      if (round == 4 && p.wide) ++wide_in_last_round;
    }
    std::printf("   ... %u wake-ups of workers this round\n", workers);
    // The workers report back: each wakes D, then the logger.
    for (std::uint32_t i = 0; i < workers; ++i) {
      now += 10'000;
      placer.place({.waker = &worker[i], .waker_key = worker_key(i), .wakee = &dispatcher,
                    .wakee_key = d_key, .waking_cpu = worker_cpu(i), .prev_cpu = 0},
                   machine, taskplace::Nanoseconds{now});
      placer.place({.waker = &worker[i], .waker_key = worker_key(i), .wakee = &logger,
                    .wakee_key = logger_key, .waking_cpu = worker_cpu(i), .prev_cpu = 3},
                   machine, taskplace::Nanoseconds{now + 1'000});
    }
  }
  std::printf(" round 1: %u of %u workers pulled onto cpu 0; round 4: %u of %u wide\n\n",
              pulled_in_first_round, workers, wide_in_last_round, workers);

  std::printf("ping-pong trace: A on cpu 4 and B on cpu 6 wake each other (sync)\n");
  Placer::task_state a, b;
  CpuId cpu_a = 4, cpu_b = 6;
  std::uint32_t wide_pingpong = 0;
  for (int i = 0; i < 6; ++i) {
    now += 5'000;
    const bool a_wakes = i % 2 == 0;
    Placer::task_state& waker = a_wakes ? a : b;
    Placer::task_state& wakee = a_wakes ? b : a;
    const CpuId waking = a_wakes ? cpu_a : cpu_b;
    CpuId& prev = a_wakes ? cpu_b : cpu_a;
    const CpuId old_prev = prev;
    const auto p = placer.place({.waker = &waker, .waker_key = a_wakes ? 100u : 101u,
                                 .wakee = &wakee, .wakee_key = a_wakes ? 101u : 100u,
                                 .waking_cpu = waking, .prev_cpu = prev, .sync = true,
                                 .wakee_load = 0},
                                machine, taskplace::Nanoseconds{now});
    explain(a_wakes ? "A wakes B" : "B wakes A", placer, waker, wakee, waking, old_prev, p);
    prev = p.cpu;
    wide_pingpong += p.wide;
  }
  std::printf(" ping-pong: %u wide decisions; the pair ends on cpus %u and %u\n", wide_pingpong,
              cpu_a, cpu_b);
  return pulled_in_first_round > 0 && wide_in_last_round == workers && wide_pingpong == 0 ? 0 : 1;
}
