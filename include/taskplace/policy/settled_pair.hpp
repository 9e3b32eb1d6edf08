// taskplace/policy/settled_pair.hpp: a pair whose placement has settled is
// judged once every few wake-ups, not at each, and measured only around
// those judgements (the runtime set's settled-pair memo).
//
// Provides SettledPair<Every> and NoSettle (Traits::Settle). No kernel has
// it: the kernel decides every wake-up from scratch, which costs it a few
// hundred nanoseconds against a context switch of microseconds. A user-space
// runtime hands a task over in tens of nanoseconds; measuring each hop (a
// clock read at the wake-up, the waker's overlap and the wakee's run folded
// into their averages) and judging it (CostGate) cost as much as the hand-
// off itself, on every hop of a pair that always gets the same verdict.
//
// The rule. When CostGate keeps wakee B on the waking CPU w (reason
// waker_blocks on a measured overlap of A, or short_work) for waker A,
// with B's last CPU w and nothing queued on w behind A, B remembers the
// verdict: A's key, B's own last
// wakee, the reason, and Every - 1 wake-ups to come. A later wake-up of B
// replays it, kept on w with no judgement, while
//   * A wakes B again, from w, B's last CPU (so the move cost is the same
//     crossing cost as when judged),
//   * A's last wakee is B and B's is the one it had (neither has woken
//     another task since: their flips, the many-partners test, have not
//     grown; flips only grow by a change of partner),
//   * w runs A alone (the queue the verdict was judged at, 0), and w is
//     allowed, and the wake-up is not a hand-off.
// A replay records no flips (the pair's partner is unchanged; only the
// decay waits for the next judgement), stamps no overlap and leaves B's
// next run unmeasured: the averages the gate reads keep their values, so
// the verdict stays what it was. The last replay before the next judgement
// is measured as a full wake-up is (the flips' record, the waker's overlap
// stamp, B's run), so that the judgement reads a fresh sample of each.
// Any other outcome of a full decision clears the memo.
//
// What it costs: a placement that lags a change of the pair's behaviour (a
// waker that now runs on after the wake-up) by at most 2 x Every - 1
// wake-ups: the change shows in the measured replay or the judgement after
// it. What it saves: the measurements and the judgement on Every - 2 of
// Every hops (docs/runtime.md, "The settled pair").
//
//   struct MySet : taskplace::traits::Runtime {};            // SettledPair<8>
//   struct Exact : taskplace::traits::Runtime { using Settle = taskplace::NoSettle; };
#pragma once

#include "taskplace/detail/config.hpp"

#include <cstdint>

#include "taskplace/concepts.hpp"
#include "taskplace/fwd.hpp"
#include "taskplace/types.hpp"

namespace taskplace {

// A wakee's memo of its settled pair. Invariant: left > 0 only after an
// arm(); quiet: the task's runs since its latest wake-up are not measured.
struct SettledPairState {
  TaskKey waker = no_task;       // the waker the verdict was judged for
  TaskKey wakee_last = no_task;  // the wakee's own last wakee then
  std::uint8_t left = 0;         // replays left before the next judgement
  WakeReason reason{};           // the verdict's reason
  bool quiet = false;
};

template <std::uint8_t Every>  // default in fwd.hpp
struct SettledPair {
  static_assert(Every >= 2, "SettledPair<Every>: Every counts the judgement too, so at least 2");
  static constexpr bool enabled = true;
  static constexpr std::uint32_t every = Every;
  using state = SettledPairState;

  // Effects: a full judgement kept the wakee for `waker` with `reason`, in
  //   the memo's conditions: the next Every - 1 wake-ups may replay it.
  // Complexity: O(1). Thread-safety: writes s; whoever wakes the task.
  static constexpr void arm(state& s, TaskKey waker, TaskKey wakee_last, WakeReason reason) noexcept {
    s = {.waker = waker, .wakee_last = wakee_last, .left = Every - 1, .reason = reason, .quiet = false};
  }
  // Effects: a full judgement did not keep the wakee (or not in the
  //   memo's conditions): nothing to replay, and its runs are measured.
  static constexpr void clear(state& s) noexcept {
    s.left = 0;
    s.quiet = false;
  }
  // Returns: whether a wake-up by `waker`, whose last wakee (before this
  //   wake-up) is `waker_last`, of the task `wakee` whose last wakee is
  //   `wakee_last`, replays the memo. The caller checks the CPUs.
  static constexpr bool holds(const state& s, TaskKey waker, TaskKey waker_last, TaskKey wakee,
                              TaskKey wakee_last) noexcept {
    return s.left != 0 && s.waker == waker && waker_last == wakee && s.wakee_last == wakee_last;
  }
  // Effects: one replay spent. Returns: whether it is the measured one
  //   (the last before the next judgement); the others leave the task's
  //   next runs unmeasured.
  static constexpr bool take(state& s) noexcept {
    --s.left;
    s.quiet = s.left != 0;
    return !s.quiet;
  }
  // Returns: whether the next replay is the measured one (take() would
  //   return true).
  static constexpr bool measures(const state& s) noexcept { return s.left == 1; }
  // Returns: whether the task's current run goes unmeasured.
  static constexpr bool quiet(const state& s) noexcept { return s.quiet; }
};
static_assert(SettlePolicy<SettledPair<>>);

// Every wake-up judged in full (every kernel era; the default).
struct NoSettle {
  static constexpr bool enabled = false;
  static constexpr std::uint32_t every = 1;
  struct state {};
  static constexpr void arm(state&, TaskKey, TaskKey, WakeReason) noexcept {}
  static constexpr void clear(state&) noexcept {}
  static constexpr bool holds(const state&, TaskKey, TaskKey, TaskKey, TaskKey) noexcept { return false; }
  static constexpr bool take(state&) noexcept { return true; }
  static constexpr bool measures(const state&) noexcept { return true; }
  static constexpr bool quiet(const state&) noexcept { return false; }
};
static_assert(SettlePolicy<NoSettle>);

}  // namespace taskplace
