// The traits matrix and the conformance kit under Boost.Test: every shipped
// topology preset and policy passes the kit's checks, ManualClock-driven
// flip and newidle sequences give the formulas' values, and every traits
// combination places validly on random machines.
#define BOOST_TEST_MODULE taskplace_kit
#include <boost/mpl/list.hpp>
#include <boost/test/unit_test.hpp>

#include <cstdint>
#include <functional>
#include <random>
#include <vector>

#include "taskplace/idle_balancer.hpp"
#include "taskplace/testing.hpp"
#include "taskplace/topology/uniform.hpp"
#include "taskplace/wake_placer.hpp"

namespace tp = taskplace;
using namespace std::chrono_literals;

namespace {
std::vector<tp::UniformTopology> presets() {
  namespace p = tp::presets;
  return {p::q6600_2008(), p::westmere_12cpu_2013(), p::eight_socket_80core(), p::two_node_80cpu(),
          p::sapphire_rapids_2x56x2(), p::epyc_2x64x2()};
}
std::string show(const std::vector<tp::testing::Violation>& v) {
  std::string s;
  for (const auto& x : v) s += std::to_string(x.cpu) + " " + x.rule + ": " + x.detail + "; ";
  return s;
}
}  // namespace

BOOST_AUTO_TEST_SUITE(conformance)

BOOST_AUTO_TEST_CASE(every_preset_is_a_conforming_topology) {
  for (const auto& t : presets()) {
    const auto v = tp::testing::check_topology(t);
    BOOST_TEST(v.empty(), show(v));
    BOOST_TEST(tp::testing::check_factor<tp::LlcFactor>(t).empty());
    BOOST_TEST(tp::testing::check_factor<tp::NodeFactor>(t).empty());
    BOOST_TEST(tp::testing::check_factor<tp::CoresPerLlcFactor>(t).empty());
  }
  const auto table = tp::testing::table_from_string("0 0 0 | 0 0 0 | 1 0 0 | 1 0 0");
  BOOST_TEST(tp::testing::check_topology(table).empty());
}

BOOST_AUTO_TEST_CASE(every_shipped_flip_and_wide_policy_conforms) {
  BOOST_TEST(tp::testing::check_flip_decay<tp::flip_decay::Wipe2013>().empty());
  BOOST_TEST(tp::testing::check_flip_decay<tp::flip_decay::Halve2014>().empty());
  BOOST_TEST(tp::testing::check_wide_rule<tp::wide::OneSided2013>().empty());
  BOOST_TEST(tp::testing::check_wide_rule<tp::wide::Symmetric2015>().empty());
  BOOST_TEST(tp::testing::check_wide_rule<tp::wide::MasterOnly2017>().empty());
  BOOST_TEST(tp::testing::check_wide_rule<tp::wide::Never>().empty());
}

BOOST_AUTO_TEST_CASE(every_shipped_newidle_and_reservation_policy_conforms) {
  BOOST_TEST(tp::testing::check_avg_idle_estimator<tp::avg_idle::Clamp2014>().empty());
  BOOST_TEST(tp::testing::check_avg_idle_estimator<tp::avg_idle::Saturate2009>().empty());
  BOOST_TEST(tp::testing::check_reservation_variant<tp::sis_cache::EverySleep2023>().empty());
  BOOST_TEST(tp::testing::check_reservation_variant<tp::sis_cache::ShortSleeps2023>().empty());
  BOOST_TEST(tp::testing::check_reservation_variant<tp::sis_cache::HalveLong2023>().empty());
  BOOST_TEST(tp::testing::check_attempt_policy<tp::AttemptEveryLevel>().empty());
  BOOST_TEST(tp::testing::check_attempt_policy<tp::NewidleSuccessRate<tp::success_rate::Proportional2025>>().empty());
  BOOST_TEST(tp::testing::check_attempt_policy<tp::NewidleSuccessRate<tp::success_rate::ProportionalRate2026>>().empty());
}

BOOST_AUTO_TEST_CASE(the_kit_reports_a_broken_topology_through_its_builder) {
  // Two CPUs of one core in different LLCs break I3: the builder refuses.
  BOOST_CHECK_THROW(tp::testing::table_from_string("0 0 0 | 0 1 0"), tp::TopologyError);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(sequences)

BOOST_AUTO_TEST_CASE(manual_clock_flip_sequence_halves_once_a_period) {
  tp::FlipCounter<> f;
  tp::FlipCounter<>::state s;
  tp::ManualClock clock{10s};
  for (tp::TaskKey k = 1; k <= 10; ++k) f.record(s, k, clock.now());  // 10 partners: 10 flips
  BOOST_TEST(f.flips(s) == 10u);
  clock.advance(3s);                 // three idle periods: still one halving (record_wakee)
  f.record(s, 11, clock.now());      // 10 >> 1 = 5, + 1 new partner
  BOOST_TEST(f.flips(s) == 6u);
  clock.advance(-5s);                // backwards: no decay
  f.record(s, 12, clock.now());
  BOOST_TEST(f.flips(s) == 7u);
}

BOOST_AUTO_TEST_CASE(manual_clock_newidle_sequence_follows_update_avg) {
  const auto topo = tp::presets::two_node_80cpu();
  tp::IdleBalancer<tp::UniformTopology> b{topo};
  tp::ManualClock clock{1s};
  auto st = b.make_state(0, clock.now());
  auto pull = [&](std::uint32_t, tp::LevelKind, const auto&) {
    clock.advance(10us);
    return false;
  };
  // avg_idle 1ms; each period 30us of balancing + 170us idle = 200us:
  // 1'000'000 + (200'000 - 1'000'000) / 8 = 900'000, then
  // 900'000 + (200'000 - 900'000) / 8 = 812'500.
  for (const std::int64_t want : {900'000, 812'500}) {
    const auto start = clock.now();
    b.balance(0, st, pull, clock);
    b.idle_end(st, start + 200us);
    clock.advance(170us);
    BOOST_TEST(b.tracker().avg_idle(st).count() == want);
  }
}

BOOST_AUTO_TEST_SUITE_END()

namespace {
struct Custom : tp::DefaultWakeTraits {
  using Wide = tp::WideDetector<tp::wide::MasterOnly2017>;
  using Factor = tp::NodeFactor;
};
using Matrix = boost::mpl::list<tp::traits::Current, tp::traits::AlwaysAffine, tp::traits::PrevCpu,
                                tp::traits::Linux2013, tp::traits::CacheHot<tp::sis_cache::EverySleep2023>,
                                tp::traits::CacheHot<tp::sis_cache::ShortSleeps2023>,
                                tp::traits::CacheHot<tp::sis_cache::HalveLong2023>,
                                tp::traits::CacheHot<tp::sis_cache::HalveLong2023, tp::OwnerOnly>, Custom>;
}  // namespace

BOOST_AUTO_TEST_CASE_TEMPLATE(every_traits_combination_places_validly, Traits, Matrix) {
  using P = tp::WakePlacer<tp::UniformTopology, Traits>;
  for (const auto& topo : presets()) {
    P placer{topo};
    const auto n = topo.cpu_count();
    using M = std::conditional_t<P::reserving,
                                 tp::testing::ScriptedMachine<true, false, typename P::reservation_policy::cpu_state>,
                                 tp::testing::ScriptedMachine<true, false>>;
    M m{n};
    std::mt19937 rng{n};  // fixed seed per topology
    auto pick = [&](std::uint32_t k) { return static_cast<std::uint32_t>(rng() % k); };
    std::vector<typename P::task_state> tasks(4);
    tp::Nanoseconds now = 1s;
    for (int round = 0; round < 60; ++round) {
      now += 10us;
      for (tp::CpuId c = 0; c < n; ++c) {
        if (pick(2) == 0) m.idle(c);
        else m.busy(c, 1 + pick(2), pick(3000));
      }
      m.utilization(pick(3) == 0 ? 0 : pick(101));
      if constexpr (P::reserving) {
        const auto c = pick(n);
        const auto t = pick(4);
        if (m.is_idle(c)) placer.task_sleeps(tasks[t], 50 + t, m.reservation_state(c), true, now);
      }
      tp::testing::CpuMask mask = tp::testing::CpuMask::all(n);
      if (pick(3) == 0)
        for (tp::CpuId c = 0; c < n; ++c) mask.bits[c] = pick(2) == 0;
      const auto wi = pick(4), ei = (wi + 1 + pick(3)) % 4;
      const tp::CpuId waking = pick(n), prev = pick(8) == 0 ? tp::no_cpu : pick(n);
      typename P::Wakeup w{.waker = &tasks[wi], .waker_key = 50 + wi, .wakee = &tasks[ei],
                           .wakee_key = 50 + ei, .waking_cpu = waking, .prev_cpu = prev,
                           .sync = pick(2) == 0, .current_cpu = pick(8) == 0};
      const tp::Placement p = placer.place(w, m, now, mask);
      std::function<bool(tp::CpuId)> reserved;
      bool owner_only = false;
      if constexpr (P::reserving) {
        reserved = [&](tp::CpuId c) {
          return placer.reservation().reserved_against(m.reservation(c), w.wakee_key, now);
        };
        owner_only = P::reservation_policy::owner_only;
      }
      const auto v = tp::testing::check_placement(
          topo, m, mask, tp::testing::PlacementQuery{waking, prev, P::search_policy::enabled, w.sync, w.current_cpu},
          p, reserved, owner_only, m.cpu(0).llc_util_pct == 0);
      BOOST_TEST(v.empty(), "cpus " << n << " round " << round << ": " << show(v));
    }
  }
}
