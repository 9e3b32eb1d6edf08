// taskplace/detail/llc_walk.hpp: the walk over the target's LLC that
// IdleSiblingSearch makes once its fast paths have failed.
//
// Kernel analogue: the loops of select_idle_cpu() (v6.x) over the LLC span
// ANDed with the task's allowed CPUs, from target + 1 with wrap-around
// (for_each_cpu_wrap), calling either __select_idle_cpu() on each CPU (CPU
// mode, counted against the SIS_UTIL budget) or select_idle_core() on each
// core at the first of its CPUs the walk meets (core mode, the core's CPUs
// then leave the walk mask). Since v6.8, where the target has a cluster
// level (the LLC domain's first group carries SD_CLUSTER), the target's
// cluster is walked first, the same way and on the same budget, and then
// leaves the mask. Plus the reservation guard of SIS_CACHE (Chen 2023,
// never merged), which treats a reserved CPU as not idle within the
// guarded part of the walk.
//
//   detail::LlcWalk w = detail::walk_llc(topo, machine, allowed, target, true, limit, guarded, reserved,
//                                        detail::cluster_level(topo, target));
#pragma once

#include "taskplace/detail/config.hpp"

#include <cstdint>
#include <optional>
#include <ranges>
#include <type_traits>

#include "taskplace/concepts.hpp"
#include "taskplace/detail/topology_blocks.hpp"
#include "taskplace/types.hpp"

namespace taskplace::detail {

// What the walk found. `cpu` is a whole idle core's CPU (`whole_core`), or
// in core mode the first idle allowed CPU met (select_idle_core's idle_cpu),
// in CPU mode the idle CPU that ended the walk; no_cpu when none. `hot` is
// the first idle allowed CPU skipped as reserved.
struct LlcWalk {
  CpuId cpu = no_cpu;
  bool whole_core = false;
  CpuId hot = no_cpu;
  std::uint32_t walked = 0;  // CPUs of the walk mask visited (the kernel's budget count)
  std::uint32_t skips = 0;   // idle allowed CPUs skipped as reserved
};

// No level: the target has no cluster level.
inline constexpr std::uint32_t no_level = 0xFFFFFFFFu;

// Returns: the index of c's cluster level (LevelKind::cluster: a CLS
//   domain strictly between its core and its LLC), or no_level.
// Complexity: O(levels below the cluster level), at most max_levels reads.
template <Topology T>
std::uint32_t cluster_level(const T& t, CpuId c) {
  const std::uint32_t n = static_cast<std::uint32_t>(t.level_count(c));
  for (std::uint32_t i = 0; i < n; ++i) {
    const LevelKind k = t.level_kind(c, i);
    if (k == LevelKind::cluster) return i;
    if (k > LevelKind::cluster) break;  // kinds never decrease (Topology I6)
  }
  return no_level;
}

// Returns: c's resource id, the kernel's sd_share_id: the first CPU of c's
//   cluster level where it has one, else the first CPU of its LLC. Two
//   CPUs share resources (kernel cpus_share_resources()) when their ids are
//   equal: the same cluster, or two CPUs of one LLC neither of which has a
//   cluster level, or (as the kernel's ids fall) a CPU of a cluster whose
//   first CPU is the LLC's first and a CPU of that LLC without a cluster
//   level.
// Complexity: O(levels below the cluster level).
template <Topology T>
CpuId resource_id(const T& t, CpuId c) {
  const std::uint32_t i = cluster_level(t, c);
  if (i != no_level) return static_cast<CpuId>(*std::ranges::begin(t.level_cpus(c, i)));
  return static_cast<CpuId>(*std::ranges::begin(t.llc_cpus(c)));
}

// Whether a, b both in the walk, a comes first in the walk from target + 1
// with wrap-around: the CPUs above the target, ascending, then the rest.
constexpr bool walks_before(CpuId a, CpuId b, CpuId target) noexcept {
  const bool a_high = a > target;
  const bool b_high = b > target;
  return a_high != b_high ? a_high : a < b;
}

// Returns: whether a sibling of c that the walk meets (allowed, in the
//   target's LLC) comes before c (`before(sib, c)`: the walk's order): then
//   c's core was tested there already and the kernel's cpumask_andnot took
//   c out of the walk.
//   `core`: t.core_cpus(c), which the caller has at hand.
template <Topology T, CpuFilter F, class Before, class Core>
bool core_met_before(const T& t, const F& allowed, CpuId target, CpuId c, const Before& before, const Core& core) {
  const auto llc = t.llc_of(target);
  for (auto s : core) {
    const auto sib = static_cast<CpuId>(s);
    if (sib != c && before(sib, c) && allowed(sib) && t.llc_of(sib) == llc) return true;
  }
  return false;
}

// Effects: walks the allowed CPUs of target's LLC from target + 1,
//   wrapping, at most `limit` of them (core mode: one per core tested);
//   where `cluster` is a level of the target's (cluster_level()), the
//   allowed CPUs of that level first, from target + 1, wrapping, then the
//   rest of the LLC, on the one budget. CPU mode stops at the first idle
//   CPU; core mode at the first core whose siblings are all idle (the
//   task's mask does not matter there; the CPU returned is the walk's CPU,
//   which is allowed), recording meanwhile the first idle allowed sibling
//   in each core's ascending order. Within the first `guarded` steps a CPU
//   for which reserved(c) holds counts as not idle (and, when idle and
//   allowed, as a skip).
// Complexity: O(llc size) filter reads, at most `limit` steps, each of
//   O(core size) machine reads in core mode, O(1) in CPU mode; with a
//   cluster, O(log cluster size) more per CPU looked at.
template <Topology T, MachineState M, CpuFilter F, class Reserved>
LlcWalk walk_llc(const T& t, const M& m, const F& allowed, CpuId target, bool cores, std::uint32_t limit,
                 std::uint32_t guarded, const Reserved& reserved, std::uint32_t cluster = no_level) {
  LlcWalk out;
  const auto llc = t.llc_cpus(target);
  const auto size = static_cast<std::uint32_t>(std::ranges::size(llc));
  if (size == 0 || limit == 0) return out;
  const auto llc_id = t.llc_of(target);
  std::optional<std::remove_cvref_t<decltype(t.level_cpus(target, 0))>> cls;
  if (cluster != no_level) cls.emplace(t.level_cpus(target, cluster));
  const auto in_cluster = [&](CpuId c) { return cls && range_contains(*cls, c); };
  // The walk's order: the cluster first, each part from target + 1.
  const auto before = [&](CpuId a, CpuId b) {
    const bool ia = in_cluster(a);
    const bool ib = in_cluster(b);
    return ia != ib ? ia : walks_before(a, b, target);
  };
  // One CPU of the walk; true: the walk ends (found, or out of budget).
  // Inlined into the walk's loop: out of line, its call and register
  // saves cost as much as a busy CPU's test (a full LLC's walk visits
  // every CPU).
  const auto visit = [&](CpuId c) TASKPLACE_INLINE_LAMBDA {
    if (!allowed(c)) return false;  // not in the walk mask
    // c's core, looked up once for both of its loops.
    const auto core = t.core_cpus(c);
    if (cores && core_met_before(t, allowed, target, c, before, core)) return false;  // its core was tested
    if (out.walked >= limit) return true;
    const bool guard = out.walked < guarded;
    ++out.walked;
    if (!cores) {  // kernel: __select_idle_cpu()
      if (!m.is_idle(c)) return false;
      if (guard && reserved(c)) {
        ++out.skips;
        if (out.hot == no_cpu) out.hot = c;
        return false;
      }
      out.cpu = c;
      return true;
    }
    // kernel: select_idle_core(): every sibling idle, whatever the mask.
    bool whole = true;
    for (auto s : core) {
      const auto sib = static_cast<CpuId>(s);
      const bool candidate = out.cpu == no_cpu && allowed(sib) && t.llc_of(sib) == llc_id;
      if (!m.is_idle(sib)) {
        whole = false;
        if (out.cpu != no_cpu) break;
        continue;
      }
      if (guard && reserved(sib)) {  // reserved: not idle for this wakee
        whole = false;
        if (out.cpu != no_cpu) break;
        if (candidate) {
          ++out.skips;
          if (out.hot == no_cpu) out.hot = sib;
        }
        continue;
      }
      if (candidate) out.cpu = sib;
    }
    if (whole) {
      out.cpu = c;
      out.whole_core = true;
    }
    return whole;
  };
  // Walks the ascending range r from the element after target, wrapping.
  const auto walk = [&](const auto& r, bool skip_cluster) {
    const auto n = static_cast<std::uint32_t>(std::ranges::size(r));
    const auto begin = std::ranges::begin(r);
    std::uint32_t at = lower_bound_index(r, target) + 1;
    for (std::uint32_t i = 0; i < n; ++i, ++at) {
      if (at >= n) at = 0;
      const auto c = static_cast<CpuId>(begin[static_cast<std::ptrdiff_t>(at)]);
      if (skip_cluster && in_cluster(c)) continue;  // walked first: out of the mask
      if (visit(c)) return true;
    }
    return false;
  };
  // kernel (v6.8): the target's cluster, then cpumask_andnot of it.
  if (cls && walk(*cls, false)) return out;
  walk(llc, cls.has_value());
  return out;
}

}  // namespace taskplace::detail
