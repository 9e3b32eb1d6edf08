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
// Candidates are kept in buckets by their number of tasks, so the busiest
// candidate of a span (most tasks) is found in O(1) however many CPUs are
// overloaded; ties go to bucket order (the order of arrival, but a CPU
// leaving a bucket hands its place to the bucket's last), not to span
// order. Each group's buckets have room for its whole span, in one array
// for all groups, so a change costs no allocation and few cache lines.
//
// The groups describe the topology exactly only when each level's spans
// partition the CPUs (every CPU of a span has that same span at that level,
// and is in its own span): exact() says so, and a caller falls back to
// walking the span when it is false.
//
//   taskplace_sim::SpanIndex ix{topo};
//   ix.set_load(3, 2);                        // CPU 3 runs two, one queued
//   CpuId b = ix.busiest(ix.group(0, 1), 0);  // 3, if in CPU 0's level 1 span
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
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
    member_.assign(static_cast<std::size_t>(n) * levels_, {});
    pos_.assign(member_.size(), 0);
    level_count_.assign(n, 0);
    balancing_cpu_.assign(n, 0);
    std::map<std::pair<std::uint32_t, std::vector<CpuId>>, std::uint32_t> ids;
    std::vector<std::uint32_t> members;
    for (CpuId c = 0; c < n; ++c) {
      const auto levels = static_cast<std::uint32_t>(topology.level_count(c));
      level_count_[c] = levels;
      for (std::uint32_t i = 0; i < levels; ++i) {
        std::vector<CpuId> span;
        for (auto x : topology.level_cpus(c, i)) span.push_back(static_cast<CpuId>(x));
        auto [it, fresh] = ids.try_emplace({i, span}, static_cast<std::uint32_t>(head_.size()));
        if (fresh) {
          head_.emplace_back();
          head_.back().size = static_cast<std::uint32_t>(span.size());
          members.push_back(0);
        }
        const std::uint32_t g = it->second;
        member_[at(c, i)].group = g;
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
    std::size_t room = 0;
    for (std::size_t g = 0; g < head_.size(); ++g) {
      exact_ = exact_ && members[g] == head_[g].size;
      head_[g].base = static_cast<std::uint32_t>(room);
      room += static_cast<std::size_t>(max_load + 1) * (head_[g].size + 1);
    }
    lists_.assign(room, 0);
    load_.assign(n, 0);
  }

  // True when each level's spans partition the CPUs (see above).
  bool exact() const noexcept { return exact_; }
  std::uint32_t level_count(CpuId c) const noexcept { return level_count_[c]; }
  std::size_t group_count() const noexcept { return head_.size(); }

  // The group of c's level i span. Precondition: i < level_count(c).
  std::uint32_t group(CpuId c, std::uint32_t i) const noexcept { return member_[at(c, i)].group; }
  // Where c comes in its level i span (0 = first).
  std::uint32_t position(CpuId c, std::uint32_t i) const noexcept { return pos_[at(c, i)]; }
  // The number of CPUs in group g's span.
  std::uint32_t size(std::uint32_t g) const noexcept { return head_[g].size; }

  // CPUs of group g that are balancing now.
  std::uint32_t balancing(std::uint32_t g) const noexcept { return head_[g].balancing; }
  bool is_balancing(CpuId c) const noexcept { return balancing_cpu_[c] != 0; }
  // Effects: records whether c is balancing, in every group of c.
  void set_balancing(CpuId c, bool on) noexcept {
    if (is_balancing(c) == on) return;
    balancing_cpu_[c] = on ? 1 : 0;
    for (std::uint32_t i = 0; i < level_count_[c]; ++i) head_[group(c, i)].balancing += on ? 1u : ~0u;
  }

  // The candidates of group g, busiest first, in bucket order within a
  // load (for checks; the balancers ask busiest()). Complexity:
  // O(max_load + candidates).
  std::vector<CpuId> candidates(std::uint32_t g) const {
    std::vector<CpuId> out;
    for (std::uint32_t l = max_load; l > 0; --l) {
      const std::uint32_t* b = bucket(g, l);
      out.insert(out.end(), b + 1, b + 1 + b[0]);
    }
    return out;
  }
  bool is_candidate(CpuId c) const noexcept { return load_[c] != 0; }

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
    Member* row = &member_[at(c, 0)];
    // Locals for what the stores into the lists (32-bit words, as the
    // heads' and the rows' fields are) would otherwise make the compiler
    // read again after each of them.
    const std::uint32_t levels = level_count_[c];
    std::uint32_t* const lists = lists_.data();
    for (std::uint32_t i = 0; i < levels; ++i) {
      const std::uint32_t g = row[i].group;
      Head& h = head_[g];
      const std::uint32_t base = h.base, stride = h.size + 1;
      std::uint32_t top = h.top;
      if (old > 0) {
        // Swap-remove: the bucket's last CPU takes c's place (the order
        // busiest() breaks ties by).
        std::uint32_t* b = lists + base + old * stride;
        const std::uint32_t k = row[i].slot;
        const CpuId moved = b[b[0]--];
        b[1 + k] = moved;
        member_[at(moved, i)].slot = k;
        if (old == top)
          while (top > 0 && lists[base + top * stride] == 0) --top;
      }
      if (load > 0) {
        std::uint32_t* b = lists + base + load * stride;
        row[i].slot = b[0];
        b[1 + b[0]++] = c;
        top = std::max(top, load);
      }
      h.top = top;
    }
  }
  // Returns: the candidate of group g with the most tasks, other than
  // `exclude` (no_cpu: none). Complexity: O(max_load) at worst, O(1) usually.
  CpuId busiest(std::uint32_t g, CpuId exclude) const noexcept {
    for (std::uint32_t l = head_[g].top; l > 0; --l) {
      const std::uint32_t* b = bucket(g, l);
      for (std::uint32_t k = 0; k < b[0] && k < 2; ++k)
        if (b[1 + k] != exclude) return b[1 + k];
    }
    return taskplace::no_cpu;
  }

  // Returns: "" when every group's counts and lists match a recount from
  // the per-CPU flags, else the first mismatch.
  std::string check() const {
    std::vector<std::uint32_t> bal(head_.size(), 0), cand(head_.size(), 0);
    for (CpuId c = 0; c < level_count_.size(); ++c)
      for (std::uint32_t i = 0; i < level_count_[c]; ++i) {
        const std::uint32_t g = group(c, i);
        bal[g] += is_balancing(c) ? 1u : 0u;
        cand[g] += is_candidate(c) ? 1u : 0u;
        if (is_candidate(c) && bucket(g, load_[c])[1 + member_[at(c, i)].slot] != c)
          return "span index: cpu " + std::to_string(c) + " is not where its slot says";
      }
    for (std::size_t g = 0; g < head_.size(); ++g) {
      const auto gg = static_cast<std::uint32_t>(g);
      if (bal[g] != head_[g].balancing) return "span index: group " + std::to_string(g) + " balancing count is stale";
      if (cand[g] != candidates(gg).size()) return "span index: group " + std::to_string(g) + " candidate list is stale";
    }
    return {};
  }

 private:
  static constexpr std::uint32_t none = ~0u;
  std::size_t at(CpuId c, std::uint32_t i) const noexcept { return static_cast<std::size_t>(c) * levels_ + i; }
  // Group g's bucket of load l: its length, then room for every CPU of
  // the span (a short bucket's length and CPUs share a line).
  std::uint32_t* bucket(std::uint32_t g, std::uint32_t l) noexcept {
    return &lists_[head_[g].base + l * (head_[g].size + 1)];
  }
  const std::uint32_t* bucket(std::uint32_t g, std::uint32_t l) const noexcept {
    return &lists_[head_[g].base + l * (head_[g].size + 1)];
  }

  // What set_load reads and writes, packed so that one change touches a
  // cache line or two per level rather than a vector header, its bucket
  // table and a separate slot array: at 4096 CPUs these tables are far
  // larger than the caches, and the balancers' counts change on nearly
  // every event.
  // Per (CPU, level): its group and its place in its bucket there.
  struct Member {
    std::uint32_t group = none, slot = 0;
  };
  // Per group: the highest non-empty bucket, the balancing count, the
  // span's size and where its buckets start in lists_ (16 bytes: the heads
  // of 4096 CPUs' 2,000-odd groups stay in the cache).
  struct Head {
    std::uint32_t top = 0, balancing = 0, size = 0, base = 0;
  };

  std::uint32_t levels_ = 0;
  bool exact_ = true;
  std::vector<Member> member_;                 // [cpu * levels_ + level]
  std::vector<std::uint32_t> pos_, level_count_;
  std::vector<std::uint8_t> balancing_cpu_;
  std::vector<Head> head_;
  std::vector<std::uint32_t> lists_;           // [base + load * (size + 1)]: length, CPUs
  std::vector<std::uint32_t> load_;            // per CPU: its bucket (0: none)
};

}  // namespace taskplace_sim
