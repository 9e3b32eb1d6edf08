// taskplace/policy/flip_counter.hpp: how often a task switches the partner
// it wakes ("wakee flips").
//
// Provides FlipCounter<Decay, Storage>, the decays flip_decay::Wipe2013 and
// Halve2014, and the storages flip_storage::Plain and RelaxedAtomic. Kernel
// analogue: record_wakee() in kernel/sched/fair.c with task_struct's
// last_wakee, wakee_flips and wakee_flip_decay_ts. Wipe2013 follows Michael
// Wang's "sched: smart wake-affine foundation" (v3.12, 2013); Halve2014 is
// the decay the kernel has used since v3.17 (2014).
//
//   taskplace::FlipCounter<> flips;             // halving, plain fields
//   flips.record(waker.flip_state, wakee_key, clock.now());
#pragma once

#include "taskplace/detail/config.hpp"

#include <atomic>
#include <cstdint>
#include <limits>

#include "taskplace/concepts.hpp"
#include "taskplace/detail/assert.hpp"
#include "taskplace/detail/math.hpp"
#include "taskplace/fwd.hpp"
#include "taskplace/tunables.hpp"
#include "taskplace/types.hpp"

namespace taskplace {

// ---------------------------------------------------------------------------
// Decays: what happens to the count once a period.

// v3.12 (2013, Michael Wang): forget everything. Rough, but a really active
// task does not care about the loss: it rebuilds its count within a period.
namespace flip_decay {
struct Wipe2013 {
  // Returns: 0. Complexity: O(1). Thread-safety: pure.
  static constexpr std::uint32_t apply(std::uint32_t) noexcept { return 0; }
};
static_assert(FlipDecay<flip_decay::Wipe2013>);

// Since v3.17 (2014): halve. A steady 1:N waker keeps a count near twice what it
// gathers in one period instead of dropping to zero at every period edge,
// so wake_wide() does not flicker.
struct Halve2014 {
  // Returns: flips / 2 (rounded down). Complexity: O(1). Thread-safety: pure.
  static constexpr std::uint32_t apply(std::uint32_t flips) noexcept { return flips >> 1; }
};
}  // namespace flip_decay
static_assert(FlipDecay<flip_decay::Halve2014>);

// ---------------------------------------------------------------------------
// Storages: how each field of the per-task state is held.

// Plain fields: only one thread at a time touches a given state (the waker
// updates its own counter, and readers of the wakee's count are serialised
// by the embedder). Zero cost.
namespace flip_storage {
struct Plain {
  template <class T>
  struct cell {
    // Invariant: a default-constructed cell holds T{} (zero).
    constexpr T load() const noexcept { return value_; }
    constexpr void store(T v) noexcept { value_ = v; }

   private:
    T value_{};
  };
};
static_assert(FlipStorage<flip_storage::Plain>);

// Relaxed atomics: several threads may record into, or read, one state at
// the same time without a data race. Like the kernel, a read-modify-write is
// a load then a store, not an atomic increment: two concurrent record()
// calls may lose one flip. The count is a heuristic; a lost flip is harmless
// and a locked increment on every wake-up is not.
struct RelaxedAtomic {
  template <class T>
  struct cell {
    // Invariant: a default-constructed cell holds T{} (zero). Copies take a
    // relaxed snapshot, so states can live in copyable task objects.
    cell() noexcept = default;
    cell(const cell& other) noexcept : value_(other.load()) {}
    cell& operator=(const cell& other) noexcept {
      store(other.load());
      return *this;
    }
    ~cell() = default;

    T load() const noexcept { return value_.load(std::memory_order_relaxed); }
    void store(T v) noexcept { value_.store(v, std::memory_order_relaxed); }

   private:
    std::atomic<T> value_{T{}};
  };
};
}  // namespace flip_storage
static_assert(FlipStorage<flip_storage::RelaxedAtomic>);

// ---------------------------------------------------------------------------
// FlipCounter: counts how often a waker switches wakees.
//
// A high count means the task wakes many partners, or switches among a few
// quickly: either way many tasks rely on it, and pulling each of them onto
// its CPU makes them compete with it (Wang 2013: pgbench's one client process
// serving N backends lost up to 50% to wake-affine). The count is read by a
// WideRule (wide_detector.hpp).
//
// An aggregate: `FlipCounter<> f{.period = 2s};` sets the tunable.
template <FlipDecay Decay, FlipStorage Storage>
class FlipCounter {
 public:
  using decay_type = Decay;
  using storage_type = Storage;
  template <class T>
  using cell = typename Storage::template cell<T>;

  // How long a count survives before one decay. A negative value is stored
  // as zero when it is set (NonNegativeNanoseconds), so record() reads it
  // without a clamp.
  NonNegativeNanoseconds period = tunables::flip_decay_period;  // default 1s; kernel: HZ jiffies in record_wakee

  // Per-task state of a waker; lives wherever the embedder keeps its task.
  // Invariant: all fields start at zero (no last wakee, no flips, decay
  // stamp at the clock's epoch).
  struct state {
    cell<TaskKey> last_wakee;          // the partner woken last (no_task at first)
    cell<std::uint32_t> flips;         // partner switches, decayed once a period
    cell<std::int64_t> decay_stamp_ns; // when the count last decayed, in ns
  };

  // Effects: the task owning `s` has just woken `wakee` at time `now`.
  //   1. Decay, lazily and at most once per call: if `now` is strictly more
  //      than `period` after the decay stamp (kernel: time_after(jiffies,
  //      stamp + HZ)), flips = Decay::apply(flips) and the stamp becomes
  //      `now`. Three idle periods therefore give one decay, not three.
  //   2. Flip: if `wakee` differs from the last wakee, remember it and add
  //      one to flips, saturating at UINT32_MAX. Waking the same partner
  //      again never counts.
  //   A clock that goes backwards (now before the stamp) is no time passing:
  //   no decay, and the stamp is kept. A negative `period` is stored as
  //   zero, so it acts as zero: any time that passes decays.
  //   First call: the stamp starts at 0, so a first call with now > period
  //   decays a zero count (harmless) and stamps now; with now <= period (a
  //   clock whose epoch is the pool's start) the stamp stays 0 until the
  //   first period has passed. The kernel is in the first case: jiffies
  //   start far from zero.
  // Complexity: O(1), no allocation.
  // Thread-safety: with flip_storage::Plain, one thread per state at a
  //   time. With flip_storage::RelaxedAtomic, any number of threads;
  //   concurrent calls on one state may lose a flip or a decay, never
  //   corrupt it, and flips never exceed the number of record() calls made
  //   on the state.
  constexpr void record(state& s, TaskKey wakee, Nanoseconds now) const noexcept {
    const Nanoseconds stamp{s.decay_stamp_ns.load()};
    if (strictly_after(now, stamp, period)) {
      s.flips.store(Decay::apply(s.flips.load()));
      s.decay_stamp_ns.store(now.count());
    }
    if (s.last_wakee.load() != wakee) {
      s.last_wakee.store(wakee);
      s.flips.store(detail::saturating_inc(s.flips.load()));
    }
  }

  // Returns: the count as last recorded. Reading does not decay: a task that
  //   has not woken anyone for a while shows its old count, as the kernel's
  //   wakee->wakee_flips does.
  // Complexity: O(1). Thread-safety: as record().
  // Invariant: never wraps: UINT32_MAX once reached stays until a decay.
  constexpr std::uint32_t flips(const state& s) const noexcept { return s.flips.load(); }

  // Returns: the partner woken last (no_task before the first record()).
  // Complexity: O(1). Thread-safety: as record().
  constexpr TaskKey last_wakee(const state& s) const noexcept { return s.last_wakee.load(); }

 private:
  // now > stamp + period (detail::strictly_after). Invariant: period >= 0
  // (NonNegativeNanoseconds); a negative value forced in through a
  // Nanoseconds& would read as a huge period (no decay), still defined.
  static constexpr bool strictly_after(Nanoseconds now, Nanoseconds stamp,
                                       NonNegativeNanoseconds period) noexcept {
    return detail::strictly_after(now, stamp, Nanoseconds{period.count()});
  }
};

static_assert(FlipPolicy<FlipCounter<flip_decay::Halve2014, flip_storage::Plain>>);
static_assert(FlipPolicy<FlipCounter<flip_decay::Wipe2013, flip_storage::Plain>>);
static_assert(FlipPolicy<FlipCounter<flip_decay::Halve2014, flip_storage::RelaxedAtomic>>);
static_assert(FlipPolicy<FlipCounter<flip_decay::Wipe2013, flip_storage::RelaxedAtomic>>);

}  // namespace taskplace
