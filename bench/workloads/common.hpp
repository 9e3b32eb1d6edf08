// bench/workloads/common.hpp: what every runtime's workloads share: the
// sizes, the result record, latency logs, busy work and a timer thread for
// runtimes without timers.
//
// The four workloads (pipe, pgbench, hackbench, udp_rr) are specified here
// once, by their sizes; each runtime implements them in its natural style
// (pool_workloads.hpp: coroutines; fiber_workloads.hpp: blocking fibers;
// continuation_workloads.hpp: post-based continuations for oneTBB and
// Boost.Asio). All report through Result. A fifth, forkjoin (a master
// that hands short tasks to a few fibers and waits for all of them each
// round), exists for Boost.Fiber only (fiber_workloads.hpp).
//
//   workloads::LatencyLog log; log.add(t1 - t0);
//   workloads::Result r = workloads::finish("pipe", "Current", elapsed, ops, log);
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <mutex>
#include <queue>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "taskplace/tsc_clock.hpp"

namespace workloads {

using ns = std::chrono::nanoseconds;

// The workloads' clock, for every runtime alike: latency stamps (two a
// pipe round trip), busy work and the timer thread. The TSC where it is
// invariant (taskplace::TscClock::process(), the pools' clock, steady_clock
// to 0.1%), steady_clock elsewhere: a stamp is measurement overhead in
// every runtime's time, and the TSC's is the smaller (docs/benchmarks.md,
// "Clock reads").
inline std::int64_t now_ns() noexcept { return taskplace::TscClock::process().now().count(); }

// The sizes of one run of each workload.
struct Sizes {
  std::uint32_t pipe_rounds = 50'000;        // round trips of the token
  std::uint32_t pgbench_clients = 8;         // backends the one client drives
  std::uint32_t pgbench_requests = 40'000;   // requests in total
  std::uint32_t pgbench_work_ns = 3'000;     // busy work per request in the backend
  std::uint32_t hackbench_groups = 1;        // groups of 20 senders + 20 receivers
  // Messages per sender per receiver: 200,000 a group, runs of some 20 ms.
  // Runs of 1-5 ms swung between repetitions (the pool's Runtime against
  // Linux2008: 0.68-0.92 over three runs of 7 repetitions; at 25 ms 0.89
  // in each): their parked workers' unparks and start-up were the run.
  std::uint32_t hackbench_loops = 500;
  std::uint32_t hackbench_fanout = 20;       // senders (= receivers) per group
  std::uint32_t udp_pairs = 4;               // request/response pairs
  std::uint32_t udp_transactions = 2'000;    // requests per pair
  std::uint32_t udp_sleep_ns = 20'000;       // client pause between requests
  bool pipe_handoff = false;                 // taskplace pool: pipe's channels pass WakeHint::handoff
  std::uint32_t forkjoin_tasks = 2;          // fibers the master hands one task each a round
  std::uint32_t forkjoin_rounds = 10'000;    // rounds (the master waits for every answer)
  std::uint32_t forkjoin_work_ns = 1'000;    // busy work per task
};

// Per-request latencies of one recording task; merged after the run.
// Thread-safety: one writer; merge after the writers finished.
// Reserve the count a run records before it starts: a log that grows in
// the run copies itself and faults its new pages in between the messages
// it times (the vector's growth and its page faults showed in a kept
// pipe round trip's profile), whatever the runtime.
struct LatencyLog {
  std::vector<std::int64_t> v;
  // Effects: room for n more entries, its pages written once.
  void reserve(std::size_t n) {
    const std::size_t had = v.size();
    v.resize(had + n);
    v.resize(had);
  }
  void add(std::int64_t d) { v.push_back(d); }
  void merge(const LatencyLog& o) { v.insert(v.end(), o.v.begin(), o.v.end()); }
};

struct Result {
  std::string workload;
  std::string runtime;
  double seconds = 0;
  double throughput = 0;   // operations per second
  double p50_us = 0;
  double p99_us = 0;
  std::uint64_t ops = 0;
  std::uint64_t migrations = 0;
  double affine_pct = -1;  // share of wake-ups placed on the waking worker; -1: n/a
  std::int64_t steal_attempts = -1;  // -1: the runtime does not say
  std::int64_t skips = -1;           // balance attempts the cost gates skipped, plus tasks a steal left as cache hot
  // The run's placement and pool counters by name (the placer's
  // WakeCounters, the pool's steals, parks and kicks); empty for runtimes
  // without them. Printed by taskplace_pool_bench --counters.
  std::vector<std::pair<std::string, std::uint64_t>> counters;
};

inline double percentile_us(std::vector<std::int64_t>& v, double q) {
  if (v.empty()) return 0;
  const auto k = static_cast<std::size_t>(q * static_cast<double>(v.size() - 1));
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(k), v.end());
  return static_cast<double>(v[k]) / 1000.0;
}

inline Result finish(std::string workload, std::string runtime, std::int64_t elapsed_ns,
                     std::uint64_t ops, LatencyLog& log) {
  Result r;
  r.workload = std::move(workload);
  r.runtime = std::move(runtime);
  r.seconds = static_cast<double>(elapsed_ns) / 1e9;
  r.ops = ops;
  r.throughput = r.seconds > 0 ? static_cast<double>(ops) / r.seconds : 0;
  r.p50_us = percentile_us(log.v, 0.50);
  r.p99_us = percentile_us(log.v, 0.99);
  return r;
}

// Effects: spins for about `d` ns (a backend's query, a request's work).
inline void busy_work(std::uint32_t d) {
  if (d == 0) return;
  const std::int64_t until = now_ns() + d;
  volatile std::uint64_t x = 0;
  while (now_ns() < until) x = x + 1;
}

// A thread that runs callbacks at deadlines: the delay service of the
// continuation runtimes (oneTBB has no timers). The callback only posts.
class TimerThread {
 public:
  TimerThread() : t_([this] { loop(); }) {}
  TimerThread(const TimerThread&) = delete;
  TimerThread& operator=(const TimerThread&) = delete;
  ~TimerThread() {
    {
      std::lock_guard lk(m_);
      stop_ = true;
    }
    cv_.notify_one();
    t_.join();
  }
  void after(std::int64_t delay_ns, std::function<void()> f) {
    {
      std::lock_guard lk(m_);
      q_.push(Item{now_ns() + delay_ns, seq_++, std::move(f)});
    }
    cv_.notify_one();
  }

 private:
  struct Item {
    std::int64_t at;
    std::uint64_t seq;
    std::function<void()> f;
    bool operator>(const Item& o) const { return at != o.at ? at > o.at : seq > o.seq; }
  };
  void loop() {
    std::unique_lock lk(m_);
    for (;;) {
      if (stop_) return;
      if (q_.empty()) {
        cv_.wait(lk);
        continue;
      }
      const std::int64_t at = q_.top().at;
      if (now_ns() < at) {
        cv_.wait_for(lk, ns{at - now_ns()});
        continue;
      }
      auto f = std::move(const_cast<Item&>(q_.top()).f);
      q_.pop();
      lk.unlock();
      f();
      lk.lock();
    }
  }
  std::mutex m_;
  std::condition_variable cv_;
  std::priority_queue<Item, std::vector<Item>, std::greater<>> q_;
  std::uint64_t seq_ = 0;
  bool stop_ = false;
  std::thread t_;
};

// The checks every implementation makes at the end of a run: how many
// messages each workload must have delivered.
inline std::uint64_t expected_ops(const char* workload, const Sizes& s) {
  const std::string w = workload;
  if (w == "pipe") return s.pipe_rounds;
  if (w == "pgbench") return s.pgbench_requests;
  if (w == "hackbench")
    return std::uint64_t{s.hackbench_groups} * s.hackbench_fanout * s.hackbench_fanout * s.hackbench_loops;
  if (w == "udp_rr") return std::uint64_t{s.udp_pairs} * s.udp_transactions;
  if (w == "forkjoin") return s.forkjoin_rounds;
  return 0;
}

}  // namespace workloads
