// taskplace_sim/workloads.hpp: the task programs of the seed experiments.
//
// Each builder returns a Workload for a machine of `cpus` CPUs (start CPUs
// are spread round-robin, as fork balancing spreads new tasks). Work
// amounts are the workload's, not the machine's: pgbench's are calibrated
// to Wang 2013's single-client rate (10.6k tps, ~94 us a round trip).
//
//   Workload w = taskplace_sim::workloads::pgbench(16, 12);
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "taskplace_sim/rng.hpp"
#include "taskplace_sim/workload.hpp"

namespace taskplace_sim::workloads {

using namespace std::chrono_literals;

// One pgbench process (task 0) driving `clients` backends over sockets:
// it takes a reply, does its share of the transaction (18 us), sends the
// next query; a backend runs the query (55 us, a 512 KB working set),
// sometimes (2%) hands a lock to another backend (a spurious wake-up:
// what gives backends wakee flips of their own), and answers with the
// sync hint, as a socket write does.
inline Workload pgbench(std::uint32_t clients, std::uint32_t cpus) {
  Workload w;
  w.unit = "tps";
  w.groups.emplace_back();
  w.tasks.push_back(TaskSpec{.name = "pgbench",
                             .program = {Step::wait(), Step::count(), Step::compute(18us), Step::reply(true), Step::loop()},
                             .footprint_permille = 1000,
                             .start_cpu = 0});
  for (std::uint32_t i = 0; i < clients; ++i) {
    w.tasks.push_back(TaskSpec{.name = "backend" + std::to_string(i),
                               .program = {Step::wait(), Step::compute(55us), Step::nudge(0, 20), Step::respond(true), Step::loop()},
                               .footprint_permille = 2000,
                               .start_cpu = (i + 1) % cpus,
                               .initial_messages = 1,
                               .initial_from = 0});
    w.groups[0].push_back(i + 1);
  }
  return w;
}

// `pairs` ping-pong pairs (perf bench sched pipe): write 1 byte, wait for
// the answer; 2 us of work per side.
inline Workload pipe(std::uint32_t pairs, std::uint32_t cpus) {
  Workload w;
  w.unit = "round trips/s";
  for (std::uint32_t p = 0; p < pairs; ++p) {
    const std::uint32_t a = 2 * p, b = a + 1;
    w.tasks.push_back(TaskSpec{.name = "ping" + std::to_string(p),
                               .program = {Step::compute(2us), Step::send(b, true), Step::wait(), Step::count(), Step::loop()},
                               .footprint_permille = 200,
                               .start_cpu = a % cpus});
    w.tasks.push_back(TaskSpec{.name = "pong" + std::to_string(p),
                               .program = {Step::wait(), Step::compute(2us), Step::respond(true), Step::loop()},
                               .footprint_permille = 200,
                               .start_cpu = b % cpus});
  }
  return w;
}

// hackbench -g 1 -p: 20 senders each writing `msgs` messages round-robin to
// 20 receivers, with 8 messages in flight per sender (the pipe buffer);
// each receiver's read hands a credit back. Start CPUs are drawn from
// `seed` (fork placement differs run to run).
inline Workload hackbench(std::uint32_t cpus, std::uint64_t seed, bool quick) {
  Workload w;
  w.unit = "s";
  const std::uint32_t n = 20, msgs = quick ? 100 : 200;
  Rng rng{seed ^ 0x4861636bull};
  w.groups.emplace_back();
  for (std::uint32_t r = 0; r < n; ++r) w.groups[0].push_back(n + r);
  for (std::uint32_t s = 0; s < n; ++s)
    w.tasks.push_back(TaskSpec{.name = "sender" + std::to_string(s),
                               .program = {Step::wait(), Step::compute(3us), Step::send_rr(0), Step::loop(msgs - 1), Step::end()},
                               .footprint_permille = 500,
                               .start_cpu = rng.below(cpus),
                               .initial_messages = 8,
                               .initial_from = s});
  for (std::uint32_t r = 0; r < n; ++r)
    w.tasks.push_back(TaskSpec{.name = "receiver" + std::to_string(r),
                               .program = {Step::wait(), Step::compute(3us), Step::reply(), Step::loop(msgs - 1), Step::end()},
                               .footprint_permille = 500,
                               .start_cpu = rng.below(cpus)});
  return w;
}

// AIM7-like users: compute (exponential, mean 300 us), then a short
// blocking wait (exponential, mean 10 ms: disk, pipes), one job each loop.
inline Workload aim7(std::uint32_t users, std::uint32_t cpus) {
  Workload w;
  w.unit = "jobs/s";
  for (std::uint32_t i = 0; i < users; ++i)
    w.tasks.push_back(TaskSpec{.name = "user" + std::to_string(i),
                               .program = {Step::compute_exp(300us), Step::sleep_exp(10ms), Step::count(), Step::loop()},
                               .footprint_permille = 1000,
                               .start_cpu = i % cpus});
  return w;
}

// netperf UDP_RR: `threads` client/server pairs; each side 4 us of work
// per transaction, 512 KB working sets, no sync hint (UDP).
inline Workload netperf(std::uint32_t threads, std::uint32_t cpus) {
  Workload w;
  w.unit = "transactions/s";
  for (std::uint32_t i = 0; i < threads; ++i) {
    const std::uint32_t c = 2 * i, s = c + 1;
    w.tasks.push_back(TaskSpec{.name = "netperf" + std::to_string(i),
                               .program = {Step::compute(4us), Step::send(s), Step::wait(), Step::count(), Step::loop()},
                               .footprint_permille = 2000,
                               .start_cpu = i % cpus});
    w.tasks.push_back(TaskSpec{.name = "netserver" + std::to_string(i),
                               .program = {Step::wait(), Step::compute(4us), Step::respond(), Step::loop()},
                               .footprint_permille = 2000,
                               .start_cpu = (i + cpus / 2) % cpus});
  }
  return w;
}

// 8 short sleepers (30 us of work, ~150 us sleeps) beside 10 batch tasks
// (3 ms of work, ~1 ms sleeps); only batch jobs count.
inline Workload mixed(std::uint32_t cpus) {
  Workload w;
  w.unit = "batch jobs/s";
  for (std::uint32_t i = 0; i < 8; ++i)
    w.tasks.push_back(TaskSpec{.name = "sleeper" + std::to_string(i),
                               .program = {Step::compute(30us), Step::sleep_exp(150us), Step::loop()},
                               .footprint_permille = 1000,
                               .start_cpu = i % cpus});
  for (std::uint32_t i = 0; i < 10; ++i)
    w.tasks.push_back(TaskSpec{.name = "batch" + std::to_string(i),
                               .program = {Step::compute(3ms), Step::sleep_exp(1ms), Step::count(), Step::loop()},
                               .footprint_permille = 1000,
                               .start_cpu = (8 + i) % cpus});
  return w;
}

}  // namespace taskplace_sim::workloads
