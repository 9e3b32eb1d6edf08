// Fuzz target: the composed WakePlacer over a random topology (a small
// UniformTopology or a TableTopology from arbitrary arrays), a random
// machine state, random affinity masks (including none), random previous
// CPUs (including offline ids and no_cpu) and a random clock, for eight
// traits sets (today's, 2013's, two SIS_CACHE ones, the 2008 rule
// unchecked and balanced, whose tasks sleep and wake others so that their
// overlaps move, and SIS_CURRENT v8 and v7, whose tasks run, stop and
// sleep so that their durations move). After every wake-up: the CPU is a
// valid id, allowed by the mask unless the mask allows none (then the
// reason is affinity_empty), testing::check_placement reports no broken
// rule, a 2008 sync pull has a waker whose overlap and the wakee's were
// short, and a pair kept by WakeOnCurrent passed all five of its tests.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <vector>

#include "fuzz_support.hpp"
#include "taskplace/testing/machine.hpp"
#include "taskplace/topology/table.hpp"
#include "taskplace/topology/uniform.hpp"
#include "taskplace/wake_placer.hpp"

namespace {

using namespace taskplace;

template <class T, class Traits>
void drive(const T& topo, fuzz::Bytes& in) {
  using P = WakePlacer<T, Traits>;
  using R = typename P::reservation_policy;
  using Machine = std::conditional_t<P::reserving, testing::ScriptedMachine<true, true, typename R::cpu_state>,
                                     testing::ScriptedMachine<true, true>>;
  // With WakeOnCurrent, a flip period of 0-255 ns half the time, so that
  // flips decay to 0 within the short runs a fuzzed clock can make.
  const P placer = [&] {
    if constexpr (P::on_current_rule::enabled) {
      if (in.flag()) return P(topo, typename P::flips_policy{.period = Nanoseconds{in.u8()}});
    }
    return P(topo);
  }();
  const CpuId n = topo.cpu_count();
  Machine m(n);
  std::vector<typename P::task_state> tasks(4);
  Nanoseconds now{static_cast<std::int64_t>(in.u32())};
  for (int step = 0; step < 48 && !in.empty(); ++step) {
    const std::uint8_t op = in.u8();
    switch (op % 4u) {
      case 0: {  // the machine changes
        const CpuId c = in.below(n);
        if (in.flag()) m.idle(c);
        else m.busy(c, in.below(4) + 1, in.below(4096));
        m.utilization(in.below(128)).idle_core_hint(in.flag());
        break;
      }
      case 1: {  // time: forward, backwards, or a jump to an extreme
        const std::uint8_t k = in.u8();
        if (k < 8) now = Nanoseconds{k & 1u ? std::numeric_limits<std::int64_t>::max() : std::numeric_limits<std::int64_t>::min()};
        else if (k < 32) now = now.count() < std::numeric_limits<std::int64_t>::min() + (std::int64_t{1} << 32) ? Nanoseconds::min() : now - Nanoseconds{in.u32()};
        else if (k < 128) now = detail::saturating_add(now, Nanoseconds{in.u8()});  // a short run
        else now = detail::saturating_add(now, Nanoseconds{in.u32()});
        break;
      }
      case 2: {  // a task sleeps on an idle CPU
        if constexpr (P::reserving) {
          const CpuId c = in.below(n);
          const std::uint32_t t = in.below(4);
          placer.task_sleeps(tasks[t], 100 + t, m.reservation_state(c), m.is_idle(c), now);
        } else if constexpr (P::tracking_overlap) {
          placer.task_sleeps(tasks[in.below(4)], now);
        } else if constexpr (P::tracking_duration) {
          auto& t = tasks[in.below(4)];
          switch (in.below(3)) {
            case 0: placer.task_runs(t, now); break;
            case 1: placer.task_stops(t, now); break;
            default: placer.task_sleeps(t, now); break;
          }
        }
        break;
      }
      default: {  // a wake-up
        testing::CpuMask mask = testing::CpuMask::all(n);
        const std::uint8_t mk = in.u8();
        if (mk < 64) {
          for (CpuId c = 0; c < n; ++c) mask.bits[c] = in.below(3) == 0;
        } else if (mk < 72) {
          mask = testing::CpuMask::none(n);
        } else if (mk < 96) {
          mask = testing::CpuMask::none(n);
          mask.bits[in.below(n)] = true;
        }
        const std::uint32_t wi = in.below(4), ei = in.below(4);
        const CpuId waking = in.below(n);
        const std::uint8_t pk = in.u8();
        const CpuId prev = pk < 16 ? no_cpu : pk < 32 ? n + pk : in.below(n);  // offline ids too
        if (in.u8() < 16) tasks[ei].flips.flips.store(in.u32());
        if (in.u8() < 16) tasks[ei].recent_cpu = in.u32();  // stale, maybe out of range
        typename P::Wakeup w{.waker = in.flag() ? nullptr : &tasks[wi],
                             .waker_key = 100 + wi,
                             .wakee = &tasks[ei],
                             .wakee_key = 100 + ei,
                             .waking_cpu = waking,
                             .prev_cpu = prev,
                             .sync = in.flag(),
                             .wakee_load = in.u32(),
                             .waker_load = in.u32()};
        w.current_cpu = in.u8() < 32;  // a hand-off one time in eight
        const CpuId recent_before = tasks[ei].recent_cpu;
        const Nanoseconds waker_overlap =
            w.waker != nullptr ? P::overlap_policy::average(w.waker->overlap) : Nanoseconds::max();
        const Nanoseconds wakee_overlap = P::overlap_policy::average(w.wakee->overlap);
        const Nanoseconds waker_duration =
            w.waker != nullptr ? P::duration_policy::average(w.waker->duration) : Nanoseconds{0};
        const Nanoseconds wakee_duration = P::duration_policy::average(w.wakee->duration);
        const std::uint32_t running_before = m.nr_running(waking < n ? waking : 0);
        const Placement p = placer.place(w, m, now, mask);
        if (p.reason == WakeReason::waker_blocks || p.reason == WakeReason::short_work) {
          // CostGate's keeps: a waker task, no hand-off, the waking CPU allowed.
          // A waker known by its key alone passes only test (b): (a) reads
          // its overlap.
          FUZZ_CHECK(detail::reads_costs<typename P::on_current_rule>);
          FUZZ_CHECK((w.waker != nullptr || w.waker_key != no_task) && !w.current_cpu && mask(waking));
          FUZZ_CHECK(w.waker != nullptr || p.reason == WakeReason::short_work);
          FUZZ_CHECK(p.cpu == waking && p.target == waking && p.affine == AffineReason::cost_gate);
        }
        if (p.reason == WakeReason::busy_short || p.reason == WakeReason::costly_idle) {
          // CostGate's test after the search: a waker task, the waking CPU
          // allowed, in place of a target the affine step chose; the
          // wakee's run known (the average read before the decision:
          // the gate reads the lower of it and the latest sample).
          FUZZ_CHECK(detail::gate_after_search<typename P::on_current_rule>);
          FUZZ_CHECK((w.waker != nullptr || w.waker_key != no_task) && !w.current_cpu && mask(waking));
          FUZZ_CHECK(p.cpu == waking && p.affine != AffineReason::cost_gate);
        }
        if (p.reason == WakeReason::wake_on_current) {
          if constexpr (requires { typename P::on_current_rule::variant_type; }) {
            using V = typename P::on_current_rule::variant_type;
            FUZZ_CHECK(w.waker != nullptr && !w.current_cpu && mask(waking));
            FUZZ_CHECK(p.cpu == waking && p.affine == AffineReason::wake_on_current);
            FUZZ_CHECK(running_before <= 1);
            FUZZ_CHECK(V::is_short(waker_duration, n) && V::is_short(wakee_duration, n));
            FUZZ_CHECK(placer.flips().flips(w.waker->flips) == 0 && placer.flips().flips(w.wakee->flips) == 0);
            FUZZ_CHECK(placer.flips().last_wakee(w.waker->flips) == w.wakee_key &&
                       placer.flips().last_wakee(w.wakee->flips) == w.waker_key && w.waker_key != w.wakee_key);
          } else {
            FUZZ_CHECK(false);  // only WakeOnCurrent gives this reason
          }
        }
        if (p.affine == AffineReason::sync_overlap) {
          FUZZ_CHECK(w.sync && w.waker != nullptr);
          FUZZ_CHECK(waker_overlap < tunables::migration_cost && wakee_overlap < tunables::migration_cost);
        }
        FUZZ_CHECK(p.cpu < n);
        FUZZ_CHECK(p.target < n);
        bool any = false;
        for (CpuId c = 0; c < n; ++c) any = any || mask(c);
        FUZZ_CHECK(mask(p.cpu) || (!any && p.reason == WakeReason::affinity_empty));
        std::function<bool(CpuId)> reserved;
        bool owner_only = false;
        if constexpr (P::reserving) {
          reserved = [&](CpuId c) { return placer.reservation().reserved_against(m.reservation(c), w.wakee_key, now); };
          owner_only = detail::reservation_owner_only<R>();
        }
        const bool full_scan = m.cpu(0).llc_util_pct == 0;
        const auto v = testing::check_placement(
            topo, m, mask, testing::PlacementQuery{waking, prev, P::search_policy::enabled, w.sync, w.current_cpu}, p, reserved,
            owner_only, full_scan);
        if (!v.empty()) {
          std::fprintf(stderr, "%s: %s (cpu %u target %u affine %s reason %s)\n", v.front().rule.c_str(),
                       v.front().detail.c_str(), p.cpu, p.target, to_string(p.affine), to_string(p.reason));
          FUZZ_CHECK(v.empty());
        }
        // recent_cpu is left alone or set to a valid CPU.
        FUZZ_CHECK(tasks[ei].recent_cpu == recent_before || tasks[ei].recent_cpu < n);
        break;
      }
    }
  }
}

template <class T>
void drive_all(const T& topo, fuzz::Bytes& in) {
  switch (in.u8() % 9u) {
    case 0: drive<T, DefaultWakeTraits>(topo, in); break;
    case 1: drive<T, traits::Linux2013>(topo, in); break;
    case 2: drive<T, traits::CacheHot<sis_cache::HalveLong2023, AnyTaskMayTake>>(topo, in); break;
    case 3: drive<T, traits::Linux2008<sync_affine::Unchecked2008>>(topo, in); break;
    case 4: drive<T, traits::Linux2008<sync_affine::Balanced2008>>(topo, in); break;
    case 5: drive<T, traits::SisCurrent<sis_current::MigrationCost2023>>(topo, in); break;
    case 6: drive<T, traits::SisCurrent<sis_current::Granularity2023>>(topo, in); break;
    case 7: drive<T, traits::Runtime>(topo, in); break;
    default: drive<T, traits::CacheHot<sis_cache::ShortSleeps2023, OwnerOnly>>(topo, in); break;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  fuzz::Bytes in(data, size);
  const std::uint8_t shape = in.u8();
  if (shape & 1u) {
    const UniformTopology topo(shape >> 1 & 1u ? 2 : 1, in.below(3) + 1, in.below(4) + 1, in.below(2) + 1,
                               shape >> 2 & 1u ? CpuNumbering::smt_last : CpuNumbering::nested);
    drive_all(topo, in);
    return 0;
  }
  const std::size_t n = shape >> 1 & 15u;
  std::vector<std::uint32_t> core, llc, node;
  for (std::size_t c = 0; c < n; ++c) {
    core.push_back(in.below(8));
    llc.push_back(in.below(4));
    node.push_back(in.below(3));
  }
  std::optional<TableTopology> topo;
  try {
    topo.emplace(core, llc, node);
  } catch (const TopologyError&) {
    return 0;
  }
  drive_all(*topo, in);
  return 0;
}
