// taskplace/detail/llc_walk.hpp: the walk over the target's LLC that
// IdleSiblingSearch makes once its fast paths have failed.
//
// Kernel analogue: the loop of select_idle_cpu() (v6.x) over the LLC span
// ANDed with the task's allowed CPUs, from target + 1 with wrap-around
// (for_each_cpu_wrap), calling either __select_idle_cpu() on each CPU (CPU
// mode, counted against the SIS_UTIL budget) or select_idle_core() on each
// core at the first of its CPUs the walk meets (core mode, the core's CPUs
// then leave the walk mask). Plus the reservation guard of SIS_CACHE (Chen
// 2023, never merged), which treats a reserved CPU as not idle within the
// guarded part of the walk.
//
//   detail::LlcWalk w = detail::walk_llc(topo, machine, allowed, target, true, limit, guarded, reserved);
#pragma once

#include "taskplace/detail/config.hpp"

#include <cstdint>
#include <ranges>

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

// Whether a, b both in the walk, a comes first in the walk from target + 1
// with wrap-around: the CPUs above the target, ascending, then the rest.
constexpr bool walks_before(CpuId a, CpuId b, CpuId target) noexcept {
  const bool a_high = a > target;
  const bool b_high = b > target;
  return a_high != b_high ? a_high : a < b;
}

// Returns: whether a sibling of c that the walk meets (allowed, in the
// target's LLC) comes before c: then c's core was tested there already
// and the kernel's cpumask_andnot took c out of the walk.
template <Topology T, CpuFilter F>
bool core_met_before(const T& t, const F& allowed, CpuId target, CpuId c) {
  const auto llc = t.llc_of(target);
  for (auto s : t.core_cpus(c)) {
    const auto sib = static_cast<CpuId>(s);
    if (sib != c && walks_before(sib, c, target) && allowed(sib) && t.llc_of(sib) == llc) return true;
  }
  return false;
}

// Effects: walks the allowed CPUs of target's LLC from target + 1,
//   wrapping, at most `limit` of them (core mode: one per core tested).
//   CPU mode stops at the first idle CPU; core mode at the first core whose
//   siblings are all idle (the task's mask does not matter there; the CPU
//   returned is the walk's CPU, which is allowed), recording meanwhile the
//   first idle allowed sibling in each core's ascending order. Within the
//   first `guarded` steps a CPU for which reserved(c) holds counts as not
//   idle (and, when idle and allowed, as a skip).
// Complexity: O(llc size) filter reads, at most `limit` steps, each of
//   O(core size) machine reads in core mode, O(1) in CPU mode.
template <Topology T, MachineState M, CpuFilter F, class Reserved>
LlcWalk walk_llc(const T& t, const M& m, const F& allowed, CpuId target, bool cores, std::uint32_t limit,
                 std::uint32_t guarded, const Reserved& reserved) {
  LlcWalk out;
  const auto llc = t.llc_cpus(target);
  const auto size = static_cast<std::uint32_t>(std::ranges::size(llc));
  if (size == 0 || limit == 0) return out;
  const auto begin = std::ranges::begin(llc);
  const auto llc_id = t.llc_of(target);
  std::uint32_t at = lower_bound_index(llc, target) + 1;
  if (at >= size) at = 0;
  for (std::uint32_t i = 0; i < size && out.walked < limit; ++i, at = at + 1 == size ? 0 : at + 1) {
    const auto c = static_cast<CpuId>(begin[static_cast<std::ptrdiff_t>(at)]);
    if (!allowed(c)) continue;                                  // not in the walk mask
    if (cores && core_met_before(t, allowed, target, c)) continue;  // its core was tested
    const bool guard = out.walked < guarded;
    ++out.walked;
    if (!cores) {  // kernel: __select_idle_cpu()
      if (!m.is_idle(c)) continue;
      if (guard && reserved(c)) {
        ++out.skips;
        if (out.hot == no_cpu) out.hot = c;
        continue;
      }
      out.cpu = c;
      return out;
    }
    // kernel: select_idle_core(): every sibling idle, whatever the mask.
    bool whole = true;
    for (auto s : t.core_cpus(c)) {
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
      return out;
    }
  }
  return out;
}

}  // namespace taskplace::detail
