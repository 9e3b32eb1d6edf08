// taskplace_fiber/algorithm.hpp: a Boost.Fiber scheduling algorithm that
// places woken fibers with taskplace's WakePlacer and lets a thread that
// runs dry pull work through IdleBalancer.
//
// Kernel analogue: select_task_rq_fair() on every wake-up, newidle_balance()
// when a runqueue empties, the nohz idle balance while it stays empty, for
// a pool of threads each running fibers (one thread = one worker = one CPU
// id of the topology). Follows the kernel of
// v6.x through taskplace::traits::Current; traits::AlwaysAffine gives the
// 2.6.23 sync wake-ups of Smith 2008 for comparison. Optionally
// (Group::cache_hot_steals), a steal leaves a cache-hot fiber where it is:
// task_hot() in can_migrate_task().
//
//   taskplace_fiber::Group<> group{4};  // 4 workers, one LLC
//   taskplace_fiber::install(group);     // in each thread: claims a worker, installs Algorithm
#pragma once

#include <cassert>
#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>

#include <boost/fiber/algo/algorithm.hpp>
#include <boost/fiber/context.hpp>
#include <boost/fiber/scheduler.hpp>
#include <boost/fiber/type.hpp>

#include "taskplace/detail/config.hpp"
#include "taskplace/kit/idle.hpp"
#include "taskplace/kit/sleeps.hpp"
#include "taskplace/kit/trace.hpp"
#include "taskplace_fiber/group.hpp"

namespace taskplace_fiber {

// One worker's scheduling algorithm; install it in each thread of the pool
// with install(group) (below), or with
// boost::fibers::use_scheduling_algorithm<Algorithm<G>>(group), which is
// noexcept: a bad or taken worker then ends the program (std::terminate).
// Boost.Fiber's interface is virtual: these overrides are the only virtual
// functions of taskplace_fiber. Each fiber's properties are a
// Properties<G>, made on its first wake-up, as
// algorithm_with_properties<Properties<G>> makes them; this class derives
// from that template's base and does its awakened() itself (the
// template's, final, looks the properties up twice through Boost.Fiber's
// library at every wake-up, the derived class's call besides).
// Invariant: pinned contexts (main, dispatcher) never leave this thread;
//   a worker context is detached while queued and attached by the thread
//   that resumes it (Boost.Fiber's migration rule).
template <class G = Group<>>
class Algorithm : public boost::fibers::algo::algorithm_with_properties_base {
  using base = boost::fibers::algo::algorithm_with_properties_base;
  using context = boost::fibers::context;
  using type = boost::fibers::type;

 public:
  using properties_type = Properties<G>;

  // Effects: registers this thread as the group's first free worker.
  // Throws: std::invalid_argument when every worker is taken.
  explicit Algorithm(G& group) : g_(&group), id_(group.claim_next()) { enter(); }
  // Effects: registers this thread as worker `worker`.
  // Throws: std::invalid_argument when worker is out of range or taken.
  Algorithm(G& group, CpuId worker) : g_(&group), id_(worker) {
    group.claim(worker);
    enter();
  }
  Algorithm(const Algorithm&) = delete;
  Algorithm& operator=(const Algorithm&) = delete;
  // Effects: unregisters the worker; fibers still queued on it stay
  // stealable by the other workers.
  ~Algorithm() override {
    if (detail::this_worker.algorithm == this) detail::this_worker = {};
    g_->release(id_);
  }

  CpuId worker() const noexcept { return id_; }

  // Effects: as algorithm_with_properties<Properties<G>>::awakened(ctx):
  //   gives ctx its properties on its first wake-up, makes this algorithm
  //   theirs (fiber_properties::notify() reaches it), then
  //   awakened(ctx, props).
  void awakened(context* ctx) noexcept final {
    boost::fibers::fiber_properties* p = ctx->get_properties();
    if (p == nullptr) [[unlikely]] {
      p = new properties_type(ctx);
      base::set_properties(ctx, p);
    }
    p->set_algorithm(this);
    awakened(ctx, *static_cast<properties_type*>(p));
  }
  // Returns: ctx's properties (algorithm_with_properties::properties).
  // Precondition: ctx was awakened by an Algorithm<G> once.
  static properties_type& properties(context* ctx) noexcept {
    return *static_cast<properties_type*>(ctx->get_properties());
  }
  // Properties<G> tells no change (fiber_properties::notify()): nothing.
  void property_change_(context*, boost::fibers::fiber_properties*) noexcept final {}

  // Effects: a fiber became ready on this thread. Pinned contexts stay in
  // this thread's local queue; a worker context is placed by the WakePlacer
  // (waker: the fiber running here, or for a wake-up from another thread
  // that thread's worker as recorded by notify(); prev: where the fiber
  // last ran), detached and
  // queued on the chosen worker, whose thread is woken if it sleeps.
  // A yield (see pick_next) is not a wake-up: the yielder goes back to the
  // end of this worker's queue without a placement (kernel: sched_yield()
  // never goes through select_task_rq()). With cache_hot_steals, a yielder
  // never stamped (started with launch::dispatch, it ran before it had
  // properties) is stamped now, the end of the run it just yielded.
  // Complexity: one placement plus one queue lock.
  void awakened(context* ctx, properties_type& props) noexcept {
    // The context running here (running_): the one named here cannot be
    // it, unless a fiber launched with launch::dispatch took the thread
    // without a pick_next (Boost.Fiber then awakens its launcher, first).
    if (running_ == nullptr || ctx == running_) running_ = context::active();
    context* const active = running_;
    assert(active == context::active());
    const bool yielded = yielder_ != nullptr && ctx == yielder_ && active == yield_to_;
    yielder_ = nullptr;  // whatever this is, the next context has started
    if (yielded && ctx->is_context(type::pinned_context)) {
      pinned_.push_back(ctx);
      return;
    }
    if (yielded) {
      if (g_->cache_hot_steals && props.last_ran == Nanoseconds::min()) props.last_ran = g_->clock_.now();
      detach(ctx);
      g_->push_own(id_, ctx);
      return;
    }
    if (ctx->is_context(type::dispatcher_context)) {
      dispatcher_ = ctx;  // it resumed another context: not a wake-up
      return;
    }
    if (active != nullptr && active != ctx) detail::this_worker.woke = true;
    if (ctx->is_context(type::pinned_context)) {
      pinned_.push_back(ctx);
      return;
    }
    typename G::task_state* waker = nullptr;
    taskplace::TaskKey waker_key = taskplace::no_task;
    std::uint32_t waker_flips = 0;
    CpuId waking = id_;
    if (active == nullptr || active->is_context(type::dispatcher_context)) {
      // Woken from another thread (or by a timer): the waking CPU is the
      // remote waker's worker when notify() recorded it (any context of a
      // thread of this group, main and dispatcher included).
      // The worker is published last (release): once it is read here, the
      // key and flips of the same notify() are too.
      const CpuId hint = g_->slots_[id_].remote_waker.exchange(taskplace::no_cpu, std::memory_order_acquire);
      const taskplace::TaskKey hint_key =
          g_->slots_[id_].remote_waker_key.exchange(taskplace::no_task, std::memory_order_relaxed);
      const std::uint32_t hint_flips = g_->slots_[id_].remote_waker_flips.load(std::memory_order_relaxed);
      if (hint < g_->worker_count()) {
        waking = hint;
        if (hint_key != reinterpret_cast<taskplace::TaskKey>(ctx)) {
          waker_key = hint_key;
          waker_flips = hint_flips;
        }
      }
    } else if (active != ctx) {
      if (auto* p = active->get_properties()) {
        waker = &static_cast<properties_type*>(p)->task;
        waker_key = reinterpret_cast<taskplace::TaskKey>(active);
      }
    }
    // prev: where the fiber last ran. One that never ran through run() is
    // attached to this thread (Boost.Fiber awakens a fiber on the thread
    // whose scheduler holds it): either new, launched here (then the
    // waking CPU is this one too), or launched with launch::dispatch, which
    // ran here at once, before the algorithm saw it. Read as no_cpu, the
    // latter's first wake-up from another thread took that thread for its
    // last (PrevCpu moved it there, 1 run in 3 of a cross-thread test).
    const CpuId prev = props.last_worker != taskplace::no_cpu ? props.last_worker : id_;
    const taskplace::ReadOnce now{g_->clock_};
    const auto placement = g_->slots_[id_].placer->place(
        {.waker = waker, .waker_key = waker_key, .wakee = &props.task,
         .wakee_key = reinterpret_cast<taskplace::TaskKey>(ctx), .waking_cpu = waking,
         .prev_cpu = prev, .waker_flips = waker_flips, .wakee_load = taskplace::kit::wakee_load<typename G::placer_type>},
        // Traced: the answers it reads go with the wake event (kit::observed).
        taskplace::kit::observed<typename G::placer_type>(typename G::Machine{*g_, now}, g_->worker_count()), now);
    CpuId to = placement.cpu;
    // This worker is registered: its own thread places.
    if (to != id_ && (to >= g_->worker_count() || !g_->slots_[to].registered.load(std::memory_order_acquire)))
      to = id_;
    if (to != waking) g_->placed_remote_.fetch_add(1, std::memory_order_relaxed);
    detach(ctx);
    if (to == id_) g_->push_own(id_, ctx);
    else g_->push(to, ctx);
  }

  // Returns: the next context to run here: a pinned one first, then this
  // worker's queue (the dispatcher at least every dispatch_every fibers),
  // then what the IdleBalancer pulls from the other workers; nullptr to let
  // the dispatcher sleep.
  // A yield: Boost.Fiber's yield calls pick_next() and resumes the context
  // it returns, which then calls awakened() for the yielder before anything
  // else. The caller is taken for a yielder when it is not the dispatcher,
  // waits on nothing (no wait queue, no timer) and woke no fiber since it
  // was resumed; its awakened() is then a yield only when it is the
  // first call after this one and comes from the context returned here.
  // With cache_hot_steals, a worker fiber calling is leaving: its last_ran
  // becomes now (see stamp_end_of_run).
  context* pick_next() noexcept override {
    context* const caller = running();
    assert(caller == context::active());
    // The flag first: a caller that woke a fiber (a channel's sender) asks
    // Boost.Fiber's library for neither link.
    const bool may_yield = caller != nullptr && !detail::this_worker.woke &&
                           !caller->is_context(type::dispatcher_context) && !caller->wait_is_linked() &&
                           !caller->sleep_is_linked();
    Nanoseconds ended = no_time;
    if (g_->cache_hot_steals || taskplace::kit::reports_sleeps<typename G::placer_type> || g_->tracing() != nullptr)
      ended = stamp_end_of_run(caller, !may_yield);
    yielder_ = nullptr;
    context* next = choose_next(caller, ended, may_yield);
    if (may_yield && next != nullptr && next != caller) {
      yielder_ = caller;
      yield_to_ = next;
    }
    detail::this_worker.woke = false;  // `next` starts with a clean slate
    // Boost.Fiber resumes `next`; null: only the dispatcher asks with
    // nothing to hand out, and it goes on running (to sleep).
    if (next != nullptr) running_ = next;
    return next;
  }

  // Effects: also forgets the running context (running_): Boost.Fiber
  // asks this before each pick_next of a thread that replaces this
  // algorithm (set_algo), whose contexts it does not resume; else only
  // through boost::fibers::has_ready_fibers(), from the running context.
  bool has_ready_fibers() const noexcept override {
    running_ = nullptr;
    return !pinned_.empty() || dispatcher_ != nullptr ||
           g_->slots_[id_].queue.size() != 0;
  }

  // Effects: sleeps until `tp`, a notify(), a fiber queued here, or
  // idle_poll, whichever comes first.
  void suspend_until(const std::chrono::steady_clock::time_point& tp) noexcept override {
    g_->sleep(id_, tp);
  }

  // Effects: wakes this worker's thread (a fiber of it was woken from
  // another thread). Runs on the waking thread: when that thread is a worker
  // of the same group, records its worker as the hint awakened() uses for
  // the waking CPU, whichever of its contexts (fiber, main, dispatcher)
  // made the wake-up.
  void notify() noexcept override {
    detail::ThisWorker& waker = detail::this_worker;
    if (waker.algorithm != this) {  // not this thread's own shutdown notify
      waker.woke = true;
      if (waker.group == static_cast<const void*>(g_) && waker.worker < g_->worker_count()) {
        // The waking thread's algorithm is an Algorithm<G> too (the same
        // group): the context it runs, as it knows it.
        const context* active = static_cast<Algorithm*>(waker.algorithm)->running();
        const bool fiber = active != nullptr && !active->is_context(type::pinned_context) &&
                           !active->is_context(type::dispatcher_context);
        // Its flips, read here on its own thread; a fiber launched with
        // launch::dispatch may have no properties yet: none.
        const auto* props =
            fiber ? static_cast<const properties_type*>(active->get_properties()) : nullptr;
        g_->slots_[id_].remote_waker_flips.store(props != nullptr ? g_->slots_[id_].placer->flips().flips(props->task.flips) : 0,
                                                 std::memory_order_relaxed);
        g_->slots_[id_].remote_waker_key.store(fiber ? reinterpret_cast<taskplace::TaskKey>(active) : taskplace::no_task,
                                               std::memory_order_relaxed);
        // Last: awakened() reads the worker first, and the key and flips
        // only when it found one (stored first, a worker could be read
        // before its key was written, and name no waker).
        g_->slots_[id_].remote_waker.store(waker.worker, std::memory_order_release);
      }
    }
    g_->notify(id_);
  }

 private:
  // Effects: makes this algorithm the calling thread's worker for notify().
  void enter() noexcept {
    detail::this_worker = {.group = g_, .worker = id_, .algorithm = this, .woke = false};
  }

  // Effects: ctx->detach(), one call into Boost.Fiber's library fewer.
  static void detach(context* ctx) noexcept { ctx->get_scheduler()->detach_worker_context(ctx); }

  // Returns: the context running on this thread (running_), read from
  // Boost.Fiber when not known yet.
  context* running() noexcept { return running_ != nullptr ? running_ : (running_ = context::active()); }

  // The body of pick_next().
  // `self`: the context calling pick_next (running_).
  // `ended`: the clock read that ended the caller's run, if one was taken
  // (else no_time): a fiber popped from this worker's queue right after
  // starts at it (one read fewer a switch; its run reads the queue's pop
  // longer).
  // `yields`: the caller may be yielding (pick_next), so it is queued again
  // right after this.
  // The fiber popped here is the hot path, inlined; the others are kept out
  // of line (run_pinned, balance), so that it saves fewer registers.
  TASKPLACE_ALWAYS_INLINE context* choose_next(context* self, Nanoseconds ended, bool yields) noexcept {
    if (!pinned_.empty()) [[unlikely]]
      return run_pinned();
    if (dispatcher_ != nullptr && since_dispatch_ >= g_->dispatch_every) return run_dispatcher();
    if (context* ctx = g_->pop(id_, !yields)) [[likely]]
      return run(self, ctx, ended);
    if (dispatcher_ != nullptr) return run_dispatcher();
    return balance(self);
  }

  // Effects: this worker runs something from `now` on: an idle period
  //   ends there (the balancer's avg_idle), and the worker reads busy.
  //   `now` matters only when it was idle.
  TASKPLACE_ALWAYS_INLINE void starts_running(Nanoseconds now) noexcept {
    if (idle_) [[unlikely]] {
      idle_ = false;
      g_->slots_[id_].balancer->idle_end(*g_->slots_[id_].idle, now);
    }
    g_->slots_[id_].busy.store(true, std::memory_order_relaxed);
  }

  // Effects: the first pinned context runs next.
  TASKPLACE_NOINLINE context* run_pinned() noexcept {
    context* ctx = pinned_.front();
    pinned_.pop_front();
    starts_running(idle_ ? g_->clock_.now() : Nanoseconds{0});
    return ctx;
  }

  // Returns: a fiber the IdleBalancer pulls from another worker, attached
  // and stamped (run), or null: this worker is idle.
  TASKPLACE_NOINLINE context* balance(context* self) noexcept {
    G& g = *g_;
    auto& slot = g.slots_[id_];
    if (idle_) {
      // Still idle (idle_poll expired, or a wake-up left nothing here): the
      // nohz idle balance, run for the idle CPU by the kernel's periodic
      // balance (rebalance_domains()), which neither the avg_idle gate nor
      // the newidle cost budget restrict. So: decay the level costs as
      // that tick does, look at every other worker, nearest first, and keep
      // the idle stamp the newidle balance set when this idle period began
      // (a balance now would restamp it, and avg_idle would never see an
      // idle period longer than idle_poll, keeping a closed gate closed).
      slot.balancer->tick(*slot.idle, g.clock_.now());
      typename G::Queues queues{&g};
      if (context* got = slot.thief->periodic(queues, LastRan{}, g.clock_, g.nr_running(id_)))
        return run(self, got, no_time);
      slot.busy.store(false, std::memory_order_relaxed);
      return nullptr;
    }
    // Nothing here: newidle balance over the levels, nearest first.
    typename G::Queues queues{&g};
    if (context* got = slot.thief->newidle(*slot.balancer, *slot.idle, queues, LastRan{}, g.clock_,
                                           taskplace::Overload::unknown, g.nr_running(id_)))
      return run(self, got, no_time);
    slot.busy.store(false, std::memory_order_relaxed);
    idle_ = true;
    return nullptr;
  }

  // When a queued fiber last ran (kit::LastRanOf), read by a thief under
  // the victim's queue lock: its last writer (the thread that ran or
  // queued it) wrote it before the push that took this lock.
  struct LastRan {
    Nanoseconds operator()(context* const& c) const noexcept {
      return properties(c).last_ran;
    }
  };

  // Effects: the worker fiber `caller` stops running now (it yields,
  //   blocks or ends; kernel: update_curr() keeps se.exec_start current
  //   while a task runs): its last_ran becomes now, so that a long run is
  //   not taken for an old one. Pinned contexts and a fiber without
  //   properties yet (launch::dispatch) are left alone.
  // Thread-safety: `caller` runs on this thread, queued nowhere: it gets
  //   into a worker queue only through awakened(), after this returns
  //   (for a wake-up from another thread, after this thread's dispatcher
  //   took it from Boost's remote-ready queue), and push() publishes the
  //   stamp under the queue's lock.
  // With a placer that reads sleeps (kit::reports_sleeps), the same
  //   moment ends the fiber's run there: a fiber that blocks (`blocks`:
  //   it waits on a wait queue or a timer, or it woke a fiber, as an
  //   unbuffered channel's producer does before it suspends unlinked;
  //   pick_next's rule, whose other callers are yields) reports its sleep
  //   at it (kit::SleepSlot::report), one that yields stops without
  //   sleeping (task_stops); one that ended reports nothing. The report is
  //   late in the contract's sense (WakePlacer::task_sleeps): Boost.Fiber
  //   tells the algorithm of a wait only here, after the fiber linked
  //   itself to the wait queue; a wake-up from another thread reaches this
  //   thread's awakened() only through its dispatcher, after this returns,
  //   so it never overtakes the report.
  // Traced (Group::tracing()), the same moment goes to the trace as a
  //   task event (sleeps or stops), whatever the placer reads.
  // Returns: the clock read, where one was taken; else no_time.
  TASKPLACE_ALWAYS_INLINE Nanoseconds stamp_end_of_run(context* caller, bool blocks) noexcept {
    if (caller == nullptr || caller->is_context(type::pinned_context)) return no_time;
    auto* p = static_cast<properties_type*>(caller->get_properties());
    if (p == nullptr) return no_time;
    const Nanoseconds now = g_->clock_.now();
    if (g_->cache_hot_steals) p->last_ran = now;
    constexpr bool reports = taskplace::kit::reports_sleeps<typename G::placer_type>;
    taskplace::kit::ChromeTrace* const trace = g_->tracing();
    if ((!reports && trace == nullptr) || caller->terminated_is_linked()) return now;
    auto& slot = g_->slots_[id_];
    const auto key = reinterpret_cast<taskplace::TaskKey>(caller);
    const bool cpu_idle = slot.queue.size() == 0 && pinned_.empty();
    if constexpr (reports) {
      if (blocks) slot.sleeps.report(*slot.placer, p->task, key, cpu_idle, now);
      else slot.placer->task_stops(p->task, now);
    }
    // Traced: the same moment as a task event (after the report, as the
    // pool records it).
    if (trace != nullptr)
      trace->record(taskplace::kit::TaskEvent{key, id_, now,
                                              blocks ? taskplace::kit::TaskEvent::Kind::sleeps
                                                     : taskplace::kit::TaskEvent::Kind::stops,
                                              blocks && cpu_idle});
    return now;
  }

  context* run_dispatcher() noexcept {
    context* ctx = dispatcher_;
    dispatcher_ = nullptr;
    since_dispatch_ = 0;
    g_->slots_[id_].busy.store(false, std::memory_order_relaxed);
    return ctx;
  }
  // Effects: the worker fiber ctx runs next on this worker: it is attached
  // to this thread and stamped: the worker it runs on and, with
  // cache_hot_steals, when it started (its last_ran, written before it
  // runs and queued nowhere; without the option no clock is read for it).
  // `ended`: a clock read just taken (the previous run's end) to start at,
  // or no_time.
  TASKPLACE_ALWAYS_INLINE context* run(context* self, context* ctx, Nanoseconds ended) noexcept {
    G& g = *g_;
    const bool stamp = g.cache_hot_steals;
    constexpr bool reports = taskplace::kit::reports_sleeps<typename G::placer_type>;
    taskplace::kit::ChromeTrace* const trace = g.tracing();
    const Nanoseconds now = idle_ || stamp || reports || trace != nullptr
                                ? (ended != no_time && !idle_ ? ended : g.clock_.now())
                                : Nanoseconds{0};
    starts_running(now);
    ++since_dispatch_;
    self->get_scheduler()->attach_worker_context(ctx);  // self->attach(ctx), one call fewer
    auto& props = properties(ctx);
    if (props.last_worker != taskplace::no_cpu && props.last_worker != id_)
      g.migrations_.fetch_add(1, std::memory_order_relaxed);
    props.last_worker = id_;
    if (stamp) props.last_ran = now;
    // The run starts (DurationTracker), and the fiber's next sleep report
    // is due; nothing without a policy that reads sleeps.
    g.slots_[id_].placer->task_runs(props.task, now);
    if (trace != nullptr)  // traced: the run as a task event, for a replay
      trace->record(taskplace::kit::TaskEvent{reinterpret_cast<taskplace::TaskKey>(ctx), id_, now,
                                              taskplace::kit::TaskEvent::Kind::runs});
    return ctx;
  }

  // Stands for no clock read (stamp_end_of_run, run): the group's clock
  // never reads it (a fiber never stamped has it as its last_ran too).
  static constexpr Nanoseconds no_time = Nanoseconds::min();

  G* g_;
  CpuId id_;
  std::deque<context*> pinned_;  // main context and other pinned ones, this thread only
  context* dispatcher_ = nullptr;
  std::uint32_t since_dispatch_ = 0;
  bool idle_ = false;  // pick_next found nothing and no fiber ran since
  // A possible yield (pick_next): the caller that may be yielding and the
  // context pick_next returned to it; null outside that window.
  context* yielder_ = nullptr;
  context* yield_to_ = nullptr;
  // The context running on this thread, as the algorithm follows it, so
  // that a switch reads no context::active() (a call into Boost.Fiber's
  // library and a thread-local lookup through __tls_get_addr, twice a
  // switch): the one pick_next() last handed out (Boost.Fiber resumes
  // the context it returns), the caller when it returned null (the
  // dispatcher, which goes on running). Read from Boost.Fiber only where
  // the algorithm cannot know it: before its first call (null), and when a
  // fiber launched with launch::dispatch took the thread without a
  // pick_next, which its launcher's awakened() (Boost.Fiber's first call
  // after the switch) shows: the context awakened is the one taken for
  // running. Forgotten by has_ready_fibers() (see there). This thread
  // only (notify() reads the waking thread's own).
  mutable context* running_ = nullptr;
};

// Effects: makes the calling thread worker `worker` of `group`: claims the
//   worker, then installs Algorithm<G> as the thread's Boost.Fiber
//   scheduling algorithm. Unlike use_scheduling_algorithm (noexcept, so a
//   throwing constructor calls std::terminate), reports a bad worker to the
//   caller, with nothing installed and nothing claimed.
// Returns: the worker.
// Throws: std::invalid_argument when `worker` is out of range or taken;
//   std::bad_alloc.
template <class G>
CpuId install(G& group, CpuId worker) {
  auto algo = std::make_unique<Algorithm<G>>(group, worker);
  boost::fibers::context::active()->get_scheduler()->set_algo(
      boost::fibers::algo::algorithm::ptr_t{algo.release()});
  return worker;
}
// Effects: as install(group, worker) for the group's first free worker.
// Returns: the worker claimed.
// Throws: std::invalid_argument when every worker is taken; std::bad_alloc.
template <class G>
CpuId install(G& group) {
  auto algo = std::make_unique<Algorithm<G>>(group);
  const CpuId worker = algo->worker();
  boost::fibers::context::active()->get_scheduler()->set_algo(
      boost::fibers::algo::algorithm::ptr_t{algo.release()});
  return worker;
}

static_assert(taskplace::MachineState<Group<>> && taskplace::HasLlcUtilization<Group<>>);
static_assert(taskplace::MachineState<Group<>::Machine> &&
              taskplace::HasLlcUtilization<Group<>::Machine>);

}  // namespace taskplace_fiber
