// Fuzz target: the composed IdleBalancer over a small UniformTopology, with
// a ManualClock the input moves (forwards, backwards, to the extremes, and
// during pulls), pulls that find work, find none or throw, idle ends and
// ticks, for five traits sets (today's default, 2009, 2013, the v6.17 cost
// bump, and the success-rate dice of v7.0). After every event: avg_idle is in
// [0, max(its previous value, 2 * the CPU-wide cost)], no level cost is
// negative, the CPU-wide cost is at least migration_cost, a throwing pull
// leaves the state untouched (the dice's included), and the result's counts
// are consistent: levels tried plus levels the dice passed over make up the
// walk, and a caller's "no CPU overloaded" means no walk at all.
#include <cstddef>
#include <cstdint>
#include <limits>
#include <stdexcept>

#include "fuzz_support.hpp"
#include "taskplace/clock.hpp"
#include "taskplace/idle_balancer.hpp"
#include "taskplace/topology/uniform.hpp"

namespace {

using namespace taskplace;

struct PullFailed : std::runtime_error {
  PullFailed() : std::runtime_error("pull failed") {}
};

template <class State>
bool same(const State& a, const State& b) {
  if (a.idle_stamp != b.idle_stamp || a.has_stamp != b.has_stamp || a.avg_idle != b.avg_idle ||
      a.max_idle_balance_cost != b.max_idle_balance_cost || a.level_count != b.level_count)
    return false;
  for (std::uint32_t i = 0; i < max_levels; ++i)
    if (a.max_cost[i] != b.max_cost[i] || a.last_decay[i] != b.last_decay[i]) return false;
  if constexpr (requires { a.attempts; }) return a.attempts == b.attempts;
  return true;
}

template <class Traits>
void drive(fuzz::Bytes& in) {
  const UniformTopology topo(in.below(2) + 1, in.below(3) + 1, in.below(3) + 1, in.below(2) + 1);
  typename IdleBalancer<UniformTopology, Traits>::tracker_type tracker;
  if (in.u8() < 32) tracker.migration_cost = Nanoseconds{in.i64()};
  const IdleBalancer<UniformTopology, Traits> b(topo, tracker);
  ManualClock clock{Nanoseconds{static_cast<std::int64_t>(in.u32())}};
  const CpuId cpu = in.below(topo.cpu_count());
  auto st = b.make_state(cpu, clock.now());
  const Nanoseconds floor = tracker.migration_cost.count() < 0 ? Nanoseconds{0} : tracker.migration_cost;
  const auto move = [&](std::uint8_t k) {
    if (k < 4) clock.set(Nanoseconds{k & 1u ? std::numeric_limits<std::int64_t>::max() : std::numeric_limits<std::int64_t>::min()});
    else if (k < 24) clock.set(clock.now().count() < std::numeric_limits<std::int64_t>::min() + (std::int64_t{1} << 32) ? Nanoseconds::min() : clock.now() - Nanoseconds{in.u32()});
    else clock.set(detail::saturating_add(clock.now(), Nanoseconds{static_cast<std::int64_t>(in.u32()) * (k < 128 ? 1 : 1000)}));
  };
  for (int step = 0; step < 48 && !in.empty(); ++step) {
    const std::uint8_t op = in.u8();
    const auto before = st;
    switch (op % 4u) {
      case 0: {
        const std::uint8_t script = in.u8();  // per level: bit 0 found work, bit 1 throw
        std::uint8_t advances[max_levels];
        for (auto& a : advances) a = in.u8();
        try {
          const Overload overload = static_cast<Overload>(in.u8() % 3u);
          const BalanceResult r = b.balance(
              cpu, st,
              [&](std::uint32_t level, LevelKind, auto span) {
                FUZZ_CHECK(level < topo.level_count(cpu));
                FUZZ_CHECK(span.size() >= 1);
                move(advances[level]);
                if (script >> (2 * (level % 4)) & 2u) throw PullFailed();
                return (script >> (2 * (level % 4)) & 1u) != 0;
              },
              clock, overload);
          const std::uint32_t walked = r.levels_visited + r.levels_skipped;
          FUZZ_CHECK(walked <= topo.level_count(cpu));
          FUZZ_CHECK(r.spent >= Nanoseconds{0});
          if constexpr (!IdleBalancer<UniformTopology, Traits>::has_attempt_state) FUZZ_CHECK(r.levels_skipped == 0);
          if (r.outcome == BalanceOutcome::pulled) FUZZ_CHECK(r.pulled_level + 1 == walked);
          if (r.outcome == BalanceOutcome::entry_gate) FUZZ_CHECK(walked == 0);
          FUZZ_CHECK((r.outcome == BalanceOutcome::not_overloaded) == (overload == Overload::none));
          if (r.outcome == BalanceOutcome::not_overloaded) FUZZ_CHECK(walked == 0 && st.has_stamp);
          if (r.outcome == BalanceOutcome::budget) FUZZ_CHECK(r.stopped_before == walked);
          for (std::uint32_t i = 0; i < st.level_count; ++i)
            if (i >= walked) FUZZ_CHECK(st.max_cost[i] == before.max_cost[i]);
        } catch (const PullFailed&) {
          FUZZ_CHECK(same(st, before));  // nothing recorded
        }
        FUZZ_CHECK(st.avg_idle == before.avg_idle);  // balancing alone never moves avg_idle
        break;
      }
      case 1:
        move(in.u8());
        b.idle_end(st, clock.now());
        FUZZ_CHECK(st.avg_idle <= std::max(before.avg_idle,
                                           detail::saturating_add(before.max_idle_balance_cost,
                                                                  before.max_idle_balance_cost)));
        break;
      case 2:
        move(in.u8());
        b.tick(st, clock.now());
        for (std::uint32_t i = 0; i < st.level_count; ++i)
          FUZZ_CHECK(st.max_cost[i] <= before.max_cost[i]);
        break;
      default: move(in.u8()); break;
    }
    FUZZ_CHECK(st.avg_idle >= Nanoseconds{0});
    FUZZ_CHECK(st.max_idle_balance_cost >= floor);
    for (std::uint32_t i = 0; i < st.level_count; ++i) FUZZ_CHECK(st.max_cost[i] >= Nanoseconds{0});
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  fuzz::Bytes in(data, size);
  switch (in.u8() % 5u) {
    case 0: drive<DefaultBalanceTraits>(in); break;
    case 1: drive<traits::Balance<newidle::Gate2009>>(in); break;
    case 3: drive<traits::Balance<newidle::BumpFailed2025>>(in); break;
    case 4: drive<traits::BalanceLinux2026>(in); break;
    default: drive<traits::Balance<newidle::PerLevel2014>>(in); break;
  }
  return 0;
}
