// taskplace_pool/worker.hpp: one worker of the pool: its run queue (a
// mutex-guarded deque fed by a lock-free inbox), its hand-off slot, its
// park word, counters, and its placer, balancer and thief. Internal to
// pool.hpp, which documents the invariants that span workers.
#pragma once

#include "taskplace/detail/config.hpp"

#include <atomic>
#include <cstdint>
#include <deque>
#include <iterator>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

#include "taskplace/kit/idle.hpp"
#include "taskplace/kit/sleeps.hpp"
#include "taskplace/placer/llc_utilization.hpp"
#include "taskplace/types.hpp"
#include "taskplace_pool/core.hpp"
#include "taskplace_pool/options.hpp"
#include "taskplace_pool/pending.hpp"

namespace taskplace_pool::detail {

// A worker's park word: awake, parked on its futex, or released from it by
// a wake-up (woken) or a kick to steal (kicked).
inline constexpr std::uint32_t park_awake = 0, park_parked = 1, park_woken = 2, park_kicked = 3;

// One worker. Topo, Placer and Balancer are the pool's.
template <class Topo, class Placer, class Balancer>
struct alignas(64) Worker {
  Worker(const Topo& t, CpuId c, const PoolOptions& o)
      : placer(t),
        balancer(t),
        thief(t, c,
              {.cache_hot = *o.cache_hot_steals,
               .task_hot = taskplace::task_hot_with_tunables<typename Balancer::hot_policy>(*o.task_hot)}) {}
  std::mutex m;  // guards q and timers, and the draining of inbox
  std::deque<TaskControl*> q;
  TaskControl* next = nullptr;  // hand-off slot (enqueue_next), owner only
  std::uint32_t next_streak = 0;        // slot tasks run in a row, owner only
  // The running task's unit of pending work went to the task in the
  // hand-off slot (enqueue_next): the run ends without counting done,
  // and that task's run counts it. Owner only.
  bool run_donated = false;
  std::vector<std::pair<std::int64_t, TaskControl*>> timers;  // min-heap
  // Tasks queued here from any thread, newest first (a lock-free stack
  // linked through TaskControl::inbox_next), moved to q by whoever holds
  // m next (the worker's own pop, or a thief). On one cache line with
  // the words a waker writes and reads next (queued, park), so that a
  // wake-up onto another worker moves one line there instead of the
  // queue's lock, the deque and the count (docs/pool.md, "The inbox").
  alignas(64) std::atomic<TaskControl*> inbox{nullptr};
  std::atomic<std::uint32_t> queued{0};  // q and inbox
  // 1 while the hand-off slot holds a task. Written by the owner alone
  // with plain stores, where a count shared with other threads' queueings
  // takes a locked add and a locked subtract per hand-off (each waits for
  // the stores before it to drain); read by the others' placements and
  // balances, as snapshots, like queued.
  std::atomic<std::uint32_t> handoff{0};
  std::atomic<std::uint32_t> running{0};
  // The pops that took the last task queued here (queue, inbox and slot
  // empty after them), for the thieves (kit::WorkerQueue O1). Written by
  // the owner alone.
  std::atomic<std::uint64_t> drained{0};
  std::atomic<std::uint32_t> park{park_awake};
  std::atomic<std::int64_t> next_deadline{INT64_MAX};
  // Until when the worker counts as preempted (Machine::is_idle); when it
  // was last unparked (to tell a late wake-up).
  std::atomic<std::int64_t> preempted_until{INT64_MIN};
  std::atomic<std::int64_t> unparked_at{0};
  taskplace::kit::SleepSlot<Placer> sleeps;  // the sleeps of the tasks it runs (SIS_CACHE's state)
  Placer placer;      // places the wake-ups this worker's tasks make
  Balancer balancer;  // this worker's newidle balance
  typename Balancer::state bstate{};  // the worker thread's only
  // Its steals (newidle and kicked balances), with their counts and the
  // cache-hot test's failures per level; the worker thread's only.
  // The cache-hot test's rule is the balancer traits' (Hot), its
  // tunables PoolOptions::task_hot's.
  taskplace::kit::Stealer<Topo, typename Balancer::hot_policy> thief;
  // The worker's clock (kernel rq_clock): read once per scheduling round,
  // used by the placements and sleeps of the task it runs. Owner only.
  Nanoseconds now{0};
  // The clock read taken when the task it ran stopped (end_run), if one
  // was: the next round's time, so that the round reads the clock once,
  // not twice. Owner only.
  std::optional<Nanoseconds> run_ended_at;
  CpuId cpu = 0;
  std::thread thread;
  std::atomic<std::uint64_t> tasks_run{0}, migrations{0}, wakeups{0}, affine_wakeups{0}, parks{0}, kicks{0};
  WorkCounts counts;  // its pending and done work (pending.hpp)
  // On the first worker of each LLC: the LLC's busy share and when it
  // was sampled (Machine::llc_utilization_pct); a line of its own, read
  // by every wake-up that scans the LLC and written once a tick.
  taskplace::LlcUtilizationSample llc_sample;
  // Tasks waiting to run here: queued, and in the hand-off slot; a snapshot.
  std::uint32_t waiting() const noexcept {
    return queued.load(std::memory_order_relaxed) + handoff.load(std::memory_order_relaxed);
  }
  // Tasks it holds, running plus waiting (kernel nr_running); a snapshot.
  std::uint32_t nr_running() const noexcept {
    return running.load(std::memory_order_relaxed) + waiting();
  }
  // Whether a thief could take a task from it (kernel: a busiest queue
  // holds two or more tasks, one of them queued): a task in its queue
  // and two or more held, the hand-off slot aside, since no thief takes
  // the slot's task (the waker is about to leave the worker to it); a
  // snapshot.
  bool can_give() const noexcept {
    const std::uint32_t n = queued.load(std::memory_order_relaxed);
    return n > 0 && n + running.load(std::memory_order_relaxed) >= 2;
  }
  // The worker's queue as a thief sees it (kit::WorkerQueue): what it
  // could give (kernel find_busiest_queue: nothing unless can_give), and
  // a steal under its lock: the inbox drained first, the count checked
  // again (two or more held, one of them queued), then the task `pick`
  // chooses among q's, oldest first; without a pick the newest (the
  // task that would wait longest here).
  std::size_t size() const noexcept { return can_give() ? queued.load(std::memory_order_relaxed) : 0; }
  std::uint64_t drains() const noexcept { return drained.load(std::memory_order_relaxed); }
  template <class Pick>
  TaskControl* try_steal(const Pick& pick) {
    std::lock_guard lk(m);
    drain_inbox();
    if (q.empty() || q.size() + running.load(std::memory_order_relaxed) < 2) return nullptr;
    const auto it = pick(q.begin(), q.end());
    if (it == q.end()) return nullptr;
    TaskControl* t = *it;
    q.erase(it);
    queued.fetch_sub(1, std::memory_order_relaxed);
    return t;
  }
  TaskControl* try_steal() {
    return try_steal([](auto, auto last) { return std::prev(last); });
  }
  // Returns: the next task to run here: the hand-off slot first (at most
  // streak_max times in a row, so a pair handing off to each other cannot
  // starve the queue), else the head of the queue. Owner only.
  TaskControl* pop(std::uint32_t streak_max) {
    TaskControl* t = pop_any(streak_max);
    if (t != nullptr && next == nullptr && queued.load(std::memory_order_relaxed) == 0)
      drained.store(drained.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    return t;
  }
  TaskControl* pop_any(std::uint32_t streak_max) {
    if (next != nullptr && next_streak < streak_max) {
      ++next_streak;
      return take_next();
    }
    next_streak = 0;
    if (queued.load(std::memory_order_relaxed) != 0) {
      std::lock_guard lk(m);
      drain_inbox();
      if (!q.empty()) {
        auto* t = q.front();
        q.pop_front();
        queued.fetch_sub(1, std::memory_order_relaxed);
        return t;
      }
    }
    return next != nullptr ? take_next() : nullptr;
  }
  // Returns: the hand-off slot's task, emptying the slot. Owner only.
  TaskControl* take_next() noexcept {
    handoff.store(0, std::memory_order_relaxed);
    return std::exchange(next, nullptr);
  }
  // Effects: a task this worker stole joins its queue. Owner only.
  void accept(TaskControl* t) {
    std::lock_guard lk(m);
    q.push_back(t);
    queued.fetch_add(1, std::memory_order_seq_cst);
  }
  // Effects: moves the inbox to the tail of q, oldest first.
  // Precondition: m held.
  void drain_inbox() noexcept {
    TaskControl* t = inbox.exchange(nullptr, std::memory_order_acquire);
    if (t == nullptr) return;
    TaskControl* oldest_first = nullptr;
    while (t != nullptr) {
      TaskControl* older = t->inbox_next;
      t->inbox_next = oldest_first;
      oldest_first = t;
      t = older;
    }
    for (; oldest_first != nullptr; oldest_first = oldest_first->inbox_next) q.push_back(oldest_first);
  }
};

// The thieves' view of the workers (kit::QueueSource: worker c's queue)
// and of a task's last run (kit::LastRanOf), for the kit's steals
// (kit/idle.hpp): one queued task a balance, the newest of the victim's
// queue; with cache_hot_steals the oldest (kernel detach_tasks() starts
// there, and looks at nr_migrate = 32 at most) that TaskHot lets go, the
// workers of the level below left to that level's balance.
template <class W>
struct WorkerQueues {
  const std::vector<std::unique_ptr<W>>* workers;
  W& operator()(CpuId c) const noexcept { return *(*workers)[c]; }
};
struct TaskLastRan {
  Nanoseconds operator()(TaskControl* const& t) const noexcept { return t->last_ran; }
};

}  // namespace taskplace_pool::detail
