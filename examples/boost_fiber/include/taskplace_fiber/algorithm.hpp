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

#include <algorithm>
#include <atomic>
#include <chrono>
#include <concepts>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <ranges>
#include <stdexcept>
#include <string>
#include <vector>

#include <boost/fiber/algo/algorithm.hpp>
#include <boost/fiber/context.hpp>
#include <boost/fiber/properties.hpp>
#include <boost/fiber/scheduler.hpp>
#include <boost/fiber/type.hpp>

#include "taskplace/tsc_clock.hpp"
#include "taskplace/concepts.hpp"
#include "taskplace/detail/math.hpp"
#include "taskplace/detail/topology_blocks.hpp"
#include "taskplace/idle_balancer.hpp"
#include "taskplace/kit/calibration.hpp"
#include "taskplace/kit/idle.hpp"
#include "taskplace/kit/trace.hpp"
#include "taskplace/kit/sleeps.hpp"
#include "taskplace/placer/llc_utilization.hpp"
#include "taskplace/policy/task_hot.hpp"
#include "taskplace/stats.hpp"
#include "taskplace/topology/sysfs.hpp"
#include "taskplace/topology/table.hpp"
#include "taskplace/types.hpp"
#include "taskplace/wake_placer.hpp"

namespace taskplace_fiber {

using taskplace::CpuId;
using taskplace::Nanoseconds;

namespace detail {
// The placer and the balancer are shared by every thread of the group:
// their counters must be atomic.
template <class WakeTraits>
struct SharedWakeTraits : WakeTraits {
  using Stats = taskplace::AtomicStats;
};
template <class BalanceTraits>
struct SharedBalanceTraits : BalanceTraits {
  using Stats = taskplace::AtomicStats;
};

inline taskplace::TableTopology flat_topology(std::uint32_t workers) {
  if (workers == 0) throw taskplace::TopologyError("taskplace_fiber::Group: workers must be >= 1 (got 0)");
  std::vector<std::uint32_t> cores(workers), same(workers, 0);
  for (std::uint32_t i = 0; i < workers; ++i) cores[i] = i;
  return taskplace::TableTopology(std::move(cores), same, same);
}

// The calling thread's worker, set by Algorithm's constructor and cleared by
// its destructor (kernel: smp_processor_id() of the waker). notify() runs on
// the waking thread, so it reads here who wakes; `woke` says that the
// context running now woke a fiber since it was resumed (what tells a
// yield from a wait, see Algorithm::pick_next).
struct ThisWorker {
  const void* group = nullptr;  // the Group, as an address
  CpuId worker = taskplace::no_cpu;
  const void* algorithm = nullptr;  // the Algorithm that set it
  bool woke = false;
};
inline thread_local ThisWorker this_worker{};
}  // namespace detail

// The group's own counters, a snapshot.
struct GroupStats {
  std::uint64_t placed_remote = 0;   // wake-ups queued on another worker than the waking one
  std::uint64_t migrations = 0;      // fibers resumed on another worker than the last one
  std::uint64_t steal_attempts = 0;  // victim queues the balancer looked into
  std::uint64_t steals = 0;          // fibers taken from another worker's queue
  std::uint64_t hot_skips = 0;       // queued fibers a steal left as cache hot (cache_hot_steals)
};

template <class G>
class Algorithm;

// The workers of one pool: the topology, the shared placer and balancer, and
// one ready queue per worker. Models taskplace::MachineState over the
// workers. Not movable: the placer and the balancer point at the topology.
// Invariant: every context in a worker queue is a detached worker context
//   (never pinned); queued(c) counts it.
// Invariant: the group outlives every thread that registered with it.
template <class WakeTraits = taskplace::traits::Runtime, taskplace::Topology T = taskplace::TableTopology,
          class BalanceTraits = taskplace::DefaultBalanceTraits>
class Group {
 public:
  using topology_type = T;
  using placer_type = taskplace::WakePlacer<T, detail::SharedWakeTraits<WakeTraits>>;
  using balancer_type = taskplace::IdleBalancer<T, detail::SharedBalanceTraits<BalanceTraits>>;
  using task_state = typename placer_type::task_state;

  // How long an idle worker sleeps at most before it looks at the other
  // workers' queues again (ungated, see Algorithm::pick_next);
  // Nanoseconds::max() = never (it then looks only when woken; a longer
  // std::chrono duration, hours::max(), saturates to it). default 1ms;
  // kernel: the nohz idle-balance kick.
  taskplace::SaturatingNanoseconds idle_poll{std::chrono::milliseconds{1}};
  // A worker lets at most this many fibers run before its dispatcher (which
  // collects fibers woken from other threads and expired timers) runs.
  std::uint32_t dispatch_every = 8;  // default 8; kernel: none (Boost.Fiber's dispatcher)
  // How long an idle worker polls its queue before it blocks: waking a
  // blocked thread costs a futex round trip, as waking an idle CPU costs an
  // IPI and the idle exit. Off by default: on machines with fewer cores
  // than workers the spin takes the CPU from the waker.
  taskplace::SaturatingNanoseconds idle_spin{};  // default 0 (off); kernel: the cpuidle poll state
  // A steal (the newidle balance and the idle polls) leaves a fiber that
  // ran within task_hot.migration_cost on its worker, until that level's
  // periodic balances (the idle polls) have found only such fibers more
  // than task_hot.cache_nice_tries times in a row; newidle balances never
  // count (taskplace::TaskHot). Off: a steal takes the victim's oldest
  // queued fiber, hot or not. Default: on for the policy sets that weigh
  // moves in the runtime's costs (traits::Runtime), off for the kernel's
  // (taskplace::kit::hot_steals_default).
  bool cache_hot_steals = taskplace::kit::hot_steals_default<placer_type>;  // kernel: task_hot() in can_migrate_task()
  // The cache-hot test's tunables, read only with cache_hot_steals; its
  // rule is the balance traits' Hot member (task_hot::SmtExempt2020 by
  // default; TaskHot<task_hot::AllLevels2007> for the classic one).
  // Default: the kernel's (500us, {0, 1, 1, 1, 2}), with the runtime's
  // migration cost (25us) for traits::Runtime (kit::task_hot_default).
  taskplace::TaskHot<> task_hot = taskplace::kit::task_hot_default<placer_type>();  // kernel: migration_cost, cache_nice_tries
  // How long a count of an LLC's busy workers stands for the LLC
  // (llc_utilization_pct, the SIS_UTIL scan budget's input); zero: every
  // scanning wake-up counts again. Kernel: the LLC's periodic balance
  // writes nr_idle_scan (update_idle_cpu_scan), about once a tick.
  // default 4ms (a tick at HZ=250)
  taskplace::SaturatingNanoseconds llc_sample_period{std::chrono::milliseconds{4}};
  // What waking a spinning or a blocked worker costs and a cache line's
  // round trip between workers, read by rules that weigh a move in these
  // costs (traits::Runtime's CostGate). Measured at construction when
  // the placer reads them (taskplace::kit::measured_costs(), once per
  // process, about 60 ms); kernel: none (cpuidle's exit latencies).
  taskplace::kit::WakeCosts costs{};

  // Effects: one worker per CPU of `topology`.
  // Throws: TopologyError when the topology has more than 4096 CPUs.
  explicit Group(T topology) : topo_(std::move(topology)), placer_(topo_), balancer_(topo_) {
    if (topo_.cpu_count() > 4096)
      throw taskplace::TopologyError("taskplace_fiber::Group: more than 4096 workers (got " +
                                     std::to_string(topo_.cpu_count()) + ")");
    slots_ = std::make_unique<Slot[]>(topo_.cpu_count());
    for (CpuId c = 0; c < topo_.cpu_count(); ++c) slots_[c].thief.emplace(topo_, c);
    if constexpr (taskplace::kit::reads_costs<placer_type>) costs = taskplace::kit::measured_costs();
  }
  // Effects: `workers` workers sharing one LLC, one worker per core.
  // Throws: TopologyError when workers == 0.
  explicit Group(std::uint32_t workers)
    requires std::same_as<T, taskplace::TableTopology>
      : Group(detail::flat_topology(workers)) {}
  // Effects: one worker per CPU this process may run on, with the machine's
  //   cache topology (SysfsTopology).
  // Throws: SysfsError / TopologyError as SysfsTopology does.
  Group()
    requires std::same_as<T, taskplace::TableTopology>
      : Group(taskplace::SysfsTopology{}.table()) {}

  Group(const Group&) = delete;
  Group& operator=(const Group&) = delete;

  std::uint32_t worker_count() const noexcept { return topo_.cpu_count(); }
  const T& topology() const noexcept { return topo_; }
  const placer_type& placer() const noexcept { return placer_; }
  const balancer_type& balancer() const noexcept { return balancer_; }
  // Returns: the number of threads registered now.
  std::uint32_t registered() const noexcept {
    std::uint32_t n = 0;
    for (std::uint32_t c = 0; c < worker_count(); ++c) n += slots_[c].registered.load(std::memory_order_acquire);
    return n;
  }

  // Returns: the group's counters. Thread-safety: any thread.
  // A thief's counts are its worker's (kit::Stealer), summed here.
  GroupStats stats() const noexcept {
    GroupStats s{placed_remote_.load(std::memory_order_relaxed), migrations_.load(std::memory_order_relaxed)};
    for (std::uint32_t c = 0; c < worker_count(); ++c) {
      const auto k = slots_[c].thief->counts();
      s.steal_attempts += k.attempts;
      s.steals += k.steals;
      s.hot_skips += k.hot_skips;
    }
    return s;
  }
  // Effects: the placer's and the balancer's decisions go to `t` (null:
  // nowhere) when the traits carry taskplace::kit::ChromeTraceHook
  // (TracedGroup); otherwise nothing. A group constructed while a
  // ChromeTrace was installed (ChromeTrace::Install) records there already.
  // Thread-safety: before any thread registers (the hooks read the sink
  // without a lock); `t` must outlive the group's threads.
  void trace(taskplace::kit::ChromeTrace* t) noexcept {
    if constexpr (requires(typename placer_type::hook_type& h) { h.attach(t); }) placer_.hook().attach(t);
    if constexpr (requires(typename balancer_type::hook_type& h) { h.attach(t); }) balancer_.hook().attach(t);
  }
  // Returns: the trace the placer records into (null: none; always null
  // without the trace hook). A traced group also records each fiber's
  // runs, stops and sleeps there (kit::TaskEvent, as the pool does), for
  // a replay under the sets that read them (traits::Runtime, SisCurrent,
  // CacheHot).
  taskplace::kit::ChromeTrace* tracing() const noexcept {
    if constexpr (requires(const typename placer_type::hook_type& h) { h.sink; }) return placer_.hook().sink;
    return nullptr;
  }

  // Effects: zeroes the group's, the placer's and the balancer's counters.
  void reset_stats() noexcept {
    placed_remote_ = 0;
    migrations_ = 0;
    for (std::uint32_t c = 0; c < worker_count(); ++c) slots_[c].thief->reset_counts();
    placer_.stats().reset();
    balancer_.stats().reset();
  }

  // --- MachineState (R1-R3); answers may be stale ------------------------
  bool is_idle(CpuId c) const noexcept { return nr_running(c) == 0; }
  std::uint32_t nr_running(CpuId c) const noexcept {
    const Slot& s = slots_[c];
    return s.queued.load(std::memory_order_relaxed) + (s.busy.load(std::memory_order_relaxed) ? 1u : 0u);
  }
  std::uint64_t load(CpuId c) const noexcept { return std::uint64_t{nr_running(c)} * 1024; }
  // O1: the busy share of c's LLC in percent, sampled at most once every
  // llc_sample_period for the whole LLC, on the LLC's first worker
  // (taskplace::LlcUtilizationSample): a scanning wake-up reads one line,
  // not every worker of the LLC. This overload reads the clock; the
  // placements pass the time they already read (Machine).
  std::uint32_t llc_utilization_pct(CpuId c) const { return llc_utilization_pct(c, clock_.now()); }
  std::uint32_t llc_utilization_pct(CpuId c, Nanoseconds now) const {
    const auto llc = topo_.llc_cpus(c);
    if (std::ranges::empty(llc)) return 0;
    return slots_[static_cast<CpuId>(*std::ranges::begin(llc))].llc_sample.read(
        llc, [this](CpuId x) { return !is_idle(x); }, now, llc_sample_period);
  }

  // The group's machine state at one time (a placement's): the group's
  // answers, with the LLC's busy share judged against that time.
  class Machine {
   public:
    Machine(const Group& g, Nanoseconds now) noexcept : g_(&g), at_(now) {}
    // `now`: the placement's time, read when first needed (the LLC's busy
    // share, or the placer's decision; not for a settled pair's replay).
    Machine(const Group& g, const taskplace::ReadOnce<taskplace::TscClock>& now) noexcept : g_(&g), now_(&now) {}
    bool is_idle(CpuId c) const noexcept { return g_->is_idle(c); }
    std::uint32_t nr_running(CpuId c) const noexcept { return g_->nr_running(c); }
    std::uint64_t load(CpuId c) const noexcept { return g_->load(c); }
    std::uint32_t llc_utilization_pct(CpuId c) const {
      return g_->llc_utilization_pct(c, now_ != nullptr ? (*now_)() : at_);
    }
    // O5: what getting a fiber running on c costs: 0 while c is busy;
    // an idle worker spins (idle_spin) or blocks on its condition variable.
    Nanoseconds wake_cost(CpuId c) const noexcept {
      if (!g_->is_idle(c)) return Nanoseconds{0};
      return g_->idle_spin.count() > 0 ? g_->costs.spinning : g_->costs.parked;
    }
    // O6: a cache line's round trip between workers.
    Nanoseconds crossing_cost() const noexcept { return g_->costs.crossing; }
    // O3: c's reservation state (kit::SleepSlot; empty, and never read,
    // without a reservation policy).
    auto reservation(CpuId c) const noexcept { return g_->slots_[c].sleeps.reservation(); }

   private:
    const Group* g_;
    const taskplace::ReadOnce<taskplace::TscClock>* now_ = nullptr;
    Nanoseconds at_{0};
  };

 private:
  friend class Algorithm<Group>;
  using context = boost::fibers::context;

  struct alignas(64) Slot {
    std::mutex m;
    std::condition_variable cv;
    std::deque<context*> q;   // guarded by m
    bool flag = false;        // guarded by m: a wake-up is pending
    bool sleeping = false;    // guarded by m: the owner waits on cv
    std::atomic<std::uint32_t> queued{0};
    std::atomic<bool> busy{false};
    std::atomic<bool> pending{false};  // flag, readable without the lock
    // The worker of the last fiber that woke one of ours from another
    // thread (Boost.Fiber hands such a wake-up to our thread's dispatcher
    // and loses who made it). A hint: a later one overwrites it, and a
    // wake-up the dispatcher collects before notify() wrote it (Boost
    // queues the fiber first) finds none and counts as this worker's own.
    std::atomic<CpuId> remote_waker{taskplace::no_cpu};
    // And that fiber's key (no_task for main or the dispatcher): the
    // placer judges the wakee on its own run (WakePlacer::Wakeup::waker_key;
    // the waker's state belongs to the other thread). A hint as well: the
    // two may come from different wake-ups.
    std::atomic<taskplace::TaskKey> remote_waker_key{taskplace::no_task};
    // And its flips, read on its thread (Wakeup::waker_flips): a
    // dispatcher that wakes many stays known as one across threads.
    std::atomic<std::uint32_t> remote_waker_flips{0};
    std::atomic<bool> registered{false};
    std::optional<typename balancer_type::state> idle;  // owner thread only
    // The worker's steals (kit::Stealer): its counts, and per level the
    // periodic balances in a row that found only cache-hot fibers
    // (cache_hot_steals; kernel sd->nr_balance_failed). Owner thread only;
    // made anew when a thread claims the worker (the options as then).
    // The cache-hot test's rule is the balancer traits' (Hot), its
    // tunables the group's task_hot.
    std::optional<taskplace::kit::Stealer<T, typename balancer_type::hot_policy>> thief;  // made with the group
    // The worker's queue as a thief sees it (kit::WorkerQueue): its queued
    // fibers; a steal takes the oldest, or the one `pick` chooses among
    // them, oldest first.
    std::size_t size() const noexcept { return queued.load(std::memory_order_relaxed); }
    // The pops that took the last fiber queued here (kit::WorkerQueue
    // O1). Written by the owner thread alone (pop).
    std::uint64_t drains() const noexcept { return drained.load(std::memory_order_relaxed); }
    std::atomic<std::uint64_t> drained{0};
    template <class Pick>
    context* try_steal(const Pick& pick) noexcept {
      std::lock_guard lk(m);
      if (q.empty()) return nullptr;
      const auto it = pick(q.begin(), q.end());
      if (it == q.end()) return nullptr;
      context* ctx = *it;
      q.erase(it);
      queued.fetch_sub(1, std::memory_order_relaxed);
      return ctx;
    }
    context* try_steal() noexcept {
      return try_steal([](auto first, auto) { return first; });
    }
    // On the LLC's first worker: the LLC's busy share (llc_utilization_pct).
    taskplace::LlcUtilizationSample llc_sample;
    // The sleeps of the fibers this worker runs (kit::SleepSlot: the
    // reservation's per-CPU state, with traits::CacheHot).
    taskplace::kit::SleepSlot<placer_type> sleeps;
  };

  // Effects: claims worker `c`. Throws std::invalid_argument when c is out
  // of range or already claimed.
  void claim(CpuId c) {
    if (c >= worker_count())
      throw std::invalid_argument("taskplace_fiber::Algorithm: worker " + std::to_string(c) +
                                  " out of range (group of " + std::to_string(worker_count()) + ")");
    if (slots_[c].registered.exchange(true, std::memory_order_acq_rel))
      throw std::invalid_argument("taskplace_fiber::Algorithm: worker " + std::to_string(c) +
                                  " is already registered");
    slots_[c].idle = balancer_.make_state(c, clock_.now());
    make_thief(c);
  }
  CpuId claim_next() {
    for (CpuId c = 0; c < worker_count(); ++c) {
      bool expected = false;
      if (slots_[c].registered.compare_exchange_strong(expected, true, std::memory_order_acq_rel)) {
        slots_[c].idle = balancer_.make_state(c, clock_.now());
        make_thief(c);
        return c;
      }
    }
    throw std::invalid_argument("taskplace_fiber::Algorithm: all " + std::to_string(worker_count()) +
                                " workers of the group are registered");
  }
  void release(CpuId c) noexcept { slots_[c].registered.store(false, std::memory_order_release); }
  // Effects: readies worker c's thief for the thread claiming it: the
  //   group's cache-hot options as they are now, fresh failure counts.
  //   (The thieves live as long as the group, so that stats() may read
  //   their counts from any thread.)
  void make_thief(CpuId c) noexcept {
    slots_[c].thief->set_options(
        {cache_hot_steals, taskplace::task_hot_with_tunables<typename balancer_type::hot_policy>(task_hot)});
    slots_[c].thief->reset_hot_state();
  }
  // The thieves' view (kit::QueueSource, kit::LastRanOf; kit/idle.hpp).
  struct Queues {
    Group* g;
    Slot& operator()(CpuId c) const noexcept { return g->slots_[c]; }
  };

  // Effects: queues `ctx` on worker c and wakes c's thread if it sleeps.
  void push(CpuId c, context* ctx) noexcept {
    Slot& s = slots_[c];
    bool wake = false;
    {
      std::lock_guard lk(s.m);
      s.q.push_back(ctx);
      s.queued.fetch_add(1, std::memory_order_relaxed);
      s.flag = true;
      s.pending.store(true, std::memory_order_release);
      wake = s.sleeping;
    }
    if (wake) s.cv.notify_one();
  }
  // `drains`: the pop may count as a drain of the queue (WorkerQueue O1):
  // not when the fiber that stopped yields, since Boost.Fiber queues it
  // again only after this pop, so the queue never really emptied.
  context* pop(CpuId c, bool drains = true) noexcept {
    Slot& s = slots_[c];
    if (s.queued.load(std::memory_order_relaxed) == 0) return nullptr;
    std::lock_guard lk(s.m);
    if (s.q.empty()) return nullptr;
    context* ctx = s.q.front();
    s.q.pop_front();
    s.queued.fetch_sub(1, std::memory_order_relaxed);
    if (drains && s.q.empty()) s.drained.store(s.drained.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    return ctx;
  }
  void notify(CpuId c) noexcept {
    Slot& s = slots_[c];
    bool wake = false;
    {
      std::lock_guard lk(s.m);
      s.flag = true;
      s.pending.store(true, std::memory_order_release);
      wake = s.sleeping;
    }
    if (wake) s.cv.notify_one();
  }
  // Effects: spins for idle_spin or until `until`, whichever is sooner (a
  //   timer due during the spin fires on time), then blocks until `until`,
  //   a wake-up of c, or idle_poll from now, whichever comes first. A
  //   deadline past the clock's range (idle_poll or idle_spin of
  //   Nanoseconds::max(): never) saturates instead of wrapping into the past.
  void sleep(CpuId c, std::chrono::steady_clock::time_point until) noexcept {
    using steady = std::chrono::steady_clock;
    Slot& s = slots_[c];
    if (idle_spin.count() > 0) {
      const auto start = steady::now();
      // until > start: the difference is positive and fits (no overflow).
      const Nanoseconds left =
          until > start ? std::chrono::duration_cast<Nanoseconds>(until - start) : Nanoseconds{0};
      const Nanoseconds spin = std::min<Nanoseconds>(idle_spin, left);
      const Nanoseconds spin_until = taskplace::saturating_add(clock_.now(), spin);
      while (!s.pending.load(std::memory_order_acquire) && clock_.now() < spin_until) {
      }
    }
    // Compare before adding: now + idle_poll overflows for large idle_poll.
    const auto now = steady::now();
    const auto poll =
        std::chrono::duration_cast<steady::duration>(std::max<Nanoseconds>(idle_poll, Nanoseconds{0}));
    if (until > now && poll < until - now) until = now + poll;
    std::unique_lock lk(s.m);
    if (!s.flag && s.q.empty()) {
      s.sleeping = true;
      s.cv.wait_until(lk, until, [&] { return s.flag || !s.q.empty(); });
      s.sleeping = false;
    }
    s.flag = false;
    s.pending.store(false, std::memory_order_relaxed);
  }

  T topo_;
  placer_type placer_;
  balancer_type balancer_;
  // The process's TscClock (the TSC where it is invariant, steady_clock
  // elsewhere): read at every wake-up it places (its cost against
  // steady_clock's: docs/benchmarks.md, "Clock reads").
  taskplace::TscClock clock_ = taskplace::TscClock::process();
  std::unique_ptr<Slot[]> slots_;
  std::atomic<std::uint64_t> placed_remote_{0}, migrations_{0};
};

// A group whose placer and balancer record their decisions as Chrome trace
// JSON (taskplace/kit/trace.hpp) into the trace given to Group::trace(), or
// the one installed when it was constructed.
template <class WakeTraits = taskplace::traits::Runtime, taskplace::Topology T = taskplace::TableTopology,
          class BalanceTraits = taskplace::DefaultBalanceTraits>
using TracedGroup = Group<taskplace::kit::Traced<WakeTraits>, T, taskplace::kit::Traced<BalanceTraits>>;

// Per-fiber state, as Boost.Fiber properties: the placer's task state, the
// worker the fiber last ran on, and when it last ran.
// Invariant: written only by the thread that runs the fiber or queues it,
//   before the queueing; read by other threads only while the fiber is
//   queued, under that worker queue's mutex (which orders the two).
template <class G>
struct Properties : boost::fibers::fiber_properties {
  explicit Properties(boost::fibers::context* ctx) : fiber_properties(ctx) {}
  typename G::task_state task{};
  CpuId last_worker = taskplace::no_cpu;
  // When it last ran (kernel se.exec_start), kept only when the group has
  // cache_hot_steals: the start of its last run, moved to the moment it
  // stopped running (it yielded, blocked or ended); never ran (or the
  // option was off): Nanoseconds::min() (cold). The group's clock.
  Nanoseconds last_ran = Nanoseconds::min();
};

// One worker's scheduling algorithm; install it in each thread of the pool
// with install(group) (below), or with
// boost::fibers::use_scheduling_algorithm<Algorithm<G>>(group), which is
// noexcept: a bad or taken worker then ends the program (std::terminate).
// Boost.Fiber's interface is virtual: these overrides are the only virtual
// functions of taskplace_fiber.
// Invariant: pinned contexts (main, dispatcher) never leave this thread;
//   a worker context is detached while queued and attached by the thread
//   that resumes it (Boost.Fiber's migration rule).
template <class G = Group<>>
class Algorithm : public boost::fibers::algo::algorithm_with_properties<Properties<G>> {
  using base = boost::fibers::algo::algorithm_with_properties<Properties<G>>;
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
  void awakened(context* ctx, properties_type& props) noexcept override {
    context* active = context::active();
    const bool yielded = yielder_ != nullptr && ctx == yielder_ && active == yield_to_;
    yielder_ = nullptr;  // whatever this is, the next context has started
    if (yielded && ctx->is_context(type::pinned_context)) {
      pinned_.push_back(ctx);
      return;
    }
    if (yielded) {
      if (g_->cache_hot_steals && props.last_ran == Nanoseconds::min()) props.last_ran = g_->clock_.now();
      ctx->detach();
      g_->push(id_, ctx);
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
      if (auto* p = base::get_properties(active)) {
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
    const auto placement = g_->placer_.place(
        {.waker = waker, .waker_key = waker_key, .wakee = &props.task,
         .wakee_key = reinterpret_cast<taskplace::TaskKey>(ctx), .waking_cpu = waking,
         .prev_cpu = prev, .waker_flips = waker_flips, .wakee_load = taskplace::kit::wakee_load<typename G::placer_type>},
        // Traced: the answers it reads go with the wake event (kit::observed).
        taskplace::kit::observed<typename G::placer_type>(typename G::Machine{*g_, now}, g_->worker_count()), now);
    CpuId to = placement.cpu;
    if (to >= g_->worker_count() || !g_->slots_[to].registered.load(std::memory_order_acquire)) to = id_;
    if (to != waking) g_->placed_remote_.fetch_add(1, std::memory_order_relaxed);
    ctx->detach();
    g_->push(to, ctx);
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
    context* const caller = context::active();
    const bool may_yield = caller != nullptr && !caller->is_context(type::dispatcher_context) &&
                           !caller->wait_is_linked() && !caller->sleep_is_linked() && !detail::this_worker.woke;
    std::optional<Nanoseconds> ended;
    if (g_->cache_hot_steals || taskplace::kit::reports_sleeps<typename G::placer_type> || g_->tracing() != nullptr)
      ended = stamp_end_of_run(caller, !may_yield);
    yielder_ = nullptr;
    context* next = choose_next(ended, may_yield);
    if (may_yield && next != nullptr && next != caller) {
      yielder_ = caller;
      yield_to_ = next;
    }
    detail::this_worker.woke = false;  // `next` starts with a clean slate
    return next;
  }

  bool has_ready_fibers() const noexcept override {
    return !pinned_.empty() || dispatcher_ != nullptr ||
           g_->slots_[id_].queued.load(std::memory_order_relaxed) != 0;
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
        const context* active = context::active();
        const bool fiber = active != nullptr && !active->is_context(type::pinned_context) &&
                           !active->is_context(type::dispatcher_context);
        // Its flips, read here on its own thread; a fiber launched with
        // launch::dispatch may have no properties yet: none.
        const auto* props =
            fiber ? static_cast<properties_type*>(base::get_properties(const_cast<context*>(active))) : nullptr;
        g_->slots_[id_].remote_waker_flips.store(props != nullptr ? g_->placer_.flips().flips(props->task.flips) : 0,
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

  // The body of pick_next().
  // `ended`: the clock read that ended the caller's run, if one was taken:
  // a fiber popped from this worker's queue right after starts at it (one
  // read fewer a switch; its run reads the queue's pop longer).
  // `yields`: the caller may be yielding (pick_next), so it is queued again
  // right after this.
  context* choose_next(std::optional<Nanoseconds> ended, bool yields) noexcept {
    G& g = *g_;
    auto& slot = g.slots_[id_];
    if (!pinned_.empty()) {
      context* ctx = pinned_.front();
      pinned_.pop_front();
      return run(ctx, false);
    }
    if (dispatcher_ != nullptr && since_dispatch_ >= g.dispatch_every) return run_dispatcher();
    if (context* ctx = g.pop(id_, !yields)) return run(ctx, true, ended);
    if (dispatcher_ != nullptr) return run_dispatcher();
    if (idle_) {
      // Still idle (idle_poll expired, or a wake-up left nothing here): the
      // nohz idle balance, run for the idle CPU by the kernel's periodic
      // balance (rebalance_domains()), which neither the avg_idle gate nor
      // the newidle cost budget restrict. So: decay the level costs as
      // that tick does, look at every other worker, nearest first, and keep
      // the idle stamp the newidle balance set when this idle period began
      // (a balance now would restamp it, and avg_idle would never see an
      // idle period longer than idle_poll, keeping a closed gate closed).
      g.balancer_.tick(*slot.idle, g.clock_.now());
      typename G::Queues queues{&g};
      if (context* got = slot.thief->periodic(queues, LastRan{}, g.clock_, g.nr_running(id_)))
        return run(got, true);
      slot.busy.store(false, std::memory_order_relaxed);
      return nullptr;
    }
    // Nothing here: newidle balance over the levels, nearest first.
    typename G::Queues queues{&g};
    if (context* got = slot.thief->newidle(g.balancer_, *slot.idle, queues, LastRan{}, g.clock_,
                                           taskplace::Overload::unknown, g.nr_running(id_)))
      return run(got, true);
    slot.busy.store(false, std::memory_order_relaxed);
    idle_ = true;
    return nullptr;
  }

  // When a queued fiber last ran (kit::LastRanOf), read by a thief under
  // the victim's mutex: its last writer (the thread that ran or queued
  // it) wrote it before the push that took this mutex.
  struct LastRan {
    Nanoseconds operator()(context* const& c) const noexcept {
      return static_cast<properties_type*>(base::get_properties(c))->last_ran;
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
  //   stamp under the queue's mutex.
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
  // Returns: the clock read, where one was taken.
  std::optional<Nanoseconds> stamp_end_of_run(context* caller, bool blocks) noexcept {
    if (caller == nullptr || caller->is_context(type::pinned_context)) return std::nullopt;
    auto* p = static_cast<properties_type*>(base::get_properties(caller));
    if (p == nullptr) return std::nullopt;
    const Nanoseconds now = g_->clock_.now();
    if (g_->cache_hot_steals) p->last_ran = now;
    constexpr bool reports = taskplace::kit::reports_sleeps<typename G::placer_type>;
    taskplace::kit::ChromeTrace* const trace = g_->tracing();
    if ((!reports && trace == nullptr) || caller->terminated_is_linked()) return now;
    auto& slot = g_->slots_[id_];
    const auto key = reinterpret_cast<taskplace::TaskKey>(caller);
    const bool cpu_idle = slot.queued.load(std::memory_order_relaxed) == 0 && pinned_.empty();
    if constexpr (reports) {
      if (blocks) slot.sleeps.report(g_->placer_, p->task, key, cpu_idle, now);
      else g_->placer_.task_stops(p->task, now);
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
  // Effects: ctx runs next on this worker; a worker fiber is attached to
  // this thread and stamped: the worker it runs on and, with
  // cache_hot_steals, when it started (its last_ran, written before it
  // runs and queued nowhere; without the option no clock is read for it).
  // `ended`: a clock read just taken (the previous run's end) to start at.
  context* run(context* ctx, bool worker, std::optional<Nanoseconds> ended = {}) noexcept {
    G& g = *g_;
    const bool stamp = worker && g.cache_hot_steals;
    constexpr bool reports = taskplace::kit::reports_sleeps<typename G::placer_type>;
    taskplace::kit::ChromeTrace* const trace = worker ? g.tracing() : nullptr;
    const Nanoseconds now = idle_ || stamp || (worker && reports) || trace != nullptr
                                ? (ended && !idle_ ? *ended : g.clock_.now())
                                : Nanoseconds{0};
    if (idle_) {
      idle_ = false;
      g.balancer_.idle_end(*g.slots_[id_].idle, now);
    }
    g.slots_[id_].busy.store(true, std::memory_order_relaxed);
    if (!worker) return ctx;
    ++since_dispatch_;
    context::active()->attach(ctx);
    auto& props = base::properties(ctx);
    if (props.last_worker != taskplace::no_cpu && props.last_worker != id_)
      g.migrations_.fetch_add(1, std::memory_order_relaxed);
    props.last_worker = id_;
    if (stamp) props.last_ran = now;
    // The run starts (DurationTracker), and the fiber's next sleep report
    // is due; nothing without a policy that reads sleeps.
    g.placer_.task_runs(props.task, now);
    if (trace != nullptr)  // traced: the run as a task event, for a replay
      trace->record(taskplace::kit::TaskEvent{reinterpret_cast<taskplace::TaskKey>(ctx), id_, now,
                                              taskplace::kit::TaskEvent::Kind::runs});
    return ctx;
  }

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
