// taskplace_sim/span_index.hpp: the balancing levels' spans as groups, with
// per-group counts the balancers ask about on every pull, kept up to date
// as CPUs change instead of recounted by walking the span.
//
// For every CPU c and level i of the topology, group(c, i) names the span
// level_cpus(c, i) (one id per distinct span). Each group tracks how many
// of its CPUs are balancing right now, and which of them are "candidates"
// (have a queued task and run two or more: what a pull looks for). A
// question about a span is then O(1) (balancing) or O(candidates) instead
// of O(span): on 224 CPUs the machine-level span has 224 CPUs and usually
// a handful of candidates.
//
// Candidates are also kept in buckets by their number of tasks, so the
// busiest candidate of a span (most tasks) is found in O(1) however many
// CPUs are overloaded; ties go to the one that reached that count first
// among those still there (bucket order), not to span order.
//
// The groups describe the topology exactly only when each level's spans
// partition the CPUs (every CPU of a span has that same span at that level,
// and is in its own span): exact() says so, and a caller falls back to
// walking the span when it is false.
//
//   taskplace_sim::SpanIndex ix{topo};
//   ix.set_candidate(3, true);
//   for (auto s : ix.candidates(ix.group(0, 1))) { /* ... */ }
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "taskplace/concepts.hpp"
#include "taskplace/types.hpp"

namespace taskplace_sim {

using taskplace::CpuId;

class SpanIndex {
 public:
  // Effects: numbers every distinct (level, span) of the topology.
  // Complexity: O(sum of span sizes x log groups), once per machine.
  template <taskplace::Topology T>
  explicit SpanIndex(const T& topology) {
    const auto n = static_cast<CpuId>(topology.cpu_count());
    for (CpuId c = 0; c < n; ++c)
      levels_ = std::max(levels_, static_cast<std::uint32_t>(topology.level_count(c)));
    group_.assign(static_cast<std::size_t>(n) * levels_, none);
    pos_.assign(group_.size(), 0);
    slot_.assign(group_.size(), 0);
    level_count_.assign(n, 0);
    candidate_.assign(n, 0);
    balancing_cpu_.assign(n, 0);
    std::map<std::pair<std::uint32_t, std::vector<CpuId>>, std::uint32_t> ids;
    std::vector<std::uint32_t> members;
    for (CpuId c = 0; c < n; ++c) {
      const auto levels = static_cast<std::uint32_t>(topology.level_count(c));
      level_count_[c] = levels;
      for (std::uint32_t i = 0; i < levels; ++i) {
        std::vector<CpuId> span;
        for (auto x : topology.level_cpus(c, i)) span.push_back(static_cast<CpuId>(x));
        auto [it, fresh] = ids.try_emplace({i, span}, static_cast<std::uint32_t>(size_.size()));
        if (fresh) {
          size_.push_back(static_cast<std::uint32_t>(span.size()));
          members.push_back(0);
        }
        const std::uint32_t g = it->second;
        group_[at(c, i)] = g;
        ++members[g];
        bool self = false;
        for (std::size_t k = 0; k < span.size(); ++k)
          if (span[k] == c) {
            pos_[at(c, i)] = static_cast<std::uint32_t>(k);
            self = true;
          }
        exact_ = exact_ && self;
      }
    }
    for (std::size_t g = 0; g < size_.size(); ++g) exact_ = exact_ && members[g] == size_[g];
    balancing_.assign(size_.size(), 0);
    candidates_.assign(size_.size(), {});
    buckets_.assign(size_.size(), {});
    top_.assign(size_.size(), 0);
    bucket_slot_.assign(group_.size(), 0);
    load_.assign(n, 0);
  }

  // True when each level's spans partition the CPUs (see above).
  bool exact() const noexcept { return exact_; }
  std::uint32_t level_count(CpuId c) const noexcept { return level_count_[c]; }
  std::size_t group_count() const noexcept { return size_.size(); }

  // The group of c's level i span. Precondition: i < level_count(c).
  std::uint32_t group(CpuId c, std::uint32_t i) const noexcept { return group_[at(c, i)]; }
  // Where c comes in its level i span (0 = first).
  std::uint32_t position(CpuId c, std::uint32_t i) const noexcept { return pos_[at(c, i)]; }
  // The number of CPUs in group g's span.
  std::uint32_t size(std::uint32_t g) const noexcept { return size_[g]; }

  // CPUs of group g that are balancing now.
  std::uint32_t balancing(std::uint32_t g) const noexcept { return balancing_[g]; }
  bool is_balancing(CpuId c) const noexcept { return balancing_cpu_[c] != 0; }
  // Effects: records whether c is balancing, in every group of c.
  void set_balancing(CpuId c, bool on) noexcept {
    if (is_balancing(c) == on) return;
    balancing_cpu_[c] = on ? 1 : 0;
    for (std::uint32_t i = 0; i < level_count_[c]; ++i) balancing_[group(c, i)] += on ? 1u : ~0u;
  }

  // The candidates of group g, in no particular order.
  std::span<const CpuId> candidates(std::uint32_t g) const noexcept { return candidates_[g]; }
  bool is_candidate(CpuId c) const noexcept { return candidate_[c] != 0; }
  // Effects: records whether c is a candidate, in every group of c.
  // Complexity: O(levels).
  void set_candidate(CpuId c, bool on) {
    if (is_candidate(c) == on) return;
    candidate_[c] = on ? 1 : 0;
    for (std::uint32_t i = 0; i < level_count_[c]; ++i) {
      auto& list = candidates_[group(c, i)];
      if (on) {
        slot_[at(c, i)] = static_cast<std::uint32_t>(list.size());
        list.push_back(c);
      } else {
        const std::uint32_t k = slot_[at(c, i)];
        const CpuId moved = list.back();
        list[k] = moved;
        slot_[at(moved, i)] = k;
        list.pop_back();
      }
    }
  }

  // Loads above this share the top bucket.
  static constexpr std::uint32_t max_load = 63;
  // Effects: c is a candidate with `load` tasks (0: not a candidate), in
  // every group of c. Complexity: O(levels), O(max_load) when a top bucket
  // empties.
  void set_load(CpuId c, std::uint32_t load) {
    load = std::min(load, max_load);
    const std::uint32_t old = load_[c];
    if (old == load) return;
    load_[c] = load;
    for (std::uint32_t i = 0; i < level_count_[c]; ++i) {
      const std::uint32_t g = group(c, i);
      auto& b = buckets_[g];
      if (b.size() <= max_load) b.resize(max_load + 1);
      if (old > 0) {
        auto& list = b[old];
        const std::uint32_t k = bucket_slot_[at(c, i)];
        const CpuId moved = list.back();
        list[k] = moved;
        bucket_slot_[at(moved, i)] = k;
        list.pop_back();
        if (old == top_[g])
          while (top_[g] > 0 && b[top_[g]].empty()) --top_[g];
      }
      if (load > 0) {
        bucket_slot_[at(c, i)] = static_cast<std::uint32_t>(b[load].size());
        b[load].push_back(c);
        top_[g] = std::max(top_[g], load);
      }
    }
    set_candidate(c, load > 0);
  }
  // Returns: the candidate of group g with the most tasks, other than
  // `exclude` (no_cpu: none). Complexity: O(max_load) at worst, O(1) usually.
  CpuId busiest(std::uint32_t g, CpuId exclude) const noexcept {
    if (buckets_[g].empty()) return taskplace::no_cpu;
    for (std::uint32_t l = top_[g]; l > 0; --l) {
      const auto& list = buckets_[g][l];
      for (std::size_t k = 0; k < list.size() && k < 2; ++k)
        if (list[k] != exclude) return list[k];
    }
    return taskplace::no_cpu;
  }

  // Returns: "" when every group's counts and lists match a recount from
  // the per-CPU flags, else the first mismatch.
  std::string check() const {
    std::vector<std::uint32_t> bal(size_.size(), 0), cand(size_.size(), 0);
    for (CpuId c = 0; c < level_count_.size(); ++c)
      for (std::uint32_t i = 0; i < level_count_[c]; ++i) {
        bal[group(c, i)] += is_balancing(c) ? 1u : 0u;
        cand[group(c, i)] += is_candidate(c) ? 1u : 0u;
        if (is_candidate(c) && candidates_[group(c, i)][slot_[at(c, i)]] != c)
          return "span index: cpu " + std::to_string(c) + " is not where its slot says";
      }
    for (std::size_t g = 0; g < size_.size(); ++g) {
      if (bal[g] != balancing_[g]) return "span index: group " + std::to_string(g) + " balancing count is stale";
      if (cand[g] != candidates_[g].size()) return "span index: group " + std::to_string(g) + " candidate list is stale";
    }
    return {};
  }

 private:
  static constexpr std::uint32_t none = ~0u;
  std::size_t at(CpuId c, std::uint32_t i) const noexcept { return static_cast<std::size_t>(c) * levels_ + i; }

  std::uint32_t levels_ = 0;
  bool exact_ = true;
  std::vector<std::uint32_t> group_, pos_, slot_, level_count_;
  std::vector<std::uint8_t> candidate_, balancing_cpu_;
  std::vector<std::uint32_t> size_, balancing_;
  std::vector<std::vector<CpuId>> candidates_;
  std::vector<std::vector<std::vector<CpuId>>> buckets_;  // [group][load]
  std::vector<std::uint32_t> top_, bucket_slot_, load_;
};

}  // namespace taskplace_sim
