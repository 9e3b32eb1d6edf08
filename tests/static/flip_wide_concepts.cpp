// Compile-time checks for the flip, wide and factor concepts and their
// shipped models (taskplace/policy/{flip_counter,wide_detector,llc_factor}.hpp).
// This file compiling is the test.
#include <chrono>
#include <cstdint>
#include <span>
#include <type_traits>

#include "taskplace/concepts.hpp"
#include "taskplace/policy/flip_counter.hpp"
#include "taskplace/policy/llc_factor.hpp"
#include "taskplace/policy/wide_detector.hpp"

namespace taskplace_static_flip_wide {

using namespace taskplace;

// --- FlipDecay ---------------------------------------------------------------
static_assert(FlipDecay<flip_decay::Wipe2013>);
static_assert(FlipDecay<flip_decay::Halve2014>);
struct ThrowingDecay {  // not noexcept
  static std::uint32_t apply(std::uint32_t x) { return x; }
};
struct IntDecay {  // returns int, not std::uint32_t
  static int apply(std::uint32_t) noexcept { return 0; }
};
struct MemberDecay {  // not static
  std::uint32_t apply(std::uint32_t x) const noexcept { return x; }
};
static_assert(!FlipDecay<ThrowingDecay>);
static_assert(!FlipDecay<IntDecay>);
static_assert(!FlipDecay<MemberDecay>);
static_assert(!FlipDecay<int>);

// Golden values (record_wakee()): wipe gives 0, halve gives x >> 1.
static_assert(flip_decay::Wipe2013::apply(4294967295u) == 0);
static_assert(flip_decay::Halve2014::apply(9) == 4 && flip_decay::Halve2014::apply(1) == 0);
static_assert(flip_decay::Halve2014::apply(4294967295u) == 2147483647u);

// --- StorageCell -------------------------------------------------------------
static_assert(StorageCell<flip_storage::Plain::cell<std::uint32_t>, std::uint32_t>);
static_assert(StorageCell<flip_storage::RelaxedAtomic::cell<std::int64_t>, std::int64_t>);
struct NonConstLoadCell {  // load() not callable on a const cell
  std::uint32_t load() noexcept { return 0; }
  void store(std::uint32_t) noexcept {}
};
struct ThrowingStoreCell {  // store may throw
  std::uint32_t load() const noexcept { return 0; }
  void store(std::uint32_t) {}
};
struct NoDefaultCell {  // not default-constructible
  explicit NoDefaultCell(int) {}
  std::uint32_t load() const noexcept { return 0; }
  void store(std::uint32_t) noexcept {}
};
static_assert(!StorageCell<NonConstLoadCell, std::uint32_t>);
static_assert(!StorageCell<ThrowingStoreCell, std::uint32_t>);
static_assert(!StorageCell<NoDefaultCell, std::uint32_t>);
static_assert(!StorageCell<flip_storage::Plain::cell<std::uint32_t>, std::int64_t>);  // load() type

// The cells live in user task objects: copyable, default zero.
static_assert(std::is_copy_constructible_v<flip_storage::RelaxedAtomic::cell<TaskKey>>);
static_assert(std::is_copy_assignable_v<flip_storage::RelaxedAtomic::cell<TaskKey>>);
static_assert(flip_storage::Plain::cell<std::uint32_t>{}.load() == 0);

// --- FlipStorage -------------------------------------------------------------
static_assert(FlipStorage<flip_storage::Plain>);
static_assert(FlipStorage<flip_storage::RelaxedAtomic>);
struct OnlyU32Storage {  // cell<T> always holds a uint32: wrong for TaskKey, int64
  template <class T>
  struct cell {
    std::uint32_t load() const noexcept { return 0; }
    void store(std::uint32_t) noexcept {}
  };
};
struct NoCellStorage {};
static_assert(!FlipStorage<OnlyU32Storage>);
static_assert(!FlipStorage<NoCellStorage>);

// --- FlipPolicy --------------------------------------------------------------
static_assert(FlipPolicy<FlipCounter<>>);
static_assert(FlipPolicy<FlipCounter<flip_decay::Wipe2013, flip_storage::RelaxedAtomic>>);
static_assert(std::is_same_v<FlipCounter<>, FlipCounter<flip_decay::Halve2014, flip_storage::Plain>>);  // fwd.hpp defaults
struct NoStateFlips {
  void record(int&, TaskKey, Nanoseconds) const noexcept {}
  std::uint32_t flips(const int&) const noexcept { return 0; }
};
struct WrongFlipsType {
  struct state {};
  void record(state&, TaskKey, Nanoseconds) const noexcept {}
  std::uint64_t flips(const state&) const noexcept { return 0; }  // not uint32
};
struct MutatingRecord {  // record() not callable on a const policy
  struct state {};
  void record(state&, TaskKey, Nanoseconds) noexcept {}
  std::uint32_t flips(const state&) const noexcept { return 0; }
};
static_assert(!FlipPolicy<NoStateFlips>);
static_assert(!FlipPolicy<WrongFlipsType>);
static_assert(!FlipPolicy<MutatingRecord>);

// A plain counter runs at compile time: 3 partners, then 2 s later one
// halving (3 >> 1 = 1) and a new partner (+1).
constexpr std::uint32_t flips_after_scenario() {
  using namespace std::chrono_literals;
  const FlipCounter<> f;
  FlipCounter<>::state s;
  f.record(s, 1, 10s);
  f.record(s, 2, 10s);
  f.record(s, 3, 10s);
  f.record(s, 4, 12s);
  return f.flips(s);
}
static_assert(flips_after_scenario() == 2);

// --- WideRule ----------------------------------------------------------------
static_assert(WideRule<wide::OneSided2013>);
static_assert(WideRule<wide::Symmetric2015>);
static_assert(WideRule<wide::MasterOnly2017>);
static_assert(WideRule<WideDetector<>>);
static_assert(std::is_same_v<WideDetector<>::rule_type, wide::Symmetric2015>);  // fwd.hpp default
struct ThrowingRule {
  static bool wide(std::uint32_t, std::uint32_t, std::uint32_t) { return false; }
};
struct IntRule {  // returns int, not bool
  static int wide(std::uint32_t, std::uint32_t, std::uint32_t) noexcept { return 0; }
};
struct TwoArgRule {
  static bool wide(std::uint32_t, std::uint32_t) noexcept { return false; }
};
static_assert(!WideRule<ThrowingRule>);
static_assert(!WideRule<IntRule>);
static_assert(!WideRule<TwoArgRule>);

// Golden values (wake_wide()), dispatcher 40 / worker 2 / factor 12.
static_assert(!wide::OneSided2013::wide(40, 2, 12));        // 2 > 12 fails
static_assert(!wide::Symmetric2015::wide(40, 2, 12));   // lo 2 >= 12 fails
static_assert(wide::MasterOnly2017::wide(40, 2, 12));   // 40 >= 24
static_assert(!wide::Symmetric2015::wide(4294967295u, 1u << 20, 4096));  // 2^32 > UINT32_MAX

// --- FactorPolicy ------------------------------------------------------------
using MiniTopology = taskplace::detail::TopologyArchetype;  // declarations only: concepts never call
static_assert(FactorPolicy<LlcFactor, MiniTopology>);
static_assert(FactorPolicy<NodeFactor, MiniTopology>);
static_assert(FactorPolicy<FixedFactor<12>, MiniTopology>);
static_assert(FactorPolicy<CoresPerLlcFactor, MiniTopology>);
static_assert(FactorPolicy<ClusterFactor, MiniTopology>);
struct NotATopology {
  std::uint32_t llc_size(CpuId) const;
};
struct MutableTopologyFactor {  // takes a non-const topology
  static std::uint32_t factor(MiniTopology&, CpuId) { return 1; }
};
struct PointerFactor {  // returns something not convertible to uint32
  static const char* factor(const MiniTopology&, CpuId) { return ""; }
};
static_assert(!FactorPolicy<LlcFactor, NotATopology>);
static_assert(!FactorPolicy<MutableTopologyFactor, MiniTopology>);
static_assert(!FactorPolicy<PointerFactor, MiniTopology>);
static_assert(FixedFactor<7>::value == 7);

}  // namespace taskplace_static_flip_wide
