// taskplace/kit/machine.hpp: a ready MachineState over per-worker atomic
// counters, for a runtime that has workers and queues but no per-worker
// record the placer could read.
//
// Each worker has one cache line of counters: tasks queued, running (0 or
// 1), how it waits when it has nothing (busy, spinning, parked), and until
// when it counts as preempted. The runtime updates them with a few calls
// (queued / dequeued / running / stopped / spinning / parked); the placer
// reads them (is_idle, nr_running, load), the idle side reads the overload
// flag (overload(), for IdleBalancer::balance), and a policy or the
// runtime reads what a wake-up onto a worker costs (wake_cost): an idle
// worker that spins sees its queue within a cache line's round trip, a
// parked one must be woken by the OS first (a futex wake-up and the
// scheduler's latency), which on a small machine costs more than the
// task. The costs are inputs: WakeCosts, from kit/calibration.hpp's
// measurement or the runtime's own figures.
//
// Kernel analogue: the per-CPU runqueue fields select_task_rq_fair() reads
// (rq->nr_running, available_idle_cpu(), which also asks whether the vCPU
// was preempted), the root domain's overload flag, and the cpuidle
// state's exit latency (a shallow poll state against a deep C-state).
//
//   taskplace::kit::Machine m{workers, taskplace::kit::costs_of(calibrate())};
//   m.queued(c);  ... m.running(c); ... m.stopped(c); m.parked(c);
//   auto w = m.worker(c); w.dequeued(); w.running();  // several updates, one address
//   placer.place(wakeup, m.at(now, topology), now);
//   balancer.balance(c, st, pull, clock, m.overload());
#pragma once

#include "taskplace/detail/config.hpp"

#include <atomic>
#include <bit>
#include <chrono>
#include <cstdint>
#include <memory>
#include <ranges>
#include <stdexcept>

#include "taskplace/concepts.hpp"
#include "taskplace/detail/assert.hpp"
#include "taskplace/idle_balancer.hpp"
#include "taskplace/placer/cost_gate.hpp"
#include "taskplace/placer/llc_utilization.hpp"
#include "taskplace/placer/wake_affine.hpp"
#include "taskplace/types.hpp"

namespace taskplace::kit {

// How an idle worker waits for work.
enum class IdleState : std::uint8_t {
  busy,      // it runs a task or is about to look at its queue
  spinning,  // it polls its queue: a wake-up reaches it through the cache
  parked,    // it sleeps in the OS (futex, condition variable): a wake-up needs a system call
};

// What waking a worker costs, by how it waits. Inputs: measured by
// kit::calibrate() (kit/calibration.hpp) or given by the runtime.
struct WakeCosts {
  Nanoseconds spinning{0};  // a spinning worker sees new work: about a cache line's round trip
  Nanoseconds parked{0};    // a parked worker runs the new work: its unpark-to-running latency
  // A cache line's round trip between workers: the least a task moved to
  // another worker costs (its message and state cross). 0: not measured.
  Nanoseconds crossing{0};
  friend constexpr bool operator==(const WakeCosts&, const WakeCosts&) = default;
};

// Whether a placer's rules read what moves cost (CostGate, in
// traits::Runtime): then the runtime's machine state should give
// wake_cost and crossing_cost (MachineState O5, O6) from measured costs.
template <class Placer>
inline constexpr bool reads_costs = taskplace::detail::reads_costs<typename Placer::on_current_rule>;

// The counters and the overload flag. Thread-safety: every update and
// every read from any thread; reads are snapshots (MachineState's
// invariant: answers may be stale). Updates of one worker's counters come
// from whoever queues onto it (queued) and from its own thread (the rest).
// Load unit: 1024 per runnable task (a nice-0 weight), sleepers excluded,
// so the placer's wakee_load is runnable_only_wakee_load (wakee_load<P>).
// Precondition of every call that takes a worker c: c < worker_count()
// (TASKPLACE_EXPECTS: PreconditionError in checked builds). In release
// builds an out-of-range c reaches the counters at c modulo the smallest
// power of two >= worker_count(): some worker's, or one no worker uses
// (idle, never overloaded); never memory outside the machine. One AND a
// read, where a clamp took a compare and a move on each of the many reads
// of a wake-up's search.
class Machine {
  struct Counters;  // one worker's (below)

 public:
  // Throws: std::invalid_argument for zero workers.
  explicit Machine(std::uint32_t workers, WakeCosts costs = {}) : n_(workers), costs_(costs) {
    if (workers == 0) throw std::invalid_argument("kit::Machine: needs at least one worker");
    if (workers > (std::uint32_t{1} << 31))
      throw std::invalid_argument("kit::Machine: at most 2^31 workers");
    mask_ = std::bit_ceil(workers) - 1;
    w_ = std::make_unique<Counters[]>(std::size_t{mask_} + 1);
  }

  std::uint32_t worker_count() const noexcept { return n_; }
  const WakeCosts& costs() const noexcept { return costs_; }
  void set_costs(WakeCosts c) noexcept { costs_ = c; }

  // --- updates -----------------------------------------------------------
  // Effects: a task was queued on c (one locked add); marks the overload
  //   flag when c now holds a task a thief could take.
  // Returns: whether this call set the flag (the runtime may then kick a
  //   parked worker to steal, kernel nohz_balancer_kick).
  // Always inlined: a call costs the wake-up more than the body (the
  // caller's live registers saved around it).
  TASKPLACE_ALWAYS_INLINE bool queued(CpuId c) TASKPLACE_NOEXCEPT {
    Counters& k = at(c);  // once: each at() checks c again
    k.queued.fetch_add(1, std::memory_order_seq_cst);
    if (overloaded_.load(std::memory_order_relaxed) || !gives(k)) return false;
    return !overloaded_.exchange(true, std::memory_order_relaxed);
  }
  // Effects: a task left c's queue (to run there, or stolen).
  void dequeued(CpuId c) TASKPLACE_NOEXCEPT { worker(c).dequeued(); }
  // Effects: c starts / stops running a task. Owner only: plain stores.
  void running(CpuId c) TASKPLACE_NOEXCEPT { worker(c).running(); }
  void stopped(CpuId c) TASKPLACE_NOEXCEPT { worker(c).stopped(); }
  // Effects: c, with nothing to run, spins / parks / stops waiting.
  void spinning(CpuId c) TASKPLACE_NOEXCEPT { worker(c).spinning(); }
  void parked(CpuId c) TASKPLACE_NOEXCEPT { worker(c).parked(); }
  void awake(CpuId c) TASKPLACE_NOEXCEPT { worker(c).awake(); }
  // Effects: c lost its CPU to other threads: it is not idle for the
  //   placer until `until` (kernel: vcpu_is_preempted()).
  void preempted_until(CpuId c, Nanoseconds until) TASKPLACE_NOEXCEPT { worker(c).preempted_until(until); }

  // One worker's counters, addressed once, for a worker thread that makes
  // several updates in a row (a run's start: dequeued, running; its end:
  // stopped, then spinning or parked). The calls above, without the
  // worker's address computed again after each locked instruction (some 4
  // instructions a call). Cheap to copy; valid as long as the machine.
  class Worker {
   public:
    void dequeued() noexcept { k_->queued.fetch_sub(1, std::memory_order_relaxed); }
    void running() noexcept {
      k_->running.store(1, std::memory_order_relaxed);
      set_idle(*k_, IdleState::busy);
    }
    void stopped() noexcept { k_->running.store(0, std::memory_order_relaxed); }
    void spinning() noexcept { set_idle(*k_, IdleState::spinning); }
    void parked() noexcept { set_idle(*k_, IdleState::parked); }
    void awake() noexcept { set_idle(*k_, IdleState::busy); }
    void preempted_until(Nanoseconds until) noexcept {
      k_->preempted_until.store(until.count(), std::memory_order_relaxed);
    }

   private:
    friend class Machine;
    explicit Worker(Counters& k) noexcept : k_(&k) {}
    Counters* k_;
  };
  // Precondition: c < worker_count() (as every call that takes a worker).
  Worker worker(CpuId c) TASKPLACE_NOEXCEPT { return Worker{at(c)}; }

  // --- reads -------------------------------------------------------------
  std::uint32_t queued_on(CpuId c) const TASKPLACE_NOEXCEPT { return at(c).queued.load(std::memory_order_relaxed); }
  IdleState idle_state(CpuId c) const TASKPLACE_NOEXCEPT {
    return static_cast<IdleState>(at(c).idle.load(std::memory_order_relaxed));
  }
  // MachineState R1-R3, preemptions ignored (see at(now) for a view that
  // counts them).
  bool is_idle(CpuId c) const TASKPLACE_NOEXCEPT { return nr_running(c) == 0; }
  std::uint32_t nr_running(CpuId c) const TASKPLACE_NOEXCEPT { return nr_running(at(c)); }
  std::uint64_t load(CpuId c) const TASKPLACE_NOEXCEPT { return std::uint64_t{nr_running(c)} * 1024; }
  // Returns: what a wake-up onto c costs before the task can run there:
  //   0 for a busy worker (it finds the task when its current one ends, a
  //   wait the placer's load terms weigh), costs().spinning for a spinning
  //   one, costs().parked for a parked one.
  Nanoseconds wake_cost(CpuId c) const TASKPLACE_NOEXCEPT {
    switch (idle_state(c)) {
      case IdleState::spinning: return costs_.spinning;
      case IdleState::parked: return costs_.parked;
      case IdleState::busy: break;
    }
    return Nanoseconds{0};
  }
  // Returns: a cache line's round trip between workers, the least a task
  //   moved to another worker costs (MachineState O6: CostGate's floor);
  //   costs().crossing, 0 when not measured.
  Nanoseconds crossing_cost() const noexcept { return costs_.crossing; }
  // Returns: whether a thief could take a task from c (kernel: a busiest
  //   queue holds two or more tasks, one of them queued).
  bool can_give(CpuId c) const TASKPLACE_NOEXCEPT { return gives(at(c)); }

  // --- the overload flag (kernel: the root domain's overload) -------------
  // Returns: Overload::some while the flag is set, none otherwise; pass it
  //   to IdleBalancer::balance, which skips the newidle balance on none.
  Overload overload() const noexcept {
    return overloaded_.load(std::memory_order_relaxed) ? Overload::some : Overload::none;
  }
  // Effects: clears the flag when no worker can give (call it at a tick:
  //   kernel update_sd_lb_stats). O(workers).
  void refresh_overload() noexcept {
    if (!overloaded_.load(std::memory_order_relaxed)) return;
    for (CpuId c = 0; c < n_; ++c)
      if (can_give(c)) return;
    overloaded_.store(false, std::memory_order_relaxed);
  }

  // The machine at one time: is_idle also says no for a worker preempted
  // until after `now`. A MachineState; cheap to copy.
  class At {
   public:
    At(const Machine& m, Nanoseconds now) noexcept : m_(&m), w_(m.w_.get()), mask_(m.mask_), now_(now.count()) {}
    // Always inlined: the search asks it of each worker it walks.
    TASKPLACE_ALWAYS_INLINE bool is_idle(CpuId c) const TASKPLACE_NOEXCEPT {
      const Counters& k = at(c);
      return k.running.load(std::memory_order_relaxed) + k.queued.load(std::memory_order_relaxed) == 0 &&
             k.preempted_until.load(std::memory_order_relaxed) <= now_;
    }
    std::uint32_t nr_running(CpuId c) const TASKPLACE_NOEXCEPT { return Machine::nr_running(at(c)); }
    std::uint64_t load(CpuId c) const TASKPLACE_NOEXCEPT { return std::uint64_t{nr_running(c)} * 1024; }
    Nanoseconds wake_cost(CpuId c) const TASKPLACE_NOEXCEPT { return m_->wake_cost(c); }
    Nanoseconds crossing_cost() const noexcept { return m_->crossing_cost(); }

   protected:
    // The counters reached directly, not through the machine: one load
    // less for each answer the placer reads.
    const Counters& at(CpuId c) const TASKPLACE_NOEXCEPT {
      TASKPLACE_EXPECTS(c < m_->n_, "worker must be < worker_count()");
      return w_[c & mask_];
    }
    const Machine* m_;
    const Counters* w_;
    std::uint32_t mask_;
    std::int64_t now_;
  };
  At at(Nanoseconds now) const noexcept { return At{*this, now}; }

  // The machine at one time over a topology: At's answers and the busy
  // share of a worker's LLC (MachineState's llc_utilization_pct, SIS_UTIL's
  // input: the idle search scans less of a busy LLC), sampled at most once
  // a `period` for each LLC (LlcUtilizationSample, kept on the LLC's first
  // worker; kernel: the LLC's nr_idle_scan, which the periodic balance
  // writes). Without it (at(now)) the placer scans as if the LLC were
  // idle: on a loaded LLC, every wake-up walks it all.
  // Precondition: the topology's CPUs are the machine's workers.
  template <Topology Topo>
  class AtLlc : public At {
   public:
    AtLlc(const Machine& m, const Topo& t, Nanoseconds now, SaturatingNanoseconds period) noexcept
        : At(m, now), topo_(&t), period_(period) {}
    std::uint32_t llc_utilization_pct(CpuId c) const {
      const auto llc = topo_->llc_cpus(c);
      if (std::ranges::empty(llc)) return 0;
      return this->m_->sample(static_cast<CpuId>(*std::ranges::begin(llc)))
          .read(llc, [this](CpuId x) { return !this->is_idle(x); }, Nanoseconds{this->now_}, period_);
    }

   private:
    const Topo* topo_;
    SaturatingNanoseconds period_;
  };
  // `period`: how old a sample may be (the runtime's tick; 4 ms, the
  // kernel's at HZ=250).
  template <Topology Topo>
  AtLlc<Topo> at(Nanoseconds now, const Topo& topo,
                 SaturatingNanoseconds period = std::chrono::milliseconds{4}) const noexcept {
    return AtLlc<Topo>{*this, topo, now, period};
  }

 private:
  struct alignas(64) Counters {
    std::atomic<std::uint32_t> queued{0};
    std::atomic<std::uint32_t> running{0};
    std::atomic<std::uint8_t> idle{static_cast<std::uint8_t>(IdleState::busy)};
    std::atomic<std::int64_t> preempted_until{INT64_MIN};
    // Its LLC's busy share, on the LLC's first worker (AtLlc); a line of
    // its own, written once a period.
    mutable LlcUtilizationSample llc;
  };
  LlcUtilizationSample& sample(CpuId c) const TASKPLACE_NOEXCEPT { return at(c).llc; }
  Counters& at(CpuId c) TASKPLACE_NOEXCEPT {
    TASKPLACE_EXPECTS(c < n_, "worker must be < worker_count()");
    return w_[c & mask_];
  }
  const Counters& at(CpuId c) const TASKPLACE_NOEXCEPT {
    TASKPLACE_EXPECTS(c < n_, "worker must be < worker_count()");
    return w_[c & mask_];
  }
  static std::uint32_t nr_running(const Counters& k) noexcept {
    return k.running.load(std::memory_order_relaxed) + k.queued.load(std::memory_order_relaxed);
  }
  static bool gives(const Counters& k) noexcept {
    const std::uint32_t q = k.queued.load(std::memory_order_relaxed);
    return q > 0 && q + k.running.load(std::memory_order_relaxed) >= 2;
  }
  static void set_idle(Counters& k, IdleState s) noexcept {
    auto& a = k.idle;
    // Read before written: a worker that stays busy keeps its line shared.
    if (a.load(std::memory_order_relaxed) != static_cast<std::uint8_t>(s))
      a.store(static_cast<std::uint8_t>(s), std::memory_order_relaxed);
  }

  std::uint32_t n_;
  std::uint32_t mask_;  // bit_ceil(n_) - 1: the counters hold mask_ + 1 workers
  WakeCosts costs_;
  std::unique_ptr<Counters[]> w_;
  alignas(64) std::atomic<bool> overloaded_{false};
};

// The kit's rule for a wake-up from off the pool (a thread that is no
// worker: an I/O thread, a timer thread, main): no waker task (Wakeup::waker
// null, sync and current_cpu false), and the waking CPU is the wakee's
// prev_cpu, the worker it last ran on; for a task that never ran, `hint`
// (the runtime's choice: the least busy worker, a round robin). So the
// affine step sees waking == prev (same_cpu) and the search looks for an
// idle worker in the LLC of the wakee's cache, which is where the kernel
// starts for a wake-up whose waker runs on no CPU the placement could
// share a cache with. A runtime that knows the waking thread's CPU
// (sched_getcpu()) and maps it to a worker may pass that instead.
// Returns: prev_cpu when < workers, else hint when < workers, else 0.
constexpr CpuId off_pool_waking_cpu(CpuId prev_cpu, CpuId hint, std::uint32_t workers) noexcept {
  return prev_cpu < workers ? prev_cpu : hint < workers ? hint : 0;
}

// The placer's wakee_load for this machine's load unit (runnable tasks
// only): 0, except for an affine policy that reads the wakee's weight
// (WakeAffine2008). Pass it as Wakeup::wakee_load; see wake_affine.hpp.
template <class Placer>
inline constexpr std::uint64_t wakee_load = runnable_only_wakee_load<typename Placer::affine_policy>;

static_assert(MachineState<Machine> && MachineState<Machine::At>);
static_assert(HasWakeCost<Machine::At> && HasCrossingCost<Machine::At>);
static_assert(!HasLlcUtilization<Machine::At>);

}  // namespace taskplace::kit
