// taskplace/stats.hpp: schedstat-like counters and decision hooks for the
// composed WakePlacer and IdleBalancer.
//
// Kernel analogue: schedstats (ttwu_wake_remote, ttwu_move_affine,
// sis_search, lb_count[CPU_NEWLY_IDLE], ...). Counters compile to nothing
// with NoStats (the default); PlainStats suits a placer owned by one worker
// and read by it, SingleWriterStats one owned by a worker and read by
// others, AtomicStats one shared by many.
//
//   struct traced : taskplace::DefaultWakeTraits { using Stats = taskplace::AtomicStats; };
//   placer.stats().get(taskplace::WakeCounter::wide);
#pragma once

#include "taskplace/detail/config.hpp"

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>

#include "taskplace/concepts.hpp"

namespace taskplace {

// Counters of the wake placer (one wake-up can bump several).
enum class WakeCounter : std::uint8_t {
  wakeups,            // place() calls
  wide,               // the wide rule said: do not pull toward the waker
  affine_considered,  // waking and prev CPU differ and the pull was considered
  affine_pulled,      // the affine step chose the waking CPU
  prev_kept,          // the affine step (or the wide rule) kept prev
  idle_target,        // the target itself was idle
  idle_prev,          // prev was idle and shares cache with the target
  idle_recent,        // the recently used CPU was idle and shares cache
  idle_core,          // the scan found a whole idle core
  idle_scan,          // the scan found an idle CPU
  hot_fallback,       // every idle CPU seen was reserved: took the first one
  target_busy,        // nothing idle found: target returned
  scanned_cpus,       // sum of CPUs looked at by the scan
  reservation_skips,  // idle CPUs skipped because reserved for another task
  affinity_fallback,  // the chosen CPU was not allowed: fell back
  current_cpu,        // hand-offs placed on the waking CPU (Wakeup::current_cpu)
  wake_on_current,    // short pairs kept on the waking CPU (WakeOnCurrent)
  idle_smt_sibling,   // an idle SMT sibling of prev (kernel select_idle_smt)
  waker_blocks,       // kept on the waking CPU: the waker sleeps first (CostGate)
  short_work,         // kept on the waking CPU: the work is shorter than a move (CostGate)
  busy_short,         // the waking CPU, not a busy target: the run is shorter than a move (CostGate)
  costly_idle,        // the waking CPU, not the idle CPU found: waking it costs more (CostGate)
  settled,            // a settled pair's verdict replayed, not judged again (SettledPair)
  count_
};

constexpr const char* to_string(WakeCounter c) noexcept {
  constexpr const char* names[] = {
      "wakeups",   "wide",        "affine_considered", "affine_pulled",
      "prev_kept", "idle_target", "idle_prev",         "idle_recent",
      "idle_core", "idle_scan",   "hot_fallback",      "target_busy",
      "scanned_cpus", "reservation_skips", "affinity_fallback", "current_cpu",
      "wake_on_current", "idle_smt_sibling", "waker_blocks", "short_work", "busy_short", "costly_idle",
      "settled"};
  static_assert(std::size(names) == static_cast<std::size_t>(WakeCounter::count_));
  return names[static_cast<std::size_t>(c)];
}

// Counters of the idle balancer.
enum class BalanceCounter : std::uint8_t {
  runs,              // balance() calls
  entry_gate_skips,  // avg_idle too short to balance at all
  budget_stops,      // stopped before a level: not worth its cost
  levels_visited,    // pull attempts made (one per level visited)
  pulls,             // attempts that found work
  nothing_found,     // runs that visited every allowed level and found nothing
  idle_periods,      // idle periods folded into avg_idle
  decays,            // periodic ticks
  levels_skipped,    // levels the success-rate dice passed over (Attempts other than AttemptEveryLevel)
  not_overloaded_skips,  // runs not tried: the caller said no CPU had a task to spare
  count_
};

constexpr const char* to_string(BalanceCounter c) noexcept {
  constexpr const char* names[] = {"runs",  "entry_gate_skips", "budget_stops",
                                   "levels_visited", "pulls", "nothing_found",
                                   "idle_periods", "decays", "levels_skipped",
                                   "not_overloaded_skips"};
  static_assert(std::size(names) == static_cast<std::size_t>(BalanceCounter::count_));
  return names[static_cast<std::size_t>(c)];
}

// No counters: every add() is a no-op the optimiser removes. [default]
struct NoStats {
  template <class Counter>
  struct counters {
    static constexpr bool enabled = false;
    constexpr void add(Counter, std::uint64_t = 1) noexcept {}
    constexpr std::uint64_t get(Counter) const noexcept { return 0; }
    constexpr void reset() noexcept {}
  };
};
static_assert(StatsPolicy<NoStats, WakeCounter> && StatsPolicy<NoStats, BalanceCounter>);

// Plain 64-bit counters. Thread-safety: one writer at a time (a placer owned
// by one worker); reading from another thread is a data race.
struct PlainStats {
  template <class Counter>
  struct counters {
    static constexpr bool enabled = true;
    void add(Counter c, std::uint64_t n = 1) noexcept { v[index(c)] += n; }
    std::uint64_t get(Counter c) const noexcept { return v[index(c)]; }
    void reset() noexcept { v.fill(0); }

   private:
    static constexpr std::size_t index(Counter c) noexcept { return static_cast<std::size_t>(c); }
    std::array<std::uint64_t, static_cast<std::size_t>(Counter::count_)> v{};
  };
};
static_assert(StatsPolicy<PlainStats, WakeCounter> && StatsPolicy<PlainStats, BalanceCounter>);

namespace detail {
// Relaxed atomic counters any thread may read; how they are added is the
// derived type's.
template <class Counter>
struct relaxed_counters {
  static constexpr bool enabled = true;
  std::uint64_t get(Counter c) const noexcept { return v[index(c)].load(std::memory_order_relaxed); }
  void reset() noexcept {
    for (auto& x : v) x.store(0, std::memory_order_relaxed);
  }

 protected:
  static constexpr std::size_t index(Counter c) noexcept { return static_cast<std::size_t>(c); }
  std::array<std::atomic<std::uint64_t>, static_cast<std::size_t>(Counter::count_)> v{};
};
}  // namespace detail

// Relaxed atomic counters: any number of threads may add and read. Each add
// is a locked instruction on a shared line; prefer one placer per worker
// with SingleWriterStats where wake-ups are very frequent.
struct AtomicStats {
  template <class Counter>
  struct counters : detail::relaxed_counters<Counter> {
    void add(Counter c, std::uint64_t n = 1) noexcept {
      this->v[this->index(c)].fetch_add(n, std::memory_order_relaxed);
    }
  };
};
static_assert(StatsPolicy<AtomicStats, WakeCounter> && StatsPolicy<AtomicStats, BalanceCounter>);

// Relaxed atomic counters with one writer: the thread that owns the placer
// or balancer adds (a relaxed load and store, no locked instruction), any
// thread may read while it runs. Kernel analogue: per-CPU schedstats,
// written by their CPU, read through /proc/schedstat. Two threads adding
// at once may lose counts (never a data race): a placer shared by several
// threads wants AtomicStats, or a lock. reset() from another thread may
// be overwritten by an add in flight: reset while the writer is quiet.
struct SingleWriterStats {
  template <class Counter>
  struct counters : detail::relaxed_counters<Counter> {
    void add(Counter c, std::uint64_t n = 1) noexcept {
      auto& x = this->v[this->index(c)];
      x.store(x.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
    }
  };
};
static_assert(StatsPolicy<SingleWriterStats, WakeCounter> && StatsPolicy<SingleWriterStats, BalanceCounter>);

// Effects: adds each counter of `from` (any policy's counters of Counter)
// to `to`: the sum of several placers' or balancers' counters, one per
// worker (the pool, the Boost.Fiber group).
template <class Counter, class From>
void add_counters(PlainStats::counters<Counter>& to, const From& from) noexcept {
  for (std::size_t i = 0; i < static_cast<std::size_t>(Counter::count_); ++i)
    to.add(static_cast<Counter>(i), from.get(static_cast<Counter>(i)));
}

// A hook that ignores every decision. [default] A user hook is any
// default-constructible type callable with the decision's event (WakeEvent
// for the placer, BalanceEvent for the balancer): a DecisionHook
// (concepts.hpp). It is stored in the placer or balancer and called once
// per decision.
struct NoHook {
  static constexpr bool enabled = false;
  template <class Event>
  constexpr void operator()(const Event&) const noexcept {}
};

namespace detail {
template <class Hook>
constexpr bool hook_enabled() noexcept {
  if constexpr (requires { Hook::enabled; }) {
    return Hook::enabled;
  } else {
    return true;
  }
}
}  // namespace detail

}  // namespace taskplace
