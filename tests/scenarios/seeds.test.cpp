// The seeds' claims at the decision level, on scripted traces:
//   Wang 2013: a dispatcher waking more partners than the LLC factor becomes
//             wide after warm-up, while a ping-pong pair stays affine;
//   Low 2013: a CPU with short idle periods stops balancing at outer levels
//             and resumes once the recorded cost has decayed;
//   Chen 2023: a short sleeper gets its CPU back while others skip it; with
//             every idle CPU reserved, ShortSleeps2023/HalveLong2023 fall back to a hot one and
//             EverySleep2023 stacks on the busy target.
#include <catch2/catch.hpp>

#include <cstdint>
#include <vector>

#include "taskplace/clock.hpp"
#include "taskplace/idle_balancer.hpp"
#include "taskplace/testing/machine.hpp"
#include "taskplace/topology/uniform.hpp"
#include "taskplace/wake_placer.hpp"

using namespace taskplace;
using namespace std::chrono_literals;
using testing::ScriptedMachine;

TEST_CASE("a dispatcher of many workers becomes wide while a ping-pong pair stays affine", "[scenario][wang2013]") {
  // westmere_12cpu_2013: the 12-CPU box of Wang 2013, LLC factor 12.
  const auto topo = presets::westmere_12cpu_2013();
  WakePlacer<UniformTopology> placer{topo};
  using state = decltype(placer)::task_state;
  constexpr std::uint32_t workers = 32;  // N > factor: 32 / 2 = 16 >= 12 (below)
  std::vector<state> w(workers);
  state dispatcher, a, b;
  ScriptedMachine<> m{12};
  m.all_busy();
  Nanoseconds now = 5s;
  std::vector<bool> wide;
  // Every millisecond the dispatcher (key 1, on CPU 0) wakes the next
  // worker; that worker then wakes the dispatcher and the next worker: two
  // partners per run, so a worker flips 2 per 32 dispatcher flips. The
  // ratio 16 exceeds the factor 12, and workers pass lo >= 12 after six runs.
  for (std::uint32_t i = 0; i < 600; ++i) {
    now += 1ms;
    const std::uint32_t k = i % workers;
    const auto p = placer.place({.waker = &dispatcher, .waker_key = 1, .wakee = &w[k],
                                 .wakee_key = 100 + k, .waking_cpu = 0, .prev_cpu = 1 + k % 11},
                                m, now);
    wide.push_back(p.wide);
    placer.place({.waker = &w[k], .waker_key = 100 + k, .wakee = &dispatcher, .wakee_key = 1,
                  .waking_cpu = 1 + k % 11, .prev_cpu = 0},
                 m, now);
    placer.place({.waker = &w[k], .waker_key = 100 + k, .wakee = &w[(k + 1) % workers],
                  .wakee_key = 100 + (k + 1) % workers, .waking_cpu = 1 + k % 11, .prev_cpu = 2},
                 m, now);
  }
  // Cold: the first wake-ups consider the pull.
  for (std::uint32_t i = 0; i < 32; ++i) CHECK_FALSE(wide[i]);
  // Warm (after ~7 rounds of 32): every dispatcher wake-up is wide.
  for (std::uint32_t i = 300; i < 600; ++i) CHECK(wide[i]);

  // A ping-pong pair: a (CPU 0) and b (last on CPU 1) wake each other
  // synchronously for the same 600 ms; one partner each, flips stay at 1.
  m.all_busy(2).busy(0, 1).busy(1, 1);
  for (int i = 0; i < 600; ++i) {
    now += 1ms;
    const auto p = placer.place({.waker = &a, .waker_key = 7, .wakee = &b, .wakee_key = 8,
                                 .waking_cpu = 0, .prev_cpu = 1, .sync = true},
                                m, now);
    CHECK_FALSE(p.wide);
    CHECK(p.affine == AffineReason::sync);  // the waker is all CPU 0 runs: pull
    CHECK(p.target == 0);
    placer.place({.waker = &b, .waker_key = 8, .wakee = &a, .wakee_key = 7, .waking_cpu = 0,
                  .prev_cpu = 0, .sync = true},
                 m, now);
  }
  CHECK(placer.flips().flips(a.flips) == 1);  // not 0: the wake-ups were recorded
}

TEST_CASE("short idle periods stop outer-level balancing until the cost decays", "[scenario][low2013]") {
  // eight_socket_80core (Low 2013's 8-socket box): level 0 the socket's
  // LLC (10 CPUs), level 1 the machine. A socket pull costs 20us, a
  // machine-wide pull 300us. Work arrives 100us after the CPU goes idle
  // (while an outer pull may still run), so each idle period is 100us.
  const auto topo = presets::eight_socket_80core();
  REQUIRE(topo.level_count(0) == 2);
  IdleBalancer<UniformTopology> b{topo};
  ManualClock clock{1s};
  auto st = b.make_state(0, clock.now());
  std::uint32_t outer_visits = 0;
  auto pull = [&](std::uint32_t level, LevelKind, const auto&) {
    clock.advance(level == 0 ? 20us : 300us);
    if (level == 1) ++outer_visits;
    return false;
  };
  auto cycle = [&] {
    const Nanoseconds start = clock.now();
    const auto r = b.balance(0, st, pull, clock);
    b.idle_end(st, start + 100us);
    clock.advance(100us);
    return r;
  };
  // Warm-up within one second (no decay): avg_idle falls from 1ms toward
  // 100us; below 320us (20 + 300) the machine level is no longer paid for,
  // after ~11 balances: (1000 - 100) * (7/8)^n < 220 at n = 10.5.
  BalanceResult r{};
  for (int i = 0; i < 100; ++i) r = cycle();
  CHECK(r.outcome == BalanceOutcome::budget);
  CHECK(r.stopped_before == 1);
  CHECK(b.tracker().avg_idle(st) < 130us);
  const auto visits_warm = outer_visits;
  // Now one tick per second. The machine level is no longer visited, so its
  // 300us maximum decays by 253/256 a second; the budget allows it again
  // once avg_idle (~100us) >= 20us + cost, i.e. cost <= ~80us:
  // 300 * (253/256)^k <= 80 at k = ln 3.75 / ln(256/253) = 112.1, so tick 113.
  int ticks = 0;
  while (outer_visits == visits_warm && ticks < 1000) {
    clock.advance(1s + 1ns);
    b.tick(st, clock.now());
    ++ticks;
    cycle();
  }
  CHECK(ticks >= 108);
  CHECK(ticks <= 118);
  // Without any limit (2009's NoLimit) every balance pays the 300us.
  IdleBalancer<UniformTopology, traits::Balance<newidle::NoLimit>> nolimit{topo};
  auto st2 = nolimit.make_state(0, clock.now());
  for (int i = 0; i < 100; ++i) {
    const Nanoseconds start = clock.now();
    CHECK(nolimit.balance(0, st2, pull, clock).levels_visited == 2);
    nolimit.idle_end(st2, start + 100us);
  }
}

namespace {
// eight_socket_80core: LLC {0..9}, no SMT. The sleeper S last ran on CPU 3;
// CPU 7 is the only other idle CPU (when used).
template <class Variant, class Ownership = AnyTaskMayTake>
struct HotBox {
  using Traits = traits::CacheHot<Variant, Ownership>;
  using Placer = WakePlacer<UniformTopology, Traits>;
  UniformTopology topo = presets::eight_socket_80core();
  Placer placer{topo};
  ScriptedMachine<false, false, typename Placer::reservation_policy::cpu_state> m{80};
  typename Placer::task_state s, x;
  Nanoseconds now = 1s;

  // S sleeps 50us at a time on CPU 3 and is woken back there: its sleep
  // average builds up (update_avg toward 50us) and each sleep reserves 3.
  void warm_up() {
    m.all_busy();
    for (int i = 0; i < 20; ++i) {
      m.idle(3);
      placer.task_sleeps(s, 10, m.reservation_state(3), true, now);
      now += 50us;
      placer.place({.wakee = &s, .wakee_key = 10, .waking_cpu = 0, .prev_cpu = 3}, m, now);
    }
    m.idle(3);
    placer.task_sleeps(s, 10, m.reservation_state(3), true, now);  // reserved now
    now += 1us;
  }
  Placement wake_x(CpuId prev) {
    return placer.place({.wakee = &x, .wakee_key = 20, .waking_cpu = 0, .prev_cpu = prev}, m, now);
  }
  Placement wake_s() {
    return placer.place({.wakee = &s, .wakee_key = 10, .waking_cpu = 0, .prev_cpu = 3}, m, now);
  }
};
}  // namespace

TEMPLATE_TEST_CASE("a short sleeper gets its CPU back while other wakees skip it", "[scenario][chen2023]",
                   sis_cache::EverySleep2023, sis_cache::ShortSleeps2023, sis_cache::HalveLong2023) {
  HotBox<TestType> box;
  box.warm_up();
  REQUIRE(box.s.sleep.sleep_avg > 0ns);
  REQUIRE(box.s.sleep.sleep_avg < 500us);
  REQUIRE(box.placer.reservation().reserved_against(box.m.reservation(3), 20, box.now));
  box.m.idle(7);
  // X, woken on busy CPU 0 with prev 0: the scan from 0 meets 3 (reserved,
  // skipped) before 7.
  const auto px = box.wake_x(0);
  CHECK(px.cpu == 7);
  CHECK(px.reason == WakeReason::idle_scan);
  CHECK(px.reservation_skips == 1);
  // S: prev 3 idle -> prev_idle, and the target's fast path is not guarded.
  box.m.busy(7);
  const auto ps = box.wake_s();
  CHECK(ps.cpu == 3);
  CHECK(ps.reason == WakeReason::idle_target);
}

TEST_CASE("with every idle CPU reserved ShortSleeps2023 and HalveLong2023 fall back to it, EverySleep2023 stacks", "[scenario][chen2023]") {
  // Only CPU 3 idle, reserved for S. HalveLong2023 guards half the budget (5 of 10
  // CPUs: 1..5 from target 0), which includes 3.
  HotBox<sis_cache::ShortSleeps2023> v1;
  v1.warm_up();
  auto p = v1.wake_x(0);
  CHECK(p.cpu == 3);
  CHECK(p.reason == WakeReason::hot_fallback);
  HotBox<sis_cache::HalveLong2023> v2;
  v2.warm_up();
  p = v2.wake_x(0);
  CHECK(p.cpu == 3);
  CHECK(p.reason == WakeReason::hot_fallback);
  HotBox<sis_cache::EverySleep2023> rfc;
  rfc.warm_up();
  p = rfc.wake_x(0);
  CHECK(p.cpu == 0);  // task stacking on the busy target (K Prateek Nayak's report)
  CHECK(p.reason == WakeReason::target_busy);
  CHECK(p.reservation_skips == 1);
}

TEST_CASE("only OwnerOnly keeps a reserved CPU from a task whose prev it is", "[scenario][chen2023]") {
  // The review's weakness: X last ran on 3 too, so it reaches 3 through
  // the prev path, which only an owner-recording policy guards.
  HotBox<sis_cache::HalveLong2023> any;
  any.warm_up();
  any.m.idle(7);
  auto p = any.wake_x(3);
  CHECK(p.cpu == 3);
  CHECK(p.reason == WakeReason::idle_target);
  HotBox<sis_cache::HalveLong2023, OwnerOnly> owner;
  owner.warm_up();
  owner.m.idle(7);
  p = owner.wake_x(3);
  CHECK(p.cpu == 7);
  CHECK(p.reason == WakeReason::idle_scan);
  // ... and the owner itself still gets it.
  owner.m.busy(7);
  p = owner.wake_s();
  CHECK(p.cpu == 3);
}
