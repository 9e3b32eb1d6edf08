// taskplace_fiber/group.hpp: the workers of a Boost.Fiber pool that
// taskplace places fibers on (Group): the topology, each worker's placer,
// balancer and ready queue, and the machine state the placer reads; and
// the per-fiber state (Properties). The scheduling algorithm each thread
// installs is taskplace_fiber/algorithm.hpp.
//
//   taskplace_fiber::Group<> group{4};  // 4 workers, one LLC
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <concepts>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <ranges>
#include <stdexcept>
#include <string>
#include <vector>

#include <boost/fiber/context.hpp>
#include <boost/fiber/properties.hpp>
#include <boost/fiber/type.hpp>

#include "taskplace/tsc_clock.hpp"
#include "taskplace/concepts.hpp"
#include "taskplace/detail/math.hpp"
#include "taskplace/detail/topology_blocks.hpp"
#include "taskplace/idle_balancer.hpp"
#include "taskplace/kit/calibration.hpp"
#include "taskplace/kit/idle.hpp"
#include "taskplace/kit/worker_deque.hpp"
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
// Each worker has its own placer and balancer, used by its thread alone
// (awakened() places a wake-up on the thread that queues it, the thread
// that runs a fiber reports its runs and sleeps): single-writer counters,
// no locked instruction per count, readable while the group runs (the
// pool's layout).
template <class WakeTraits>
struct WorkerWakeTraits : WakeTraits {
  using Stats = taskplace::SingleWriterStats;
};
template <class BalanceTraits>
struct WorkerBalanceTraits : BalanceTraits {
  using Stats = taskplace::SingleWriterStats;
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
  void* algorithm = nullptr;  // the Algorithm that set it (notify() reads the context it runs)
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
  std::uint64_t parks = 0;           // idle workers' waits on their condition variable (after any spin)
};

template <class G>
class Algorithm;

// The workers of one pool: the topology, the shared placer and balancer, and
// one ready queue per worker. Models taskplace::MachineState over the
// workers. Not movable: the placer and the balancer point at the topology.
// Invariant: every context in a worker queue is a detached worker context
//   (never pinned); its queue's size() counts it.
// Invariant: the group outlives every thread that registered with it.
template <class WakeTraits = taskplace::traits::Runtime, taskplace::Topology T = taskplace::TableTopology,
          class BalanceTraits = taskplace::DefaultBalanceTraits>
class Group {
 public:
  using topology_type = T;
  using placer_type = taskplace::WakePlacer<T, detail::WorkerWakeTraits<WakeTraits>>;
  using balancer_type = taskplace::IdleBalancer<T, detail::WorkerBalanceTraits<BalanceTraits>>;
  using task_state = typename placer_type::task_state;
  using placer_stats_type = taskplace::PlainStats::counters<taskplace::WakeCounter>;
  using balancer_stats_type = taskplace::PlainStats::counters<taskplace::BalanceCounter>;

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
  // With idle_spin 0: an idle worker spins for up to the unpark cost
  // (costs.parked) while its recent idle periods, each measured from its
  // start to the wake-up that ended it (not to the thread's resumption,
  // which the unpark itself lengthens), average less than that cost; else
  // it blocks at once. Spinning then costs less CPU than it saves in
  // unparks: a worker woken every few microseconds spins, one idle for
  // good blocks. The placer still judges an idle worker at its unpark cost
  // (Machine::wake_cost). Default: on for the policy sets that read the
  // costs (traits::Runtime), off for the kernel's; kernel: the cpuidle
  // governor choosing the poll state for a short predicted idle.
  bool adaptive_spin = taskplace::kit::reads_costs<placer_type>;
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
  explicit Group(T topology) : topo_(std::move(topology)) {
    if (topo_.cpu_count() > 4096)
      throw taskplace::TopologyError("taskplace_fiber::Group: more than 4096 workers (got " +
                                     std::to_string(topo_.cpu_count()) + ")");
    slots_ = std::make_unique<Slot[]>(topo_.cpu_count());
    for (CpuId c = 0; c < topo_.cpu_count(); ++c) {
      slots_[c].thief.emplace(topo_, c);
      slots_[c].placer.emplace(topo_);
      slots_[c].balancer.emplace(topo_);
    }
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
  // Returns: the workers' placers' (balancers') counters, summed.
  // Thread-safety: any thread, while the group runs (a snapshot).
  placer_stats_type placer_stats() const noexcept {
    placer_stats_type out;
    for (std::uint32_t c = 0; c < worker_count(); ++c) taskplace::add_counters(out, slots_[c].placer->stats());
    return out;
  }
  balancer_stats_type balancer_stats() const noexcept {
    balancer_stats_type out;
    for (std::uint32_t c = 0; c < worker_count(); ++c) taskplace::add_counters(out, slots_[c].balancer->stats());
    return out;
  }
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
      s.parks += slots_[c].parks.load(std::memory_order_relaxed);
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
    for (std::uint32_t c = 0; c < worker_count(); ++c) {
      if constexpr (requires(typename placer_type::hook_type& h) { h.attach(t); }) slots_[c].placer->hook().attach(t);
      if constexpr (requires(typename balancer_type::hook_type& h) { h.attach(t); })
        slots_[c].balancer->hook().attach(t);
    }
  }
  // Returns: the trace the placer records into (null: none; always null
  // without the trace hook). A traced group also records each fiber's
  // runs, stops and sleeps there (kit::TaskEvent, as the pool does), for
  // a replay under the sets that read them (traits::Runtime, SisCurrent,
  // CacheHot).
  taskplace::kit::ChromeTrace* tracing() const noexcept {
    if constexpr (requires(const typename placer_type::hook_type& h) { h.sink; }) return slots_[0].placer->hook().sink;
    return nullptr;
  }

  // Effects: zeroes the group's, the placer's and the balancer's counters.
  void reset_stats() noexcept {
    placed_remote_ = 0;
    migrations_ = 0;
    for (std::uint32_t c = 0; c < worker_count(); ++c) {
      slots_[c].thief->reset_counts();
      slots_[c].parks.store(0, std::memory_order_relaxed);
      slots_[c].placer->stats().reset();
      slots_[c].balancer->stats().reset();
    }
  }

  // --- MachineState (R1-R3); answers may be stale ------------------------
  bool is_idle(CpuId c) const noexcept { return nr_running(c) == 0; }
  std::uint32_t nr_running(CpuId c) const noexcept {
    const Slot& s = slots_[c];
    return static_cast<std::uint32_t>(s.queue.size()) + (s.busy.load(std::memory_order_relaxed) ? 1u : 0u);
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

  // A worker's queue is the kit's WorkerDeque (a deque under a spin lock,
  // one locked instruction to queue). Its owner's sleep takes a mutex and
  // a condition variable, which a queueing touches only when the owner
  // sleeps: the pusher stores the length and then reads `sleeping`, the
  // owner stores `sleeping` and then reads the length, all four seq_cst,
  // so one of the two sees the other (no lost wake-up). The owner's own
  // queueings (a wake-up placed here, a yield) need neither: it is awake.
  struct alignas(64) Slot {
    // The worker's queued fibers (kit::WorkerQueue, as a thief sees them:
    // a steal takes the oldest, or the one `pick` chooses among them,
    // oldest first).
    taskplace::kit::WorkerDeque<context*> queue;
    std::mutex m;
    std::condition_variable cv;
    bool flag = false;                  // guarded by m: a wake-up is pending (notify, or a push to a sleeper)
    Nanoseconds requested_at{0};        // guarded by m: when flag was set (adaptive_spin)
    Nanoseconds idle_avg{0};            // owner only: the average idle period (adaptive_spin)
    std::atomic<std::uint64_t> parks{0};  // owner writes (load and store), anyone reads
    std::atomic<bool> sleeping{false};  // written under m: the owner is about to wait, or waits, on cv
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
    // The worker's placer and balancer (their counters single-writer):
    // used by the owner thread alone; made with the group.
    std::optional<placer_type> placer;
    std::optional<balancer_type> balancer;
    std::optional<typename balancer_type::state> idle;  // owner thread only
    // The worker's steals (kit::Stealer): its counts, and per level the
    // periodic balances in a row that found only cache-hot fibers
    // (cache_hot_steals; kernel sd->nr_balance_failed). Owner thread only;
    // made anew when a thread claims the worker (the options as then).
    // The cache-hot test's rule is the balancer traits' (Hot), its
    // tunables the group's task_hot.
    std::optional<taskplace::kit::Stealer<T, typename balancer_type::hot_policy>> thief;  // made with the group
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
    slots_[c].idle = slots_[c].balancer->make_state(c, clock_.now());
    make_thief(c);
  }
  CpuId claim_next() {
    for (CpuId c = 0; c < worker_count(); ++c) {
      bool expected = false;
      if (slots_[c].registered.compare_exchange_strong(expected, true, std::memory_order_acq_rel)) {
        slots_[c].idle = slots_[c].balancer->make_state(c, clock_.now());
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
    taskplace::kit::WorkerDeque<context*>& operator()(CpuId c) const noexcept { return g->slots_[c].queue; }
  };

  // Effects: queues `ctx` on worker c and wakes c's thread if it sleeps
  //   (Slot: the length stored, then `sleeping` read).
  void push(CpuId c, context* ctx) noexcept {
    Slot& s = slots_[c];
    s.queue.push(ctx);
    if (s.sleeping.load(std::memory_order_seq_cst)) notify(c);
  }
  // Effects: queues `ctx` on worker c from c's own thread, which is awake
  //   (it queues): no sleeping flag to read, no seq_cst length.
  void push_own(CpuId c, context* ctx) noexcept { slots_[c].queue.push_owned(ctx); }
  // `drains`: the pop may count as a drain of the queue (WorkerQueue O1):
  // not when the fiber that stopped yields, since Boost.Fiber queues it
  // again only after this pop, so the queue never really emptied.
  context* pop(CpuId c, bool drains = true) noexcept { return slots_[c].queue.pop(drains); }
  void notify(CpuId c) noexcept {
    Slot& s = slots_[c];
    bool wake = false;
    {
      std::lock_guard lk(s.m);
      if (adaptive_spin && !s.flag) s.requested_at = clock_.now();
      s.flag = true;
      s.pending.store(true, std::memory_order_release);
      wake = s.sleeping.load(std::memory_order_relaxed);
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
    const Nanoseconds t0 = adaptive_spin ? clock_.now() : Nanoseconds{0};
    Nanoseconds spin_for = idle_spin;
    if (spin_for.count() == 0 && adaptive_spin && s.idle_avg < costs.parked) spin_for = costs.parked;
    if (spin_for.count() > 0) {
      const auto start = steady::now();
      // until > start: the difference is positive and fits (no overflow).
      const Nanoseconds left =
          until > start ? std::chrono::duration_cast<Nanoseconds>(until - start) : Nanoseconds{0};
      const Nanoseconds spin = std::min<Nanoseconds>(spin_for, left);
      const Nanoseconds spin_until = taskplace::saturating_add(clock_.now(), spin);
      while (!s.pending.load(std::memory_order_acquire) && s.queue.size(std::memory_order_acquire) == 0 &&
             clock_.now() < spin_until) {
      }
    }
    // Compare before adding: now + idle_poll overflows for large idle_poll.
    const auto now = steady::now();
    const auto poll =
        std::chrono::duration_cast<steady::duration>(std::max<Nanoseconds>(idle_poll, Nanoseconds{0}));
    if (until > now && poll < until - now) until = now + poll;
    std::unique_lock lk(s.m);
    s.sleeping.store(true, std::memory_order_seq_cst);  // then the length read (Slot)
    if (!s.flag && s.queue.size(std::memory_order_seq_cst) == 0) {
      s.parks.store(s.parks.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
      s.cv.wait_until(lk, until, [&] { return s.flag || s.queue.size() != 0; });
    }
    s.sleeping.store(false, std::memory_order_relaxed);
    // The idle period, to the wake-up's request when one ended it, folded
    // into the average as the kernel's avg_idle is (update_avg).
    if (adaptive_spin) {
      const Nanoseconds end = s.flag && s.requested_at >= t0 ? s.requested_at : clock_.now();
      s.idle_avg = taskplace::detail::update_avg(s.idle_avg, end - t0);
    }
    s.flag = false;
    s.pending.store(false, std::memory_order_relaxed);
  }

  T topo_;
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
//   queued, under that worker queue's lock (which orders the two).
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

}  // namespace taskplace_fiber
