// taskplace/policy/wide_detector.hpp: is this wake-up "wide", i.e. should
// the wakee stay near its previous CPU instead of being pulled toward the
// waker?
//
// Provides the rules wide::OneSided2013, Symmetric2015 and MasterOnly2017,
// and WideDetector<Rule> that composes one. Kernel analogue: wake_wide() in
// kernel/sched/fair.c. OneSided2013 is Michael Wang's v3.12 "smart
// wake-affine" (2013); Symmetric2015 is Mike Galbraith's v4.3 rework after
// Josef Bacik's 1:N dispatcher reports, unchanged since; MasterOnly2017 is
// Matt Fleming's 2017 experiment (Fleming 2017), never merged.
//
//   const bool wide = taskplace::WideDetector<>::wide(waker_flips, wakee_flips,
//                                                     taskplace::LlcFactor::factor(topo, cpu));
#pragma once

#include "taskplace/detail/config.hpp"

#include <algorithm>
#include <cstdint>

#include "taskplace/concepts.hpp"
#include "taskplace/detail/math.hpp"
#include "taskplace/fwd.hpp"

namespace taskplace {

namespace detail {
// The factor the rules compute with. FactorPolicy I1 promises factor >= 1;
// a 0 that slips through (a hand-written policy, a topology that reports an
// empty LLC) is read as 1, the smallest meaningful threshold, so that every
// rule stays defined for every input.
constexpr std::uint32_t wide_factor(std::uint32_t f) noexcept { return f == 0 ? 1u : f; }
}  // namespace detail

// v3.12 (2013, Michael Wang). One-sided: only a waker of many partners
// waking a wakee that is itself busy is wide. The wakee is somewhat hot and
// needs certain CPU resources; if the waker is far hotter, pulling the wakee
// next to it makes the two compete, and everybody waiting on the waker
// suffers.
//   wide iff e > f && w > f * e
namespace wide {
struct OneSided2013 {
  // Returns: the verdict for waker flips w, wakee flips e, factor f (0 is
  //   read as 1). The product is exact in 64 bits: no overflow for any
  //   32-bit input. Complexity: O(1). Thread-safety: pure.
  static constexpr bool wide(std::uint32_t w, std::uint32_t e, std::uint32_t f) noexcept {
    f = detail::wide_factor(f);
    return e > f && static_cast<std::uint64_t>(w) > detail::wide_mul(f, e);
  }
};
static_assert(WideRule<OneSided2013>);

// v4.3 (2015, Mike Galbraith) to today. Whoever of the two is the "master"
// (more flips) and whoever the "slave": a 1:N relation is wide whichever
// side does the waking, so a worker waking its dispatcher is treated like
// the dispatcher waking the worker. The slave must switch at least `f`
// times, the master at least `f` times as often as the slave.
//   hi = max(w, e), lo = min(w, e); wide iff lo >= f && hi >= f * lo
struct Symmetric2015 {
  // Returns: the verdict; symmetric in (w, e). Factor 0 is read as 1;
  //   exact 64-bit product. Complexity: O(1). Thread-safety: pure.
  static constexpr bool wide(std::uint32_t w, std::uint32_t e, std::uint32_t f) noexcept {
    f = detail::wide_factor(f);
    // One comparison picks both (two conditional moves, no branch).
    const bool waker_hi = w > e;
    const std::uint32_t hi = waker_hi ? w : e;
    const std::uint32_t lo = waker_hi ? e : w;
    return lo >= f && static_cast<std::uint64_t>(hi) >= detail::wide_mul(f, lo);
  }
};
static_assert(WideRule<Symmetric2015>);

// Fleming 2017 (Matt Fleming): drop the `lo >= f` test, so a master with
// few-flip slaves is wide too. On an 80-CPU two-node box, hackbench with one
// group (20 + 20 tasks) went 12% faster on average with 81% less spread,
// but its best case got 21% worse. Beware: with lo == 0 it is always wide
// (0 >= f * 0), so a fresh task counts as wide against anyone.
//   wide iff hi >= f * lo
struct MasterOnly2017 {
  // Returns: the verdict; symmetric in (w, e). Factor 0 is read as 1;
  //   exact 64-bit product. Complexity: O(1). Thread-safety: pure.
  static constexpr bool wide(std::uint32_t w, std::uint32_t e, std::uint32_t f) noexcept {
    f = detail::wide_factor(f);
    const std::uint32_t hi = std::max(w, e);
    const std::uint32_t lo = std::min(w, e);
    return static_cast<std::uint64_t>(hi) >= detail::wide_mul(f, lo);
  }
};
static_assert(WideRule<MasterOnly2017>);
}  // namespace wide

// WideDetector<Rule>: the front door; itself a WideRule, so it can stand
// wherever a rule is expected.
//   Invariant: WideDetector<R>::wide(w, e, f) == R::wide(w, e, f).
template <WideRule Rule>
struct WideDetector {
  using rule_type = Rule;

  // Returns: Rule::wide(waker_flips, wakee_flips, factor).
  // Complexity: O(1). Thread-safety: pure.
  static constexpr bool wide(std::uint32_t waker_flips, std::uint32_t wakee_flips,
                             std::uint32_t factor) noexcept {
    return Rule::wide(waker_flips, wakee_flips, factor);
  }
};

static_assert(WideRule<WideDetector<wide::OneSided2013>>);
static_assert(WideRule<WideDetector<wide::Symmetric2015>>);
static_assert(WideRule<WideDetector<wide::MasterOnly2017>>);

}  // namespace taskplace
