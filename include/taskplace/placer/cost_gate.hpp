// taskplace/placer/cost_gate.hpp: keep a wakee on the waking worker when
// moving it would cost more than it can gain, judged in the costs the
// runtime measures (the rule of traits::Runtime).
//
// Provides CostGate, KeepVerdict and the optional MachineState members it
// reads (wake_cost, crossing_cost). No kernel ever had this rule; it joins
// three kernel mechanisms under one yardstick (docs/runtime.md):
//   * the 2008 overlap gate (WakeAffine2008: a sync wakee was pulled while
//     the waker's avg_overlap was below the migration cost),
//   * SIS_CURRENT's short-pair rule (WakeOnCurrent: the wakee stays, with no
//     idle search, when the waking CPU runs nothing else),
//   * the migration cost as the yardstick of "is moving worth it",
// with the yardstick changed from the kernel's 500 us to what moving a
// task costs a user-space runtime: at least a cache line's round trip
// between workers (the message and the task's state must cross), and the
// unpark latency when the only other candidate is a parked worker.
//
// The wakee B of waker A on worker w stays on w, with no search, when
// (q = the tasks queued on w behind A) either
//   (a) waker_blocks: B last ran on w (its cache is there) or A and B
//       are a pair (each the other's last wakee, before this wake-up:
//       the refill is paid once and every later message saves a move),
//       and A's overlap (how long it runs on after a wake-up before it
//       sleeps) plus the queued work (q times B's run) is less than the
//       move cost: B starts sooner on w than anywhere else, so spreading
//       gains no parallel time; or
//   (b) short_work: B's run, and each queued one (q + 1 of them, B's run
//       each), together take less than the move cost: the work is done
//       on w before a move would have paid for itself. A run that short
//       also bounds what B's cache holds, so pulling B from another CPU
//       refills little.
// Neither test keeps B when A or B has many partners: its flips (before
// this wake-up) reach the wide step's factor, the LLC's size, and at least
// 2 (the flips of the kernel's wake_wide, each side alone; one partner
// gives a task 1 flip). The tests judge one
// wake-up's move, but a dispatcher's wake-ups follow each other: keeping
// its wakees stacks them on its worker (pgbench's backends behind their
// client, each next one judged from a longer queue, while the idle
// worker stays parked), and keeping a dispatcher on the worker of the
// wakee that answered moves the centre of its star at every answer. The
// kernel's pipeline places them as it does: a parked worker's unpark
// then serves the wakees after the first. (Test (c) below still applies:
// with no idle worker, nothing is stacked away from one.)
// Test (a) asks that B ran on w, or that the two are a pair: pulling a
// task that runs long from the CPU that holds its cache costs its refill
// (the kernel's migration cost), which the crossing cost does not count;
// a pair pays it once (SIS_CURRENT's pair test, without its flips). An
// overlap or a run is the lower of the task's average and its latest
// sample (detail::typical_of).
// Otherwise the kernel's pipeline decides (wide, affine, idle search),
// and the move it proposes, to a CPU c other than w, is judged at its own
// cost (after_search):
//   (c) busy_short: c runs a task (nothing idle was found) and B's run is
//       shorter than the move cost: B stays on w. Onto a busy CPU a move
//       buys no parallel time, B queues wherever it goes, and the move
//       costs more than B's work (hackbench's receivers on a saturated
//       machine).
//   (d) costly_idle: c is idle and dearer to wake than the move cost
//       tests (a) and (b) were judged at (c is not prev: a parked worker
//       the search found, where prev was busy or the waking CPU), and
//       (a) or (b) holds at c's wake cost: B stays on w. B would wait
//       longer for c's unpark than for w.
// A waker with no measured overlap (average 0) counts as one that blocks
// at once, as the 2008 kernels read it; a wakee with no measured run
// (average 0) is never short, and with queued work never passes (a): the
// work ahead is unknown.
//
//   taskplace::CostGate::decide(in)            // -> KeepVerdict, true when kept
//   taskplace::CostGate::after_search(in, busy)  // tests (c), (d): the search's move
#pragma once

#include "taskplace/detail/config.hpp"

#include <concepts>
#include <cstdint>

#include "taskplace/concepts.hpp"
#include "taskplace/placer/select_idle_sibling.hpp"
#include "taskplace/placer/wake_on_current.hpp"
#include "taskplace/tunables.hpp"
#include "taskplace/types.hpp"

namespace taskplace {

// Optional MachineState members the gate reads (MachineState O5, O6).
// O5 m.wake_cost(c) -> Nanoseconds: what getting a new task running on
//    the idle worker c costs (a spinning one: a line's round trip; a
//    parked one: its unpark-to-running latency). kit::Machine has it.
// O6 m.crossing_cost() -> Nanoseconds: a cache line's round trip between
//    workers, the least any move costs. 0 means unknown.
template <class M>
concept HasWakeCost = requires(const M& m, CpuId c) {
  { m.wake_cost(c) } -> std::convertible_to<Nanoseconds>;
};
template <class M>
concept HasCrossingCost = requires(const M& m) {
  { m.crossing_cost() } -> std::convertible_to<Nanoseconds>;
};

// The gate's verdict: why the wakee is kept (waker_blocks, short_work,
// busy_short, costly_idle), or no_search when it is not.
struct KeepVerdict {
  WakeReason reason = WakeReason::no_search;
  constexpr explicit operator bool() const noexcept { return reason != WakeReason::no_search; }
};

namespace detail {
// Whether an OnCurrent rule reads the costs (CostGate::reads_costs).
template <class Rule>
inline constexpr bool reads_costs = requires { requires Rule::reads_costs; };
// A task's typical overlap or run, as the gate reads it: the lower of
// the policy's average and its latest sample (where it keeps one), and
// the latest sample alone while the average holds fewer than 8 samples.
// A runtime measures wall time, so a sample that includes a preemption of
// its worker's thread is long by milliseconds; with weight 1/8 the average
// takes some 70 samples to forget one such sample of 4 ms against a
// threshold of 150 ns, the latest sample one. And an average that starts
// at 0 reads an eighth of the first sample: a task of 5 us runs would
// read as one of 625 ns.
template <class P>
constexpr Nanoseconds typical_of(const typename P::state& s) noexcept {
  if constexpr (requires { P::latest(s); P::samples(s); }) {
    const Nanoseconds a = P::average(s), l = P::latest(s);
    return P::samples(s) < 8 || l < a ? l : a;
  } else {
    return P::average(s);
  }
}
// Whether WakePlacer asks the rule before the full decision (fast_path).
template <class Rule>
inline constexpr bool gate_fast_path = requires { requires Rule::fast_path; };
// Whether WakePlacer asks the rule again about the move the search proposes.
template <class Rule>
inline constexpr bool gate_after_search = requires(const WakeOnCurrentInput& in, bool busy) {
  { Rule::after_search(in, busy) } -> std::same_as<KeepVerdict>;
};
}  // namespace detail

// Returns: the least a move of a wakee off the waking CPU costs: the
//   machine's crossing cost (tunables::crossing_cost where it has none or
//   says 0), or, when prev is another idle CPU and the machine tells its
//   wake cost, that cost if larger (prev is where the search looks first).
// Complexity: O(1): at most three reads of the machine.
template <class M>
Nanoseconds move_cost(const M& m, CpuId waking, CpuId prev) {
  Nanoseconds floor = tunables::crossing_cost;
  if constexpr (HasCrossingCost<M>) {
    const Nanoseconds c = m.crossing_cost();
    if (c > Nanoseconds{0}) floor = c;
  }
  if constexpr (HasWakeCost<M>) {
    if (prev != waking && m.is_idle(prev)) {
      const Nanoseconds w = m.wake_cost(prev);
      if (w > floor) return w;
    }
  }
  return floor;
}

struct CostGate {
  static constexpr bool enabled = true;
  // The placer fills WakeOnCurrentInput::waker_overlap and move_cost.
  static constexpr bool reads_costs = true;
  // The gate reads no flips, so WakePlacer asks it before the full
  // decision and commits a kept wake-up at once (the settled-pair fast
  // path); false: asked where WakeOnCurrent is, after the flips' record.
  // Both give the same decisions and state.
  static constexpr bool fast_path = true;

  // Returns: whether the waker or the wakee has many partners (flips >=
  //   the wide factor, and at least 2): no test keeps the wakee. A task
  //   with one partner has 1 flip (the switch to it), so on an LLC of one
  //   CPU (factor 1) the factor alone would call every pair many.
  static constexpr bool many_partners(const WakeOnCurrentInput& in) noexcept {
    const std::uint32_t many = in.wide_factor > 2 ? in.wide_factor : 2;
    return in.waker_flips >= many || in.wakee_flips >= many;
  }
  // Returns: kept with reason waker_blocks (test a) or short_work (test b),
  //   or not kept. No product is formed: q * d < budget is tested as
  //   q <= (budget - 1) / d, so no input overflows.
  // Complexity: O(1). Thread-safety: pure. Always inlined: in the
  // placer's fast path the input is then never built in memory.
  TASKPLACE_ALWAYS_INLINE static constexpr KeepVerdict decide(const WakeOnCurrentInput& in) noexcept {
    if (in.waker == no_task || in.waker == in.wakee || many_partners(in)) return {};
    const std::int64_t cost = in.move_cost.count();
    const std::int64_t d = in.wakee_duration.count();
    const std::uint32_t q = in.waking_nr_running > 0 ? in.waking_nr_running - 1 : 0;
    const std::int64_t o = in.waker_overlap.count();
    // (a) B's cache on w, o + q * d < cost.
    const bool pair = in.waker_last_wakee == in.wakee && in.wakee_last_wakee == in.waker;
    if ((in.wakee_ran_here || pair) && o < cost && (q == 0 || (d > 0 && std::int64_t{q} <= (cost - o - 1) / d)))
      return {WakeReason::waker_blocks};
    // (b) (q + 1) * d < cost.
    if (d > 0 && d < cost && std::int64_t{q} + 1 <= (cost - 1) / d) return {WakeReason::short_work};
    return {};
  }
  // Returns: kept with reason busy_short (test c) when the wakee's run is
  //   known and shorter than the move cost; asked by WakePlacer only when
  //   the search returned a busy CPU other than the waking one (in.
  //   move_cost is then the crossing cost). The waker's overlap and queue
  //   do not count: the wakee queues behind work on either CPU.
  // Complexity: O(1). Thread-safety: pure.
  static constexpr KeepVerdict keeps_from_busy(const WakeOnCurrentInput& in) noexcept {
    if (in.waker == no_task || in.waker == in.wakee) return {};
    const std::int64_t d = in.wakee_duration.count();
    if (d > 0 && d < in.move_cost.count()) return {WakeReason::busy_short};
    return {};
  }
  // Returns: the verdict on the move the search proposes, to a CPU other
  //   than the waking one, with in.move_cost that move's cost: test (c)
  //   when that CPU is busy, else (d): tests (a) and (b) at its cost.
  // Complexity: O(1). Thread-safety: pure.
  static constexpr KeepVerdict after_search(const WakeOnCurrentInput& in, bool busy) noexcept {
    if (busy) return keeps_from_busy(in);
    return decide(in) ? KeepVerdict{WakeReason::costly_idle} : KeepVerdict{};
  }
};
static_assert(OnCurrentRule<CostGate>);

}  // namespace taskplace
