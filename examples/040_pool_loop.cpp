// 040_pool_loop.cpp: the loop of a thread pool's worker, with IdleBalancer
// deciding when a worker whose queue ran dry tries to steal, and how far.
//
// A single-threaded simulation on ManualClocks: 8 workers on a 2-node
// machine (2 nodes x 2 cores x 2 threads). Work arrives on worker 0 only.
// A dry worker calls balance(); the pull callback steals from the fullest
// queue among the CPUs of the level and "costs" a few microseconds per CPU
// looked at, more on the other node and much more when a remote lock is
// contended. The balancer keeps each level's maximum cost and, once the
// expected idle time no longer pays for the outer level, stops before it.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <random>
#include <vector>

#include <taskplace/taskplace.hpp>

using namespace std::chrono_literals;
using taskplace::CpuId;

int main() {
  const taskplace::UniformTopology topology{2, 1, 2, 2};  // levels: smt, llc, machine
  const taskplace::IdleBalancer<taskplace::UniformTopology> balancer{topology};
  // One clock per worker, like the kernel's per-runqueue clock: a worker's
  // time moves with its own time slices and its own pull attempts.
  std::vector<taskplace::ManualClock> clock(topology.cpu_count(), taskplace::ManualClock{1s});

  const std::uint32_t n = topology.cpu_count();
  std::vector<std::uint32_t> queue(n, 0);
  std::vector<decltype(balancer)::state> state;
  for (CpuId c = 0; c < n; ++c) state.push_back(balancer.make_state(c, clock[c].now()));
  std::vector<bool> idle(n, false);

  std::uint32_t outcomes[4] = {};
  int printed = 0, printed_stops = 0;
  std::mt19937 rng(1);
  taskplace::ManualClock wall{1s};
  for (int step = 0; step < 200; ++step) {
    // A worker's clock never runs behind the pool's: one that spent the
    // last slice in pull attempts may be ahead.
    for (auto& k : clock) k.set(std::max(k.now(), wall.now()));
    // Bursts on worker 0: 6 tasks every 3 steps (150 us); the pool wakes every
    // parked worker, whose idle period ends.
    if (step % 3 == 0) {
      queue[0] += 6;
      for (CpuId c = 0; c < n; ++c)
        if (idle[c]) {
          balancer.idle_end(state[c], clock[c].now());
          idle[c] = false;
        }
    }
    for (CpuId c = 0; c < n; ++c) {
      if (queue[c] > 0) {
        --queue[c];  // run one task
        continue;
      }
      if (idle[c]) continue;  // parked: waits for work
      auto pull = [&](std::uint32_t, taskplace::LevelKind, const auto& cpus) {
        CpuId best = c;
        // Looking at a queue costs time: 15 us on the own node, 30 us on the
        // other; one attempt in eight meets a contended remote lock (100 us).
        const bool contended = rng() % 8 == 0;
        for (CpuId o : cpus) {
          const bool remote = topology.node_of(o) != topology.node_of(c);
          clock[c].advance(!remote ? 15us : contended ? 100us : 30us);
          if (queue[o] > queue[best]) best = o;
        }
        if (queue[best] < 2) return false;
        queue[best] -= 1;
        queue[c] += 1;
        return true;
      };
      const auto r = balancer.balance(c, state[c], pull, clock[c]);
      ++outcomes[static_cast<int>(r.outcome)];
      const bool stopped = r.outcome == taskplace::BalanceOutcome::budget ||
                           r.outcome == taskplace::BalanceOutcome::entry_gate;
      if (printed < 8 || (stopped && printed_stops < 6)) {
        ++printed;
        printed_stops += stopped;
        std::printf("step %3d cpu %u: %-13s levels visited %u, spent %lld ns, avg_idle %lld ns\n",
                      step, c, taskplace::to_string(r.outcome), r.levels_visited,
                      static_cast<long long>(r.spent.count()),
                    static_cast<long long>(balancer.tracker().avg_idle(state[c]).count()));
      }
      idle[c] = r.outcome != taskplace::BalanceOutcome::pulled;
    }
    wall.advance(50us);  // one time slice
    if (step % 20 == 19)  // every millisecond
      for (CpuId c = 0; c < n; ++c) balancer.tick(state[c], clock[c].now());
  }
  std::printf("over 200 steps: pulled %u, nothing_found %u, entry_gate %u, budget %u\n",
              outcomes[0], outcomes[1], outcomes[2], outcomes[3]);
  return outcomes[0] > 0 && outcomes[3] + outcomes[2] > 0 ? 0 : 1;
}
