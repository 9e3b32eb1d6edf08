// Compile-time checks for the concepts of WakePlacer's and IdleBalancer's
// traits members and callbacks (taskplace/concepts.hpp: AffinePolicy,
// SearchPolicy, ReservationPolicy, OnCurrentRule, StatsCounters,
// StatsPolicy, DecisionHook, NewidleTracker, NewidlePull, and the
// MachineState's optional members): every shipped model, a user-written
// model of each, and the mistakes tests/compile_fail makes, refused by the
// concept. Then a traits set of user-written models composes, each member
// kept as given. This file compiling is the test.
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <span>
#include <type_traits>

#include "taskplace/idle_balancer.hpp"
#include "taskplace/testing/machine.hpp"
#include "taskplace/topology/table.hpp"
#include "taskplace/topology/uniform.hpp"
#include "taskplace/wake_placer.hpp"

namespace taskplace_static_members {

using namespace taskplace;
using Topo = UniformTopology;
using AnyTopo = detail::TopologyArchetype;

// --- AffinePolicy --------------------------------------------------------------
static_assert(AffinePolicy<WakeAffine, Topo> && AffinePolicy<WakeAffine, AnyTopo>);
static_assert(AffinePolicy<WakeAffine2008<>, Topo> && AffinePolicy<WakeAffine2008<sync_affine::Ignored2008>, Topo>);
static_assert(AffinePolicy<affine::Always, TableTopology> && AffinePolicy<affine::Never, Topo>);
// A user's rule: prev if it is idle, else the waking CPU.
struct PrevIfIdle {
  template <Topology T, MachineState M>
  AffineDecision decide(const AffineInput<T, M>& in) const {
    return in.machine.is_idle(in.prev) ? AffineDecision{in.prev, AffineReason::prev_idle}
                                       : AffineDecision{in.waking, AffineReason::idle_waking};
  }
};
static_assert(AffinePolicy<PrevIfIdle, Topo>);
struct MisnamedDecide {  // R2: decides, not decide
  template <Topology T, MachineState M>
  AffineDecision decides(const AffineInput<T, M>& in) const;
};
struct NonConstDecide {  // R2: decide on a const policy
  template <Topology T, MachineState M>
  AffineDecision decide(const AffineInput<T, M>& in);
};
struct CpuDecide {  // R2: returns a CPU, not an AffineDecision
  template <Topology T, MachineState M>
  CpuId decide(const AffineInput<T, M>& in) const;
};
struct OneMachineDecide {  // R2: written for one machine state, not every one
  AffineDecision decide(const AffineInput<Topo, testing::ScriptedMachine<>>& in) const;
};
struct NoDefaultAffine {  // R1
  explicit NoDefaultAffine(int);
  template <Topology T, MachineState M>
  AffineDecision decide(const AffineInput<T, M>& in) const;
};
static_assert(!AffinePolicy<MisnamedDecide, Topo> && !AffinePolicy<NonConstDecide, Topo>);
static_assert(!AffinePolicy<CpuDecide, Topo> && !AffinePolicy<OneMachineDecide, Topo>);
static_assert(!AffinePolicy<NoDefaultAffine, Topo> && !AffinePolicy<int, Topo> && !AffinePolicy<void, Topo>);
static_assert(!AffinePolicy<WakeAffine, int>);  // not a topology

// --- SearchPolicy --------------------------------------------------------------
using Reserve = CacheHotReservation<>;
static_assert(SearchPolicy<IdleSiblingSearch, Topo> && SearchPolicy<IdleSiblingSearch, Topo, Reserve>);
static_assert(SearchPolicy<IdleSiblingSearch, TableTopology, CacheHotReservation<sis_cache::EverySleep2023, OwnerOnly>>);
static_assert(SearchPolicy<NoSearch, Topo> && SearchPolicy<NoSearch, Topo, Reserve>);
// A user's search: the target, always, having looked at nothing.
struct TargetOnly {
  static constexpr bool enabled = true;
  template <Topology T, MachineState M, CpuFilter F, class R>
  SearchResult search(const SearchInput<T, M, F, R>& in) const {
    return {in.target, WakeReason::target_busy};
  }
};
static_assert(SearchPolicy<TargetOnly, Topo> && SearchPolicy<TargetOnly, Topo, Reserve>);
struct Disabled {  // R2: disabled, nothing else asked
  static constexpr bool enabled = false;
};
struct MisnamedSearch {  // R3: find, not search
  static constexpr bool enabled = true;
  template <class Input>
  SearchResult find(const Input&) const;
};
struct NoEnabled {  // R2 missing
  template <class Input>
  SearchResult search(const Input&) const;
};
struct RuntimeEnabled {  // R2: a run-time flag, not a constant
  bool enabled = true;
  template <class Input>
  SearchResult search(const Input&) const;
};
struct WithoutReservation {  // R3: cannot take a reservation policy
  static constexpr bool enabled = true;
  template <Topology T, MachineState M, CpuFilter F>
  SearchResult search(const SearchInput<T, M, F, void>&) const;
};
static_assert(SearchPolicy<Disabled, Topo> && !SearchPolicy<MisnamedSearch, Topo>);
static_assert(!SearchPolicy<NoEnabled, Topo> && !SearchPolicy<RuntimeEnabled, Topo> && !SearchPolicy<int, Topo>);
static_assert(SearchPolicy<WithoutReservation, Topo> && !SearchPolicy<WithoutReservation, Topo, Reserve>);

// --- ReservationPolicy ---------------------------------------------------------
static_assert(ReservationPolicy<NoReservation> && ReservationPolicy<CacheHotReservation<>>);
static_assert(ReservationPolicy<CacheHotReservation<sis_cache::ShortSleeps2023, OwnerOnly>>);
static_assert(!ReservationPolicy<sis_cache::HalveLong2023>);  // a variant, not the policy
static_assert(!ReservationPolicy<int> && !ReservationPolicy<void>);
struct ThrowingSleep : NoReservation {  // R4: on_sleep may throw
  void on_sleep(task_state&, cpu_state&, bool, TaskKey, Nanoseconds) const {}
};
struct NoRelease {  // R7 missing
  static constexpr bool owner_only = false;
  static constexpr bool fallback_to_hot_idle = false;
  struct task_state {};
  struct cpu_state {};
  void on_wakeup(task_state&, Nanoseconds) const noexcept;
  void on_sleep(task_state&, cpu_state&, bool, TaskKey, Nanoseconds) const noexcept;
  bool reserved_against(const cpu_state&, TaskKey, Nanoseconds) const noexcept;
  static std::uint32_t scan_budget(std::uint32_t) noexcept;
};
struct WithRelease : NoRelease {
  void release(cpu_state&) const noexcept;
};
static_assert(!ReservationPolicy<ThrowingSleep> && !ReservationPolicy<NoRelease> && ReservationPolicy<WithRelease>);

// --- OnCurrentRule -------------------------------------------------------------
static_assert(OnCurrentRule<NoWakeOnCurrent> && OnCurrentRule<WakeOnCurrent<>>);
static_assert(OnCurrentRule<WakeOnCurrent<sis_current::Granularity2023>>);
static_assert(!OnCurrentRule<sis_current::MigrationCost2023>);  // a variant, not the rule
struct MemberDecideRule {  // R2: decide must be static
  static constexpr bool enabled = true;
  bool decide(const WakeOnCurrentInput&) const noexcept;
};
struct ThrowingRule {  // R2: decide must be noexcept
  static constexpr bool enabled = true;
  static bool decide(const WakeOnCurrentInput&);
};
static_assert(!OnCurrentRule<MemberDecideRule> && !OnCurrentRule<ThrowingRule> && !OnCurrentRule<int>);

// --- StatsCounters, StatsPolicy --------------------------------------------------
static_assert(StatsPolicy<NoStats, WakeCounter> && StatsPolicy<PlainStats, BalanceCounter>);
static_assert(StatsPolicy<AtomicStats, WakeCounter> && StatsPolicy<SingleWriterStats, BalanceCounter>);
static_assert(StatsCounters<PlainStats::counters<WakeCounter>, WakeCounter>);
static_assert(!StatsCounters<PlainStats::counters<WakeCounter>, BalanceCounter>);  // indexed by the other enum
// A set of counters is not the family (clang 14 once took it for one).
static_assert(!StatsPolicy<PlainStats::counters<WakeCounter>, WakeCounter>);
static_assert(!StatsPolicy<AtomicStats::counters<BalanceCounter>, BalanceCounter>);
static_assert(!StatsPolicy<NoStats::counters<WakeCounter>, WakeCounter>);
static_assert(!StatsPolicy<int, WakeCounter> && !StatsPolicy<void, BalanceCounter>);
// A user's family: counts wake-ups only.
struct WakeupsOnly {
  template <class Counter>
  struct counters {
    static constexpr bool enabled = true;
    std::uint64_t n = 0;
    void add(Counter c, std::uint64_t k = 1) noexcept { n += c == Counter{} ? k : 0; }
    std::uint64_t get(Counter c) const noexcept { return c == Counter{} ? n : 0; }
    void reset() noexcept { n = 0; }
  };
};
struct ThrowingAdd {  // R3: add may throw
  template <class Counter>
  struct counters {
    static constexpr bool enabled = true;
    void add(Counter, std::uint64_t = 1);
    std::uint64_t get(Counter) const noexcept;
    void reset() noexcept;
  };
};
static_assert(StatsPolicy<WakeupsOnly, WakeCounter> && StatsPolicy<WakeupsOnly, BalanceCounter>);
static_assert(!StatsPolicy<ThrowingAdd, WakeCounter>);

// --- DecisionHook --------------------------------------------------------------
static_assert(DecisionHook<NoHook, WakeEvent> && DecisionHook<NoHook, BalanceEvent>);
struct WakeLog {
  void operator()(const WakeEvent&) noexcept {}
};
struct MutableLog {  // called on a non-const hook: it may keep state
  int n = 0;
  void operator()(const BalanceEvent&) { ++n; }
};
struct NoDefaultLog {  // R1
  explicit NoDefaultLog(int);
  void operator()(const WakeEvent&) const;
};
struct DisabledLog {  // O1: off, never called, but still a hook of the event
  static constexpr bool enabled = false;
  void operator()(const WakeEvent&) const;
};
struct RuntimeEnabledLog {  // O1: a run-time flag is not a constant
  bool enabled = true;
  void operator()(const WakeEvent&) const;
};
static_assert(DecisionHook<WakeLog, WakeEvent> && !DecisionHook<WakeLog, BalanceEvent>);
static_assert(DecisionHook<MutableLog, BalanceEvent> && !DecisionHook<MutableLog, WakeEvent>);
static_assert(!DecisionHook<NoDefaultLog, WakeEvent> && DecisionHook<DisabledLog, WakeEvent>);
static_assert(!DecisionHook<RuntimeEnabledLog, WakeEvent> && !DecisionHook<int, WakeEvent>);

// --- NewidleTracker ------------------------------------------------------------
static_assert(NewidleTracker<NewidleCostTracker<>> && NewidleTracker<NewidleCostTracker<newidle::Gate2009>>);
static_assert(NewidleTracker<NewidleCostTracker<newidle::NoLimit>>);
// A newidle traits set is the tracker's parameter, not a tracker.
static_assert(!NewidleTracker<newidle::Gate2009> && !NewidleTracker<DefaultNewidleTraits>);
static_assert(!NewidleTracker<int> && !NewidleTracker<void>);
// A user's tracker: always balance, every level, no costs kept.
struct Eager {
  struct state {
    std::uint32_t level_count = 0;
  };
  state make_state(std::uint32_t levels, Nanoseconds) const { return {levels}; }
  bool should_balance(const state&) const { return true; }
  bool may_visit_level(const state&, std::uint32_t, Nanoseconds) const { return true; }
  void record_attempt(state&, std::uint32_t, Nanoseconds, bool, Nanoseconds) const {}
  void idle_start(state&, Nanoseconds) const {}
  void idle_end(state&, Nanoseconds) const noexcept {}
  void decay(state&, Nanoseconds) const noexcept {}
  Nanoseconds avg_idle(const state&) const { return Nanoseconds{0}; }
};
struct ThrowingIdleEnd : Eager {  // R7: idle_end runs in a noexcept function
  void idle_end(state&, Nanoseconds) const {}
};
struct NoLevelCount : Eager {  // R2: the walk reads state.level_count
  struct state {};
  state make_state(std::uint32_t, Nanoseconds) const;
  bool should_balance(const state&) const;
  bool may_visit_level(const state&, std::uint32_t, Nanoseconds) const;
  void record_attempt(state&, std::uint32_t, Nanoseconds, bool, Nanoseconds) const;
  void idle_start(state&, Nanoseconds) const;
  void idle_end(state&, Nanoseconds) const noexcept;
  void decay(state&, Nanoseconds) const noexcept;
  Nanoseconds avg_idle(const state&) const;
};
static_assert(NewidleTracker<Eager> && !NewidleTracker<ThrowingIdleEnd> && !NewidleTracker<NoLevelCount>);

// --- NewidleAttemptPolicy: R5 ----------------------------------------------------
struct Seeded : AttemptEveryLevel {  // the balancer default-constructs its policy
  explicit Seeded(int);
};
static_assert(NewidleAttemptPolicy<AttemptEveryLevel> && !NewidleAttemptPolicy<Seeded>);
static_assert(!NewidleAttemptPolicy<success_rate::ProportionalRate2026>);  // a variant, not the policy

// --- NewidlePull ---------------------------------------------------------------
using Cpus = decltype(std::declval<const Topo&>().level_cpus(0, 0));
auto steal = [](std::uint32_t, LevelKind, auto) { return true; };  // as a program writes it
struct StealCount {  // a count converts to bool: non-zero, got work
  std::size_t operator()(std::uint32_t, LevelKind, auto) const;
};
struct Forget {  // R2: says nothing
  void operator()(std::uint32_t, LevelKind, auto) const;
};
struct ByLevel {  // R1: too few arguments
  bool operator()(std::uint32_t) const;
};
static_assert(NewidlePull<decltype(steal), Cpus> && NewidlePull<decltype(steal)&, Cpus>);
static_assert(NewidlePull<StealCount, Cpus>);
static_assert(!NewidlePull<Forget, Cpus> && !NewidlePull<ByLevel, Cpus>);
struct SpanPull {  // takes the CPUs as a span: fine for a topology that hands out spans
  bool operator()(std::uint32_t, LevelKind, std::span<const CpuId>);
};
static_assert(NewidlePull<SpanPull, std::span<const CpuId>> && !NewidlePull<SpanPull, Cpus>);
static_assert(!NewidlePull<int, Cpus>);

// --- MachineState's optional members ----------------------------------------------
struct Minimal {
  bool is_idle(CpuId) const noexcept;
  std::uint32_t nr_running(CpuId) const noexcept;
  std::uint64_t load(CpuId) const noexcept;
};
struct WithReservation : Minimal {
  const Reserve::cpu_state& reservation(CpuId) const;
};
struct WrongReservation : Minimal {
  int reservation(CpuId) const;
};
struct NonConstUtil : Minimal {  // declares O1, does not model it
  std::uint32_t llc_utilization_pct(CpuId);
};
struct VoidHint : Minimal {  // declares O2, does not model it
  void has_idle_core(CpuId) const;
};
static_assert(HasReservationState<WithReservation> && HasReservationState<WithReservation, Reserve>);
static_assert(HasReservationState<WrongReservation> && !HasReservationState<WrongReservation, Reserve>);
static_assert(!HasReservationState<Minimal> && !HasReservationState<Minimal, Reserve>);
static_assert(detail::DeclaresLlcUtilization<NonConstUtil> && !HasLlcUtilization<NonConstUtil>);
static_assert(detail::DeclaresIdleCoreHint<VoidHint> && !HasIdleCoreHint<VoidHint>);
static_assert(!detail::DeclaresLlcUtilization<Minimal> && !detail::DeclaresIdleCoreHint<Minimal>);
static_assert(detail::DeclaresLlcUtilization<testing::ScriptedMachine<true>> &&
              HasLlcUtilization<testing::ScriptedMachine<true>>);

// --- User-written models compose -------------------------------------------------
// Each member is kept as given (a member that failed its check would be
// replaced by the default after the error).
struct UserWake : DefaultWakeTraits {
  using Affine = PrevIfIdle;
  using Search = TargetOnly;
  using Reservation = CacheHotReservation<sis_cache::ShortSleeps2023, OwnerOnly>;
  using Stats = WakeupsOnly;
  using Hook = WakeLog;
};
using UserPlacer = WakePlacer<Topo, UserWake>;
static_assert(std::is_same_v<UserPlacer::affine_policy, PrevIfIdle>);
static_assert(std::is_same_v<UserPlacer::search_policy, TargetOnly>);
static_assert(std::is_same_v<UserPlacer::reservation_policy, UserWake::Reservation> && UserPlacer::reserving);
static_assert(std::is_same_v<UserPlacer::stats_type, WakeupsOnly::counters<WakeCounter>>);
static_assert(std::is_same_v<UserPlacer::hook_type, WakeLog>);
// place() with a machine state that hands out the reservation's state
// (compiled, never called).
struct UserMachine : Minimal {
  const UserWake::Reservation::cpu_state& reservation(CpuId) const;
};
static_assert(!HasReservationState<WithReservation, UserWake::Reservation>);  // another variant's state
Placement place_with(const UserPlacer& p, const UserPlacer::Wakeup& w, const UserMachine& m) {
  return p.place(w, m, Nanoseconds{0});
}

struct UserBalance : DefaultBalanceTraits {
  using Tracker = Eager;
  using Stats = WakeupsOnly;
  using Hook = MutableLog;
};
using UserBalancer = IdleBalancer<Topo, UserBalance>;
static_assert(std::is_same_v<UserBalancer::tracker_type, Eager>);
static_assert(std::is_same_v<UserBalancer::state, Eager::state>);
static_assert(std::is_same_v<UserBalancer::stats_type, WakeupsOnly::counters<BalanceCounter>>);
static_assert(std::is_same_v<UserBalancer::hook_type, MutableLog>);
BalanceResult balance_with(const UserBalancer& b, UserBalancer::state& st, const ManualClock& clock) {
  return b.balance(0, st, steal, clock);
}

// The library's own sets keep their members too.
static_assert(std::is_same_v<WakePlacer<Topo, traits::CacheHot<>>::reservation_policy, CacheHotReservation<>>);
static_assert(std::is_same_v<IdleBalancer<Topo, traits::BalanceLinux2026>::attempts_type,
                             NewidleSuccessRate<success_rate::ProportionalRate2026>>);
static_assert(std::is_same_v<IdleBalancer<Topo, traits::Balance<newidle::Gate2009>>::tracker_type,
                             NewidleCostTracker<newidle::Gate2009>>);

}  // namespace taskplace_static_members

template class taskplace::WakePlacer<taskplace::UniformTopology, taskplace_static_members::UserWake>;
template class taskplace::IdleBalancer<taskplace::UniformTopology, taskplace_static_members::UserBalance>;
