// The composed wake-up decision (wake_placer.hpp): a decision table over
// every step with a scripted machine, then one body over every shipped
// traits combination checking the placement rules (testing::check_placement)
// on many random machine states.
#include <catch2/catch.hpp>

#include <cstdint>
#include <random>
#include <tuple>
#include <type_traits>
#include <vector>

#include "taskplace/testing.hpp"
#include "taskplace/topology/uniform.hpp"
#include "taskplace/wake_placer.hpp"

using namespace taskplace;
using namespace std::chrono_literals;
using testing::CpuMask;
using testing::ScriptedMachine;

namespace {
const UniformTopology westmere = presets::westmere_12cpu_2013();  // 1 LLC of 12, core k = {k, k+6}
const UniformTopology q6600 = presets::q6600_2008();              // LLCs {0, 1}, {2, 3}

struct Counted : DefaultWakeTraits {
  using Stats = PlainStats;
};

template <class P>
using Wakeup = typename P::Wakeup;
}  // namespace

TEST_CASE("a wake-up on the wakee's own CPU is same_cpu and searches from it", "[wake_placer]") {
  WakePlacer<UniformTopology> placer{westmere};
  decltype(placer)::task_state waker, wakee;
  ScriptedMachine<> m{12};
  m.busy(0);  // the waker runs on 0
  const auto p = placer.place({.waker = &waker, .waker_key = 1, .wakee = &wakee, .wakee_key = 2,
                               .waking_cpu = 0, .prev_cpu = 0},
                              m, 0ns);
  CHECK_FALSE(p.wide);
  CHECK(p.affine == AffineReason::same_cpu);
  CHECK(p.target == 0);
  // Core 1 = {1, 7} is the first whole idle core after 0.
  CHECK(p.cpu == 1);
  CHECK(p.reason == WakeReason::idle_core);
  // Step 1 recorded the wakee in the waker's flips.
  CHECK(placer.flips().flips(waker.flips) == 1);
}

TEST_CASE("a wide wake-up keeps prev as the target", "[wake_placer]") {
  WakePlacer<UniformTopology> placer{westmere};
  decltype(placer)::task_state waker, wakee;
  // wide::Symmetric2015 with factor 12 (westmere's LLC): lo >= 12 && hi >= 12 lo.
  // Waker 199 + 1 (this wake-up is a new partner) = 200, wakee 12: 200 >= 144.
  waker.flips.flips.store(199);
  wakee.flips.flips.store(12);
  ScriptedMachine<> m{12};
  m.all_busy().idle(5);
  auto p = placer.place({.waker = &waker, .waker_key = 1, .wakee = &wakee, .wakee_key = 2,
                         .waking_cpu = 0, .prev_cpu = 4},
                        m, 0ns);
  CHECK(p.wide);
  CHECK(p.affine == AffineReason::wide);
  CHECK(p.target == 4);
  CHECK(p.cpu == 5);  // the scan from 4 finds 5
  CHECK(p.reason == WakeReason::idle_scan);
  // Wakee 11 < 12: not wide, the affine step runs (load test: equal loads,
  // (1024 + 1024) * 100 < (1024 - 1024) * 108 is false: load_prev).
  wakee.flips.flips.store(11);
  p = placer.place({.waker = &waker, .waker_key = 3, .wakee = &wakee, .wakee_key = 2,
                    .waking_cpu = 0, .prev_cpu = 4},
                   m, 0ns);
  CHECK_FALSE(p.wide);
  CHECK(p.affine == AffineReason::load_prev);
}

TEST_CASE("a waking CPU the wakee may not use keeps prev", "[wake_placer]") {
  WakePlacer<UniformTopology> placer{westmere};
  decltype(placer)::task_state wakee;
  ScriptedMachine<> m{12};
  m.all_busy().idle(0);
  const auto p = placer.place({.wakee = &wakee, .wakee_key = 2, .waking_cpu = 0, .prev_cpu = 3},
                              m, 0ns, CpuMask::only(12, {3, 4}));
  CHECK(p.affine == AffineReason::waking_not_allowed);
  CHECK(p.target == 3);
  CHECK(p.reason == WakeReason::target_busy);
  CHECK(p.cpu == 3);
}

TEST_CASE("the affine step's reasons reach the placement", "[wake_placer]") {
  WakePlacer<UniformTopology> placer{westmere};
  decltype(placer)::task_state wakee;
  ScriptedMachine<> m{12};
  auto place = [&](CpuId waking, CpuId prev, bool sync = false) {
    return placer.place({.wakee = &wakee, .wakee_key = 2, .waking_cpu = waking, .prev_cpu = prev,
                         .sync = sync},
                        m, 0ns);
  };
  // waking 0 idle (woken from outside a task), prev 1 busy: idle_waking, and
  // the search returns the idle target.
  m.all_busy().idle(0);
  auto p = place(0, 1);
  CHECK(p.affine == AffineReason::idle_waking);
  CHECK(p.cpu == 0);
  CHECK(p.reason == WakeReason::idle_target);
  // sync from a CPU that runs only the waker: target 0 busy, scan finds 2.
  m.all_busy().idle(2);
  p = place(0, 1, true);
  CHECK(p.affine == AffineReason::sync);
  CHECK(p.target == 0);
  CHECK(p.cpu == 2);
  // prev idle: prev_idle, and the idle target (prev) is taken.
  m.all_busy(2).idle(1);
  p = place(0, 1);
  CHECK(p.affine == AffineReason::prev_idle);
  CHECK(p.cpu == 1);
  CHECK(p.reason == WakeReason::idle_target);
  // load test pulls: waking load 0 with nr 2, prev heavy.
  m.all_busy(2, 5000).set_load(0, 0);
  p = place(0, 1);
  CHECK(p.affine == AffineReason::load_waking);
  CHECK(p.target == 0);
  CHECK(p.reason == WakeReason::target_busy);
}

TEST_CASE("an invalid prev CPU is treated as the waking CPU", "[wake_placer]") {
  WakePlacer<UniformTopology> placer{westmere};
  decltype(placer)::task_state wakee;
  ScriptedMachine<> m{12};
  m.all_busy();
  for (CpuId prev : {no_cpu, CpuId{12}, CpuId{1000}}) {
    const auto p = placer.place({.wakee = &wakee, .wakee_key = 2, .waking_cpu = 7, .prev_cpu = prev},
                                m, 0ns);
    CHECK(p.affine == AffineReason::same_cpu);
    CHECK(p.target == 7);
    CHECK(p.cpu == 7);
    CHECK(wakee.recent_cpu == 7);  // recent_cpu never stores an invalid id
  }
}

TEST_CASE("the wakee's recent CPU is tried and then becomes prev", "[wake_placer]") {
  WakePlacer<UniformTopology> placer{westmere};
  decltype(placer)::task_state wakee;
  wakee.recent_cpu = 9;
  ScriptedMachine<> m{12};
  m.all_busy().idle(9).idle(10);
  const auto p = placer.place({.wakee = &wakee, .wakee_key = 2, .waking_cpu = 4, .prev_cpu = 4},
                              m, 0ns);
  CHECK(p.cpu == 9);
  CHECK(p.reason == WakeReason::idle_recent);
  CHECK(wakee.recent_cpu == 4);
}

TEST_CASE("a CPU outside the mask falls back to an allowed one, and an empty mask to the target", "[wake_placer]") {
  // AlwaysAffine has no search: the target (waking CPU) is the answer.
  WakePlacer<UniformTopology, traits::AlwaysAffine> placer{q6600};
  decltype(placer)::task_state wakee;
  ScriptedMachine<> m{4};
  m.all_busy();
  // Waking 0 allowed, so the target is 0; 0 itself is allowed: no_search.
  auto p = placer.place({.wakee = &wakee, .wakee_key = 2, .waking_cpu = 0, .prev_cpu = 2}, m, 0ns,
                        CpuMask::only(4, {0, 3}));
  CHECK(p.affine == AffineReason::forced_waking);
  CHECK(p.reason == WakeReason::no_search);
  CHECK(p.cpu == 0);
  // Waking not allowed: target prev 2, not allowed either: the first
  // allowed CPU of 2's LLC {2, 3} is 3 (before 1 of the other LLC).
  p = placer.place({.wakee = &wakee, .wakee_key = 2, .waking_cpu = 0, .prev_cpu = 2}, m, 0ns,
                   CpuMask::only(4, {1, 3}));
  CHECK(p.affine == AffineReason::waking_not_allowed);
  CHECK(p.cpu == 3);
  CHECK(p.reason == WakeReason::affinity_fallback);
  // Nothing of the LLC allowed: the first allowed CPU of the machine.
  p = placer.place({.wakee = &wakee, .wakee_key = 2, .waking_cpu = 0, .prev_cpu = 2}, m, 0ns,
                   CpuMask::only(4, {1}));
  CHECK(p.cpu == 1);
  CHECK(p.reason == WakeReason::affinity_fallback);
  // Nothing allowed at all: the target, mask ignored.
  p = placer.place({.wakee = &wakee, .wakee_key = 2, .waking_cpu = 0, .prev_cpu = 2}, m, 0ns,
                   CpuMask::none(4));
  CHECK(p.cpu == 2);
  CHECK(p.reason == WakeReason::affinity_empty);
}

TEST_CASE("a hand-off lands on the waking CPU whatever the machine, unless it is not allowed", "[wake_placer]") {
  WakePlacer<UniformTopology, Counted> placer{westmere};
  decltype(placer)::task_state waker, wakee;
  // Everything that would move the wakee elsewhere: prev 3 idle and
  // cache-shared (the search's idle_prev), the waker a wide one (wide::Symmetric2015
  // with factor 12: 199 + 1 = 200 >= 12 x 12 against the wakee's 12), the
  // waking CPU running two tasks.
  waker.flips.flips.store(199);
  wakee.flips.flips.store(12);
  ScriptedMachine<> m{12};
  m.all_busy().idle(3).busy(0, 2);
  const Wakeup<decltype(placer)> w{.waker = &waker, .waker_key = 1, .wakee = &wakee, .wakee_key = 2,
                                   .waking_cpu = 0, .prev_cpu = 3, .sync = true, .current_cpu = true};
  auto p = placer.place(w, m, 0ns);
  CHECK(p.cpu == 0);
  CHECK(p.target == 0);
  CHECK(p.affine == AffineReason::current_cpu);
  CHECK(p.reason == WakeReason::current_cpu);
  CHECK_FALSE(p.wide);
  CHECK(p.scanned == 0);
  // The kernel records the wakee before the WF_CURRENT_CPU test: a new
  // partner, so the waker's flips went 199 -> 200.
  CHECK(placer.flips().flips(waker.flips) == 200);
  CHECK(placer.stats().get(WakeCounter::current_cpu) == 1);
  CHECK(placer.stats().get(WakeCounter::wakeups) == 1);
  CHECK(placer.stats().get(WakeCounter::idle_prev) == 0);
  CHECK(testing::check_placement(westmere, m, AnyCpu{}, testing::PlacementQuery{0, 3, true, true, true}, p).empty());
  // The same wake-up without the hint takes the normal path: wide, target
  // prev 3, idle: idle_target.
  auto plain = w;
  plain.current_cpu = false;
  p = placer.place(plain, m, 0ns);
  CHECK(p.wide);
  CHECK(p.cpu == 3);
  CHECK(p.reason == WakeReason::idle_target);
  // A hand-off whose waking CPU the wakee may not use is an ordinary
  // wake-up (the kernel tests cpus_ptr): waking_not_allowed, prev kept.
  p = placer.place(w, m, 0ns, CpuMask::only(12, {3, 4}));
  CHECK(p.affine == AffineReason::wide);
  CHECK(p.cpu == 3);
  CHECK(placer.stats().get(WakeCounter::current_cpu) == 1);
  // The rules catch a placement that ignores the hint (P7) and a hand-off
  // claimed where none was asked.
  auto ignored = testing::check_placement(westmere, m, AnyCpu{}, testing::PlacementQuery{0, 3, true, true, true},
                                          Placement{3, 3, AffineReason::wide, WakeReason::idle_target, true, 0, 0});
  REQUIRE(ignored.size() == 1);
  CHECK(ignored[0].rule == "P7");
  auto claimed = testing::check_placement(westmere, m, AnyCpu{}, testing::PlacementQuery{0, 3, true, true, false},
                                          Placement{0, 0, AffineReason::current_cpu, WakeReason::current_cpu, false, 0, 0});
  CHECK_FALSE(claimed.empty());
}

TEST_CASE("PrevCpu never pulls and never searches", "[wake_placer]") {
  WakePlacer<UniformTopology, traits::PrevCpu> placer{westmere};
  decltype(placer)::task_state wakee;
  ScriptedMachine<> m{12};
  m.all_busy().idle(0);
  const auto p = placer.place({.wakee = &wakee, .wakee_key = 2, .waking_cpu = 0, .prev_cpu = 3},
                              m, 0ns);
  CHECK(p.affine == AffineReason::forced_prev);
  CHECK(p.cpu == 3);
  CHECK(p.reason == WakeReason::no_search);
}

TEST_CASE("bad wake-ups are checked preconditions", "[wake_placer]") {
  WakePlacer<UniformTopology> placer{westmere};
  decltype(placer)::task_state wakee;
  ScriptedMachine<> m{12};
  CHECK_THROWS_AS(placer.place({.wakee = nullptr, .waking_cpu = 0}, m, 0ns), PreconditionError);
  CHECK_THROWS_AS(placer.place({.wakee = &wakee, .waking_cpu = 12}, m, 0ns), PreconditionError);
}

TEST_CASE("the placer counts each step when stats are on", "[wake_placer][stats]") {
  WakePlacer<UniformTopology, Counted> placer{westmere};
  decltype(placer)::task_state waker, wakee;
  ScriptedMachine<> m{12};
  m.all_busy().idle(1);
  // prev 1 idle: affine considered, prev kept (prev_idle), idle target.
  placer.place({.waker = &waker, .waker_key = 1, .wakee = &wakee, .wakee_key = 2, .waking_cpu = 0,
                .prev_cpu = 1},
               m, 0ns);
  const auto& s = placer.stats();
  CHECK(s.get(WakeCounter::wakeups) == 1);
  CHECK(s.get(WakeCounter::affine_considered) == 1);
  CHECK(s.get(WakeCounter::prev_kept) == 1);
  CHECK(s.get(WakeCounter::affine_pulled) == 0);
  CHECK(s.get(WakeCounter::idle_target) == 1);
  CHECK(s.get(WakeCounter::wide) == 0);
  // All busy, same CPU: target_busy after walking the LLC. Its 12 CPUs
  // are 6 cores; the core walk tests each once (kernel: select_idle_core()
  // and the cpumask_andnot of select_idle_cpu()), 6 steps: the counter
  // read 12 when the library counted every CPU of the LLC.
  m.busy(1);
  placer.place({.wakee = &wakee, .wakee_key = 2, .waking_cpu = 0, .prev_cpu = 0}, m, 0ns);
  CHECK(s.get(WakeCounter::wakeups) == 2);
  CHECK(s.get(WakeCounter::target_busy) == 1);
  CHECK(s.get(WakeCounter::scanned_cpus) == 6);
  CHECK(s.get(WakeCounter::affine_considered) == 1);
}

TEST_CASE("the placer takes an idle SMT sibling of prev before the LLC walk", "[wake_placer][kernel]") {
  // Kernel: select_task_rq_fair() -> select_idle_sibling() ->
  // select_idle_smt(p, sd, prev) (v5.13+). The waking CPU is prev, 1,
  // busy: target 1 (same CPU, no wake_affine); no idle core hinted, prev's sibling 7 idle: the wakee goes to 7 (the
  // LLC walk from 2 would have taken 2).
  WakePlacer<UniformTopology, Counted> placer{westmere};
  decltype(placer)::task_state wakee;
  ScriptedMachine<true, true> m{12};
  m.all_busy().idle(7).idle(2).idle_core_hint(false);
  const auto p = placer.place({.wakee = &wakee, .wakee_key = 2, .waking_cpu = 1, .prev_cpu = 1}, m, 0ns);
  CHECK(p.target == 1);
  CHECK(p.cpu == 7);
  CHECK(p.reason == WakeReason::idle_smt_sibling);
  CHECK(p.scanned == 0);
  CHECK(placer.stats().get(WakeCounter::idle_smt_sibling) == 1);
}

// ---------------------------------------------------------------------------
// The matrix: one body, every traits combination.

namespace {
struct MasterOnlyCores : DefaultWakeTraits {  // a user's own combination
  using Wide = WideDetector<wide::MasterOnly2017>;
  using Factor = CoresPerLlcFactor;
  using Stats = PlainStats;
};

template <class Placer>
using machine_for = std::conditional_t<
    Placer::reserving,
    ScriptedMachine<true, true, typename Placer::reservation_policy::cpu_state>,
    ScriptedMachine<true, true>>;

template <class Traits>
void random_placements(const UniformTopology& topo, std::uint32_t seed, int rounds) {
  using P = WakePlacer<UniformTopology, Traits>;
  P placer{topo};
  const auto n = topo.cpu_count();
  std::mt19937 rng{seed};
  auto pick = [&](std::uint32_t k) { return static_cast<std::uint32_t>(rng() % k); };
  std::vector<typename P::task_state> tasks(8);
  machine_for<P> m{n};
  Nanoseconds now = 1s;
  for (int round = 0; round < rounds; ++round) {
    now += Nanoseconds{pick(200'000)};
    const std::uint32_t idle_pct = pick(101);
    for (CpuId c = 0; c < n; ++c) {
      if (pick(100) < idle_pct) m.idle(c);
      else m.busy(c, 1 + pick(3), pick(4096));
    }
    m.utilization(pick(4) == 0 ? 0 : pick(101)).idle_core_hint(pick(2) == 0);
    CpuMask mask = CpuMask::all(n);
    if (pick(4) == 0)
      for (CpuId c = 0; c < n; ++c) mask.bits[c] = pick(3) == 0;
    const auto wi = pick(8), ei = (wi + 1 + pick(7)) % 8;
    const CpuId waking = pick(n);
    const CpuId prev = pick(10) == 0 ? no_cpu : pick(n);
    tasks[wi].flips.flips.store(pick(3) == 0 ? pick(400) : pick(20));
    if constexpr (P::reserving) {
      // Some CPUs were just left by a short sleeper (task 0..7).
      const CpuId c = pick(n);
      if (m.is_idle(c))
        placer.task_sleeps(tasks[pick(8)], 100 + pick(8), m.reservation_state(c), true, now);
    }
    typename P::Wakeup w{.waker = pick(5) == 0 ? nullptr : &tasks[wi],
                         .waker_key = 100 + wi,
                         .wakee = &tasks[ei],
                         .wakee_key = 100 + ei,
                         .waking_cpu = waking,
                         .prev_cpu = prev,
                         .sync = pick(2) == 0,
                         .current_cpu = pick(8) == 0,
                         .wakee_load = pick(2048),
                         .waker_load = pick(2048)};
    const Placement p = placer.place(w, m, now, mask);
    std::function<bool(CpuId)> reserved;
    bool owner_only = false;
    if constexpr (P::reserving) {
      reserved = [&](CpuId c) {
        return placer.reservation().reserved_against(m.reservation(c), w.wakee_key, now);
      };
      owner_only = detail::reservation_owner_only<typename P::reservation_policy>();
    }
    // v3.12's search looks at whole cores and the target's siblings only:
    // never a scan of every CPU of the LLC.
    constexpr bool groups = detail::search_needs_waking_allowed<typename P::search_policy>;
    const bool full_scan = m.cpu(0).llc_util_pct == 0 && !groups;
    const auto v = testing::check_placement(
        topo, m, mask,
        testing::PlacementQuery{waking, prev, P::search_policy::enabled, w.sync, w.current_cpu, groups}, p,
        reserved, owner_only, full_scan);
    INFO("round " << round << ", waking " << waking << ", prev " << prev << ", cpu " << p.cpu
                  << ", affine " << to_string(p.affine) << ", reason " << to_string(p.reason));
    for (const auto& x : v) INFO(x.rule << ": " << x.detail);
    REQUIRE(v.empty());
  }
}

using AllTraits = std::tuple<traits::Current, traits::AlwaysAffine, traits::PrevCpu,
                             traits::Linux2013, traits::Linux2013Kernel, traits::CacheHot<sis_cache::EverySleep2023>,
                             traits::CacheHot<sis_cache::ShortSleeps2023>, traits::CacheHot<sis_cache::HalveLong2023>,
                             traits::CacheHot<sis_cache::HalveLong2023, OwnerOnly>, MasterOnlyCores,
                             traits::Runtime>;
}  // namespace

TEMPLATE_LIST_TEST_CASE("every traits combination places validly on random machines",
                        "[wake_placer][matrix]", AllTraits) {
  // Fixed seeds: the runs are reproducible.
  random_placements<TestType>(presets::westmere_12cpu_2013(), 1, 400);
  random_placements<TestType>(presets::q6600_2008(), 2, 200);
  random_placements<TestType>(presets::two_node_80cpu(), 3, 200);
  random_placements<TestType>(presets::epyc_2x64x2(), 4, 100);
}

TEST_CASE("the placement check catches a broken placement", "[wake_placer][testing]") {
  // The kit must be able to fail: a placement that passes over an idle
  // target, lands on a CPU outside the mask, and names a wrong reason.
  ScriptedMachine<> m{12};
  m.all_busy().idle(4);
  Placement bad{.cpu = 5, .target = 4, .affine = AffineReason::idle_prev, .reason = WakeReason::idle_scan,
                .wide = false, .scanned = 0, .reservation_skips = 0};
  const auto v = testing::check_placement(westmere, m, CpuMask::only(12, {4}),
                                          testing::PlacementQuery{0, 4}, bad);
  std::vector<std::string> rules;
  for (const auto& x : v) rules.push_back(x.rule);
  CHECK(std::count(rules.begin(), rules.end(), "P2") == 1);
  CHECK(std::count(rules.begin(), rules.end(), "P3") == 1);
  CHECK(std::count(rules.begin(), rules.end(), "P4") == 1);
  CHECK(std::count(rules.begin(), rules.end(), "P5") == 1);
  bad.cpu = 99;
  CHECK(testing::check_placement(westmere, m, AnyCpu{}, testing::PlacementQuery{0, 4}, bad)[0].rule == "P1");
}
