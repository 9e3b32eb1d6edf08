// taskplace/testing/topology_conformance.hpp: checks a Topology model
// against the invariants of concepts.hpp, from any test framework.
//
// Provides check_topology(t): every requirement and invariant a compiler
// cannot check (Topology R1, R5, CpuRange I1, Topology I1-I8), one
// Violation per CPU and rule, naming the invariant. Kernel analogue: the
// sched_domain_debug() checks the kernel runs when it builds its domains
// ("ERROR: domain->span does not contain CPU", "groups don't span
// domain->span").
//
//   auto v = taskplace::testing::check_topology(my_topology);
//   REQUIRE(v.empty());
#pragma once

#include "taskplace/detail/config.hpp"

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <ranges>
#include <string>
#include <vector>

#include "taskplace/concepts.hpp"
#include "taskplace/testing/violation.hpp"
#include "taskplace/types.hpp"

namespace taskplace::testing {

namespace topology_detail {

template <class R>
std::vector<CpuId> to_vector(const R& r) {
  std::vector<CpuId> out;
  out.reserve(static_cast<std::size_t>(std::ranges::size(r)));
  for (auto it = std::ranges::begin(r); it != std::ranges::end(r); ++it)
    out.push_back(static_cast<CpuId>(*it));
  return out;
}

// Appends only (no `literal + std::string&&`, which GCC 12 at -O2 warns
// about with a false -Wrestrict in every program that includes this).
inline std::string show(const std::vector<CpuId>& v) {
  std::string s = "{";
  for (std::size_t i = 0; i < v.size() && i < 16; ++i) {
    if (i) s += ',';
    s += std::to_string(v[i]);
  }
  if (v.size() > 16) s.append(",... (").append(std::to_string(v.size())).append(" CPUs)");
  s += '}';
  return s;
}

inline bool contains(const std::vector<CpuId>& sorted, CpuId c) {
  return std::binary_search(sorted.begin(), sorted.end(), c);
}
inline bool subset(const std::vector<CpuId>& a, const std::vector<CpuId>& b) {
  return std::includes(b.begin(), b.end(), a.begin(), a.end());
}

}  // namespace topology_detail

// Effects: checks, for every CPU c of t:
//   "Topology R1"  cpu_count() >= 1;
//   "Topology R5"  level_count(c) <= max_levels;
//   "CpuRange I1"  every range is ascending, distinct, each < cpu_count();
//   "Topology I1"  c is in core_cpus(c), llc_cpus(c), node_cpus(c);
//   "Topology I2"  sizes equal the ranges' sizes;
//   "Topology I3"  core_cpus(c) is a subset of llc_cpus(c);
//   "Topology I4"  for every b: llc_of(c) == llc_of(b) iff b in llc_cpus(c)
//                  (and likewise core, node);
//   "Topology I5"  llc_cpus(c) and node_cpus(c) nest one way or the other;
//   "Topology I6"  c in level 0, level i a strict subset of level i+1,
//                  kinds never decrease;
//   "Topology I7"  the last level spans every CPU when cpu_count() > 1; no
//                  levels when it is 1;
//   "Topology I8"  an smt level equals core_cpus(c), an llc level llc_cpus(c);
//                  a cluster level contains core_cpus(c) and lies inside
//                  llc_cpus(c) (the kernel's CLS domain sits between SMT
//                  and MC).
//   Ranges that break CpuRange I1 are sorted before the set checks, so one
//   fault is reported once where possible.
// Returns: the violations; empty when t conforms. Each names the CPU (cpu
//   field) and the rule ("Topology I4: ...").
// Complexity: O(n^2) id comparisons plus O(n x levels x span); meant for
//   tests (a 256-CPU topology checks in milliseconds).
// Thread-safety: calls only t's const members.
template <Topology T>
std::vector<Violation> check_topology(const T& t) {
  using namespace topology_detail;
  std::vector<Violation> out;
  const auto n = static_cast<std::uint32_t>(t.cpu_count());
  if (n == 0) {
    out.push_back({no_cpu, "Topology R1: cpu_count() >= 1", "cpu_count() = 0"});
    return out;
  }
  auto at = [](CpuId c) { return "cpu " + std::to_string(c) + ": "; };

  // A range as a sorted vector, reporting CpuRange I1 on the way.
  auto take = [&](CpuId c, const std::string& what, const auto& r) {
    std::vector<CpuId> v = to_vector(r);
    for (std::size_t i = 0; i < v.size(); ++i) {
      if (v[i] >= n) {
        out.push_back({c, "CpuRange I1: elements < cpu_count()",
                       at(c) + what + " = " + show(v) + " holds " + std::to_string(v[i]) +
                           " >= cpu_count() " + std::to_string(n)});
        break;
      }
      if (i > 0 && v[i] <= v[i - 1]) {
        out.push_back({c, "CpuRange I1: elements distinct and ascending",
                       at(c) + what + " = " + show(v)});
        break;
      }
    }
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
    return v;
  };

  // Per CPU: ids and member sets, for the cross-CPU checks of I4.
  struct Row {
    std::uint32_t id[3];
    std::vector<CpuId> set[3];
  };
  static constexpr const char* names[3] = {"core", "llc", "node"};
  std::vector<Row> rows(n);
  for (CpuId c = 0; c < n; ++c) {
    Row& row = rows[c];
    row.id[0] = static_cast<std::uint32_t>(t.core_of(c));
    row.id[1] = static_cast<std::uint32_t>(t.llc_of(c));
    row.id[2] = static_cast<std::uint32_t>(t.node_of(c));
    const auto raw0 = t.core_cpus(c);
    const auto raw1 = t.llc_cpus(c);
    const auto raw2 = t.node_cpus(c);
    const std::size_t raw_size[3] = {static_cast<std::size_t>(std::ranges::size(raw0)),
                                     static_cast<std::size_t>(std::ranges::size(raw1)),
                                     static_cast<std::size_t>(std::ranges::size(raw2))};
    row.set[0] = take(c, "core_cpus", raw0);
    row.set[1] = take(c, "llc_cpus", raw1);
    row.set[2] = take(c, "node_cpus", raw2);
    const std::uint32_t sizes[3] = {static_cast<std::uint32_t>(t.core_size(c)),
                                    static_cast<std::uint32_t>(t.llc_size(c)),
                                    static_cast<std::uint32_t>(t.node_size(c))};
    for (int k = 0; k < 3; ++k) {
      const std::string nm = names[k];
      if (!contains(row.set[k], c))
        out.push_back({c, "Topology I1: c is in its own core, LLC and node",
                       at(c) + nm + "_cpus = " + show(row.set[k]) + " lacks it"});
      if (sizes[k] != raw_size[k])
        out.push_back({c, "Topology I2: sizes equal the ranges' sizes",
                       at(c) + nm + "_size = " + std::to_string(sizes[k]) + " but " + nm +
                           "_cpus has " + std::to_string(raw_size[k])});
    }
    if (!subset(row.set[0], row.set[1]))
      out.push_back({c, "Topology I3: SMT siblings share an LLC",
                     at(c) + "core_cpus = " + show(row.set[0]) + " is not inside llc_cpus = " +
                         show(row.set[1])});
    if (!subset(row.set[1], row.set[2]) && !subset(row.set[2], row.set[1]))
      out.push_back({c, "Topology I5: LLCs and nodes nest",
                     at(c) + "llc_cpus = " + show(row.set[1]) + ", node_cpus = " +
                         show(row.set[2]) + ": neither contains the other"});

    // Levels.
    const auto levels = static_cast<std::uint32_t>(t.level_count(c));
    if (levels > max_levels) {
      out.push_back({c, "Topology R5: level_count() <= max_levels",
                     at(c) + "level_count = " + std::to_string(levels)});
      continue;
    }
    if (n == 1 && levels != 0)
      out.push_back({c, "Topology I7: a single-CPU topology has no levels",
                     at(c) + "level_count = " + std::to_string(levels)});
    if (n > 1 && levels == 0)
      out.push_back({c, "Topology I7: the last level spans every CPU",
                     at(c) + "no levels on a " + std::to_string(n) + "-CPU topology"});
    std::vector<CpuId> prev;
    LevelKind prev_kind = LevelKind::smt;
    for (std::uint32_t i = 0; i < levels; ++i) {
      const LevelKind kind = t.level_kind(c, i);
      const std::string lv = "level " + std::to_string(i) + " (" + to_string(kind) + ")";
      std::vector<CpuId> span = take(c, lv, t.level_cpus(c, i));
      if (i == 0 && !contains(span, c))
        out.push_back({c, "Topology I6: c is in level 0", at(c) + lv + " = " + show(span)});
      if (i > 0) {
        if (!(subset(prev, span) && span.size() > prev.size()))
          out.push_back({c, "Topology I6: each level a strict superset of the one below",
                         at(c) + lv + " = " + show(span) + ", level " + std::to_string(i - 1) +
                             " = " + show(prev)});
        if (kind < prev_kind)
          out.push_back({c, "Topology I6: level kinds never decrease",
                         at(c) + lv + " follows " + to_string(prev_kind)});
      }
      if (kind == LevelKind::smt && span != row.set[0])
        out.push_back({c, "Topology I8: the smt level equals core_cpus",
                       at(c) + lv + " = " + show(span) + ", core_cpus = " + show(row.set[0])});
      if (kind == LevelKind::llc && span != row.set[1])
        out.push_back({c, "Topology I8: the llc level equals llc_cpus",
                       at(c) + lv + " = " + show(span) + ", llc_cpus = " + show(row.set[1])});
      if (kind == LevelKind::cluster && !(subset(row.set[0], span) && subset(span, row.set[1])))
        out.push_back({c, "Topology I8: the cluster level lies between core_cpus and llc_cpus",
                       at(c) + lv + " = " + show(span) + ", core_cpus = " + show(row.set[0]) +
                           ", llc_cpus = " + show(row.set[1])});
      if (i + 1 == levels && n > 1 && span.size() != n)
        out.push_back({c, "Topology I7: the last level spans every CPU",
                       at(c) + lv + " = " + show(span) + " of " + std::to_string(n)});
      prev = std::move(span);
      prev_kind = kind;
    }
  }

  // I4: equal ids iff membership, both ways (so equal ids imply equal sizes).
  for (int k = 0; k < 3; ++k) {
    const std::string nm = names[k];
    for (CpuId a = 0; a < n; ++a) {
      for (CpuId b = 0; b < n; ++b) {
        const bool same_id = rows[a].id[k] == rows[b].id[k];
        const bool member = contains(rows[a].set[k], b);
        if (same_id != member) {
          out.push_back({a, "Topology I4: equal " + nm + "_of iff same " + nm,
                         at(a) + nm + "_of = " + std::to_string(rows[a].id[k]) + ", cpu " +
                             std::to_string(b) + " has " + nm + "_of = " +
                             std::to_string(rows[b].id[k]) + " but is" + (member ? "" : " not") +
                             " in " + nm + "_cpus = " + show(rows[a].set[k])});
          break;  // one report per CPU and kind
        }
      }
    }
  }
  return out;
}

}  // namespace taskplace::testing
