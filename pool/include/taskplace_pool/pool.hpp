// taskplace_pool/pool.hpp: a coroutine thread pool whose wake-ups are
// placed by taskplace::WakePlacer and whose idle workers pull work through
// taskplace::IdleBalancer.
//
// One worker thread per CPU of the topology, pinned where the OS allows;
// per-worker run queues (mutex + deque, fed by a lock-free inbox that any
// thread pushes to, plus a hand-off slot for sync wake-ups kept on the
// waker's worker, which only that worker touches); a wake-up asks the placer for
// a CPU and queues the task there; a worker that runs dry balances (steals
// from the CPUs of each level, as far as the cost budget allows), spins
// briefly, then parks on a futex. Kernel analogue: the runqueues of
// kernel/sched/core.c with try_to_wake_up(), newidle_balance() and the
// tick's nohz idle kick.
//
//   taskplace_pool::SystemPool<taskplace::traits::Current> pool;   // one worker per CPU
//   int v = pool.block_on(compute());
#pragma once

#include "taskplace/detail/config.hpp"

#include <atomic>
#include <chrono>
#include <concepts>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <utility>
#include <vector>

#include "taskplace/tsc_clock.hpp"
#include "taskplace/detail/topology_blocks.hpp"
#include "taskplace/idle_balancer.hpp"
#include "taskplace/kit/calibration.hpp"
#include "taskplace/kit/idle.hpp"
#include "taskplace/kit/machine.hpp"
#include "taskplace/kit/sleeps.hpp"
#include "taskplace/placer/llc_utilization.hpp"
#include "taskplace/policy/task_hot.hpp"
#include "taskplace/stats.hpp"
#include "taskplace/topology/sysfs.hpp"
#include "taskplace/wake_placer.hpp"
#include "taskplace_pool/channel.hpp"
#include "taskplace_pool/core.hpp"
#include "taskplace_pool/join_handle.hpp"
#include "taskplace_pool/live_tasks.hpp"
#include "taskplace_pool/machine.hpp"
#include "taskplace_pool/options.hpp"
#include "taskplace_pool/overload.hpp"
#include "taskplace_pool/pending.hpp"
#include "taskplace_pool/root.hpp"
#include "taskplace_pool/sleep.hpp"
#include "taskplace_pool/spin_lock.hpp"
#include "taskplace_pool/sync.hpp"
#include "taskplace_pool/task.hpp"
#include "taskplace_pool/worker.hpp"

namespace taskplace_pool {

using namespace std::chrono_literals;

// The pool. `Topo` is any taskplace::Topology (one worker per CPU);
// `WakeTraits` a WakePlacer traits set (taskplace::traits::Runtime by
// default, the kernel's rules behind a gate in the pool's measured costs,
// docs/runtime.md; or a kernel era's: Current, AlwaysAffine, PrevCpu,
// Linux2013, CacheHot<>, Linux2008<>, SisCurrent<>); `BalanceTraits` an
// IdleBalancer traits set. Each worker has its own placer and balancer (so
// their counters are never written by two CPUs), with SingleWriterStats so
// the counters can be read while the pool runs; placer_stats() and
// balancer_stats() sum them.
// Thread-safety: spawn / block_on / stats from any thread; shutdown from
// one thread off the pool (from a task of the pool it throws).
template <taskplace::Topology Topo = taskplace::SysfsTopology, class WakeTraits = taskplace::traits::Runtime,
          class BalanceTraits = taskplace::DefaultBalanceTraits>
class Pool {
 public:
  // Each worker's placer and balancer are written by that worker only and
  // read by stats() from anywhere: single-writer counters, no locked
  // instruction per count. The placer for wake-ups from off the pool is
  // shared by those threads and taken under a lock.
  struct placer_traits : WakeTraits {
    using Stats = taskplace::SingleWriterStats;
  };
  struct balancer_traits : BalanceTraits {
    using Stats = taskplace::SingleWriterStats;
  };
  using topology_type = Topo;
  using placer_type = taskplace::WakePlacer<Topo, placer_traits>;
  using balancer_type = taskplace::IdleBalancer<Topo, balancer_traits>;
  using reservation_policy = typename placer_type::reservation_policy;
  using placer_stats_type = taskplace::PlainStats::counters<taskplace::WakeCounter>;
  using balancer_stats_type = taskplace::PlainStats::counters<taskplace::BalanceCounter>;
  using reservation_cpu_state = typename reservation_policy::cpu_state;

  // A spawned task: the pool's part and the placer's per-task state.
  struct record_type : detail::TaskControl {
    typename placer_type::task_state placement{};
  };

  // Effects: starts cpu_count() workers. Throws std::invalid_argument if
  // the topology has no CPU; std::system_error if a worker's thread cannot
  // be started (pthread_create: EAGAIN under a thread or memory limit),
  // after stopping and joining the workers already started.
  explicit Pool(Topo topology, PoolOptions options = {});
  // Effects: a pool over a default-constructed topology (for SysfsTopology:
  // the running machine, one worker per CPU this process may use).
  explicit Pool(PoolOptions options = {})
    requires std::default_initializable<Topo>
      : Pool(Topo{}, options) {}
  Pool(const Pool&) = delete;
  Pool& operator=(const Pool&) = delete;
  ~Pool() { shutdown(); }

  // Effects: queues `t` on the least busy worker (kernel fork balance:
  // the idlest CPU, ties going to the spawning worker); the placer is not
  // asked, so every policy set starts from the same spread.
  // Once shutdown() began, only the pool's own tasks may spawn (a task
  // still running while the pool drains, e.g. fanning out or spawning the
  // half of a pair it awaits): their children run before the workers stop.
  // Returns: the handle that yields the task's result.
  // Throws: std::logic_error when called off the pool once shutdown()
  // began (the task is destroyed, not run); std::bad_alloc.
  template <class T>
  JoinHandle<T> spawn(task<T> t);

  // Effects: spawns `t` and blocks this thread (not a worker) until it ends.
  // Returns its value or rethrows its exception. Throws: as spawn() and
  // JoinHandle::get() (TaskAbandoned when shutdown() destroys the task
  // unfinished).
  template <class T>
  T block_on(task<T> t) {
    return spawn(std::move(t)).get();
  }

  // Effects: refuses spawns from off the pool from here on, lets every
  // runnable task (and every sleeping one) run to completion, along with
  // the tasks they spawn meanwhile, stops the workers, then destroys the
  // tasks that still wait on something nobody can signal any more (among
  // them the ones sleeping forever, see sleep_for), newest first. Each
  // one's JoinHandle is then done and throws TaskAbandoned (a thread
  // blocked in get() or block_on on it returns so); each waiter leaves
  // the primitive it waited on as its frame goes, so what other frames'
  // destructors do to those primitives (a Mutex::Guard's unlock, a
  // close()) reaches live waiters only, which are woken onto the stopped
  // pool and destroyed in their turn, unresumed. Idempotent. Call it
  // after threads off the pool stopped signalling the pool's tasks.
  // Returns: how many tasks completed and how many were abandoned.
  // Throws: std::logic_error, with nothing changed, when one of this
  // pool's own tasks calls it: its worker cannot join itself, and the pool
  // cannot stop while the caller runs. The task may catch it and return;
  // a later shutdown() (or ~Pool) from off the pool stops the pool as ever.
  ShutdownReport shutdown();

  CpuId worker_count() const noexcept { return n_; }
  // Returns: how many workers the OS let us pin (after start-up).
  std::uint32_t pinned_workers() const noexcept { return pinned_.load(); }
  // Returns: whether every worker has started (and tried to pin).
  bool started() const noexcept { return started_.load() == n_; }

  PoolStats stats() const noexcept;
  // Effects: zeroes the pool's counters and the placer's and balancer's
  // stats (spawned / completed are kept: shutdown reports them). Call it
  // while no task runs (between phases of a benchmark): each counter has
  // one writer, its worker, whose count in flight (read before the reset,
  // stored after it) would survive the reset.
  void reset_stats() noexcept;
  // Returns: the placers' counters summed over the workers (and the placer
  // of wake-ups from off the pool), a snapshot.
  placer_stats_type placer_stats() const noexcept;
  // Returns: the balancers' counters summed over the workers, a snapshot.
  balancer_stats_type balancer_stats() const noexcept;
  const Topo& topology() const noexcept { return topo_; }

  // The MachineState the placer reads: a view over the workers
  // (machine.hpp).
  using Machine = detail::PoolMachine<Pool>;
  friend Machine;

  // Unlinks a finished task from the live list (called by its root frame,
  // on its worker; root_body counted it completed when it published).
  void finished(record_type& r) noexcept { live_.remove(r); }

 private:
  // Effects: points every placer's and balancer's hook at `t`, where the
  // hook is the trace's (attach(ChromeTrace*)); other hooks are left alone.
  void attach_trace(taskplace::kit::ChromeTrace& t) noexcept {
    constexpr bool wake_traced = requires(typename placer_type::hook_type& h) { h.attach(&t); };
    constexpr bool balance_traced = requires(typename balancer_type::hook_type& h) { h.attach(&t); };
    if constexpr (wake_traced) placer_.hook().attach(&t);
    for (auto& w : workers_) {
      if constexpr (wake_traced) w->placer.hook().attach(&t);
      if constexpr (balance_traced) w->balancer.hook().attach(&t);
    }
  }

  static constexpr std::uint32_t next_streak_max = 16;
  static constexpr std::uint32_t park_awake = detail::park_awake, park_parked = detail::park_parked,
                                 park_woken = detail::park_woken, park_kicked = detail::park_kicked;

  using Worker = detail::Worker<Topo, placer_type, balancer_type>;

  // The body of a spawned task's root frame. The awaited task's frame is
  // destroyed, and this frame's last reference to an exception given away,
  // before the result is published: whoever reads the result then holds
  // the only references (and ThreadSanitizer sees every release ordered).
  // Every move (or copy) of the value happens inside the try: a T whose
  // move throws fails the task with that exception (counted in `failed`)
  // instead of escaping the root frame (std::terminate). The task counts
  // as completed before its result is published, so a caller that has the
  // result sees it in stats().completed. A root frame that shutdown()
  // destroys unfinished marks its handle abandoned as the frame goes,
  // after the awaited task's frame (declared first, destroyed last).
  template <class T>
  static detail::Root<Pool> root_body(Pool& pool, task<T> t, std::shared_ptr<detail::JoinState<T>> st);

  static record_type* rec(detail::TaskControl* t) noexcept { return static_cast<record_type*>(t); }
  static taskplace::TaskKey key(detail::TaskControl* t) noexcept {
    return reinterpret_cast<taskplace::TaskKey>(t);
  }

  CpuId idlest_worker() const noexcept;

  // Effects: counts t as pending (on self, the calling worker, or off the
  // pool when null), queues it on worker c and wakes c if it is parked.
  void enqueue(Worker* self, CpuId c, detail::TaskControl* t) {
    count_pending(self);
    push(c, t);
  }
  // Effects: enqueue without the count, for a task already counted
  // (spawn counts before it checks for shutdown).
  // The task goes on w's inbox (release: whoever drains it sees the task
  // as the pusher left it) before queued counts it, so that a worker that
  // sees the count and finds the inbox still empty just looks again.
  void push(CpuId c, detail::TaskControl* t);
  // Effects: adds one to a counter only its worker writes (a relaxed load
  // and store: no locked instruction; stats() reads it from anywhere).
  static void bump(std::atomic<std::uint64_t>& c, std::uint64_t n = 1) noexcept {
    c.store(c.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
  }

  // The overload flag's updates and the gate's input (overload.hpp): a
  // queueing on w may set it and kick a parked worker to steal.
  void note_queued(const Worker& w) {
    overload_.note_queued(w, opts_.kick_idle_on_tick, [this](const Worker& x) { kick_one(x); });
  }
  void refresh_overload() noexcept { overload_.refresh(workers_); }
  taskplace::Overload overload() const noexcept { return overload_.state(opts_.overload_gate); }

  // Invariant (no lost wake-up): the enqueuer bumps `queued` then reads
  // `park`; the parking worker writes `park` then reads `queued`; both
  // seq_cst, so at least one of them sees the other.
  // The wake-up is stamped (unparked_at) before the CAS that releases the
  // worker, so that the worker, whose exchange of `park` reads the CAS,
  // measures its wake-up latency from this stamp and not from an older
  // one; a stamp written by an unparker that then loses the CAS is only
  // a little early.
  // Returns: whether this call woke w (it was parked and no one else woke
  // it first).
  bool unpark(Worker& w, std::uint32_t why);

  // Effects: the worker lost its CPU for `gap` at `now`: if longer than
  // preempt_gap, it is not idle for the placer for preempted_for.
  void note_gap(Worker& w, Nanoseconds gap, Nanoseconds now) const noexcept;

  // The placement of a woken task: ask the placer, queue it there. The
  // sync hint counts only from a task (a timer or a thread off the pool is
  // not about to leave a worker). The machine state is not adjusted for
  // it: the waker still runs, so its worker is busy with nr_running 1,
  // which is exactly what the affine step's sync rule looks for (kernel
  // wake_affine_idle); the idle-sibling search then sees the same busy
  // worker, as select_idle_sibling does.
  void wake_task(detail::TaskControl* t, WakeHint hint);

  void block_task(detail::TaskControl* t);

  // Whether a blocking task reads the clock for its sleep report (the
  // kit's answer for this placer: kit/sleeps.hpp).
  static constexpr bool timed_sleeps = taskplace::kit::times_sleeps<placer_type>;

  // Returns: the worker whose thread calls, or null off the pool.
  Worker* this_worker() const noexcept {
    auto* ctx = detail::current_context();
    return ctx != nullptr && ctx->pool == this ? workers_[ctx->cpu].get() : nullptr;
  }

  // Effects: the running task t stops running (it blocks or yields) on w
  // (null: off the pool). When the pool needs the time, the clock is read
  // once: with cache_hot_steals t's last_ran moves from the start of its
  // run to now (kernel: update_curr() keeps se.exec_start current while a
  // task runs), so a long run is not mistaken for an old one; a placer
  // that times sleeps takes its sample at it; and it is w's next round
  // time (the task suspends right after). Otherwise no clock is read.
  // Returns: that time, or w's time at the start of the run when no clock
  // was read (0 off the pool).
  Nanoseconds end_run(Worker* w, detail::TaskControl* t) const noexcept {
    if (!timed_sleeps && !hot_steals()) return w != nullptr ? w->now : Nanoseconds{0};
    const Nanoseconds now = clock_.now();
    if (hot_steals()) t->last_ran = now;
    if (w != nullptr) w->run_ended_at = now;
    return now;
  }
  // Returns: the time of w's new round: the read end_run took when its
  // last task stopped, else a fresh one. Owner only.
  Nanoseconds round_time(Worker& w) const noexcept {
    if (w.run_ended_at) return *std::exchange(w.run_ended_at, std::nullopt);
    return clock_.now();
  }

  // Effects: t sleeps on this worker until now + delay (a negative delay
  // counts as zero). A deadline the clock cannot count (now + delay at or
  // past Nanoseconds::max(): sleep_for saturates every duration from 2^62
  // ns, 146 years, on to nanoseconds::max()) never comes: t queues no
  // timer and waits like a task on an event nobody sets, so it does not
  // hold shutdown() up; shutdown destroys it and counts it abandoned.
  // A sleep whose deadline the clock can count is pending work, which
  // shutdown waits for however long.
  void timer_task(detail::TaskControl* t, Nanoseconds delay);

  void yield_task(detail::TaskControl* t);

  // Effects: wakes the tasks whose timers expired on w. A parked worker
  // wakes for its next deadline through the futex timeout, which the
  // kernel may defer by the thread's timer slack (50 us by default); the
  // workers ask for timer_slack instead.
  void fire_timers(Worker& w, std::int64_t now);

  // Returns: the worker's next task (Worker::pop). Owner only.
  static detail::TaskControl* pop_local(Worker& w) { return w.pop(next_streak_max); }

  // Effects: a sync wake-up placed on the waker's own worker: the wakee
  // takes the worker's hand-off slot and runs as soon as the waker blocks
  // (kernel: the wakee of a sync wake-up on the waker's CPU preempts it
  // when it sleeps). No lock and no unpark: only this worker's thread
  // touches the slot, and it is awake. A task already in the slot moves to
  // the queue's tail. Thieves never take the slot (the waker is about to
  // leave the worker to it); `handoff` says it is full.
  // The wakee needs no count of pending work of its own: the waker's run
  // gives it its own unit (run_donated), which stays pending while the
  // waker runs, since the slot's task cannot run before the waker's run
  // ends, and is counted done when the wakee's run ends; the waker's run
  // ends without counting. A wakee moved out of the slot during the run
  // that gave it the unit takes a count of its own (a thief may run it
  // and count it done while the waker still runs), and the unit goes to
  // the new wakee. One moved out later keeps the unit it holds. Two
  // locked adds a hand-off fewer; quiescent() states the argument.
  void enqueue_next(Worker& w, detail::TaskControl* t);

  // The thieves' view of the workers and of a task's last run (worker.hpp).
  using Queues = detail::WorkerQueues<Worker>;
  using LastRan = detail::TaskLastRan;

  // Effects: tells the workers to stop once the pool is quiescent (no
  // runnable task, no pending timer), wakes the parked ones to see it,
  // and joins every worker thread started.
  void stop_workers();

  // Returns: whether shutdown began and no work is pending (pending.hpp
  // states why the counts' sums say so).
  bool quiescent() const noexcept { return pending_.quiescent(workers_); }

  // Effects: counts one unit of pending work on self, the calling worker,
  // or off the pool when null; one unit done on w, the calling worker.
  void count_pending(Worker* self) noexcept { pending_.count_pending(self != nullptr ? &self->counts : nullptr); }
  static void count_done(Worker& w) noexcept { detail::PendingWork::count_done(w.counts); }

  void pin(CpuId c);

  void run_worker(CpuId c);

  void run(Worker& w, detail::WorkerContext& ctx, detail::TaskControl* t);

  // Returns: a task found while spinning or after waking, or null.
  detail::TaskControl* spin_then_park(Worker& w);

  // Effects: a periodic balance on behalf of a busy worker (kernel nohz
  // idle balance): not cost-gated; w's levels nearest first, then the
  // workers no level spans (kit::Stealer::periodic), each a periodic
  // balance for the cache-hot test's failure counts.
  // Returns: whether it moved a task onto w's queue.
  bool steal_as_kicked(Worker& w);

  // Effects: wakes every parked worker, to look at the pool's state again
  // (shutdown, a spawn backing out of it, quiescence found).
  void unpark_all() {
    for (auto& w : workers_) unpark(*w, park_woken);
  }

  // Effects: wakes the first parked worker after self to steal (kernel
  // nohz_balancer_kick), through unpark(), which stamps the wake-up: a
  // kicked worker that measured its wake-up from an older stamp would
  // count itself preempted, and the placer would then see it busy.
  void kick_one(const Worker& self) {
    for (CpuId i = 1; i < n_; ++i)
      if (unpark(*workers_[(self.cpu + i) % n_], park_kicked)) return;
  }

  static void op_wake(void* p, detail::TaskControl* t, WakeHint h) {
    static_cast<Pool*>(p)->wake_task(t, h);
  }
  static void op_block(void* p, detail::TaskControl* t) { static_cast<Pool*>(p)->block_task(t); }
  static void op_timer(void* p, detail::TaskControl* t, Nanoseconds d) {
    static_cast<Pool*>(p)->timer_task(t, d);
  }
  static void op_yield(void* p, detail::TaskControl* t) { static_cast<Pool*>(p)->yield_task(t); }
  static constexpr detail::PoolOps ops_{&op_wake, &op_block, &op_timer, &op_yield};

  Topo topo_;
  PoolOptions opts_;  // every optional set (the constructor's kit::with_policy_steals)
  bool hot_steals() const noexcept { return *opts_.cache_hot_steals; }
  // The kernel's rq clock source (sched_clock: the TSC times a calibrated
  // mult): the process's TscClock, calibrated once (2 ms of spinning, by
  // the first pool constructed), steady_clock where the TSC is not
  // invariant. A busy worker reads it once per task; what a read costs
  // against steady_clock's: docs/benchmarks.md, "Clock reads".
  taskplace::TscClock clock_ = taskplace::TscClock::process();
  placer_type placer_;  // wake-ups from off the pool (threads, no task)
  CpuId n_;
  std::vector<std::unique_ptr<Worker>> workers_;
  detail::PendingWork pending_;    // the counts quiescence reads, and the stop flag
  detail::OverloadFlag overload_;  // some worker can give a thief a task
  std::atomic<bool> exit_{false}, stopped_{false};
  std::atomic<std::uint32_t> started_{0}, pinned_{0};
  mutable std::atomic<std::uint64_t> rr_{0};
  std::atomic<std::uint64_t> spawned_{0}, completed_{0}, failed_{0}, external_wakeups_{0};
  std::mutex shutdown_m_, external_m_;
  detail::LiveTasks live_;  // every task spawned and not yet ended
  ShutdownReport report_{};
};

// The pool over the running machine with a given wake policy set.
template <class WakeTraits = taskplace::traits::Runtime,
          class BalanceTraits = taskplace::DefaultBalanceTraits>
using SystemPool = Pool<taskplace::SysfsTopology, WakeTraits, BalanceTraits>;

// A pool whose placers and balancers record into PoolOptions::trace (or
// the ChromeTrace installed at its construction): every wake-up placement
// and newidle balance, as Chrome trace JSON (taskplace/kit/trace.hpp).
template <taskplace::Topology Topo = taskplace::SysfsTopology, class WakeTraits = taskplace::traits::Runtime,
          class BalanceTraits = taskplace::DefaultBalanceTraits>
using TracedPool = Pool<Topo, taskplace::kit::Traced<WakeTraits>, taskplace::kit::Traced<BalanceTraits>>;

}  // namespace taskplace_pool

// The members defined out of the class, a part of the pool each.
#include "taskplace_pool/loop.hpp"
#include "taskplace_pool/queues.hpp"
#include "taskplace_pool/report.hpp"
#include "taskplace_pool/spawn.hpp"
#include "taskplace_pool/wakeups.hpp"
