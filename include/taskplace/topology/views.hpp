// taskplace/topology/views.hpp: range-v3 views over any Topology, for
// code that walks the machine ("every LLC", "every level of this CPU").
//
// Kernel analogue: for_each_cpu(), for_each_domain(), and walking
// sd_llc representatives (the first CPU of each cache domain). This is the
// only taskplace header that includes range-v3; link taskplace::views.
//
//   for (auto lvl : taskplace::views::levels(topo, cpu)) use(lvl.kind, lvl.cpus);
//   auto firsts = taskplace::views::llcs(topo) | ranges::to<std::vector>();
#pragma once

#include "taskplace/detail/config.hpp"

#include <cstdint>
#include <iterator>
#include <ranges>

#include <range/v3/view/filter.hpp>
#include <range/v3/view/iota.hpp>
#include <range/v3/view/transform.hpp>

#include "taskplace/concepts.hpp"
#include "taskplace/types.hpp"

namespace taskplace::views {

namespace detail {

// A CpuRange (held by value: spans and computed ranges are cheap) seen
// through range-v3, by index, so that std-only iterator types never have
// to satisfy range-v3's concepts.
template <CpuRange R>
auto adapt(R r) {
  const auto n = static_cast<std::uint32_t>(std::ranges::size(r));
  return ranges::views::iota(std::uint32_t{0}, n) |
         ranges::views::transform([r](std::uint32_t i) {
           return static_cast<CpuId>(std::ranges::begin(r)[static_cast<std::ptrdiff_t>(i)]);
         });
}

template <CpuRange R>
CpuId first(const R& r) {
  return static_cast<CpuId>(*std::ranges::begin(r));
}

}  // namespace detail

// One balance level of a CPU: its kind and the CPUs it spans.
template <class Cpus>
struct Level {
  LevelKind kind;
  Cpus cpus;
};

// Returns: 0, 1, ..., cpu_count() - 1 as a random-access view.
// Complexity: O(1) to make, O(1) per element. The views below keep a
// pointer to t: t must outlive them. Thread-safety: as t's const members.
template <Topology T>
auto cpus(const T& t) {
  return ranges::views::iota(CpuId{0}, static_cast<CpuId>(t.cpu_count()));
}

// Returns: c's LLC, core, node as random-access range-v3 views.
template <Topology T>
auto llc_cpus(const T& t, CpuId c) { return detail::adapt(t.llc_cpus(c)); }
template <Topology T>
auto core_cpus(const T& t, CpuId c) { return detail::adapt(t.core_cpus(c)); }
template <Topology T>
auto node_cpus(const T& t, CpuId c) { return detail::adapt(t.node_cpus(c)); }

// Returns: c's balance levels, smallest first, each a Level{kind, cpus}.
template <Topology T>
auto levels(const T& t, CpuId c) {
  const T* tp = &t;
  return ranges::views::iota(std::uint32_t{0}, static_cast<std::uint32_t>(t.level_count(c))) |
         ranges::views::transform([tp, c](std::uint32_t i) {
           auto span = detail::adapt(tp->level_cpus(c, i));
           return Level<decltype(span)>{tp->level_kind(c, i), span};
         });
}

// Returns: one CPU per LLC, the LLC's lowest (the kernel's sd_llc_id is
//   the first CPU of the LLC's span), ascending. Likewise one per core and
//   one per node. Complexity: O(cpu_count) to walk.
template <Topology T>
auto llcs(const T& t) {
  const T* tp = &t;
  return cpus(t) | ranges::views::filter([tp](CpuId c) {
           return detail::first(tp->llc_cpus(c)) == c;
         });
}
template <Topology T>
auto cores(const T& t) {
  const T* tp = &t;
  return cpus(t) | ranges::views::filter([tp](CpuId c) {
           return detail::first(tp->core_cpus(c)) == c;
         });
}
template <Topology T>
auto nodes(const T& t) {
  const T* tp = &t;
  return cpus(t) | ranges::views::filter([tp](CpuId c) {
           return detail::first(tp->node_cpus(c)) == c;
         });
}

}  // namespace taskplace::views
