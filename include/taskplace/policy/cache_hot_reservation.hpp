// taskplace/policy/cache_hot_reservation.hpp: keep a short sleeper's CPU
// idle for it for a moment, so it wakes on a warm cache instead of
// migrating.
//
// Provides CacheHotReservation<Variant, Ownership>, the variants
// sis_cache::EverySleep2023 (the RFC), ShortSleeps2023 (v1) and
// HalveLong2023 (v2), the ownerships AnyTaskMayTake and
// OwnerOnly, NoReservation (today's kernel: none), and pick_idle_cpu(), the
// reservation-aware choice among idle CPUs. Kernel analogue: SIS_CACHE,
// rq->cache_hot_timeout and se.sleep_avg / se.prev_sleep_time in Chen Yu's
// "sched/fair: skip the cache hot CPU in select_idle_cpu()" (RFC Sep 2023,
// Chen 2023; v1 Sep 2023, v2 Nov 2023). Never merged.
//
//   taskplace::CacheHotReservation<> r;   // HalveLong2023, AnyTaskMayTake
//   r.on_sleep(task.sleep, cpu_state[cpu], rq_empty, key, now);  r.on_wakeup(task.sleep, now);
#pragma once

#include "taskplace/detail/config.hpp"

#include <algorithm>
#include <concepts>
#include <cstdint>
#include <iterator>
#include <limits>
#include <ranges>
#include <type_traits>

#include "taskplace/concepts.hpp"
#include "taskplace/detail/assert.hpp"
#include "taskplace/detail/math.hpp"
#include "taskplace/fwd.hpp"
#include "taskplace/tunables.hpp"
#include "taskplace/types.hpp"

namespace taskplace {

namespace detail::sis_math {
constexpr Nanoseconds non_negative(Nanoseconds d) noexcept {
  return d.count() < 0 ? Nanoseconds::zero() : d;
}
// now + d for d >= 0, saturating at the maximum.
constexpr Nanoseconds later(Nanoseconds now, Nanoseconds d) noexcept {
  return saturating_add(now, non_negative(d));
}
}  // namespace detail::sis_math

namespace detail {
// The owner field of a reservation that records none (AnyTaskMayTake: the
// owner is never read). Empty, so the per-CPU state is the timeout alone;
// it accepts the writes an owner-recording state gets, and drops them.
struct NoOwner {
  constexpr NoOwner() noexcept = default;
  constexpr NoOwner(TaskKey) noexcept {}
  constexpr NoOwner& operator=(TaskKey) noexcept { return *this; }
};
}  // namespace detail

namespace sis_cache {

// Chen 2023 (RFC, Sep 2023): every sleep is averaged, and the reservation is
// set to now + sleep_avg, replacing any earlier one. No fallback: a wakee
// that finds only reserved idle CPUs goes to the (busy) target.
struct EverySleep2023 {
  // Returns: update_avg(avg, sample); negative inputs read as 0.
  static constexpr Nanoseconds update_sleep_avg(Nanoseconds avg, Nanoseconds sample, Nanoseconds) noexcept {
    return detail::update_avg(detail::sis_math::non_negative(avg), detail::sis_math::non_negative(sample));
  }
  // Returns: now + sleep_avg (saturating).
  static constexpr Nanoseconds reserve_until(Nanoseconds, Nanoseconds now, Nanoseconds sleep_avg) noexcept {
    return detail::sis_math::later(now, sleep_avg);
  }
  static constexpr bool fallback_to_hot_idle = false;
  static constexpr std::uint32_t scan_share_den = 1;
};
static_assert(SleepReservationVariant<EverySleep2023>);

// v1 (Sep 2023): only sleeps shorter than a migration are averaged (a long
// sleep says nothing about the cache a short sleeper would find), a newer
// reservation never shortens an older one, and if every idle CPU is hot the
// first hot idle one is taken rather than stacking on a busy CPU (K Prateek
// Nayak: -50% schbench p99 at 256 workers on EPYC without it).
struct ShortSleeps2023 {
  // Returns: sample < migration_cost ? update_avg(avg, sample) : avg.
  static constexpr Nanoseconds update_sleep_avg(Nanoseconds avg, Nanoseconds sample,
                                                Nanoseconds migration_cost) noexcept {
    const Nanoseconds a = detail::sis_math::non_negative(avg);
    const Nanoseconds x = detail::sis_math::non_negative(sample);
    return x < migration_cost ? detail::update_avg(a, x) : a;
  }
  // Returns: max(hot_until, now + sleep_avg).
  static constexpr Nanoseconds reserve_until(Nanoseconds hot_until, Nanoseconds now,
                                             Nanoseconds sleep_avg) noexcept {
    return std::max(hot_until, detail::sis_math::later(now, sleep_avg));
  }
  static constexpr bool fallback_to_hot_idle = true;
  static constexpr std::uint32_t scan_share_den = 1;
};
static_assert(SleepReservationVariant<ShortSleeps2023>);

// v2 (Nov 2023): as ShortSleeps2023, but a long sleep halves the average (a task that
// turned into a long sleeper stops reserving quickly), and the
// reservation-aware part of the scan is limited to half the scan budget.
// reserve_until and fallback_to_hot_idle are ShortSleeps2023's.
struct HalveLong2023 : ShortSleeps2023 {
  // Returns: sample < migration_cost ? update_avg(avg, sample) : avg / 2.
  static constexpr Nanoseconds update_sleep_avg(Nanoseconds avg, Nanoseconds sample,
                                                Nanoseconds migration_cost) noexcept {
    const Nanoseconds a = detail::sis_math::non_negative(avg);
    const Nanoseconds x = detail::sis_math::non_negative(sample);
    return x < migration_cost ? detail::update_avg(a, x) : a / 2;
  }
  static constexpr std::uint32_t scan_share_den = 2;
};
static_assert(SleepReservationVariant<HalveLong2023>);

}  // namespace sis_cache

// ---------------------------------------------------------------------------
// Ownership: who may use a reserved CPU.

// As posted: the reservation only filters the idle-CPU scan. Every other
// path (wake-affine onto the waking CPU, a newidle pull, a task whose
// previous CPU it is) may still take the CPU. The owner itself gets its CPU
// back through the "previous CPU is idle" check, not through the scan.
struct AnyTaskMayTake {
  static constexpr bool owner_only = false;
};

// Gautham Shenoy's review suggestion: record the owner, and let only the
// owner use the CPU on any path the placer guards.
struct OwnerOnly {
  static constexpr bool owner_only = true;
};

// ---------------------------------------------------------------------------
// CacheHotReservation: the SIS_CACHE state machine.
//
// An aggregate: `CacheHotReservation<> r{.migration_cost = 250us};`.
template <SleepReservationVariant Variant, class Ownership>
class CacheHotReservation {
 public:
  static_assert(requires { { Ownership::owner_only } -> std::convertible_to<bool>; },
                "Ownership must be AnyTaskMayTake, OwnerOnly or expose `static constexpr bool owner_only`");
  static_assert(Variant::scan_share_den >= 1, "Variant::scan_share_den must be >= 1");

  using variant = Variant;
  using ownership = Ownership;
  static constexpr bool owner_only = Ownership::owner_only;
  static constexpr bool fallback_to_hot_idle = Variant::fallback_to_hot_idle;

  // Sleeps shorter than this reserve. default 500us; kernel: sysctl_sched_migration_cost
  SaturatingNanoseconds migration_cost = tunables::migration_cost;

  // Per-task state. Kernel: se.prev_sleep_time, se.sleep_avg.
  // Invariant: sleep_avg >= 0. `asleep` says whether last_dequeue holds a
  // sleep to measure. The kernel lets prev_sleep_time == 0 say "none"; here
  // every clock reading is a valid stamp (a clock whose epoch is the
  // program's start reads 0 at its first sleep, a ManualClock any value),
  // so a sleep that starts at 0 is sampled like any other.
  struct task_state {
    Nanoseconds last_dequeue{0};  // when the task last went to sleep (0 when not asleep)
    Nanoseconds sleep_avg{0};     // average sleep, per Variant
    bool asleep = false;          // on_sleep ran, and no on_wakeup since
  };

  // Per-CPU state. Kernel: rq->cache_hot_timeout (owner: review suggestion).
  // With OwnerOnly, `owner` is the task that reserved it last; with
  // AnyTaskMayTake nothing reads the owner, so it is not stored
  // (detail::NoOwner, empty): the state is 8 bytes, as the kernel's field.
  // Invariant: a reservation is live iff now < hot_until.
  using owner_type = std::conditional_t<owner_only, TaskKey, detail::NoOwner>;
  struct cpu_state {
    Nanoseconds hot_until{Nanoseconds::min()};  // reserved until then; min(): never
    [[no_unique_address]] owner_type owner{no_task};  // OwnerOnly: who reserved it last
  };

  // Effects: the task wakes; `now` is read on its previous CPU's clock (the
  //   clock it went to sleep by). The sleep now - last_dequeue folds into
  //   sleep_avg per Variant, only if the task is asleep (on_sleep ran) and
  //   now > last_dequeue (the clock-reset guard). The task is then awake
  //   (asleep false, last_dequeue 0), so a repeated call cannot count the
  //   same sleep twice.
  // Complexity: O(1). Thread-safety: one thread per task state.
  void on_wakeup(task_state& t, Nanoseconds now_on_prev_cpu) const noexcept {
    if (t.asleep && now_on_prev_cpu > t.last_dequeue) {
      const std::uint64_t d = static_cast<std::uint64_t>(now_on_prev_cpu.count()) -
                              static_cast<std::uint64_t>(t.last_dequeue.count());
      constexpr auto max = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
      const Nanoseconds sample{static_cast<std::int64_t>(std::min(d, max))};
      t.sleep_avg = detail::sis_math::non_negative(Variant::update_sleep_avg(t.sleep_avg, sample, migration_cost));
    }
    t.last_dequeue = Nanoseconds{0};
    t.asleep = false;
  }

  // Effects: task `self` goes to sleep on a CPU at `now`: last_dequeue =
  //   now, asleep = true. If the CPU becomes idle (nothing else runnable) and
  //   0 < sleep_avg < migration_cost, the CPU is reserved: hot_until per
  //   Variant::reserve_until, owner = self (OwnerOnly; not stored otherwise).
  // Complexity: O(1). Thread-safety: the CPU's and the task's owner thread.
  void on_sleep(task_state& t, cpu_state& c, bool cpu_becomes_idle, TaskKey self,
                Nanoseconds now) const noexcept {
    t.last_dequeue = now;
    t.asleep = true;
    if (cpu_becomes_idle && t.sleep_avg > Nanoseconds{0} && t.sleep_avg < migration_cost) {
      c.hot_until = Variant::reserve_until(c.hot_until, now, t.sleep_avg);
      c.owner = self;
    }
  }

  // Returns: true if the idle scan must skip this CPU for `asker`: the
  //   reservation is live (now < hot_until) and, with OwnerOnly, the asker
  //   is not the owner. With AnyTaskMayTake the owner is skipped by the
  //   scan as well; it reaches its CPU through the previous-CPU check.
  // Complexity: O(1). Thread-safety: read-only; a stale read is harmless.
  bool reserved_against(const cpu_state& c, TaskKey asker, Nanoseconds now) const noexcept {
    if (!(now < c.hot_until)) return false;
    if constexpr (owner_only) return asker != c.owner;
    (void)asker;
    return true;
  }

  // Returns: how many of a scan budget's CPUs the reservation-aware scan
  //   may use: full_budget / scan_share_den, at least 1 if full_budget > 0.
  static constexpr std::uint32_t scan_budget(std::uint32_t full_budget) noexcept {
    if (full_budget == 0) return 0;
    return std::max<std::uint32_t>(1u, full_budget / static_cast<std::uint32_t>(Variant::scan_share_den));
  }

  // Effects: drops the reservation (the owner woke there, or the CPU was
  //   used): hot_until = Nanoseconds::min(), owner = no_task (OwnerOnly).
  //   Complexity: O(1).
  void release(cpu_state& c) const noexcept {
    c.hot_until = Nanoseconds::min();
    c.owner = no_task;
  }
};

static_assert(ReservationPolicy<CacheHotReservation<sis_cache::EverySleep2023, AnyTaskMayTake>>);
static_assert(ReservationPolicy<CacheHotReservation<sis_cache::ShortSleeps2023, AnyTaskMayTake>>);
static_assert(ReservationPolicy<CacheHotReservation<sis_cache::HalveLong2023, AnyTaskMayTake>>);
static_assert(ReservationPolicy<CacheHotReservation<sis_cache::EverySleep2023, OwnerOnly>>);
static_assert(ReservationPolicy<CacheHotReservation<sis_cache::ShortSleeps2023, OwnerOnly>>);
static_assert(ReservationPolicy<CacheHotReservation<sis_cache::HalveLong2023, OwnerOnly>>);
static_assert(!CacheHotReservation<sis_cache::HalveLong2023, AnyTaskMayTake>::owner_only);
static_assert(CacheHotReservation<sis_cache::ShortSleeps2023, OwnerOnly>::owner_only);
static_assert(CacheHotReservation<sis_cache::HalveLong2023, OwnerOnly>::scan_budget(8) == 4);
static_assert(CacheHotReservation<sis_cache::EverySleep2023, AnyTaskMayTake>::scan_budget(8) == 8);
#if !defined(_MSC_VER)  // MSVC ignores [[no_unique_address]] (it has its own spelling)
static_assert(sizeof(CacheHotReservation<sis_cache::HalveLong2023, AnyTaskMayTake>::cpu_state) ==
              sizeof(Nanoseconds));
#endif
static_assert(sizeof(CacheHotReservation<sis_cache::HalveLong2023, OwnerOnly>::cpu_state) ==
              2 * sizeof(Nanoseconds));

// Today's kernel: no reservation ever. Same API, every call a no-op,
// reserved_against always false.
struct NoReservation {
  static constexpr bool owner_only = false;
  static constexpr bool fallback_to_hot_idle = false;
  struct task_state {};
  struct cpu_state {};
  void on_wakeup(task_state&, Nanoseconds) const noexcept {}
  void on_sleep(task_state&, cpu_state&, bool, TaskKey, Nanoseconds) const noexcept {}
  bool reserved_against(const cpu_state&, TaskKey, Nanoseconds) const noexcept { return false; }
  static constexpr std::uint32_t scan_budget(std::uint32_t full_budget) noexcept { return full_budget; }
  void release(cpu_state&) const noexcept {}
};
static_assert(ReservationPolicy<NoReservation>);

// ---------------------------------------------------------------------------
// pick_idle_cpu: the reservation-aware choice among idle CPUs.
//
// Returns: the first CPU of `idle_cpus` not reserved against `asker`; if
//   every one is reserved, the first of them when the policy's variant
//   falls back to hot idle CPUs (ShortSleeps2023, HalveLong2023), else
//   no_cpu (EverySleep2023: the caller then stacks on its target). no_cpu
//   for an empty range.
// `cpu_states` is indexed by CpuId (a vector, span or array of the
// policy's cpu_state). Precondition (checked): every idle CPU indexes into
// it; unchecked builds skip a CPU past its end.
// Complexity: O(size of idle_cpus), no allocation. Thread-safety: read-only.
template <class Reservation, std::ranges::input_range IdleCpus, std::ranges::random_access_range CpuStates>
  requires std::convertible_to<std::ranges::range_reference_t<IdleCpus>, CpuId> &&
           std::ranges::sized_range<CpuStates>
CpuId pick_idle_cpu(const Reservation& r, IdleCpus&& idle_cpus, const CpuStates& cpu_states, TaskKey asker,
                    Nanoseconds now) TASKPLACE_NOEXCEPT {
  CpuId first_hot = no_cpu;
  const auto n = static_cast<std::uint64_t>(std::ranges::size(cpu_states));
  for (auto&& x : idle_cpus) {
    const auto c = static_cast<CpuId>(x);
    TASKPLACE_EXPECTS(c < n, "idle CPU must index into cpu_states");
    if (c >= n) continue;
    if (!r.reserved_against(std::ranges::begin(cpu_states)[c], asker, now)) return c;
    if (first_hot == no_cpu) first_hot = c;
  }
  return Reservation::fallback_to_hot_idle ? first_hot : no_cpu;
}

}  // namespace taskplace
