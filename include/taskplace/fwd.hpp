// taskplace/fwd.hpp: every front-door class template with its defaults,
// in one short page.
//
// Read this header to see what the library's defaults are; include the
// policy headers (or taskplace.hpp) to use them. Each default is today's
// kernel behaviour unless the line says otherwise.
//
//   taskplace::FlipCounter<> flips;                      // flip_decay::Halve2014, plain fields
//   taskplace::FlipCounter<taskplace::flip_decay::Wipe2013> flips_2013;
//
// Era variants live in a namespace named after their heuristic and are
// called <what they do><year of the kernel release they follow> (the year
// posted, for patches never merged); docs/names.md lists the old names.
#pragma once

#include "taskplace/detail/config.hpp"

#include <cstdint>

#include "taskplace/concepts.hpp"

namespace taskplace {

// --- FlipCounter (kernel record_wakee) -------------------------------------
namespace flip_decay {
struct Wipe2013;   // v3.12 (2013): flips = 0 once a period
struct Halve2014;  // v3.17 (2014) to today: flips >>= 1 once a period  [default]
}  // namespace flip_decay
namespace flip_storage {
struct Plain;          // plain fields: one thread touches the state  [default]
struct RelaxedAtomic;  // relaxed atomics: several threads, no data race
}  // namespace flip_storage
template <FlipDecay Decay = flip_decay::Halve2014, FlipStorage Storage = flip_storage::Plain>
class FlipCounter;

// --- WideDetector (kernel wake_wide) ---------------------------------------
namespace wide {
struct OneSided2013;    // v3.12 (2013): e > f && w > f*e
struct Symmetric2015;   // v4.3 (2015) to today: lo >= f && hi >= f*lo  [default]
struct MasterOnly2017;  // Fleming 2017's experiment, never merged: hi >= f*lo
struct Never;           // never wide (baseline)
struct Always;          // always wide (baseline)
}  // namespace wide
template <WideRule Rule = wide::Symmetric2015>
struct WideDetector;

// --- Factor policies (kernel sd_llc_size) ----------------------------------
struct LlcFactor;        // CPUs sharing the waking CPU's LLC  [default]
struct NodeFactor;       // CPUs in the waking CPU's node (2013 v1)
template <std::uint32_t N>
struct FixedFactor;      // a constant
struct CoresPerLlcFactor;  // physical cores in the waking CPU's LLC
struct ClusterFactor;    // CPUs in the waking CPU's cluster level (CLS), else its LLC

// --- NewidleCostTracker (kernel avg_idle, max_newidle_lb_cost) -------------
namespace avg_idle {
struct Saturate2009;  // v2.6.32 (2009) to v3.12: delta > cap ? cap : update_avg
struct Clamp2014;     // v3.13 (2014) to today: update_avg, then clamp to 2*max cost  [default]
}  // namespace avg_idle
namespace cost_decay {
struct EverySecond2014;  // v3.13 (2014) to v5.15: decay once a period, unconditionally
struct IfNoNewMax2022;   // v5.16 (2022) to today: decay after a period without a new max  [default]
}  // namespace cost_decay
template <std::uint32_t Num, std::uint32_t Den>
struct DecayRatio;        // 253/256 [default], 254/256, 63/64
namespace newidle_gate {
struct None;               // always try
struct MigrationCost2009;  // v2.6.32 (2009) to v5.15: skip if avg_idle < migration_cost
struct FirstLevel2022;     // v5.16 (2022) on: skip if avg_idle < level 0's max cost  [default]
}  // namespace newidle_gate
namespace level_budget {
struct None;                    // visit every level
struct Spent2014;               // v3.13 (2014) on: stop if avg_idle < spent + level cost  [default]
struct SpentPlusMigration2013;  // Low 2013's RFC 3/3, never merged: ... + migration_cost
}  // namespace level_budget
struct DefaultNewidleTraits;
template <class Traits = DefaultNewidleTraits>
class NewidleCostTracker;

// --- Newidle attempts (kernel newidle_ratio, NI_RANDOM / NI_RATE) ---------
struct AttemptEveryLevel;  // try every level the budget allows  [default of IdleBalancer; the kernel since v6.18 throws dice]
namespace success_rate {
struct Proportional2025;      // v6.18: try with odds (2 + ratio) / 1024
struct ProportionalRate2026;  // v7.0: plus a rate term; ratio 1024 always tries  [default of NewidleSuccessRate]
}  // namespace success_rate
template <SuccessRateVariant Variant = success_rate::ProportionalRate2026>
class NewidleSuccessRate;

// --- IdleSiblingSearch (kernel select_idle_sibling) ------------------------
struct IdleSiblingSearch;  // v6.8+: the target's cluster first  [default of WakePlacer]
namespace sis_cluster {
struct LlcOnly2022;  // v6.0-v6.7: SIS_UTIL, the LLC walk only
}  // namespace sis_cluster
namespace sis_walk {
struct IdleGroup2013;  // v3.9-v4.8: the first wholly idle core of the LLC, then the target's siblings
}  // namespace sis_walk

// --- CacheHotReservation (SIS_CACHE, never merged) -------------------------
namespace sis_cache {
struct EverySleep2023;   // Chen 2023's RFC: average every sleep, hot_until = now + avg
struct ShortSleeps2023;  // v1, Sep 2023: average short sleeps, max(), hot fallback
struct HalveLong2023;    // v2, Nov 2023: long sleeps halve, half the scan budget  [default]
}  // namespace sis_cache
struct AnyTaskMayTake;  // a reserved CPU is skipped by the scan only  [default]
struct OwnerOnly;       // record the owner: only it may use the CPU
template <SleepReservationVariant Variant = sis_cache::HalveLong2023,
          class Ownership = AnyTaskMayTake>
class CacheHotReservation;

// --- TaskHot (kernel task_hot, can_migrate_task's cache test) ------------
namespace task_hot {
struct AllLevels2007;  // v2.6.23 (2007, CFS) to v5.9: SMT moves are tested too
struct SmtExempt2020;  // v5.10+: never hot between SMT siblings  [default]
}  // namespace task_hot
template <TaskHotRule Rule = task_hot::SmtExempt2020>
class TaskHot;

// --- OverlapTracker (kernel avg_overlap, 2008-2010) ------------------------
struct OverlapTracker;  // measures how long a task runs after waking another
struct NoOverlap;       // measures nothing (today's kernel)  [default of WakePlacer]

// --- The affine step's baselines (WakeAffine is the kernel's, v4.15 on) -----
namespace affine {
struct Always;  // pull every wakee: the 2.6.23-2.6.26 sync wake-ups
struct Never;   // never pull: the wakee goes back to its previous CPU
}  // namespace affine

// --- The 2008 wake_affine (Smith 2008) -------------------------------------
namespace sync_affine {
struct Unchecked2008;  // 2.6.25: a sync wake-up of two short-overlap tasks always pulls
struct Balanced2008;   // 2.6.26: the pull also needs the balance test  [default]
struct Ignored2008;    // SYNC_WAKEUPS off: the load test alone
}  // namespace sync_affine
template <SyncAffineVariant Variant = sync_affine::Balanced2008>
struct WakeAffine2008;
struct WakeAffine2013;  // v3.12 (2.6.36-v3.15): the load test and the load-per-task test, no idle test

// --- SIS_CURRENT (2023, never merged) ----------------------------------------
struct DurationTracker;  // measures a task's average run between sleeps (dur_avg)
struct NoDuration;       // measures nothing (today's kernel)  [default of WakePlacer]
namespace sis_current {
struct Granularity2023;    // v7: short below an eighth of the scaled minimum granularity
struct MigrationCost2023;  // v8: short below the migration cost  [default]
}  // namespace sis_current
template <ShortTaskVariant Variant = sis_current::MigrationCost2023>
struct WakeOnCurrent;    // a short pair that wakes each other stays on the waking CPU
struct NoWakeOnCurrent;  // no such rule (today's kernel)  [default of WakePlacer]

// --- SettledPair (no kernel: the runtime set's memo of a settled pair) ------
template <std::uint8_t Every = 8>
struct SettledPair;  // replay CostGate's verdict on Every - 1 of Every wake-ups (traits::Runtime: 8)
struct NoSettle;     // judge every wake-up (every kernel era)  [default of WakePlacer]

// --- For user-space runtimes (traits::Runtime) ---------------------------
struct CostGate;     // the wakee stays when a move would cost more than it gains
struct KeepVerdict;  // CostGate's answer: kept, and why

// --- The composed decisions ------------------------------------------------
struct DefaultWakeTraits;     // today's kernel select_task_rq_fair for wake-ups
template <Topology T, class Traits = DefaultWakeTraits>
class WakePlacer;
// today's kernel's newidle cost limits, every level they allow tried: no
// success-rate dice (traits::BalanceLinux2026 adds them)
struct DefaultBalanceTraits;
template <Topology T, class Traits = DefaultBalanceTraits>
class IdleBalancer;

}  // namespace taskplace
