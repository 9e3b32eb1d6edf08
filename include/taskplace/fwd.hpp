// taskplace/fwd.hpp: every front-door class template with its defaults,
// in one short page.
//
// Read this header to see what the library's defaults are; include the
// policy headers (or taskplace.hpp) to use them. Each default is today's
// kernel behaviour unless the line says otherwise.
//
//   taskplace::FlipCounter<> flips;                      // HalveDecay, plain fields
//   taskplace::FlipCounter<taskplace::WipeDecay> flips_2013;
#pragma once

#include "taskplace/detail/config.hpp"

#include <cstdint>

#include "taskplace/concepts.hpp"

namespace taskplace {

// --- FlipCounter (kernel record_wakee) -------------------------------------
struct WipeDecay;             // v3.12 (2013): flips = 0 once a period
struct HalveDecay;            // since v3.13: flips >>= 1 once a period  [default]
struct PlainStorage;          // plain fields: one thread touches the state  [default]
struct RelaxedAtomicStorage;  // relaxed atomics: several threads, no data race
template <FlipDecay Decay = HalveDecay, FlipStorage Storage = PlainStorage>
class FlipCounter;

// --- WideDetector (kernel wake_wide) ---------------------------------------
struct Wang2013;        // v3.12: e > f && w > f*e
struct Symmetric2015;   // v4.2 to today: lo >= f && hi >= f*lo  [default]
struct MasterOnly2017;  // seed 004 experiment: hi >= f*lo
template <WideRule Rule = Symmetric2015>
struct WideDetector;

// --- Factor policies (kernel sd_llc_size) ----------------------------------
struct LlcFactor;        // CPUs sharing the waking CPU's LLC  [default]
struct NodeFactor;       // CPUs in the waking CPU's node (2013 v1)
template <std::uint32_t N>
struct FixedFactor;      // a constant
struct CoresPerLlcFactor;  // physical cores in the waking CPU's LLC
struct ClusterFactor;    // CPUs in the waking CPU's cluster level (CLS), else its LLC

// --- NewidleCostTracker (kernel avg_idle, max_newidle_lb_cost) -------------
struct Low2013;           // update_avg, then clamp to 2*max cost  [default]
struct Pre2013;           // delta > cap ? cap : update_avg
struct DecayEverySecond;  // 2013: decay once a period, unconditionally
struct DecayIfNoNewMax;   // v5.16: decay after a period without a new max  [default]
template <std::uint32_t Num, std::uint32_t Den>
struct DecayRatio;        // 253/256 [default], 254/256, 63/64
struct NoEntryGate;       // always try
struct MigrationCostGate; // 2009-2021: skip if avg_idle < migration_cost
struct FirstLevelGate;    // v5.16+: skip if avg_idle < level 0's max cost  [default]
struct NoLevelBudget;     // visit every level
struct LevelBudget;       // stop if avg_idle < spent + level cost  [default]
struct LevelBudgetPlusMigration;  // seed 003 RFC 3/3: ... + migration_cost
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

// --- CacheHotReservation (SIS_CACHE, never merged) -------------------------
namespace sis_cache {
struct Rfc2023;  // seed 002: average every sleep, hot_until = now + avg
struct V1;       // Sep 2023: average short sleeps, max(), hot fallback
struct V2;       // Nov 2023: long sleeps halve, half the scan budget  [default]
}  // namespace sis_cache
struct AnyTaskMayTake;  // a reserved CPU is skipped by the scan only  [default]
struct OwnerOnly;       // record the owner: only it may use the CPU
template <SleepReservationVariant Variant = sis_cache::V2, class Ownership = AnyTaskMayTake>
class CacheHotReservation;

// --- TaskHot (kernel task_hot, can_migrate_task's cache test) ------------
namespace task_hot {
struct Classic;        // CFS to v5.9: SMT moves are tested too
struct SmtExempt2020;  // v5.10+: never hot between SMT siblings  [default]
}  // namespace task_hot
template <TaskHotRule Rule = task_hot::SmtExempt2020>
class TaskHot;

// --- OverlapTracker (kernel avg_overlap, 2008-2010) ------------------------
struct OverlapTracker;  // measures how long a task runs after waking another
struct NoOverlap;       // measures nothing (today's kernel)  [default of WakePlacer]

// --- The 2008 wake_affine (seed 001) ----------------------------------------
namespace sync2008 {
struct Unchecked;  // 2.6.25: a sync wake-up of two short-overlap tasks always pulls
struct Balanced;   // 2.6.26: the pull also needs the balance test  [default]
struct Ignored;    // SYNC_WAKEUPS off: the load test alone
}  // namespace sync2008
template <SyncAffineVariant Variant = sync2008::Balanced>
struct WakeAffine2008;

// --- SIS_CURRENT (2023, never merged) ----------------------------------------
struct DurationTracker;  // measures a task's average run between sleeps (dur_avg)
struct NoDuration;       // measures nothing (today's kernel)  [default of WakePlacer]
namespace sis_current {
struct V7;  // v7: short below an eighth of the scaled minimum granularity
struct V8;  // v8: short below the migration cost  [default]
}  // namespace sis_current
template <ShortTaskVariant Variant = sis_current::V8>
struct WakeOnCurrent;    // a short pair that wakes each other stays on the waking CPU
struct NoWakeOnCurrent;  // no such rule (today's kernel)  [default of WakePlacer]

// --- The composed decisions ------------------------------------------------
struct DefaultWakeTraits;     // today's kernel select_task_rq_fair for wake-ups
template <Topology T, class Traits = DefaultWakeTraits>
class WakePlacer;
struct DefaultBalanceTraits;  // today's kernel newidle_balance
template <Topology T, class Traits = DefaultBalanceTraits>
class IdleBalancer;

}  // namespace taskplace
