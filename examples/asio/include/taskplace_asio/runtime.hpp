// taskplace_asio/runtime.hpp: N boost::asio::io_contexts, one thread each
// (the io_context-per-core server design), whose handlers are placed by
// taskplace's WakePlacer and balanced through the kit's idle piece.
//
// A task is whatever the program names by a handle (an actor's, a
// session's or a coroutine frame's address). post(task, f) is a wake-up of
// that task: the placer picks the worker from the waker (the task running
// on this thread, on this worker; off the pool: the kit's rule) and the
// wakee's state (kit::TaskStore), over the workers' counters
// (kit::Machine); the handler is queued on that worker. A task is not a
// strand: two handlers of one task posted at once may run at once on two
// workers; a task whose handlers share state keeps one in flight (each
// posts the next), or locks.
//
// Why a queue of our own beside each io_context: an io_context's queue is
// opaque (no size, no removal of one handler by another thread), so an
// idle worker could not take work from it. Ready handlers therefore wait
// in a per-worker queue the kit can see (kit::WorkerQueue: size,
// try_steal); the worker drains it between polls of its io_context, and
// an idle worker steals from the others' (kit::Stealer: the newidle balance
// through IdleBalancer when it runs dry, the periodic one while it stays
// idle). The io_context keeps everything else: timers, sockets, and the
// wake-up of a parked worker (a post that ends its run_one_for).
//
// Sleeps, for the traits sets whose policies read them (traits::Linux2008's
// overlap, SisCurrent's run durations, CacheHot's reservations;
// kit::reports_sleeps): a task runs when one of its handlers starts
// (WakePlacer::task_runs), and sleeps when a handler returns with no other
// handler of the task posted before the return: it waits for the next
// post, its wake-up. A handler that ends while another of its task is queued (the
// task posted to itself, or was posted to while it ran) is a stop, not a
// sleep (task_stops: kernel, a task preempted or yielding). The runtime
// learns of the sleep only once the handler has returned: the report is
// late (docs/embedding.md, "Late sleep reports"), its `at` the moment the
// handler returned, made on the worker through its kit::SleepSlot under
// the task's lock, which also orders the task's placements, so no report
// and wake-up of a task run at once. A post made after the handler
// returned and before the report (its worker was slow to take the lock)
// is a wake-up of the sleeping task before the report, which the
// contract reconciles: the sleep still counts. A task's next handler
// waits for the report before it runs (kernel: try_to_wake_up() waits for
// p->on_cpu to clear), so each report comes before the task's next run.
// Exact for a task with one handler in flight at a time (each handler
// posts the next, or waits to be posted); with two at once on two workers
// the samples are approximations (never a data race). Other traits sets
// pay nothing for this: no lock, no clock read per handler.
//
//   taskplace_asio::Runtime<> rt{4};
//   rt.post(&session, [&] { ...; rt.post(&peer, [&] { ... }); });
//   rt.join();  // every handler ran; rethrows the first a handler threw
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>

#include "taskplace/clock.hpp"
#include "taskplace/tsc_clock.hpp"
#include "taskplace/idle_balancer.hpp"
#include "taskplace/kit/calibration.hpp"
#include "taskplace/kit/idle.hpp"
#include "taskplace/kit/machine.hpp"
#include "taskplace/kit/sleeps.hpp"
#include "taskplace/kit/task_store.hpp"
#include "taskplace/kit/trace.hpp"
#include "taskplace/stats.hpp"
#include "taskplace/topology/table.hpp"
#include "taskplace/wake_placer.hpp"
#include "taskplace_asio/options.hpp"
#include "taskplace_asio/queue.hpp"
#include "taskplace_asio/sleeps.hpp"

namespace taskplace_asio {

using taskplace::CpuId;
using taskplace::Nanoseconds;

// The runtime. Not movable (the workers point at it).
// Shutdown, defined:
//   join(): waits until no handler is pending (every handler posted, and
//     every one those posted, ran; post_after's timers count from the
//     call until they fire), then stops and joins the threads; rethrows
//     the first exception a handler threw.
//   stop(): stops now: each worker ends after the handler it runs; the
//     handlers still queued are destroyed without running (what they own
//     is freed, a promise they hold breaks), and so are the io_contexts'
//     own pending handlers (a timer's). Returns how many queued handlers
//     it destroyed. A post after stop() destroys its handler and returns
//     false.
//   A handler that throws stops the runtime as stop() does; join() (or a
//   later stop()) rethrows its exception. The destructor stops.
// BalanceTraits: the idle balancer's (kit::Traced<...> records its
// balances, as TracedRuntime does).
template <class WakeTraits = taskplace::traits::Runtime, class BalanceTraits = taskplace::DefaultBalanceTraits>
class Runtime {
 public:
  using placer_type = taskplace::WakePlacer<taskplace::TableTopology, detail::WorkerTraits<WakeTraits>>;
  using balancer_type =
      taskplace::IdleBalancer<taskplace::TableTopology, detail::WorkerTraits<BalanceTraits>>;
  using placer_stats_type = taskplace::PlainStats::counters<taskplace::WakeCounter>;
  using balancer_stats_type = taskplace::PlainStats::counters<taskplace::BalanceCounter>;
  // A worker's steals, their cache-hot rule the balance traits' (Hot).
  using thief_type = taskplace::kit::Stealer<taskplace::TableTopology, typename balancer_type::hot_policy>;
  // Whether the handlers' runs and the tasks' sleeps are reported (the
  // class comment): some policy of the traits reads them.
  static constexpr bool reports_sleeps = taskplace::kit::reports_sleeps<placer_type>;

  explicit Runtime(std::uint32_t workers, Options o = {})
      : topo_(detail::flat_topology(workers)), placer_(topo_),
        machine_(workers),
        opts_(taskplace::kit::with_policy_steals<placer_type>(taskplace::kit::with_measured_costs<placer_type>(o))) {
    machine_.set_costs(opts_.costs);
    w_ = std::make_unique<Worker[]>(workers);
    for (CpuId c = 0; c < workers; ++c) {
      w_[c].q.machine = &machine_;
      w_[c].q.owner = c;
      w_[c].placer.emplace(topo_);
      w_[c].balancer.emplace(topo_);
      w_[c].thief.emplace(
          topo_, c,
          typename thief_type::Options{
              .cache_hot = *opts_.cache_hot_steals,
              .task_hot = taskplace::task_hot_with_tunables<typename balancer_type::hot_policy>(*opts_.task_hot)});
    }
    for (CpuId c = 0; c < workers; ++c) w_[c].thread = std::thread([this, c] { loop(c); });
  }
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;
  ~Runtime() {
    halt();
    discard();
  }

  std::uint32_t worker_count() const noexcept { return machine_.worker_count(); }
  // Returns: the options in force (the costs measured and the steal side
  // resolved where they were left unset).
  const Options& options() const noexcept { return opts_; }
  boost::asio::io_context& context(CpuId c) { return w_[c].ctx; }
  // Returns: the placers' (each worker's and the one for posts from off
  // the pool) and the workers' balancers' counters, summed. Thread-safety:
  // any thread, while the runtime runs (a snapshot; single-writer counters
  // are read without their writer's lock).
  placer_stats_type placer_stats() const noexcept {
    placer_stats_type out;
    taskplace::add_counters(out, placer_.stats());
    for (CpuId c = 0; c < worker_count(); ++c) taskplace::add_counters(out, w_[c].placer->stats());
    return out;
  }
  balancer_stats_type balancer_stats() const noexcept {
    balancer_stats_type out;
    for (CpuId c = 0; c < worker_count(); ++c) taskplace::add_counters(out, w_[c].balancer->stats());
    return out;
  }
  const taskplace::kit::Machine& machine() const noexcept { return machine_; }
  // Returns: the worker the calling thread is, if it is one of this runtime's.
  std::optional<CpuId> current_worker() const noexcept {
    if (tl_.rt == this) return tl_.worker;
    return std::nullopt;
  }
  // Returns: the task whose handler runs on this thread (null: none).
  Task current_task() const noexcept { return tl_.rt == this ? tl_.task : nullptr; }
  // Returns: a copy of `task`'s placement state (its overlap, run and
  //   sleep averages, its flips), or nullopt when the runtime holds none
  //   for it. Taken under the task's lock where sleeps are reported; a
  //   snapshot, for tests and diagnostics.
  std::optional<typename placer_type::task_state> task_state(Task task) const {
    auto* e = store_.find(task, 0);
    if (e == nullptr) return std::nullopt;
    [[maybe_unused]] auto lk = lock(*e);
    return e->state.placement;
  }

  // Effects: a wake-up of `task`: `f` queued on the worker the placer
  //   picks, to run there (or on a thief) once. `sync`: the caller's
  //   handler ends right after (kernel WF_SYNC).
  // Returns: false (f destroyed, not run) after stop().
  template <class F>
  bool post(Task task, F&& f, bool sync = false) {
    return submit(task, false, std::forward<F>(f), sync);
  }
  // Effects: `f` as a task of its own (its state erased once it ran).
  template <class F>
  bool post(F&& f) {
    return submit(nullptr, true, std::forward<F>(f), false);
  }
  // Effects: after `d`, a wake-up of `task` with `f`: a timer on this
  //   worker's io_context (off the pool: the task's last worker's), whose
  //   completion posts f from that worker. Pending (for join) until then.
  template <class Rep, class Period, class F>
  bool post_after(Task task, std::chrono::duration<Rep, Period> d, F&& f) {
    if (stopping_.load()) return false;
    pending_.fetch_add(1);
    const auto* e = store_.find(task, 0);
    const CpuId prev = e != nullptr ? e->prev_cpu() : taskplace::no_cpu;
    const CpuId c = current_worker().value_or(taskplace::kit::off_pool_waking_cpu(prev, 0, worker_count()));
    auto t = std::make_shared<boost::asio::steady_timer>(w_[c].ctx, d);
    t->async_wait([this, t, task, fn = std::decay_t<F>(std::forward<F>(f))](const auto&) mutable {
      post(task, std::move(fn));
      done_one();
    });
    return true;
  }
  // Effects: forgets `task`'s placement state (call when it ends; a task
  //   never posted again may leave it, at a few dozen bytes). Call it from
  //   the task's own last handler or after it: a handler of the task
  //   still running on another worker reports its end on the entry it
  //   started with, which the store may have given to a new task by then
  //   (that task's averages then take one wrong sample).
  void finished(Task task) {
    if (tl_.rt == this && tl_.task == task) tl_.entry = nullptr;  // its posts: no waker state
    store_.erase(task, 0);
  }
  // Effects: one unit of work outstanding (an operation in flight that
  //   will post: join() waits for it as for a pending handler) / done.
  //   TaskExecutor's outstanding_work.tracked counts through these.
  void work_started() noexcept { pending_.fetch_add(1); }
  void work_finished() noexcept { done_one(); }

  // Effects: see the class comment. Not from a worker.
  void join() {
    {
      std::unique_lock lk(idle_m_);
      idle_cv_.wait(lk, [this] { return pending_.load() == 0 || stopping_.load(); });
    }
    halt();
    discard();
    rethrow();
  }
  std::size_t stop() {
    halt();
    const std::size_t n = discard();
    rethrow();
    return n;
  }

  Stats stats() const noexcept {
    Stats s;
    for (CpuId c = 0; c < worker_count(); ++c) {
      s.handlers += w_[c].handlers.load(std::memory_order_relaxed);
      s.migrations += w_[c].migrations.load(std::memory_order_relaxed);
      s.steals += w_[c].thief->counts().steals;
    }
    s.remote = remote_.load(std::memory_order_relaxed);
    s.unparks = unparks_.load(std::memory_order_relaxed);
    return s;
  }

 private:
  struct alignas(64) Worker {
    boost::asio::io_context ctx{1};
    detail::Queue q;
    std::atomic<bool> sleeping{false};
    taskplace::kit::SleepSlot<placer_type> sleeps;  // its tasks' sleeps (SIS_CACHE's reservation)
    // Its placer (the posts its handlers make, its tasks' run and sleep
    // reports) and balancer: this worker's thread alone.
    std::optional<placer_type> placer;
    std::optional<balancer_type> balancer;
    std::optional<thief_type> thief;
    std::atomic<std::uint64_t> handlers{0}, migrations{0};
    std::thread thread;
  };
  // A task's entry in the store (sleeps.hpp).
  using TaskState = detail::TaskState<typename placer_type::task_state, reports_sleeps>;
  using store_type = taskplace::kit::TaskStore<TaskState, Task>;
  using entry_type = typename store_type::Entry;
  static auto lock(entry_type& e) noexcept { return detail::lock_task(e.state); }
  // This thread's place: the runtime and worker it is, and the task whose
  // handler runs with its entry, looked up once as the handler starts (the
  // waker of the handler's posts: one store lookup a wake-up, the wakee's).
  struct Current {
    const Runtime* rt = nullptr;
    CpuId worker = 0;
    Task task = nullptr;
    entry_type* entry = nullptr;
  };

  // The placer's machine state at one time: the kit's counters with each
  // LLC's busy share (SIS_UTIL's input, sampled once a tick), the measured
  // costs (MachineState O5, O6: traits::Runtime's move cost), and each
  // worker's reservation (MachineState O3; kit::SleepSlot: empty, and
  // never read, without a reservation policy).
  // The time is the placement's, read when first needed: the counts need
  // none, so a settled pair's replay (which reads the waking worker's
  // count only) reads no clock.
  class MachineView {
   public:
    MachineView(const Runtime& rt, const taskplace::ReadOnce<taskplace::TscClock>& now) noexcept
        : rt_(&rt), now_(&now) {}
    bool is_idle(CpuId c) const noexcept { return at().is_idle(c); }
    std::uint32_t nr_running(CpuId c) const noexcept { return rt_->machine_.nr_running(c); }
    std::uint64_t load(CpuId c) const noexcept { return rt_->machine_.load(c); }
    std::uint32_t llc_utilization_pct(CpuId c) const { return at().llc_utilization_pct(c); }
    Nanoseconds wake_cost(CpuId c) const noexcept { return rt_->machine_.wake_cost(c); }
    Nanoseconds crossing_cost() const noexcept { return rt_->machine_.crossing_cost(); }
    auto reservation(CpuId c) const noexcept { return rt_->w_[c].sleeps.reservation(); }

   private:
    taskplace::kit::Machine::AtLlc<taskplace::TableTopology> at() const noexcept {
      return rt_->machine_.at((*now_)(), rt_->topo_);
    }
    const Runtime* rt_;
    const taskplace::ReadOnce<taskplace::TscClock>* now_;
  };

  template <class F>
  bool submit(Task task, bool own, F&& f, bool sync) {
    auto node = std::make_unique<detail::NodeOf<std::decay_t<F>>>(std::forward<F>(f));
    if (own) task = node.get();
    node->task = task;
    node->own = own;
    pending_.fetch_add(1);
    if (stopping_.load()) {
      node.reset();
      done_one();
      return false;
    }
    const CpuId c = place(task, sync, *node);
    if (tl_.rt == this && c == tl_.worker) {  // this worker's own queue: its owner (us) is awake
      if (w_[c].q.push_owned(node.release())) kick(c);
      return true;
    }
    if (w_[c].q.push(node.release())) kick(c);  // the overload flag rose: a parked thief may steal
    wake(c);
    return true;
  }

  // kernel: select_task_rq_fair() for a wake-up of `task` by this thread.
  // Where sleeps are reported, under the task's lock, which the handler
  // the wake-up queues then counts in (TaskSleeps::posted).
  // `node`: the handler, given its task's last run.
  CpuId place(Task task, bool sync, detail::Node& node) {
    auto& e = store_.get(task, 0);
    if (*opts_.cache_hot_steals)
      node.last_ran = Nanoseconds{std::atomic_ref<std::int64_t>(e.state.last_ran).load(std::memory_order_relaxed)};
    [[maybe_unused]] auto lk = lock(e);
    const taskplace::ReadOnce now{clock_};
    const std::uint32_t n = worker_count();
    typename placer_type::Wakeup w{.wakee = &e.state.placement, .wakee_key = store_type::key(task),
                                   .prev_cpu = e.prev_cpu(), .wakee_load = taskplace::kit::wakee_load<placer_type>};
    if (tl_.rt == this) {
      w.waking_cpu = tl_.worker;
      if (tl_.entry != nullptr) {
        w.waker = &tl_.entry->state.placement;
        w.waker_key = store_type::key(tl_.task);
        w.sync = sync;
      }
    } else {  // off the pool: the wakee's last worker, else a round robin
      w.waking_cpu = taskplace::kit::off_pool_waking_cpu(e.prev_cpu(), rr_.fetch_add(1) % n, n);
    }
    // Traced: the answers it reads go with the wake event (kit::observed).
    auto decide = [&](const placer_type& p) {
      return p.place(w, taskplace::kit::observed<placer_type>(MachineView{*this, now}, n), now).cpu;
    };
    CpuId c;
    if (tl_.rt == this) {
      c = decide(*w_[tl_.worker].placer);
    } else {
      std::lock_guard off(off_m_);
      c = decide(placer_);
    }
    if constexpr (reports_sleeps) e.state.sleeps.posted();
    if (c != w.waking_cpu) remote_.fetch_add(1, std::memory_order_relaxed);
    return c;
  }

  // Effects: ends worker c's sleep in its io_context, if it sleeps. The
  //   worker publishes `sleeping` before it re-reads its queue; we publish
  //   the handler before we read `sleeping` (both seq_cst): one of us sees
  //   the other.
  void wake(CpuId c) {
    auto& s = w_[c].sleeping;
    if (s.load() && s.exchange(false)) {
      unparks_.fetch_add(1, std::memory_order_relaxed);
      boost::asio::post(w_[c].ctx, [] {});
    }
  }
  // kernel: nohz_balancer_kick(): the first sleeping worker but c.
  void kick(CpuId c) {
    for (CpuId i = 0; i < worker_count(); ++i)
      if (i != c && w_[i].sleeping.load()) return wake(i);
  }

  // `previous_end`: where the worker comes straight from the previous
  //   handler's end (no poll, no idle between), the clock read that ended
  //   it: the start of this run, a read saved (some 10 ns a handler; the
  //   run reads a few tens of ns longer, the queue's pop included).
  // Returns: the clock read that ended this run, where one was taken.
  std::optional<Nanoseconds> run(CpuId self, detail::Node* x, std::optional<Nanoseconds> previous_end = {}) {
    Worker& me = w_[self];
    auto counters = machine_.worker(self);  // its running flag, addressed once
    counters.running();
    auto& e = store_.get(x->task, 0);
    if (const CpuId prev = e.prev_cpu(); prev != self) {  // read once; a task staying put writes no line
      if (prev != taskplace::no_cpu)
        me.migrations.store(me.migrations.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
      e.ran_on(self);
    }
    Nanoseconds started{0};
    if constexpr (reports_sleeps) {  // the task runs (its next sleep report is due)
      auto lk = lock(e);
      while (e.state.sleeps.report_outstanding()) {  // the last report first
        lk.unlock();
        std::this_thread::yield();
        lk.lock();
        previous_end.reset();  // time went by
      }
      started = previous_end ? *previous_end : clock_.now();
      me.placer->task_runs(e.state.placement, started);
    }
    tl_.task = x->task;
    tl_.entry = &e;
    try {
      x->run();
    } catch (...) {
      {
        std::lock_guard lk(error_m_);
        if (!error_) error_ = std::current_exception();
      }
      request_stop();
    }
    // The task's entry after its handler: e unless the handler called
    // finished(task) (which cleared tl_.entry), then looked up again.
    entry_type* const kept = tl_.entry;
    tl_.task = nullptr;
    tl_.entry = nullptr;
    std::optional<Nanoseconds> ended;
    if constexpr (reports_sleeps) {
      if (!x->own) ended = report_end(me, x->task, kept, started);
    } else if (*opts_.cache_hot_steals && !x->own) {  // the stamp report_end keeps otherwise
      ended = clock_.now();
      if (entry_type* f = kept != nullptr ? kept : store_.find(x->task, 0))
        std::atomic_ref<std::int64_t>(f->state.last_ran).store(ended->count(), std::memory_order_relaxed);
    }
    if (x->own) store_.erase(x->task, 0);
    delete x;
    me.handlers.store(me.handlers.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    counters.stopped();
    done_one();
    return ended;
  }

  // Effects: the handler of `task` that started at `started` returned on
  //   `me`: the task's sleep, late, at that moment (the clock read now
  //   where kit::times_sleeps asks for one, else the handler's start),
  //   unless another handler of the task was posted before the return
  //   (then its stop; detail::TaskSleeps). The task's next run waits
  //   until the report is in. A handler that called finished(task) is not
  //   reported.
  // `kept`: the task's entry as the handler left it (null: the handler
  //   called finished(task); then it is looked up, as a post may have
  //   made it again).
  // Returns: the moment, where the clock was read for it.
  std::optional<Nanoseconds> report_end(Worker& me, Task task, entry_type* kept, Nanoseconds started) {
    constexpr bool timed = taskplace::kit::times_sleeps<placer_type>;
    const Nanoseconds at = timed ? clock_.now() : started;
    const std::optional<Nanoseconds> read = timed ? std::optional<Nanoseconds>{at} : std::nullopt;
    const bool worker_idle = me.q.size() == 0;  // SIS_CACHE reserves a worker that goes idle
    entry_type* e = kept != nullptr ? kept : store_.find(task, 0);
    if (e == nullptr) return read;
    auto& s = e->state;
    if (*opts_.cache_hot_steals) std::atomic_ref<std::int64_t>(s.last_ran).store(at.count(), std::memory_order_relaxed);
    s.sleeps.returned();
    [[maybe_unused]] auto lk = lock(*e);
    if (s.sleeps.ends_in_sleep()) me.sleeps.report(*me.placer, s.placement, store_type::key(task), worker_idle, at);
    else me.placer->task_stops(s.placement, at);
    s.sleeps.reported();
    return read;
  }

  void loop(CpuId self) {
    tl_ = {this, self, nullptr};
    Worker& me = w_[self];
    detail::NodeCache nodes;  // the blocks of the handlers run here, for the posts made here
    const detail::NodeCache::Install use_nodes{nodes};
    auto guard = boost::asio::make_work_guard(me.ctx);  // run_one_for waits, never runs out of work
    auto queues = [this](CpuId c) -> detail::Queue& { return w_[c].q; };
    auto bstate = me.balancer->make_state(self, clock_.now());
    std::uint32_t since_poll = 0;
    std::optional<Nanoseconds> last_end;  // the previous handler's end, if read and nothing came since
    while (!stopping_.load(std::memory_order_relaxed)) {
      detail::Node* x = me.q.pop();  // its own, oldest first
      if (x == nullptr || ++since_poll >= opts_.poll_every) {
        since_poll = 0;
        last_end.reset();
        me.ctx.poll();  // timers, sockets, the wake-up posts
        if (x == nullptr) x = me.q.pop();
      }
      if (x == nullptr) {  // runs dry: kernel newidle_balance()
        x = me.thief->newidle(*me.balancer, bstate, queues, detail::NodeLastRan{}, clock_, machine_.overload());
        if (x == nullptr) x = idle(self, queues);
        if (x == nullptr) continue;
        me.balancer->idle_end(bstate, clock_.now());
      }
      last_end = run(self, x, last_end);
    }
    tl_ = {};
  }

  // Effects: spins (polling its queue and its io_context) for idle_spin,
  //   looking at the others' queues every idle_balance (the periodic
  //   balance), then blocks in its io_context, for idle_poll at most, and
  //   steals once more.
  // Returns: a handler to run, or null (look at the own queue again).
  template <class Queues>
  detail::Node* idle(CpuId self, Queues& queues) {
    Worker& me = w_[self];
    const auto start = clock_.now();
    auto next_balance = start + opts_.idle_balance;
    machine_.spinning(self);
    for (auto now = start; now - start < opts_.idle_spin; now = clock_.now()) {
      if (me.q.size(std::memory_order_seq_cst) != 0 || me.ctx.poll() != 0) return nullptr;
      if (now >= next_balance) {
        next_balance = now + opts_.idle_balance;
        if (auto* x = me.thief->periodic(queues, detail::NodeLastRan{}, clock_)) return x;
      }
      if (stopping_.load(std::memory_order_relaxed)) return nullptr;
      std::this_thread::yield();
    }
    machine_.parked(self);
    me.sleeping.store(true);
    if (me.q.size(std::memory_order_seq_cst) == 0 && !stopping_.load()) me.ctx.run_one_for(opts_.idle_poll);
    me.sleeping.store(false);
    machine_.awake(self);
    machine_.refresh_overload();  // kernel: the tick's update of the overload flag
    if (me.q.size(std::memory_order_seq_cst) != 0) return nullptr;
    return me.thief->periodic(queues, detail::NodeLastRan{}, clock_);
  }

  void done_one() {
    if (pending_.fetch_sub(1) == 1) notify_joiner();
  }
  void notify_joiner() {
    { std::lock_guard lk(idle_m_); }  // a joiner between its test and its wait sees the change
    idle_cv_.notify_all();
  }
  void request_stop() {
    stopping_.store(true);
    notify_joiner();
    for (CpuId c = 0; c < worker_count(); ++c) {
      w_[c].sleeping.store(false);
      w_[c].ctx.stop();
    }
  }
  void halt() {
    request_stop();
    for (CpuId c = 0; c < worker_count(); ++c)
      if (w_[c].thread.joinable()) w_[c].thread.join();
  }
  // Effects: destroys the queued handlers, unrun. Precondition: halted.
  std::size_t discard() {
    std::size_t n = 0;
    for (CpuId c = 0; c < worker_count(); ++c)
      while (detail::Node* x = w_[c].q.try_steal()) {
        if (x->own) store_.erase(x->task, 0);
        delete x;
        ++n;
        done_one();
      }
    return n;
  }
  void rethrow() {
    std::exception_ptr e;
    {
      std::lock_guard lk(error_m_);
      std::swap(e, error_);
    }
    if (e) std::rethrow_exception(e);
  }

  static inline thread_local Current tl_{};

  taskplace::TableTopology topo_;
  placer_type placer_;  // posts from off the pool, under off_m_
  std::mutex off_m_;
  taskplace::kit::Machine machine_;
  store_type store_;
  Options opts_;
  // The process's TscClock (the TSC where it is invariant, steady_clock
  // elsewhere), as the pool and the Boost.Fiber group: a policy that reads
  // runs and sleeps reads it at every post and every handler's end.
  taskplace::TscClock clock_ = taskplace::TscClock::process();
  std::unique_ptr<Worker[]> w_;
  std::atomic<std::int64_t> pending_{0};
  std::atomic<bool> stopping_{false};
  std::atomic<std::uint32_t> rr_{0};
  std::atomic<std::uint64_t> remote_{0}, unparks_{0};
  std::mutex idle_m_;
  std::condition_variable idle_cv_;
  std::mutex error_m_;
  std::exception_ptr error_;
};

// The runtime whose placer and balancer record every placement and newidle
// balance into the kit::ChromeTrace installed while it is built
// (kit::ChromeTrace::Install), as the pool's TracedPool and the Boost.Fiber
// TracedGroup do.
template <class WakeTraits = taskplace::traits::Runtime, class BalanceTraits = taskplace::DefaultBalanceTraits>
using TracedRuntime = Runtime<taskplace::kit::Traced<WakeTraits>, taskplace::kit::Traced<BalanceTraits>>;

}  // namespace taskplace_asio
