// taskplace_sim/cost_model.hpp: what moving a task or a message between
// two CPUs costs: the distance between them, the cache refill a task pays
// starting somewhere, the transfer cost of a message.
//
// Kernel analogue: none; this is the hardware the scheduler runs on (the
// cost the kernel's cache-hot and wake-affine heuristics try to avoid).
// The topology's core / LLC / node numbers are copied into flat per-CPU
// arrays once, so the per-event questions are array reads.
//
//   taskplace_sim::CostModel cm{topo, costs};
//   Distance d = cm.distance(0, 40);            // Distance::smt on two_node_80cpu
//   Nanoseconds m = cm.message_cost(0, 20);     // costs.message_node
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

#include "taskplace/concepts.hpp"
#include "taskplace/types.hpp"
#include "taskplace_sim/costs.hpp"
#include "taskplace_sim/report.hpp"

namespace taskplace_sim {

using taskplace::CpuId;

class CostModel {
 public:
  // Effects: reads the topology's placement of every CPU.
  // Complexity: O(cpu_count).
  template <taskplace::Topology T>
  CostModel(const T& topology, const Costs& costs) : costs_(costs) {
    const auto n = static_cast<CpuId>(topology.cpu_count());
    core_.resize(n);
    llc_.resize(n);
    node_.resize(n);
    llc_size_.resize(n);
    for (CpuId c = 0; c < n; ++c) {
      core_[c] = static_cast<std::uint32_t>(topology.core_of(c));
      llc_[c] = static_cast<std::uint32_t>(topology.llc_of(c));
      node_[c] = static_cast<std::uint32_t>(topology.node_of(c));
      llc_size_[c] = static_cast<std::uint32_t>(topology.llc_size(c));
      llcs_ = std::max(llcs_, llc_[c] + 1);
      sib_off_.push_back(static_cast<std::uint32_t>(sib_.size()));
      for (auto x : topology.core_cpus(c))
        if (static_cast<CpuId>(x) != c) sib_.push_back(static_cast<CpuId>(x));
    }
    sib_off_.push_back(static_cast<std::uint32_t>(sib_.size()));
  }

  // The other hardware threads of c's core, in the topology's order.
  std::span<const CpuId> siblings(CpuId c) const noexcept {
    return {sib_.data() + sib_off_[c], sib_off_[c + 1] - sib_off_[c]};
  }

  std::uint32_t llc_of(CpuId c) const noexcept { return llc_[c]; }
  std::uint32_t llc_size(CpuId c) const noexcept { return llc_size_[c]; }
  // The number of LLC ids (one more than the largest).
  std::uint32_t llc_count() const noexcept { return llcs_; }

  Distance distance(CpuId a, CpuId b) const noexcept {
    if (a == b) return Distance::same_cpu;
    if (core_[a] == core_[b]) return Distance::smt;
    if (llc_[a] == llc_[b]) return Distance::llc;
    if (node_[a] == node_[b]) return Distance::other_llc;
    return Distance::other_node;
  }

  // Returns: the refill a task pays starting on `c` after last running on
  // `last` (no_cpu: never ran, nothing to refill): a cooled share of its
  // private caches on its own core (`others_ran`: other tasks' run time on
  // `last` since it left, ns), the whole of them elsewhere, plus the LLC and
  // node shares when those change; scaled by the footprint (permille).
  Nanoseconds cache_penalty(CpuId last, CpuId c, std::int64_t others_ran,
                            std::uint32_t footprint_permille) const noexcept {
    if (last == taskplace::no_cpu) return Nanoseconds{0};
    const Distance d = distance(last, c);
    Nanoseconds p{0};
    if (d == Distance::same_cpu || d == Distance::smt) {
      const std::int64_t cool = std::max<std::int64_t>(costs_.cache_cool.count(), 1);
      // Fully cooled (the common case) needs no division.
      p = others_ran >= cool ? costs_.refill_core
                             : Nanoseconds{costs_.refill_core.count() * others_ran / cool};
    } else {
      p = costs_.refill_core;
      if (d == Distance::other_llc || d == Distance::other_node) p += costs_.refill_llc;
      if (d == Distance::other_node) p += costs_.refill_node;
    }
    return p * footprint_permille / 1000;
  }

  // Returns: what the receiver on `to` pays for a message sent from `from`
  // (no_cpu: nothing).
  Nanoseconds message_cost(CpuId from, CpuId to) const noexcept {
    if (from == taskplace::no_cpu) return Nanoseconds{0};
    switch (distance(from, to)) {
      case Distance::same_cpu: return Nanoseconds{0};
      case Distance::smt:
      case Distance::llc: return costs_.message_llc;
      case Distance::other_llc: return costs_.message_other_llc;
      default: return costs_.message_node;
    }
  }

 private:
  Costs costs_;
  std::vector<std::uint32_t> core_, llc_, node_, llc_size_;
  std::vector<CpuId> sib_;              // siblings of every CPU, CPU after CPU
  std::vector<std::uint32_t> sib_off_;  // where each CPU's siblings start in sib_
  std::uint32_t llcs_ = 0;
};

}  // namespace taskplace_sim
