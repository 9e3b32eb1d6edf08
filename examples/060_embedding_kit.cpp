// The embedding kit (taskplace/kit/*.hpp) in a small runtime whose
// scheduler sees only job handles (integers it does not own): per-job
// state in a TaskStore, the machine's counters in a kit::Machine, the idle
// side in a kit::Stealer, the wake-up costs from kit::calibrate(). Jobs
// pass a token around a ring; each hop is a wake-up the placer places.
// docs/embedding.md walks through it. Exits 0 when every hop ran exactly
// once and every job's state was erased.
#include <atomic>
#include <cstdio>
#include <thread>
#include <vector>

#include "taskplace/clock.hpp"
#include "taskplace/kit/calibration.hpp"
#include "taskplace/kit/idle.hpp"
#include "taskplace/kit/machine.hpp"
#include "taskplace/kit/task_store.hpp"
#include "taskplace/kit/worker_deque.hpp"
#include "taskplace/topology/uniform.hpp"
#include "taskplace/wake_placer.hpp"

namespace kit = taskplace::kit;
using taskplace::CpuId;
using Topo = taskplace::UniformTopology;
using Placer = taskplace::WakePlacer<Topo, taskplace::traits::Current>;

// Each worker's queue of job handles (0 is "none"): the kit's, a
// kit::WorkerQueue that keeps the machine's queued count of its worker as
// jobs come and go. A runtime may keep a queue of its own instead (any
// type modelling kit::WorkerQueue).
using Queue = kit::CountedWorkerDeque<std::uint64_t>;

int main() {
  constexpr std::uint32_t workers = 4, jobs = 64, hops = 20'000;
  const Topo topo{1, 1, workers, 1};  // one LLC of four cores
  const kit::Calibration cal = kit::calibrate();
  std::printf("calibration: %s\n", cal.describe().c_str());

  Placer placer{topo};
  kit::Machine machine{workers, kit::costs_of(cal)};
  kit::TaskStore<Placer::task_state, std::uint64_t> store;
  taskplace::IdleBalancer<Topo> balancer{topo};
  std::vector<Queue> queues(workers);
  for (CpuId c = 0; c < workers; ++c) queues[c].machine = &machine, queues[c].owner = c;
  auto queue_of = [&](CpuId c) -> Queue& { return queues[c]; };
  const taskplace::SteadyClock clock;
  std::atomic<std::uint32_t> hop{0}, wrong{0};
  std::vector<std::atomic<std::uint32_t>> runs(jobs + 1);

  // A wake-up of `job` by `waker` (0: from off the pool) running on
  // worker `waking`: the kit's rule off the pool is the wakee's prev.
  auto wake = [&](std::uint64_t job, std::uint64_t waker, CpuId waking) {
    auto& e = store.get(job, /*id=*/1);
    Placer::task_state* w = waker != 0 ? &store.get(waker, 1).state : nullptr;
    if (waker == 0) waking = kit::off_pool_waking_cpu(e.prev_cpu(), 0, workers);
    const auto now = clock.now();
    const auto p = placer.place({.waker = w, .waker_key = waker != 0 ? store.key(waker) : taskplace::no_task,
                                 .wakee = &e.state, .wakee_key = store.key(job), .waking_cpu = waking,
                                 .prev_cpu = e.prev_cpu(), .sync = waker != 0,
                                 .wakee_load = kit::wakee_load<Placer>},
                                machine.at(now, topo), now);  // with the LLC's busy share (SIS_UTIL)
    queues[p.cpu].push(job);
  };

  auto worker = [&](CpuId self) {
    kit::Stealer<Topo> thief{topo, self};
    auto bstate = balancer.make_state(self, clock.now());
    while (hop.load() < hops) {
      std::uint64_t job = queues[self].pop();  // its own queue, oldest first
      if (job == 0) {
        job = thief.newidle(balancer, bstate, queue_of, kit::NoLastRan{}, clock, machine.overload());
        if (job == 0) job = thief.periodic(queue_of, kit::NoLastRan{}, clock);
        if (job == 0) {
          machine.spinning(self);
          std::this_thread::yield();
          continue;
        }
        balancer.idle_end(bstate, clock.now());
      }
      machine.running(self);
      store.get(job, 1).ran_on(self);  // the task's last worker: the next prev_cpu
      runs[job].fetch_add(1);
      // The job's work: pass the token to the next job of the ring.
      if (hop.fetch_add(1) + 1 < hops) wake(job % jobs + 1, job, self);
      machine.stopped(self);
    }
  };

  wake(1, 0, 0);  // the first hop, from off the pool
  std::vector<std::thread> ts;
  for (CpuId c = 0; c < workers; ++c) ts.emplace_back(worker, c);
  for (auto& t : ts) t.join();

  std::uint32_t total = 0;
  for (std::uint64_t j = 1; j <= jobs; ++j) {
    total += runs[j].load();
    if (!store.erase(j, 1) && runs[j].load() > 0) wrong.fetch_add(1);  // each job finishes: erase
  }
  std::printf("%u hops ran (%u asked), %zu job states left\n", total, hops, store.size());
  return total == hops && store.size() == 0 && wrong.load() == 0 ? 0 : 1;
}
