// taskplace/wake_placer.hpp: the whole wake-placement decision.
//
// "Task A, running on CPU c, wakes task B, which last ran on CPU p: where
// does B run?" Kernel analogue: select_task_rq_fair() for a wake-up
// (record_wakee, the WF_CURRENT_CPU hand-off, wake_wide, wake_affine,
// select_idle_sibling), as of v6.x, every step a policy in the traits; and
// the steps of kernels that were (avg_overlap, 2008) or proposals that
// were never merged (SIS_CACHE, SIS_CURRENT), off by default.
//
//   taskplace::WakePlacer<taskplace::UniformTopology> placer{topo};
//   auto p = placer.place({.waker = &a, .waker_key = ka, .wakee = &b, .wakee_key = kb,
//                          .waking_cpu = c, .prev_cpu = b_prev}, machine, clock.now());
#pragma once

#include "taskplace/detail/config.hpp"

#include <cstdint>
#include <ranges>
#include <type_traits>

#include "taskplace/concepts.hpp"
#include "taskplace/fwd.hpp"
#include "taskplace/detail/assert.hpp"
#include "taskplace/detail/sleep_ledger.hpp"
#include "taskplace/detail/traits.hpp"
#include "taskplace/placer/cost_gate.hpp"
#include "taskplace/placer/select_idle_sibling.hpp"
#include "taskplace/placer/wake_affine.hpp"
#include "taskplace/placer/wake_on_current.hpp"
#include "taskplace/placer/wake_traits.hpp"
#include "taskplace/policy/cache_hot_reservation.hpp"
#include "taskplace/policy/duration_tracker.hpp"
#include "taskplace/policy/flip_counter.hpp"
#include "taskplace/policy/llc_factor.hpp"
#include "taskplace/policy/overlap_tracker.hpp"
#include "taskplace/policy/settled_pair.hpp"
#include "taskplace/policy/wide_detector.hpp"
#include "taskplace/stats.hpp"
#include "taskplace/types.hpp"

namespace taskplace {

template <Topology T, class Traits>  // default in fwd.hpp
class WakePlacer {
  // Every member is checked before any is used (see check_wake_traits).
  static_assert(detail::check_wake_traits<T, Traits>());
  using check_ = detail::wake_traits_check<T, Traits>;

 public:
  using topology_type = T;
  using traits_type = Traits;
  using flips_policy = typename check_::flips_policy;
  using wide_rule = typename check_::wide_rule;
  using factor_policy = typename check_::factor_policy;
  using affine_policy = typename check_::affine_policy;
  using search_policy = typename check_::search_policy;
  using reservation_policy = typename check_::reservation_policy;
  using overlap_policy = typename check_::overlap_policy;
  using duration_policy = typename check_::duration_policy;
  using on_current_rule = typename check_::on_current_rule;
  using settle_policy = typename check_::settle_policy;
  using stats_type = typename check_::stats_family::template counters<WakeCounter>;
  using hook_type = typename check_::hook_type;

  // place() decides on a copy of the waker's flips and commits it, with
  // the other writes, after every callback: those writes must not throw.
  static_assert(std::is_nothrow_copy_constructible_v<typename flips_policy::state> &&
                    std::is_nothrow_copy_assignable_v<typename flips_policy::state>,
                "Traits::Flips: its state must be nothrow copyable (place() records on a copy and "
                "commits it once every callback has run)");
  static_assert(requires(const reservation_policy& r, typename reservation_policy::task_state& s) {
                  { r.on_wakeup(s, Nanoseconds{}) } noexcept;
                }, "Traits::Reservation: on_wakeup(task_state&, Nanoseconds) must be noexcept (place() "
                   "commits it once every callback has run)");
  static_assert(requires(stats_type& st) {
                  { st.add(WakeCounter::wakeups, std::uint64_t{1}) } noexcept;
                }, "Traits::Stats: counters<WakeCounter>::add must be noexcept (place() counts once "
                   "every callback has run)");

  static constexpr bool reserving = !std::is_same_v<reservation_policy, NoReservation>;
  static constexpr bool tracking_overlap = overlap_policy::enabled;
  static constexpr bool tracking_duration = duration_policy::enabled;
  // Whether any policy reads when tasks sleep (overlap, duration,
  // reservation): then task_runs and task_sleeps matter, and a late
  // report is reconciled (docs/embedding.md, "Late sleep reports").
  static constexpr bool reads_sleeps = reserving || tracking_overlap || tracking_duration;
  // Whether CostGate is asked before the full decision (its fast path).
  static constexpr bool fast_gate = detail::reads_costs<on_current_rule> && detail::gate_fast_path<on_current_rule>;
  // Whether a settled pair's verdict is replayed (Traits::Settle).
  static constexpr bool settling = settle_policy::enabled;

  // Per-task state the placer reads and writes. Lives in the embedder's
  // task object. Thread-safety: the waker's flips are written by the
  // waker's thread; the wakee's fields by whoever wakes it, which the
  // embedder serialises (a task is woken once per sleep). The overlap (with
  // an overlap policy) is written by the task's own thread, at its wake-ups
  // of others and at its sleep (task_sleeps), and read by whoever wakes it:
  // the embedder orders that sleep's write before it publishes the task as
  // a waiter (the pool does so under the waiter list's lock). The duration
  // (with a duration policy) likewise: written by the thread running the
  // task (task_runs, task_stops, task_sleeps), read by its wakers. The
  // ledger (with reads_sleeps) is written by task_runs, task_sleeps and
  // by place() for the wakee: a late report and a wake-up of the same task
  // must not run at once (the runtime orders them, as it orders wake-ups).
  struct task_state {
    typename flips_policy::state flips{};
    [[no_unique_address]] typename reservation_policy::task_state sleep{};
    [[no_unique_address]] typename overlap_policy::state overlap{};
    [[no_unique_address]] typename duration_policy::state duration{};
    [[no_unique_address]] std::conditional_t<reads_sleeps, detail::SleepLedger, detail::NoSleepLedger> ledger{};
    CpuId recent_cpu = no_cpu;  // kernel p->recent_used_cpu
    [[no_unique_address]] typename settle_policy::state settle{};  // the wakee's memo (Traits::Settle)
  };

  struct Wakeup {
    task_state* waker = nullptr;  // null: woken from outside any task
    // With waker null, a key other than no_task says that task woke this
    // one on waking_cpu but its state is not at hand (a wake-up made on
    // another thread of the runtime): a CostGate judges it on the wakee
    // alone (its tests b and c), nothing else reads the key.
    TaskKey waker_key = no_task;
    task_state* wakee = nullptr;  // required
    TaskKey wakee_key = no_task;
    CpuId waking_cpu = 0;       // the CPU running the waker; must be valid
    CpuId prev_cpu = no_cpu;    // where the wakee last ran; no_cpu or invalid: unknown
    bool sync = false;          // the waker is about to sleep (kernel WF_SYNC)
    // A hand-off: the waker blocks at once and gives its CPU to the wakee,
    // which is placed on the waking CPU (if allowed) with no affine step
    // and no search; the flips are still recorded. Kernel WF_CURRENT_CPU
    // (v6.4, 2023: seccomp's synchronous user notifications). For
    // rendezvous-style primitives whose waker is known to block next.
    bool current_cpu = false;
    // With waker null and a key: the waker's flips as its own thread read
    // them (flips().flips(state)), for CostGate's many-partners test; 0:
    // unknown. Ignored when waker is given. (Here, in the padding before
    // the loads: the struct stays 64 bytes.)
    std::uint32_t waker_flips = 0;
    std::uint64_t wakee_load = 1024;
    std::uint64_t waker_load = 1024;
  };

  // Complexity: O(cpu_count * levels), once: the search's machine-wide
  // facts (search_facts()).
  explicit WakePlacer(const T& topology) : topology_(&topology), facts_(search_facts(topology)) {}
  // The placer keeps a pointer to the topology: a temporary would dangle.
  explicit WakePlacer(const T&&) = delete;
  WakePlacer(const T&&, flips_policy, affine_policy = {}, search_policy = {},
             reservation_policy = {}) = delete;
  WakePlacer(const T& topology, flips_policy flips, affine_policy affine = {},
             search_policy search = {}, reservation_policy reservation = {})
      : topology_(&topology), flips_(flips), affine_(affine), search_(search),
        reservation_(reservation), facts_(search_facts(topology)) {}

  // Effects: records the wakee in the waker's flips (and, with an overlap
  // policy, stamps the waker's wake-up), folds the sleep that
  // ends into the wakee's sleep average (with a reservation policy; when
  // the wakee's sleep report is still due, that report does), decides
  // wide or affine, searches for an idle sibling, updates recent_cpu, counts
  // stats, calls the hook. A hand-off (w.current_cpu) whose waking CPU is
  // allowed skips the decision and the search: the waking CPU, reasons
  // current_cpu.
  // Returns: the CPU, always a valid id, allowed by `allowed` unless it
  // allows none (reason affinity_empty).
  // Preconditions (checked builds): w.wakee != nullptr, w.waking_cpu valid.
  // An invalid prev_cpu (offline, or no_cpu) is not an error: it is treated
  // as the waking CPU.
  // Throws: what a callback throws (the machine state's members, the CPU
  // filter, the topology, the hook), in checked and unchecked builds alike
  // (place() is never noexcept); PreconditionError in checked builds.
  // Exception safety: strong. The decision is made on copies (the waker's
  // flips, the wakee's recent CPU) and every callback runs before the
  // first write, the hook last; the writes (flips, overlap stamp, sleep
  // average, recent_cpu, stats) are then committed by noexcept code. A
  // callback that throws leaves every task state and the stats as they
  // were. (The one write before the hook is to the machine, not a task:
  // a search that clears the idle-core hint, MachineState O4, as the
  // kernel does; a hint is advice, and stays cleared.)
  // Complexity: O(1) plus the bounded scan (see IdleSiblingSearch).
  // Thread-safety: const; concurrent calls are safe for distinct tasks with
  // AtomicStats or NoStats and a thread-safe hook.
  template <MachineState M, CpuFilter F = AnyCpu>
  Placement place(const Wakeup& w, const M& machine, Nanoseconds now, const F& allowed = F{}) const {
    return place(w, machine, [now]() noexcept { return now; }, allowed);
  }
  // The same with the time read only when needed: `clock()` returns now,
  // and is not called for a wake-up that replays a settled pair's verdict
  // quietly (Traits::Settle) unless the hook needs the time, so that a
  // runtime reads no clock for it. It is called at most once.
  template <MachineState M, class Clock, CpuFilter F = AnyCpu>
    requires std::is_invocable_r_v<Nanoseconds, const Clock&>
  Placement place(const Wakeup& w, const M& machine, const Clock& clock, const F& allowed = F{}) const {
    static_assert(!reserving || HasReservationState<M, reservation_policy>,
                  "Traits::Reservation keeps per-CPU state: the machine state needs reservation(c) const, "
                  "returning the policy's cpu_state (MachineState O3)");
    static_assert(HasLlcUtilization<M> || !detail::DeclaresLlcUtilization<M>,
                  "the machine state's llc_utilization_pct must be callable as m.llc_utilization_pct(c) on a "
                  "const machine and return a percentage convertible to std::uint32_t (MachineState O1)");
    static_assert(HasIdleCoreHint<M> || !detail::DeclaresIdleCoreHint<M>,
                  "the machine state's has_idle_core must be callable as m.has_idle_core(c) on a const "
                  "machine and return bool (MachineState O2)");
    const T& t = *topology_;
    const auto n = static_cast<CpuId>(t.cpu_count());
    TASKPLACE_EXPECTS(w.wakee != nullptr, "WakePlacer::place needs the wakee's state");
    TASKPLACE_EXPECTS(w.waking_cpu < n, "waking_cpu must be < cpu_count()");
    const CpuId waking = w.waking_cpu < n ? w.waking_cpu : 0;
    const CpuId prev = w.prev_cpu < n ? w.prev_cpu : waking;
    // A settled pair's verdict, replayed (policy/settled_pair.hpp): a
    // quiet replay here, in the caller; the measured one and every
    // judgement out of line.
    if constexpr (settling) {
      const bool replay = replays(w, machine, allowed, waking, prev);
      if (replay && !settle_policy::measures(w.wakee->settle)) [[likely]]
        return replay_quietly(w, waking, prev, clock);
      // The call takes a copy made here, on the cold path: the caller's
      // Wakeup then never has its address taken on the quiet one, so the
      // compiler keeps its fields in registers there (no 64-byte store
      // per replay; 10 instructions of a quiet replay's 48).
      const Wakeup cold = w;
      return judge_out_of_line(cold, machine, clock, allowed, waking, prev, replay);
    } else {
      return judge(w, machine, clock, allowed, waking, prev, false);
    }
  }

 private:
  template <MachineState M, class Clock, CpuFilter F>
  TASKPLACE_NOINLINE Placement judge_out_of_line(const Wakeup& w, const M& machine, const Clock& clock,
                                                 const F& allowed, CpuId waking, CpuId prev, bool replay) const {
    return judge(w, machine, clock, allowed, waking, prev, replay);
  }
  // The wake-up's decision, past a quiet replay: the measured replay (as
  // a kept wake-up commits: keep_on_waking), the gate's fast path, or the
  // full decision.
  template <MachineState M, class Clock, CpuFilter F>
  TASKPLACE_ALWAYS_INLINE Placement judge(const Wakeup& w, const M& machine, const Clock& clock, const F& allowed,
                                          CpuId waking, CpuId prev, bool replay) const {
    const Nanoseconds now = clock();
    if constexpr (settling) {
      if (replay) {
        typename settle_policy::state& s = w.wakee->settle;
        const Placement p = keep_on_waking(w, waking, prev, s.reason, now);
        settle_policy::take(s);
        stats_.add(WakeCounter::settled);
        return p;
      }
    } else {
      (void)replay;
    }
    // The settled-pair fast path (CostGate::fast_path): the gate reads no
    // flips, so it is asked first, and a kept wake-up is committed at once,
    // without the copies the full decision makes; the same decision, state
    // and counts as the steps below (tests/property/fast_path.test.cpp).
    // The kept branch is marked likely: the call to the full decision is
    // then laid out of line, and the fast path keeps its frame small.
    if constexpr (fast_gate) {
      if (by_a_task(w) && !w.current_cpu && allowed(waking)) {
        const WakeOnCurrentInput in = gate_input(w, machine, waking, prev);
        const KeepVerdict v = on_current_rule::decide(in);
        if (v) [[likely]] {
          const Placement p = keep_on_waking(w, waking, prev, v.reason, now);
          settle_after(w, v.reason, waking, prev, in.waking_nr_running);
          return p;
        }
      }
      return place_out_of_line(w, machine, now, allowed, waking, prev);
    } else {
      return place_full(w, machine, now, allowed, waking, prev);
    }
  }

 private:
  // The full decision, out of place() behind a fast path (its registers
  // and stack stay out of the fast path).
  template <MachineState M, CpuFilter F>
  TASKPLACE_NOINLINE Placement place_out_of_line(const Wakeup& w, const M& machine, Nanoseconds now,
                                                 const F& allowed, CpuId waking, CpuId prev) const {
    return place_full(w, machine, now, allowed, waking, prev);
  }
  // Steps 1-5 and the commit.
  template <MachineState M, CpuFilter F>
  TASKPLACE_ALWAYS_INLINE Placement place_full(const Wakeup& w, const M& machine, Nanoseconds now, const F& allowed, CpuId waking,
                       CpuId prev) const {
    Decision d{};
    d.recent = w.wakee->recent_cpu;
    d.waking = waking;
    d.prev = prev;

    // 1. The waker's flip count, on a copy (read the overlap before the
    // stamp the commit makes: the affine step judges the overlaps measured
    // so far).
    std::uint32_t waker_flips = 0;
    const Nanoseconds waker_overlap =
        w.waker != nullptr ? overlap_policy::average(w.waker->overlap) : Nanoseconds::max();
    if (w.waker != nullptr) {
      d.waker_flips = w.waker->flips;
      flips_.record(d.waker_flips, w.wakee_key, now);
      waker_flips = flips_.flips(d.waker_flips);
    }
    // The wakee's flips as they read after the record (a task waking
    // itself reads its own copy).
    const auto& wakee_flips = w.wakee == w.waker ? d.waker_flips : w.wakee->flips;

    if (w.current_cpu && allowed(waking)) {
      // A hand-off: the waker gives its CPU to the wakee (kernel: the
      // WF_CURRENT_CPU test right after record_wakee).
      stay_on_waking(d.p, waking, AffineReason::current_cpu, WakeReason::current_cpu);
    } else if (const WakeReason kept = stays_on_current(w, machine, allowed, waking, prev, waker_flips,
                                                        d.waker_flips, wakee_flips, d.waking_nr_running);
               kept != WakeReason::no_search) {
      stay_on_waking(d.p, waking,
                     kept == WakeReason::wake_on_current ? AffineReason::wake_on_current : AffineReason::cost_gate,
                     kept);
    } else {
      decide(d, w, machine, now, allowed, waking, prev, waker_flips, wakee_flips, waker_overlap);
    }
    emit(w, waking, prev, d.p, now);  // the last callback
    commit(w, d, now);
    return d.p;
  }

 public:

  // Effects: the task went to sleep on `cpu` at `at`, the moment it
  // stopped running (not the moment of the report: a report may come
  // late, see below); with a reservation policy, reserves the CPU if it
  // became idle then (`cpu_becomes_idle`: nothing else runnable on it at
  // `at`) and the task sleeps briefly; with an overlap policy, closes the
  // overlap begun at its last wake-up of another task; with a duration
  // policy, closes its run and folds the run time since its last sleep
  // into its average. `cpu_state` is the reservation's per-CPU state the
  // machine state returns from reservation(cpu). With none of them, does
  // nothing.
  // Late reports: a report made after `at`, even after a wake-up of the
  // task (place() with it as the wakee, between its task_runs and this
  // report), leaves every state as a report made at `at`, before that
  // wake-up, would have: the wake-up's own sleep sample (SIS_CACHE) is
  // applied here, after the sleep's. Only decisions made while the report
  // is outstanding may differ (docs/embedding.md, "Late sleep reports",
  // states the bound). Requires: task_runs at each run of the task (it
  // marks the report due), the task's reports in the order of their `at`,
  // each before its next task_runs, and one CPU's reports in the order of
  // their `at`.
  template <class CpuState>
  void task_sleeps(task_state& task, TaskKey key, CpuState& cpu_state, bool cpu_becomes_idle,
                   Nanoseconds at) const noexcept {
    if constexpr (reserving) reservation_.on_sleep(task.sleep, cpu_state, cpu_becomes_idle, key, at);
    overlap_policy::on_sleep(task.overlap, at);
    duration_policy::on_sleep(task.duration, at);
    settle_report(task);
  }
  // The same without a reservation policy, which needs the CPU's state.
  void task_sleeps(task_state& task, Nanoseconds at) const noexcept
    requires(!reserving)
  {
    overlap_policy::on_sleep(task.overlap, at);
    duration_policy::on_sleep(task.duration, at);
    settle_report(task);
  }
  // Effects: with a duration policy, the task starts running at `now`
  // (task_runs) or stops without sleeping, yielding or preempted
  // (task_stops); without one, nothing. Kernel: the task's
  // sum_exec_runtime grows between the two. task_runs also marks the
  // task's next sleep report due (with reads_sleeps), so that a wake-up
  // before it is told from one after it.
  void task_runs(task_state& task, Nanoseconds now) const noexcept {
    // After a quiet replay (Traits::Settle) the run goes unmeasured: its
    // sleep then samples nothing.
    if (!settle_policy::quiet(task.settle)) duration_policy::on_run(task.duration, now);
    // A wake-up before a report that never came (the runtime took the
    // stop for no sleep) is dropped with it.
    if constexpr (reads_sleeps) task.ledger = {.due = true};
  }
  void task_stops(task_state& task, Nanoseconds now) const noexcept {
    duration_policy::on_stop(task.duration, now);
  }
  // Returns: whether the task's sleep report is due (it ran since its
  // last report): a wake-up now comes before that report. false without
  // reads_sleeps.
  static constexpr bool report_due(const task_state& task) noexcept {
    if constexpr (reads_sleeps) return task.ledger.due;
    else return (void)task, false;
  }

  const T& topology() const noexcept { return *topology_; }
  const flips_policy& flips() const noexcept { return flips_; }
  const reservation_policy& reservation() const noexcept { return reservation_; }
  const stats_type& stats() const noexcept { return stats_; }
  stats_type& stats() noexcept { return stats_; }
  hook_type& hook() noexcept { return hook_; }
  const hook_type& hook() const noexcept { return hook_; }

 private:
  // A decision not yet applied: the placement, the waker's flips after the
  // record, the wakee's recent CPU after the search.
  struct Decision {
    Placement p{};
    typename flips_policy::state waker_flips{};
    CpuId recent = no_cpu;
    CpuId waking = 0;
    CpuId prev = 0;
    bool stepped = false;            // went through the wide / affine steps
    bool affine_considered = false;  // asked the affine policy
    std::uint32_t waking_nr_running = 2;  // what a kept wake-up's rule read (SettledPair's arming); > 1: not read
  };

  // Returns: why the wakee stays on the waking CPU with no search
  // (WakeOnCurrent's short pair: wake_on_current; CostGate's verdict:
  // waker_blocks or short_work), or no_search when it does not. After
  // record_wakee, so the flips include this wake-up.
  template <class M, class F, class FlipState>
  WakeReason stays_on_current(const Wakeup& w, const M& machine, const F& allowed, CpuId waking, CpuId prev,
                              std::uint32_t waker_flips, const FlipState& waker_state,
                              const FlipState& wakee_state, std::uint32_t& waking_nr_running) const {
    if constexpr (on_current_rule::enabled) {
      if (fast_gate || !allowed(waking)) return WakeReason::no_search;  // fast: asked already
      WakeOnCurrentInput in{};
      if constexpr (detail::reads_costs<on_current_rule>) {
        if (!by_a_task(w)) return WakeReason::no_search;
        in = gate_input(w, machine, waking, prev);
        (void)waker_flips, (void)waker_state, (void)wakee_state;
      } else {
        if (w.waker == nullptr) return WakeReason::no_search;
        in.waking_nr_running = machine.nr_running(waking);
        in.wakee_duration = duration_policy::average(w.wakee->duration);
        in.waker = w.waker_key;
        in.wakee = w.wakee_key;
        in.waker_duration = duration_policy::average(w.waker->duration);
        in.waker_flips = waker_flips;
        in.wakee_flips = flips_.flips(wakee_state);
        in.waker_last_wakee = flips_.last_wakee(waker_state);
        in.wakee_last_wakee = flips_.last_wakee(wakee_state);
        in.cpu_count = topology_->cpu_count();
        (void)prev;
      }
      waking_nr_running = in.waking_nr_running;
      const auto v = on_current_rule::decide(in);
      if constexpr (std::is_same_v<decltype(v), const bool>) return v ? WakeReason::wake_on_current : WakeReason::no_search;
      else return v.reason;
    } else {
      (void)w, (void)machine, (void)allowed, (void)waking, (void)prev, (void)waker_flips, (void)waker_state,
          (void)wakee_state, (void)waking_nr_running;
      return WakeReason::no_search;
    }
  }

  // Whether a task made the wake-up: its state at hand, or only its key.
  static constexpr bool by_a_task(const Wakeup& w) noexcept { return w.waker != nullptr || w.waker_key != no_task; }

  // What CostGate reads, and only that: the waking CPU's tasks, the
  // wakee's run, the waker's overlap (before this wake-up's stamp; each
  // detail::typical_of), the move cost (callbacks: the machine's), both
  // tasks' flips and the wide step's factor. A
  // waker known by its key alone has no overlap to read (test a fails)
  // and no last wakee.
  template <class M>
  WakeOnCurrentInput gate_input(const Wakeup& w, const M& machine, CpuId waking, CpuId prev) const {
    WakeOnCurrentInput in{};
    in.waking_nr_running = machine.nr_running(waking);
    in.wakee_duration = detail::typical_of<duration_policy>(w.wakee->duration);
    in.waker = w.waker_key;
    in.wakee = w.wakee_key;
    in.waker_overlap = w.waker != nullptr ? detail::typical_of<overlap_policy>(w.waker->overlap) : Nanoseconds::max();
    in.move_cost = move_cost(machine, waking, prev);
    in.wakee_ran_here = prev == waking;
    // Before this wake-up's record, on either path (the full decision
    // records on a copy).
    in.waker_last_wakee = w.waker != nullptr ? flips_.last_wakee(w.waker->flips) : no_task;
    in.wakee_last_wakee = flips_.last_wakee(w.wakee->flips);
    in.waker_flips = w.waker != nullptr ? flips_.flips(w.waker->flips) : w.waker_flips;
    in.wakee_flips = flips_.flips(w.wakee->flips);
    in.wide_factor = static_cast<std::uint32_t>(factor_policy::factor(*topology_, waking));
    return in;
  }

  // Effects: the fast path's commit of a wake-up CostGate keeps: the hook
  // (the last callback), then what commit() writes for a decision made
  // before the wide step (the flips recorded in place, the overlap stamp,
  // the wakee's ledger; recent_cpu unchanged: no search ran; the counts).
  TASKPLACE_ALWAYS_INLINE Placement keep_on_waking(const Wakeup& w, CpuId waking, CpuId prev, WakeReason why,
                                                  Nanoseconds now) const {
    Placement p{};
    stay_on_waking(p, waking, AffineReason::cost_gate, why);
    emit(w, waking, prev, p, now);
    if (w.waker != nullptr) {
      flips_.record(w.waker->flips, w.wakee_key, now);
      overlap_policy::on_wake_other(w.waker->overlap, now);
    }
    commit_wakee(w, now);
    stats_.add(WakeCounter::wakeups);
    count_reason(why);
    return p;
  }

  // Returns: whether this wake-up replays the wakee's memo: a waker at
  //   hand, no hand-off, the wakee's last CPU is the waking one, the memo
  //   holds (SettledPair::holds: the same waker, neither task has woken
  //   another since), the waking CPU runs the waker alone and is allowed.
  //   Reads the machine and the filter, writes nothing.
  template <class M, class F>
  bool replays(const Wakeup& w, const M& machine, const F& allowed, CpuId waking, CpuId prev) const {
    return w.waker != nullptr && !w.current_cpu && waking == prev &&
           settle_policy::holds(w.wakee->settle, w.waker_key, flips_.last_wakee(w.waker->flips), w.wakee_key,
                                flips_.last_wakee(w.wakee->flips)) &&
           machine.nr_running(waking) <= 1 && allowed(waking);
  }
  // Effects: the wakee kept on the waking CPU by its memo's verdict, one
  //   quiet replay spent: writes the memo and the counts only (no flips,
  //   no overlap stamp, the wakee's next run unmeasured), reads the clock
  //   only for the hook. Counted as its reason (waker_blocks or
  //   short_work, the two the memo is armed with) and as settled.
  template <class Clock>
  Placement replay_quietly(const Wakeup& w, CpuId waking, CpuId prev, const Clock& clock) const {
    typename settle_policy::state& s = w.wakee->settle;
    Placement p{};
    stay_on_waking(p, waking, AffineReason::cost_gate, s.reason);
    if constexpr (detail::hook_enabled<hook_type>()) emit(w, waking, prev, p, clock());
    else (void)prev, (void)clock;
    settle_policy::take(s);
    stats_.add(WakeCounter::wakeups);
    stats_.add(p.reason == WakeReason::waker_blocks ? WakeCounter::waker_blocks : WakeCounter::short_work);
    stats_.add(WakeCounter::settled);
    return p;
  }
  // Effects: the memo after a full judgement: armed when CostGate kept
  //   the wakee before any search (waker_blocks on a measured overlap,
  //   short_work) for a waker at hand, on the wakee's last CPU, with
  //   nothing queued behind the waker; cleared otherwise. `why`: the
  //   kept wake-up's reason, or no_search.
  void settle_after(const Wakeup& w, WakeReason why, CpuId waking, CpuId prev,
                    std::uint32_t waking_nr_running) const noexcept {
    if constexpr (settling) {
      // A verdict on a measured overlap or run: a waker that never slept
      // after a wake-up reads as one that blocks at once (its average 0).
      const bool measured =
          (why == WakeReason::waker_blocks && w.waker != nullptr && overlap_policy::samples(w.waker->overlap) > 0) ||
          why == WakeReason::short_work;
      if (w.waker != nullptr && waking == prev && waking_nr_running <= 1 && measured)
        settle_policy::arm(w.wakee->settle, w.waker_key, flips_.last_wakee(w.wakee->flips), why);
      else
        settle_policy::clear(w.wakee->settle);
    } else {
      (void)w, (void)why, (void)waking, (void)prev, (void)waking_nr_running;
    }
  }

  // Effects: the waking CPU, decided before the wide and affine steps and
  // without a search (a hand-off, or a pair WakeOnCurrent keeps).
  static void stay_on_waking(Placement& p, CpuId waking, AffineReason a, WakeReason r) noexcept {
    p.cpu = p.target = waking;
    p.affine = a;
    p.reason = r;
  }

  // Effects: steps 2-5 into d (d.recent is the search's copy of the
  // wakee's recent CPU); writes nothing else.
  template <class M, class F, class FlipState>
  void decide(Decision& d, const Wakeup& w, const M& machine, Nanoseconds now, const F& allowed,
              CpuId waking, CpuId prev, std::uint32_t waker_flips, const FlipState& wakee_flips,
              Nanoseconds waker_overlap) const {
    const T& t = *topology_;
    Placement& p = d.p;
    d.stepped = true;

    // 2. Wide: a waker of many partners, or a wakee of many wakers, is not
    // pulled; the partners would pile onto one CPU.
    const std::uint32_t factor = static_cast<std::uint32_t>(factor_policy::factor(t, waking));
    p.wide = wide_rule::wide(waker_flips, flips_.flips(wakee_flips), factor);

    // 3. Affine: the waking CPU or prev?
    if (p.wide) {
      p.target = prev;
      p.affine = AffineReason::wide;
    } else if (!allowed(waking)) {
      p.target = prev;
      p.affine = AffineReason::waking_not_allowed;
    } else if (waking == prev) {
      p.target = prev;
      p.affine = AffineReason::same_cpu;
    } else {
      d.affine_considered = true;
      const AffineDecision a = affine_.decide(AffineInput<T, M>{
          t, machine, waking, prev, w.sync, w.wakee_load, w.waker_load, waker_overlap,
          overlap_policy::average(w.wakee->overlap)});
      p.target = a.target;
      p.affine = a.reason;
    }

    // 4. An idle CPU near the target (not with a machine state refused
    // above; nor, for a search of v3.12, when the waking CPU is refused:
    // that kernel searched only under an affine domain).
    bool search = true;
    if constexpr (detail::search_needs_waking_allowed<search_policy>) search = allowed(waking);
    p.cpu = p.target;
    p.reason = WakeReason::no_search;
    if constexpr (search_policy::enabled && (!reserving || HasReservationState<M, reservation_policy>)) {
      if (search) {
        SearchResult r;
        if constexpr (reserving) {
          r = search_.search(SearchInput<T, M, F, reservation_policy>{
              t, machine, allowed, &reservation_, w.wakee_key, now, p.target, prev, &d.recent, &facts_});
        } else {
          r = search_.search(SearchInput<T, M, F, void>{t, machine, allowed, nullptr, w.wakee_key, now,
                                                        p.target, prev, &d.recent, &facts_});
        }
        p.cpu = r.cpu;
        p.reason = r.reason;
        p.scanned = r.scanned;
        p.reservation_skips = r.reservation_skips;
      }
    } else {
      (void)search;
    }

    // 5. Affinity: the kernel's select_fallback_rq, nearest first.
    if (!allowed(p.cpu)) fall_back(p, allowed);

    // 6. The move the search proposes, judged at its own cost (OnCurrent
    // rules with after_search: CostGate's tests c and d). Asked when the
    // CPU found is busy, or idle and dearer to wake than the cost the
    // gate judged before the search (else its answer is the same no).
    if constexpr (detail::gate_after_search<on_current_rule>) {
      if (p.cpu != waking && by_a_task(w) && allowed(waking)) {
        const bool busy = !machine.is_idle(p.cpu);
        WakeOnCurrentInput in = gate_input(w, machine, waking, prev);
        const Nanoseconds judged = in.move_cost;
        in.move_cost = move_cost(machine, waking, p.cpu);
        if (busy || in.move_cost > judged) {
          if (const KeepVerdict v = on_current_rule::after_search(in, busy)) {
            p.cpu = waking;
            p.reason = v.reason;
          }
        }
      }
    }
  }

  // Effects: applies d: the waker's flips and overlap stamp, the wakee's
  // sleep average and recent CPU, the stats. Writes only; nothing here
  // calls the embedder or can throw.
  void commit(const Wakeup& w, const Decision& d, Nanoseconds now) const noexcept {
    if (w.waker != nullptr) {
      w.waker->flips = d.waker_flips;
      overlap_policy::on_wake_other(w.waker->overlap, now);
    }
    commit_wakee(w, now);
    w.wakee->recent_cpu = d.recent;
    settle_after(w, d.p.affine == AffineReason::cost_gate ? d.p.reason : WakeReason::no_search, d.waking, d.prev,
                 d.waking_nr_running);

    const Placement& p = d.p;
    stats_.add(WakeCounter::wakeups);
    if (d.stepped) {
      if (p.wide) stats_.add(WakeCounter::wide);
      if (d.affine_considered) stats_.add(WakeCounter::affine_considered);
      stats_.add(p.target == d.waking && d.waking != d.prev ? WakeCounter::affine_pulled
                                                            : WakeCounter::prev_kept);
      if constexpr (search_policy::enabled) {
        stats_.add(WakeCounter::scanned_cpus, p.scanned);
        stats_.add(WakeCounter::reservation_skips, p.reservation_skips);
      }
      if (p.reason == WakeReason::affinity_fallback || p.reason == WakeReason::affinity_empty)
        stats_.add(WakeCounter::affinity_fallback);
    }
    count_reason(p.reason);
  }

  // Effects: the wake-up's sleep sample (SIS_CACHE), or, before the
  // sleep's report, a note for that report to apply it.
  void commit_wakee(const Wakeup& w, Nanoseconds now) const noexcept {
    if constexpr (reads_sleeps) {
      detail::SleepLedger& l = w.wakee->ledger;
      if (!l.due) {
        if constexpr (reserving) reservation_.on_wakeup(w.wakee->sleep, now);
      } else if (!l.woken_early) {  // before the sleep's report: that report applies it
        l.woken_early = true;
        l.woken_at = now;
      }
    } else {
      (void)w, (void)now;
    }
  }

  // Effects: the sleep report is in: a wake-up that came before it now
  // takes its sleep sample (SIS_CACHE on_wakeup, at the wake-up's time),
  // and the next report is due at the next run.
  void settle_report(task_state& task) const noexcept {
    if constexpr (reads_sleeps) {
      if constexpr (reserving)
        if (task.ledger.woken_early) reservation_.on_wakeup(task.sleep, task.ledger.woken_at);
      task.ledger = {};
    } else {
      (void)task;
    }
  }

  void emit(const Wakeup& w, CpuId waking, CpuId prev, const Placement& p, Nanoseconds now) const {
    if constexpr (detail::hook_enabled<hook_type>())
      hook_(WakeEvent{w.waker_key, w.wakee_key, waking, prev, p, now, w.sync,
                      w.waker == nullptr && w.waker_key != no_task, w.waker == nullptr ? w.waker_flips : 0});
  }
  template <class F>
  void fall_back(Placement& p, const F& allowed) const {
    const T& t = *topology_;
    for (auto c : t.llc_cpus(p.target)) {
      if (allowed(static_cast<CpuId>(c))) {
        p.cpu = static_cast<CpuId>(c);
        p.reason = WakeReason::affinity_fallback;
        return;
      }
    }
    const auto n = static_cast<CpuId>(t.cpu_count());
    for (CpuId c = 0; c < n; ++c) {
      if (allowed(c)) {
        p.cpu = c;
        p.reason = WakeReason::affinity_fallback;
        return;
      }
    }
    p.cpu = p.target;
    p.reason = WakeReason::affinity_empty;
  }

  void count_reason(WakeReason r) const noexcept {
    switch (r) {
      case WakeReason::idle_target: stats_.add(WakeCounter::idle_target); break;
      case WakeReason::idle_prev: stats_.add(WakeCounter::idle_prev); break;
      case WakeReason::idle_recent: stats_.add(WakeCounter::idle_recent); break;
      case WakeReason::idle_smt_sibling: stats_.add(WakeCounter::idle_smt_sibling); break;
      case WakeReason::idle_core: stats_.add(WakeCounter::idle_core); break;
      case WakeReason::idle_scan: stats_.add(WakeCounter::idle_scan); break;
      case WakeReason::hot_fallback: stats_.add(WakeCounter::hot_fallback); break;
      case WakeReason::target_busy: stats_.add(WakeCounter::target_busy); break;
      case WakeReason::current_cpu: stats_.add(WakeCounter::current_cpu); break;
      case WakeReason::wake_on_current: stats_.add(WakeCounter::wake_on_current); break;
      case WakeReason::waker_blocks: stats_.add(WakeCounter::waker_blocks); break;
      case WakeReason::short_work: stats_.add(WakeCounter::short_work); break;
      case WakeReason::busy_short: stats_.add(WakeCounter::busy_short); break;
      case WakeReason::costly_idle: stats_.add(WakeCounter::costly_idle); break;
      default: break;
    }
  }

  const T* topology_;
  [[no_unique_address]] flips_policy flips_{};
  [[no_unique_address]] affine_policy affine_{};
  [[no_unique_address]] search_policy search_{};
  [[no_unique_address]] reservation_policy reservation_{};
  SearchFacts facts_{};  // machine-wide facts of the topology for the search
  [[no_unique_address]] mutable stats_type stats_{};
  [[no_unique_address]] mutable hook_type hook_{};
};

}  // namespace taskplace
