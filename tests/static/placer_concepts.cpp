// Compile-time checks for the composed decisions: the MachineState family
// of concepts and CpuFilter (one positive and one negative case each), and
// WakePlacer / IdleBalancer instantiated with every shipped topology.
#include <cstdint>
#include <type_traits>

#include "taskplace/idle_balancer.hpp"
#include "taskplace/testing/machine.hpp"
#include "taskplace/topology/sysfs.hpp"
#include "taskplace/topology/table.hpp"
#include "taskplace/topology/uniform.hpp"
#include "taskplace/wake_placer.hpp"

namespace tp = taskplace;

namespace {
struct Minimal {  // R1-R3 only
  bool is_idle(tp::CpuId) const;
  std::uint32_t nr_running(tp::CpuId) const;
  std::uint64_t load(tp::CpuId) const;
};
struct NoLoad {  // R3 missing
  bool is_idle(tp::CpuId) const;
  std::uint32_t nr_running(tp::CpuId) const;
};
struct NonConstIdle {  // R1 callable only on a non-const machine
  bool is_idle(tp::CpuId);
  std::uint32_t nr_running(tp::CpuId) const;
  std::uint64_t load(tp::CpuId) const;
};
struct Full : Minimal {
  std::uint32_t llc_utilization_pct(tp::CpuId) const;
  bool has_idle_core(tp::CpuId) const;
};
struct BadOptional : Minimal {
  const char* llc_utilization_pct(tp::CpuId) const;  // not a number
  void has_idle_core(tp::CpuId) const;               // not a bool
};
struct Mask {
  bool operator()(tp::CpuId) const;
};
struct NotAMask {
  void operator()(tp::CpuId) const;
};
}  // namespace

static_assert(tp::MachineState<Minimal>);
static_assert(!tp::MachineState<NoLoad>);
static_assert(!tp::MachineState<NonConstIdle>);
static_assert(!tp::MachineState<int>);
static_assert(tp::HasLlcUtilization<Full> && !tp::HasLlcUtilization<Minimal>);
static_assert(!tp::HasLlcUtilization<BadOptional>);
static_assert(tp::HasIdleCoreHint<Full> && !tp::HasIdleCoreHint<Minimal>);
static_assert(!tp::HasIdleCoreHint<BadOptional>);
static_assert(tp::CpuFilter<Mask> && tp::CpuFilter<tp::AnyCpu> && tp::CpuFilter<tp::testing::CpuMask>);
static_assert(!tp::CpuFilter<NotAMask> && !tp::CpuFilter<int>);
static_assert(tp::MachineState<tp::testing::ScriptedMachine<true, true>>);

// Every shipped topology with the default traits and a few swaps.
template class tp::WakePlacer<tp::UniformTopology>;
template class tp::WakePlacer<tp::TableTopology>;
template class tp::WakePlacer<tp::SysfsTopology>;
template class tp::WakePlacer<tp::UniformTopology, tp::traits::AlwaysAffine>;
template class tp::WakePlacer<tp::TableTopology, tp::traits::CacheHot<tp::sis_cache::ShortSleeps2023, tp::OwnerOnly>>;
namespace {
struct ClusterTraits : tp::DefaultWakeTraits {
  using Factor = tp::ClusterFactor;
};
}  // namespace
template class tp::WakePlacer<tp::SysfsTopology, ClusterTraits>;
template class tp::IdleBalancer<tp::UniformTopology>;
template class tp::IdleBalancer<tp::TableTopology>;
template class tp::IdleBalancer<tp::SysfsTopology>;
template class tp::IdleBalancer<tp::UniformTopology, tp::traits::Balance<tp::newidle::Gate2009>>;

// The placer and balancer keep a pointer to the topology: a temporary is
// refused at compile time.
static_assert(std::is_constructible_v<tp::WakePlacer<tp::UniformTopology>, const tp::UniformTopology&>);
static_assert(!std::is_constructible_v<tp::WakePlacer<tp::UniformTopology>, tp::UniformTopology>);
static_assert(!std::is_constructible_v<tp::IdleBalancer<tp::UniformTopology>, tp::UniformTopology>);
static_assert(std::is_constructible_v<tp::IdleBalancer<tp::UniformTopology>, tp::UniformTopology&>);

// The 2008 sync rule: the overlap measurement and the variants of its use.
static_assert(tp::OverlapPolicy<tp::OverlapTracker> && tp::OverlapPolicy<tp::NoOverlap>);
namespace {
struct NoAverage {  // R4 missing
  static constexpr bool enabled = true;
  struct state {};
  static void on_wake_other(state&, tp::Nanoseconds) noexcept;
  static void on_sleep(state&, tp::Nanoseconds) noexcept;
};
struct ThrowingSleep {  // R3: on_sleep must be noexcept
  static constexpr bool enabled = true;
  struct state {};
  static void on_wake_other(state&, tp::Nanoseconds) noexcept;
  static void on_sleep(state&, tp::Nanoseconds);
  static tp::Nanoseconds average(const state&) noexcept;
};
struct HalfVariant {  // R2 missing
  static constexpr bool honour_sync = true;
};
// Traits written before Traits::Overlap existed still compose: NoOverlap.
struct OldTraits {
  using Flips = tp::FlipCounter<>;
  using Wide = tp::WideDetector<>;
  using Factor = tp::LlcFactor;
  using Affine = tp::WakeAffine;
  using Search = tp::IdleSiblingSearch;
  using Reservation = tp::NoReservation;
  using Stats = tp::NoStats;
  using Hook = tp::NoHook;
};
}  // namespace
static_assert(!tp::OverlapPolicy<NoAverage> && !tp::OverlapPolicy<ThrowingSleep>);
static_assert(!tp::OverlapPolicy<int>);
static_assert(tp::SyncAffineVariant<tp::sync_affine::Unchecked2008> && tp::SyncAffineVariant<tp::sync_affine::Ignored2008>);
static_assert(!tp::SyncAffineVariant<HalfVariant> && !tp::SyncAffineVariant<int>);
static_assert(tp::detail::reads_overlap<tp::WakeAffine2008<>> && !tp::detail::reads_overlap<tp::WakeAffine>);
static_assert(std::is_same_v<tp::WakeAffine2008<>::variant, tp::sync_affine::Balanced2008>);
static_assert(std::is_same_v<tp::WakePlacer<tp::UniformTopology, OldTraits>::overlap_policy, tp::NoOverlap>);
template class tp::WakePlacer<tp::UniformTopology, tp::traits::Linux2008<>>;
template class tp::WakePlacer<tp::TableTopology, tp::traits::Linux2008<tp::sync_affine::Unchecked2008>>;
template class tp::WakePlacer<tp::SysfsTopology, tp::traits::Linux2008<tp::sync_affine::Ignored2008>>;
// The wakee_load an embedder with runnable-only loads passes, per rule.
static_assert(tp::runnable_only_wakee_load<tp::WakeAffine> == 0);
static_assert(tp::runnable_only_wakee_load<tp::WakeAffine2008<>> == 1024);
static_assert(tp::runnable_only_wakee_load<tp::affine::Always> == 0);

// SIS_CURRENT (2023): the run-duration measurement and the rule reading it.
static_assert(tp::DurationPolicy<tp::DurationTracker> && tp::DurationPolicy<tp::NoDuration>);
namespace {
struct NoStop {  // R3: a yield or preemption must be reportable (on_stop missing)
  static constexpr bool enabled = true;
  struct state {};
  static void on_run(state&, tp::Nanoseconds) noexcept;
  static void on_sleep(state&, tp::Nanoseconds) noexcept;
  static tp::Nanoseconds average(const state&) noexcept;
};
struct CountAverage {  // R4: the average is a duration, not a count
  static constexpr bool enabled = true;
  struct state {};
  static void on_run(state&, tp::Nanoseconds) noexcept;
  static void on_stop(state&, tp::Nanoseconds) noexcept;
  static void on_sleep(state&, tp::Nanoseconds) noexcept;
  static std::int64_t average(const state&) noexcept;
};
// The defaults named explicitly: today's kernel, nothing measured.
struct ExplicitDefaults : tp::DefaultWakeTraits {
  using Duration = tp::NoDuration;
  using OnCurrent = tp::NoWakeOnCurrent;
};
// What a task_state of today's kernel holds: the flips and recent_cpu.
struct FlipsAndRecent {
  tp::FlipCounter<>::state flips;
  tp::CpuId recent_cpu;
};
template <class Traits>
using task_state_of = typename tp::WakePlacer<tp::UniformTopology, Traits>::task_state;
}  // namespace
static_assert(!tp::DurationPolicy<NoStop> && !tp::DurationPolicy<CountAverage>);
static_assert(!tp::DurationPolicy<int> && !tp::DurationPolicy<tp::OverlapTracker>);
// Traits written before Traits::Duration and Traits::OnCurrent existed (and
// not derived from the defaults) still compose: nothing measured, no rule.
static_assert(std::is_same_v<tp::WakePlacer<tp::UniformTopology, OldTraits>::duration_policy, tp::NoDuration>);
static_assert(std::is_same_v<tp::WakePlacer<tp::UniformTopology, OldTraits>::on_current_rule, tp::NoWakeOnCurrent>);
static_assert(!tp::WakePlacer<tp::UniformTopology, OldTraits>::tracking_duration);
// traits::SisCurrent measures durations and applies the rule in its variant.
static_assert(tp::WakePlacer<tp::UniformTopology, tp::traits::SisCurrent<>>::tracking_duration);
static_assert(!tp::WakePlacer<tp::UniformTopology, tp::traits::Current>::tracking_duration);
static_assert(std::is_same_v<tp::WakePlacer<tp::UniformTopology, tp::traits::SisCurrent<>>::on_current_rule,
                             tp::WakeOnCurrent<tp::sis_current::MigrationCost2023>>);
static_assert(std::is_same_v<tp::WakePlacer<tp::UniformTopology, tp::traits::SisCurrent<>>::duration_policy,
                             tp::DurationTracker>);
static_assert(std::is_same_v<tp::WakePlacer<tp::UniformTopology, tp::traits::SisCurrent<tp::sis_current::Granularity2023>>::on_current_rule,
                             tp::WakeOnCurrent<tp::sis_current::Granularity2023>>);
// NoDuration and NoWakeOnCurrent cost a task nothing: the same task_state
// as today's kernel, as small as its flips and recent_cpu alone, smaller
// than SisCurrent's, which holds a DurationTracker::state.
static_assert(sizeof(task_state_of<tp::traits::Current>) == sizeof(task_state_of<ExplicitDefaults>));
static_assert(sizeof(task_state_of<tp::traits::Current>) == sizeof(task_state_of<OldTraits>));
static_assert(sizeof(task_state_of<tp::traits::Current>) == sizeof(FlipsAndRecent));
static_assert(sizeof(task_state_of<tp::traits::SisCurrent<>>) > sizeof(task_state_of<tp::traits::Current>));
template class tp::WakePlacer<tp::UniformTopology, tp::traits::SisCurrent<>>;
template class tp::WakePlacer<tp::TableTopology, tp::traits::SisCurrent<tp::sis_current::Granularity2023>>;
template class tp::WakePlacer<tp::SysfsTopology, ExplicitDefaults>;
