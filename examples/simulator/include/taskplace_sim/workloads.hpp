// taskplace_sim/workloads.hpp: the task programs of the seed experiments.
//
// Each builder returns a Workload for a machine of `cpus` CPUs (start CPUs
// are spread round-robin, as fork balancing spreads new tasks, or drawn
// from a seed). Work amounts are the workload's, not the machine's; the
// costs every wake-up, message and migration adds come from Costs.
//
//   Workload w = taskplace_sim::workloads::pgbench(16, 12);
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "taskplace_sim/rng.hpp"
#include "taskplace_sim/workload.hpp"

namespace taskplace_sim::workloads {

using namespace std::chrono_literals;

// `instances` pgbench processes, each (task 0 of its group) driving
// `clients` backends over Unix sockets: it takes a reply, does its share of
// the transaction (17 us), sends the next query (100 bytes); a backend runs
// the query (55 us, a 768 KB working set: its catalog and relation caches,
// the index path and heap page it reads), sometimes (2%) hands a lock to
// another backend (a spurious wake-up: what gives backends wakee flips of
// their own), and answers (200 bytes) with the sync hint, as a socket write
// does. The client's 13 us and the backend's 59 us are calibrated on
// Wang 2013's rates: the single client's 10.6k tps (~94 us a round trip,
// with the wake paths, switches and remote wake-ups the machine adds) and
// the peak of 60.4k tps at 8 clients, which bounds what the one client
// process spends on a transaction, its wake path and messages included,
// at 16.5 us.
inline Workload pgbench(std::uint32_t clients, std::uint32_t cpus, std::uint32_t instances = 1) {
  Workload w;
  w.unit = "tps";
  for (std::uint32_t k = 0; k < instances; ++k) {
    const auto first = static_cast<std::uint32_t>(w.tasks.size());
    const auto group = static_cast<std::uint32_t>(w.groups.size());
    w.groups.emplace_back();
    w.tasks.push_back(TaskSpec{.name = "pgbench" + (instances > 1 ? std::to_string(k) : std::string{}),
                               .program = {Step::wait(), Step::count(), Step::compute(13us), Step::reply(true, 100), Step::loop()},
                               .footprint_kb = 256,
                               .start_cpu = first % cpus});
    for (std::uint32_t i = 0; i < clients; ++i) {
      w.tasks.push_back(TaskSpec{.name = "backend" + std::to_string(k * clients + i),
                                 .program = {Step::wait(), Step::compute(59us), Step::nudge(group, 20), Step::respond(true, 200), Step::loop()},
                                 .footprint_kb = 768,
                                 .start_cpu = (first + i + 1) % cpus,
                                 .initial_messages = 1,
                                 .initial_from = first});
      w.groups[group].push_back(first + i + 1);
    }
  }
  return w;
}

// `pairs` ping-pong pairs (perf bench sched pipe): write 1 byte, wait for
// the answer; `work` per side (2 us: a write and a read system call; a
// user-space channel's send and receive are a tenth of it).
inline Workload pipe(std::uint32_t pairs, std::uint32_t cpus, Nanoseconds work = 2us) {
  Workload w;
  w.unit = "round trips/s";
  for (std::uint32_t p = 0; p < pairs; ++p) {
    const std::uint32_t a = 2 * p, b = a + 1;
    w.tasks.push_back(TaskSpec{.name = "ping" + std::to_string(p),
                               .program = {Step::compute(work), Step::send(b, true, 1), Step::wait(), Step::count(), Step::loop()},
                               .footprint_kb = 64,
                               .start_cpu = a % cpus});
    w.tasks.push_back(TaskSpec{.name = "pong" + std::to_string(p),
                               .program = {Step::wait(), Step::compute(work), Step::respond(true, 1), Step::loop()},
                               .footprint_kb = 64,
                               .start_cpu = b % cpus});
  }
  return w;
}

// hackbench -p (process mode, pipes), `groups` groups of 20 senders and 20
// receivers, each sender writing `loops` rounds of one message to each of
// its group's receivers, each receiver reading 20 x loops. A pipe holds
// 64 KB (16 pages, Linux's default), so a sender blocks only when a
// receiver is 64 KB behind, and a read that frees room wakes it. Writes
// wake a waiting reader with the sync hint (pipe_write's
// wake_up_interruptible_sync_poll). One step stands for `batch` writes or
// reads of 100 bytes (hackbench's default size): a write 1.5 us of system
// call (the pipe mutex, a page for a new buffer, the copy, the wait
// queue), a read 1 us (the copy out and the mutex; waking a writer is
// rare) plus the cache lines of the data it takes; the loop count makes a
// run last about as long as Fleming 2017's (~1 s). Start CPUs: with
// `fork_order` (the CPUs in the order fork balancing fills them, e.g.
// spread_order()), the tasks take them in fork order (each group's
// receivers, then its senders) from a point drawn from `seed`; without
// it, drawn from `seed` (fork placement differs run to run). `write_each`
// and `read_each`: a message's write and read (a user-space channel's are
// a tenth of the system calls').
inline Workload hackbench(std::uint32_t cpus, std::uint64_t seed, std::uint32_t loops, std::uint32_t groups = 1,
                          std::uint32_t batch = 10, const std::vector<CpuId>& fork_order = {},
                          Nanoseconds write_each = 1500ns, Nanoseconds read_each = 1000ns) {
  Workload w;
  w.unit = "s";
  const std::uint32_t n = 20;
  Rng rng{seed ^ 0x4861636bull};
  const std::uint32_t first = fork_order.empty() ? 0 : rng.below(static_cast<std::uint32_t>(fork_order.size()));
  std::uint32_t forked = 0;
  auto start = [&] {
    if (fork_order.empty()) return rng.below(cpus);
    return fork_order[(first + forked++) % fork_order.size()];
  };
  const Nanoseconds write = write_each * batch, read = read_each * batch;
  const std::uint32_t bytes = 100 * batch;
  for (std::uint32_t g = 0; g < groups; ++g) {
    const std::uint32_t base = static_cast<std::uint32_t>(w.tasks.size());
    w.groups.emplace_back();
    for (std::uint32_t r = 0; r < n; ++r) w.groups[g].push_back(base + n + r);
    // Forked receivers first, then senders (hackbench's group()); tasks
    // are numbered senders first.
    std::vector<CpuId> at(2 * n);
    for (std::uint32_t r = 0; r < n; ++r) at[n + r] = start();
    for (std::uint32_t s = 0; s < n; ++s) at[s] = start();
    for (std::uint32_t s = 0; s < n; ++s)
      w.tasks.push_back(TaskSpec{.name = "sender" + std::to_string(g * n + s),
                                 .program = {Step::compute(write), Step::send_rr(g, true, bytes), Step::loop(loops * n - 1), Step::end()},
                                 .footprint_kb = 128,
                                 .start_cpu = at[s]});
    for (std::uint32_t r = 0; r < n; ++r)
      w.tasks.push_back(TaskSpec{.name = "receiver" + std::to_string(g * n + r),
                                 .program = {Step::wait(), Step::compute(read), Step::loop(loops * n - 1), Step::end()},
                                 .footprint_kb = 128,
                                 .start_cpu = at[n + r],
                                 .mailbox_bytes = 64 * 1024});
  }
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
                               .footprint_kb = 256,
                               .start_cpu = i % cpus});
  return w;
}

// netperf UDP_RR over loopback: `threads` client/server pairs exchanging
// 1-byte datagrams. Each side's system calls per transaction: `before` us
// of sendto until the receive path (run in the sender's softirq) wakes the
// other side, with the sync hint (sock_def_readable), then `after` us: the
// rest of sendto and recvfrom up to its block, the waker running on after
// its wake-up. 512 KB working sets.
inline Workload netperf(std::uint32_t threads, std::uint32_t cpus, Nanoseconds before = 3us, Nanoseconds after = 2us) {
  Workload w;
  w.unit = "transactions/s";
  for (std::uint32_t i = 0; i < threads; ++i) {
    const std::uint32_t c = 2 * i, s = c + 1;
    w.tasks.push_back(TaskSpec{.name = "netperf" + std::to_string(i),
                               .program = {Step::compute(before), Step::send(s, true, 1), Step::compute(after), Step::wait(), Step::count(), Step::loop()},
                               .footprint_kb = 512,
                               .start_cpu = i % cpus});
    w.tasks.push_back(TaskSpec{.name = "netserver" + std::to_string(i),
                               .program = {Step::wait(), Step::compute(before), Step::respond(true, 1), Step::compute(after), Step::loop()},
                               .footprint_kb = 512,
                               .start_cpu = (i + cpus / 2) % cpus});
  }
  return w;
}

// 8 short sleepers (30 us of work, ~150 us sleeps) beside 10 batch tasks
// (3 ms of work, ~1 ms sleeps); only batch jobs count. `scale` copies.
inline Workload mixed(std::uint32_t cpus, std::uint32_t scale = 1) {
  Workload w;
  w.unit = "batch jobs/s";
  for (std::uint32_t i = 0; i < 8 * scale; ++i)
    w.tasks.push_back(TaskSpec{.name = "sleeper" + std::to_string(i),
                               .program = {Step::compute(30us), Step::sleep_exp(150us), Step::loop()},
                               .footprint_kb = 256,
                               .start_cpu = i % cpus});
  for (std::uint32_t i = 0; i < 10 * scale; ++i)
    w.tasks.push_back(TaskSpec{.name = "batch" + std::to_string(i),
                               .program = {Step::compute(3ms), Step::sleep_exp(1ms), Step::count(), Step::loop()},
                               .footprint_kb = 256,
                               .start_cpu = (8 * scale + i) % cpus});
  return w;
}

// starve.c (Smith 2008, Mike Galbraith's wake-up preemption test case): a
// child signalling its parent in a loop (kill(2), 1 us a call), the parent
// counting each signal it is woken for (its handler, 1 us); signals that
// arrive while one is pending coalesce, as standard signals do.
inline Workload starve(std::uint32_t cpus) {
  Workload w;
  w.unit = "signals handled/s";
  w.tasks.push_back(TaskSpec{.name = "parent",
                             .program = {Step::wait_signal(), Step::compute(1us), Step::count(), Step::loop()},
                             .footprint_kb = 16,
                             .start_cpu = 0});
  w.tasks.push_back(TaskSpec{.name = "child",
                             .program = {Step::compute(1us), Step::signal(0), Step::loop()},
                             .footprint_kb = 16,
                             .start_cpu = 1 % cpus});
  return w;
}

}  // namespace taskplace_sim::workloads
