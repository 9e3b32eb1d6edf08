// Fuzz target: a random event stream driving each policy on its own —
// FlipCounter (both decays, both storages), the wide rules, the
// NewidleCostTracker (default, 2013 and v6.17-bump traits), NewidleSuccessRate
// (both variants), CacheHotReservation (all three variants), TaskHot
// (both rules), OverlapTracker and the 2008 wake_affine (its three
// variants) — with the
// policy's invariants checked after every event against a reference computed
// in wider arithmetic:
//   flips follow the decay-then-count model exactly and never wrap;
//   every wide rule agrees with its formula in 64/128-bit arithmetic and the
//   symmetric ones are symmetric;
//   avg_idle stays in [0, max(previous avg_idle, its cap)]; costs never go
//   negative; a decay never raises a cost; the CPU-wide cost never drops
//   below migration_cost; a bumped cost rises by at most half and stays
//   under migration_cost + 200 ns;
//   a success ratio stays in 0..1024, a roll answers 0 or a weight in
//   1..1024, a skip counts one call and no success, and two copies of a
//   state roll alike;
//   a reservation is live only inside [start, start + migration_cost) and
//   sleep_avg never goes negative;
//   TaskHot's verdict equals the kernel's order of tests evaluated in
//   128-bit arithmetic, and its failure counts follow a 64-bit shadow
//   (periodic refusals add one, saturating; moves and balanced reset);
//   the average overlap follows a 128-bit shadow of update_avg over
//   saturated samples and stays in [0, INT64_MAX];
//   WakeAffine2008's verdict equals its formula in 128-bit arithmetic.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

#include "fuzz_support.hpp"
#include "taskplace/policy/cache_hot_reservation.hpp"
#include "taskplace/policy/flip_counter.hpp"
#include "taskplace/policy/newidle_cost_tracker.hpp"
#include "taskplace/policy/newidle_success_rate.hpp"
#include "taskplace/policy/overlap_tracker.hpp"
#include "taskplace/placer/wake_affine.hpp"
#include "taskplace/testing/machine.hpp"
#include "taskplace/topology/uniform.hpp"
#include "taskplace/policy/task_hot.hpp"
#include "taskplace/policy/wide_detector.hpp"

namespace {

using namespace taskplace;
using i128 = __int128;

Nanoseconds clamp(i128 t) {
  if (t > std::numeric_limits<std::int64_t>::max()) return Nanoseconds::max();
  if (t < std::numeric_limits<std::int64_t>::min()) return Nanoseconds::min();
  return Nanoseconds{static_cast<std::int64_t>(t)};
}

// Time: mostly small steps forward, sometimes backwards, huge jumps and the
// 64-bit extremes.
Nanoseconds next_time(fuzz::Bytes& in, Nanoseconds now) {
  const std::uint8_t k = in.u8();
  switch (k % 8u) {
    case 0: return Nanoseconds{in.i64()};
    case 1: return Nanoseconds{std::numeric_limits<std::int64_t>::max() - (k >> 3)};
    case 2: return Nanoseconds{std::numeric_limits<std::int64_t>::min() + (k >> 3)};
    case 3: return clamp(i128{now.count()} - in.u32());
    default: return clamp(i128{now.count()} + in.u32() * i128{1000});
  }
}

Nanoseconds any_duration(fuzz::Bytes& in) {
  const std::uint8_t k = in.u8();
  if (k < 16) return Nanoseconds{in.i64()};
  if (k < 24) return Nanoseconds::max() - Nanoseconds{k};
  return Nanoseconds{static_cast<std::int64_t>(in.u32())};
}

template <class Counter>
void drive_flips(fuzz::Bytes& in) {
  Counter f;
  f.period = in.flag() ? Nanoseconds{in.i64()} : tunables::flip_decay_period;
  typename Counter::state s;
  Nanoseconds now{0};
  for (int step = 0; step < 64 && !in.empty(); ++step) {
    const std::uint8_t op = in.u8();
    if (op % 8u == 0) {  // jump the count to near its limit
      s.flips.store(std::numeric_limits<std::uint32_t>::max() - (op >> 3));
      continue;
    }
    now = next_time(in, now);
    const TaskKey wakee = in.below(4);
    const std::uint32_t before = s.flips.load();
    const std::int64_t stamp = s.decay_stamp_ns.load();
    const TaskKey last = s.last_wakee.load();
    // Reference: decay when now > stamp + max(period, 0), exactly.
    const i128 span = f.period.count() > 0 ? f.period.count() : 0;
    const bool due = i128{now.count()} > i128{stamp} + span;
    std::uint32_t expect = due ? Counter::decay_type::apply(before) : before;
    FUZZ_CHECK(expect <= before);  // FlipDecay I1
    if (wakee != last && expect != std::numeric_limits<std::uint32_t>::max()) ++expect;
    f.record(s, wakee, now);
    FUZZ_CHECK(f.flips(s) == expect);
    FUZZ_CHECK(s.last_wakee.load() == wakee);
    FUZZ_CHECK(s.decay_stamp_ns.load() == (due ? now.count() : stamp));
  }
}

template <class Rule>
bool reference_wide(std::uint32_t w, std::uint32_t e, std::uint32_t f);
template <>
bool reference_wide<wide::OneSided2013>(std::uint32_t w, std::uint32_t e, std::uint32_t f) {
  const i128 ff = f == 0 ? 1 : f;
  return e > ff && i128{w} > ff * e;
}
template <>
bool reference_wide<wide::Symmetric2015>(std::uint32_t w, std::uint32_t e, std::uint32_t f) {
  const i128 ff = f == 0 ? 1 : f, hi = std::max(w, e), lo = std::min(w, e);
  return lo >= ff && hi >= ff * lo;
}
template <>
bool reference_wide<wide::MasterOnly2017>(std::uint32_t w, std::uint32_t e, std::uint32_t f) {
  const i128 ff = f == 0 ? 1 : f, hi = std::max(w, e), lo = std::min(w, e);
  return hi >= ff * lo;
}

void drive_wide(fuzz::Bytes& in) {
  const std::uint32_t w = in.u32(), e = in.u32(), f = in.u32();
  FUZZ_CHECK(WideDetector<wide::OneSided2013>::wide(w, e, f) == reference_wide<wide::OneSided2013>(w, e, f));
  FUZZ_CHECK(WideDetector<wide::Symmetric2015>::wide(w, e, f) == reference_wide<wide::Symmetric2015>(w, e, f));
  FUZZ_CHECK(WideDetector<wide::MasterOnly2017>::wide(w, e, f) == reference_wide<wide::MasterOnly2017>(w, e, f));
  FUZZ_CHECK(wide::Symmetric2015::wide(w, e, f) == wide::Symmetric2015::wide(e, w, f));
  FUZZ_CHECK(wide::MasterOnly2017::wide(w, e, f) == wide::MasterOnly2017::wide(e, w, f));
}

struct Traits2013 : DefaultNewidleTraits {
  using Estimator = avg_idle::Saturate2009;
  using Schedule = cost_decay::EverySecond2014;
  using Ratio = DecayRatio<63, 64>;
  using EntryGate = newidle_gate::MigrationCost2009;
  using Budget = level_budget::SpentPlusMigration2013;
  static constexpr bool cap_level_cost = true;
  static constexpr bool skip_without_stamp = false;
};

struct TraitsBump : DefaultNewidleTraits {
  static constexpr bool bump_failed_cost = true;
};

template <class Tracker>
void drive_newidle(fuzz::Bytes& in) {
  Tracker t;
  if (in.flag()) t.migration_cost = any_duration(in);
  if (in.flag()) t.decay_period = any_duration(in);
  Nanoseconds now = next_time(in, Nanoseconds{0});
  auto s = t.make_state(in.below(max_levels + 1), now);
  const Nanoseconds floor = t.migration_cost.count() < 0 ? Nanoseconds{0} : t.migration_cost;
  for (int step = 0; step < 64 && !in.empty(); ++step) {
    const std::uint8_t op = in.u8();
    now = next_time(in, now);
    const auto before = s;
    const auto twice = [](Nanoseconds d) { return detail::saturating_add(d, d); };
    switch (op % 5u) {
      case 0: t.idle_start(s, now); break;
      case 1: {
        t.idle_end(s, now);
        // AvgIdleEstimator I1: within [0, max(cap, avg_idle before)].
        FUZZ_CHECK(s.avg_idle <= std::max(before.avg_idle, twice(before.max_idle_balance_cost)));
        FUZZ_CHECK(!s.has_stamp);
        break;
      }
      case 2: {
        if (s.level_count == 0) break;
        const std::uint32_t level = in.below(s.level_count);
        const Nanoseconds cost = in.flag() ? any_duration(in) : Nanoseconds{in.u32()};
        const bool attempt = in.flag(), pulled = in.flag();
        if (attempt)
          t.record_attempt(s, level, cost, pulled, now);
        else
          t.record_cost(s, level, cost, now);
        for (std::uint32_t i = 0; i < s.level_count; ++i)
          if (i != level) FUZZ_CHECK(s.max_cost[i] == before.max_cost[i]);
        Nanoseconds bound = std::max(before.max_cost[level], cost);
        if constexpr (detail::newidle_bumps_failed_cost<typename Tracker::traits_type>()) {
          const Nanoseconds m = before.max_cost[level];
          if (attempt && !pulled) bound = std::max(bound, detail::saturating_add(m, m / 2));
          // A rise never passes migration_cost + 200 ns.
          if (s.max_cost[level] > before.max_cost[level])
            FUZZ_CHECK(s.max_cost[level] <= detail::saturating_add(std::max(t.migration_cost, Nanoseconds{0}), Nanoseconds{200}));
        }
        FUZZ_CHECK(s.max_cost[level] <= bound);
        break;
      }
      case 3: {
        t.decay(s, now);
        for (std::uint32_t i = 0; i < s.level_count; ++i)
          FUZZ_CHECK(s.max_cost[i] <= before.max_cost[i]);  // no sample, no rise
        break;
      }
      default: {
        (void)t.should_balance(s);
        if (s.level_count > 0) (void)t.may_visit_level(s, in.below(s.level_count), any_duration(in));
        FUZZ_CHECK(s.avg_idle == before.avg_idle);
        break;
      }
    }
    FUZZ_CHECK(s.avg_idle >= Nanoseconds{0});
    FUZZ_CHECK(s.max_idle_balance_cost >= floor);
    for (std::uint32_t i = 0; i < s.level_count; ++i) FUZZ_CHECK(s.max_cost[i] >= Nanoseconds{0});
    for (std::uint32_t i = 0; i < max_levels; ++i) FUZZ_CHECK(t.level_cost(s, i) >= Nanoseconds{0});
  }
}

template <class Rate>
void drive_success(fuzz::Bytes& in) {
  const Rate r;
  Nanoseconds now = next_time(in, Nanoseconds{0});
  auto s = r.make_state(in.below(max_levels + 1), now, in.get<std::uint64_t>());
  if (in.flag()) {  // a hand-filled state: any counts, any ratio
    for (auto& l : s.levels) {
      l.calls = in.u32();
      l.successes = in.u32();
      l.ratio = in.u32();
      l.window_start = any_duration(in);
    }
  }
  for (int step = 0; step < 64 && !in.empty() && s.level_count > 0; ++step) {
    const std::uint8_t op = in.u8();
    now = next_time(in, now);
    const std::uint32_t level = in.below(s.level_count);
    const auto before = s;
    if (op % 2u == 0) {
      auto twin = s;
      const std::uint32_t w = r.roll(s, level, now);
      FUZZ_CHECK(w == r.roll(twin, level, now));  // same state, same die
      FUZZ_CHECK(twin == s);
      FUZZ_CHECK(w <= 1024);
      if (w == 0) {
        const auto& a = before.levels[level];
        const auto& b = s.levels[level];
        // A skip counts one call, no success (or closes the window).
        if (a.calls < Rate::window - 1) FUZZ_CHECK(b.calls == a.calls + 1 && b.successes == a.successes);
      }
    } else {
      r.record(s, level, in.flag(), in.below(1025), now);
      FUZZ_CHECK(s.rng == before.rng);  // recording throws no die
    }
    for (std::uint32_t i = 0; i < s.level_count; ++i) {
      FUZZ_CHECK(r.ratio(s, i) <= 1024);
      if (i != level) FUZZ_CHECK(s.levels[i] == before.levels[i]);
    }
  }
}

template <class Res>
void drive_reservation(fuzz::Bytes& in) {
  Res r;
  if (in.flag()) r.migration_cost = any_duration(in);
  std::vector<typename Res::task_state> tasks(3);
  std::vector<typename Res::cpu_state> cpus(4);
  std::vector<Nanoseconds> started(4, Nanoseconds::min());  // when each live reservation last moved
  Nanoseconds now = next_time(in, Nanoseconds{0});
  for (int step = 0; step < 64 && !in.empty(); ++step) {
    const std::uint8_t op = in.u8();
    now = next_time(in, now);
    const std::uint32_t ti = in.below(3), ci = in.below(4);
    auto& task = tasks[ti];
    auto& cpu = cpus[ci];
    switch (op % 4u) {
      case 0: {
        const Nanoseconds avg = task.sleep_avg;
        r.on_wakeup(task, now);
        FUZZ_CHECK(task.last_dequeue == Nanoseconds{0});
        FUZZ_CHECK(task.sleep_avg >= Nanoseconds{0});
        if constexpr (!std::is_same_v<typename Res::variant, sis_cache::EverySleep2023>)
          FUZZ_CHECK(task.sleep_avg <= std::max(avg, r.migration_cost));  // only short sleeps raise it
        break;
      }
      case 1: {
        const auto old = cpu;
        r.on_sleep(task, cpu, in.flag(), ti + 1, now);
        FUZZ_CHECK(task.last_dequeue == now);
        if (cpu.hot_until != old.hot_until) {
          // A new reservation starts now and ends before now + migration_cost.
          FUZZ_CHECK(i128{cpu.hot_until.count()} < i128{now.count()} + r.migration_cost.count() ||
                     cpu.hot_until == Nanoseconds::max());
          FUZZ_CHECK(cpu.hot_until >= now);
          started[ci] = now;
        }
        break;
      }
      case 2:
        r.release(cpu);
        started[ci] = Nanoseconds::min();
        // A released CPU is free at any clock reading, negative ones too.
        FUZZ_CHECK(!r.reserved_against(cpu, in.below(4), now));
        break;
      default: {
        // A reservation always expires: never reserved at or past hot_until.
        const Nanoseconds later = cpu.hot_until;
        FUZZ_CHECK(!r.reserved_against(cpu, in.below(4), later));
        std::vector<CpuId> idle;
        for (CpuId c = 0; c < 4; ++c)
          if (in.flag()) idle.push_back(c);
        const TaskKey asker = in.below(4);
        const CpuId got = pick_idle_cpu(r, idle, cpus, asker, now);
        if (got != no_cpu) {
          FUZZ_CHECK(std::find(idle.begin(), idle.end(), got) != idle.end());
          const bool any_free = std::any_of(idle.begin(), idle.end(),
                                            [&](CpuId c) { return !r.reserved_against(cpus[c], asker, now); });
          if (any_free) FUZZ_CHECK(!r.reserved_against(cpus[got], asker, now));
        } else {
          FUZZ_CHECK(idle.empty() || !Res::fallback_to_hot_idle);
        }
        break;
      }
    }
    for (std::size_t c = 0; c < cpus.size(); ++c)
      if (r.reserved_against(cpus[c], no_task, now) && now >= Nanoseconds{0} && started[c] != Nanoseconds::min() &&
          cpus[c].hot_until != Nanoseconds::max())
        FUZZ_CHECK(i128{now.count()} - started[c].count() < r.migration_cost.count() ||
                   now < started[c]);
  }
}

template <class H>
void drive_task_hot(fuzz::Bytes& in) {
  H h;
  if (in.flag()) h.migration_cost = any_duration(in);
  if (in.flag())
    for (auto& t : h.cache_nice_tries) t = in.flag() ? in.u32() : in.below(4);
  h.hot_buddy = in.flag();
  typename H::state s{};
  std::uint64_t shadow[max_levels] = {};
  Nanoseconds now = next_time(in, Nanoseconds{0});
  for (int step = 0; step < 64 && !in.empty(); ++step) {
    now = next_time(in, now);
    const std::uint32_t level = in.below(max_levels);
    const Move m{.kind = static_cast<LevelKind>(in.below(6)),  // 5: outside the enumeration
                 .last_ran = next_time(in, now),
                 .next_buddy = in.flag(),
                 .dst_nr_running = in.below(3)};
    // The kernel's order, in wide arithmetic.
    bool hot;
    if (H::rule::smt_exempt && m.kind == LevelKind::smt) hot = false;
    else if (h.hot_buddy && m.next_buddy && m.dst_nr_running > 0) hot = true;
    else if (h.migration_cost < Nanoseconds{0}) hot = true;
    else if (h.migration_cost == Nanoseconds{0}) hot = false;
    else hot = i128{now.count()} - m.last_ran.count() < h.migration_cost.count();
    FUZZ_CHECK(h.is_hot(m, now) == hot);
    const std::uint32_t tries = h.tries(m.kind);
    FUZZ_CHECK(tries == h.cache_nice_tries[std::min<std::size_t>(static_cast<std::size_t>(m.kind), 4)]);
    FUZZ_CHECK(h.can_migrate(s, level, m, now) == (shadow[level] > tries || !hot));
    const auto kind = in.flag() ? BalanceKind::periodic : BalanceKind::newidle;
    const auto outcome = static_cast<PullOutcome>(in.below(3));
    h.record(s, level, kind, outcome);
    if (outcome != PullOutcome::refused) shadow[level] = 0;
    else if (kind == BalanceKind::periodic) shadow[level] = std::min<std::uint64_t>(shadow[level] + 1, UINT32_MAX);
    for (std::uint32_t l = 0; l < max_levels; ++l) FUZZ_CHECK(s.nr_balance_failed[l] == shadow[l]);
    // find_movable over a few stamps agrees with can_migrate one by one.
    {
      Nanoseconds q[6];
      const std::uint32_t n = in.below(7), limit = in.below(8);
      for (std::uint32_t j = 0; j < n; ++j) q[j] = next_time(in, now);
      const auto r = h.find_movable(s, level, m.kind, q, q + n, [](Nanoseconds t) { return t; }, now,
                                    m.dst_nr_running, limit);
      std::uint32_t expect_looked = 0, expect_at = n;
      for (std::uint32_t j = 0; j < n && j < limit; ++j) {
        ++expect_looked;
        if (h.can_migrate(s, level, {.kind = m.kind, .last_ran = q[j], .dst_nr_running = m.dst_nr_running}, now)) {
          expect_at = j;
          break;
        }
      }
      FUZZ_CHECK(r.looked == expect_looked);
      FUZZ_CHECK(r.found == (expect_at < n));
      if (r.found) FUZZ_CHECK(r.it == q + expect_at);
    }
    // Now and then, a count near the top: it must saturate, never wrap.
    if (in.below(16) == 0) {
      s.nr_balance_failed[level] = UINT32_MAX - in.below(2);
      shadow[level] = s.nr_balance_failed[level];
    }
  }
}

// OverlapTracker against a shadow: samples saturate at INT64_MAX, a clock
// that went back gives 0, the average moves by (sample - avg) / 8
// truncated toward zero, and only a sleep after a wake-up samples.
void drive_overlap(fuzz::Bytes& in) {
  OverlapTracker::state s;
  bool woke = false;
  i128 woke_at = 0, avg = 0;
  Nanoseconds now = next_time(in, Nanoseconds{0});
  for (int step = 0; step < 64 && !in.empty(); ++step) {
    now = next_time(in, now);
    if (in.flag()) {
      OverlapTracker::on_wake_other(s, now);
      woke = true;
      woke_at = now.count();
    } else {
      OverlapTracker::on_sleep(s, now);
      if (woke) {
        i128 sample = now.count() > woke_at ? i128{now.count()} - woke_at : 0;
        if (sample > std::numeric_limits<std::int64_t>::max()) sample = std::numeric_limits<std::int64_t>::max();
        avg += (sample - avg) / 8;
        woke = false;
      }
    }
    FUZZ_CHECK(s.woke == woke);
    FUZZ_CHECK(i128{OverlapTracker::average(s).count()} == avg);
    FUZZ_CHECK(OverlapTracker::average(s) >= Nanoseconds{0});  // never negative, whatever the clock did
  }
}

// WakeAffine2008 on random loads, weights and overlaps against its formula
// in 128-bit arithmetic (loads clamped at 2^48 as the rule documents).
template <class V>
void drive_affine_2008(fuzz::Bytes& in) {
  static const UniformTopology topo = presets::westmere_12cpu_2013();  // SMT siblings c, c + 6
  WakeAffine2008<V> a;
  if (in.flag()) a.imbalance_pct = in.u32();
  if (in.flag()) a.smt_imbalance_pct = in.u32();
  if (in.flag()) a.migration_cost = any_duration(in);
  constexpr i128 cap = i128{1} << 48;
  const auto clamp48 = [](std::uint64_t x) { return x > (std::uint64_t{1} << 48) ? cap : i128{x}; };
  for (int step = 0; step < 32 && !in.empty(); ++step) {
    testing::ScriptedMachine<> m{12};
    const CpuId waking = in.below(12);
    CpuId prev = in.below(12);
    if (prev == waking) prev = (prev + 1) % 12;
    const std::uint32_t nr = in.below(4);
    const std::uint64_t lw = in.flag() ? static_cast<std::uint64_t>(in.i64()) : in.below(8) * 512u;
    const std::uint64_t lp = in.flag() ? static_cast<std::uint64_t>(in.i64()) : in.below(8) * 512u;
    if (nr > 0) m.busy(waking, nr, lw);
    m.busy(prev, 1 + in.below(3), lp);
    AffineInput<UniformTopology, testing::ScriptedMachine<>> q{topo, m, waking, prev};
    q.sync = in.flag();
    q.wakee_load = in.flag() ? static_cast<std::uint64_t>(in.i64()) : 1024;
    q.waker_load = in.flag() ? static_cast<std::uint64_t>(in.i64()) : 1024;
    q.waker_overlap = any_duration(in);
    q.wakee_overlap = any_duration(in);
    const AffineDecision d = a.decide(q);

    const bool sync = V::honour_sync && q.sync;
    const i128 raw_this = clamp48(m.load(waking));
    i128 this_load = raw_this;
    if (sync) this_load = std::max<i128>(0, this_load - clamp48(q.waker_load));
    const i128 prev_load = clamp48(m.load(prev));
    const std::uint32_t pct = topo.core_of(waking) == topo.core_of(prev) ? a.smt_imbalance_pct : a.imbalance_pct;
    const i128 imb = 100 + (pct > 100 ? (pct - 100) / 2 : 0);
    const bool balanced = 100 * (this_load + clamp48(q.wakee_load)) <= imb * prev_load;
    const std::uint32_t running = m.nr_running(waking);
    const i128 per_task = running == 0 ? 1024 : raw_this / running;  // cpu_avg_load_per_task
    AffineReason want = AffineReason::load_prev;
    if (sync && (balanced || !V::pull_needs_balance) && q.waker_overlap < a.migration_cost &&
        q.wakee_overlap < a.migration_cost)
      want = AffineReason::sync_overlap;
    else if ((this_load <= prev_load && this_load + prev_load <= per_task) || balanced)
      want = AffineReason::load_waking;
    FUZZ_CHECK(d.reason == want);
    FUZZ_CHECK(d.target == (want == AffineReason::load_prev ? prev : waking));
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  fuzz::Bytes in(data, size);
  switch (in.u8() % 18u) {
    case 0: drive_flips<FlipCounter<flip_decay::Halve2014, flip_storage::Plain>>(in); break;
    case 1: drive_flips<FlipCounter<flip_decay::Wipe2013, flip_storage::Plain>>(in); break;
    case 2: drive_flips<FlipCounter<flip_decay::Halve2014, flip_storage::RelaxedAtomic>>(in); break;
    case 3: drive_wide(in); break;
    case 4: drive_newidle<NewidleCostTracker<>>(in); break;
    case 5: drive_newidle<NewidleCostTracker<Traits2013>>(in); break;
    case 6: drive_reservation<CacheHotReservation<sis_cache::HalveLong2023, AnyTaskMayTake>>(in); break;
    case 7: drive_reservation<CacheHotReservation<sis_cache::ShortSleeps2023, OwnerOnly>>(in); break;
    case 8: drive_reservation<CacheHotReservation<sis_cache::EverySleep2023, AnyTaskMayTake>>(in); break;
    case 9: drive_reservation<CacheHotReservation<sis_cache::HalveLong2023, OwnerOnly>>(in); break;
    case 10: in.flag() ? drive_task_hot<TaskHot<>>(in) : drive_task_hot<TaskHot<task_hot::AllLevels2007>>(in); break;
    case 11: drive_newidle<NewidleCostTracker<TraitsBump>>(in); break;
    case 12: drive_success<NewidleSuccessRate<success_rate::Proportional2025>>(in); break;
    case 13: drive_success<NewidleSuccessRate<success_rate::ProportionalRate2026>>(in); break;
    case 14: drive_overlap(in); break;
    case 15: drive_affine_2008<sync_affine::Unchecked2008>(in); break;
    case 16: drive_affine_2008<sync_affine::Balanced2008>(in); break;
    case 17: drive_affine_2008<sync_affine::Ignored2008>(in); break;
    default: drive_wide(in); break;
  }
  return 0;
}
