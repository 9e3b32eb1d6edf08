// taskplace_sim/cost_model.hpp: what moving a task or a message between
// two CPUs costs: the distance between them in the hardware, the cache
// refill a task pays starting somewhere, the cache lines a message or a
// remote read moves.
//
// Kernel analogue: none; this is the hardware the scheduler runs on (the
// cost the kernel's cache-hot and wake-affine heuristics try to avoid).
// Distances are the hardware's (the L3 two CPUs really share, their memory
// nodes: Hardware), not the scheduler's view, so an Intel SNC machine,
// whose kernel splits the LLC at node boundaries, still pays nothing to
// refill an L3 when a task moves between two nodes of one socket. The
// topology's numbers are copied into flat per-CPU arrays once, so the
// per-event questions are array reads.
//
//   taskplace_sim::CostModel cm{topo, costs};
//   Distance d = cm.distance(0, 40);             // Distance::smt on two_node_80cpu
//   Nanoseconds m = cm.message_cost(0, 20, 100); // (8 + 2) lines at line_node
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <span>
#include <stdexcept>
#include <vector>

#include "taskplace/concepts.hpp"
#include "taskplace/types.hpp"
#include "taskplace_sim/costs.hpp"
#include "taskplace_sim/machine_spec.hpp"
#include "taskplace_sim/report.hpp"

namespace taskplace_sim {

using taskplace::CpuId;

class CostModel {
 public:
  // Effects: reads the topology's placement of every CPU, and the hardware
  //   (empty arrays: the topology's LLC and node ids).
  // Throws: std::invalid_argument when hw's arrays are not one per CPU.
  // Complexity: O(cpu_count log cpu_count).
  template <taskplace::Topology T>
  CostModel(const T& topology, const Costs& costs, const Hardware& hw = {}) : costs_(costs) {
    const auto n = static_cast<CpuId>(topology.cpu_count());
    if ((!hw.l3.empty() && hw.l3.size() != n) || (!hw.mem_node.empty() && hw.mem_node.size() != n))
      throw std::invalid_argument("CostModel: the hardware's l3 / mem_node arrays need one entry per CPU");
    cpu_.resize(n);
    std::map<std::uint32_t, std::uint32_t> l3_ids;
    for (CpuId c = 0; c < n; ++c) {
      Facts& f = cpu_[c];
      f.core = static_cast<std::uint32_t>(topology.core_of(c));
      f.llc = static_cast<std::uint32_t>(topology.llc_of(c));
      const std::uint32_t l3_label = hw.l3.empty() ? f.llc : hw.l3[c];
      f.l3 = l3_ids.try_emplace(l3_label, static_cast<std::uint32_t>(l3_ids.size())).first->second;
      f.node = hw.mem_node.empty() ? static_cast<std::uint32_t>(topology.node_of(c)) : hw.mem_node[c];
      f.llc_size = static_cast<std::uint32_t>(topology.llc_size(c));
      llcs_ = std::max(llcs_, f.llc + 1);
      f.sib_begin = static_cast<std::uint32_t>(sib_.size());
      for (auto x : topology.core_cpus(c))
        if (static_cast<CpuId>(x) != c) sib_.push_back(static_cast<CpuId>(x));
      f.sib_end = static_cast<std::uint32_t>(sib_.size());
    }
    l3s_ = static_cast<std::uint32_t>(l3_ids.size());
    llc_bytes_ = hw.llc_bytes;
  }

  // The other hardware threads of c's core, in the topology's order.
  std::span<const CpuId> siblings(CpuId c) const noexcept {
    return {sib_.data() + cpu_[c].sib_begin, cpu_[c].sib_end - cpu_[c].sib_begin};
  }

  // The scheduler's LLC (the topology's): its id, size, and the number of ids.
  std::uint32_t llc_of(CpuId c) const noexcept { return cpu_[c].llc; }
  std::uint32_t llc_size(CpuId c) const noexcept { return cpu_[c].llc_size; }
  std::uint32_t llc_count() const noexcept { return llcs_; }
  // The hardware's L3 (dense ids), their number, and each one's capacity
  // in bytes (0: unlimited).
  std::uint32_t l3_of(CpuId c) const noexcept { return cpu_[c].l3; }
  std::uint32_t l3_count() const noexcept { return l3s_; }
  std::uint64_t llc_bytes() const noexcept { return llc_bytes_; }

  // The hardware distance: same CPU, SMT siblings, one L3, one memory
  // node, or two nodes.
  Distance distance(CpuId a, CpuId b) const noexcept {
    if (a == b) return Distance::same_cpu;
    const Facts& x = cpu_[a];
    const Facts& y = cpu_[b];
    if (x.core == y.core) return Distance::smt;
    if (x.l3 == y.l3) return Distance::llc;
    if (x.node == y.node) return Distance::other_llc;
    return Distance::other_node;
  }

  // Returns: the latency of one cache line written on `a` and read on `b`
  // (0 on the same CPU).
  Nanoseconds line(CpuId a, CpuId b) const noexcept {
    switch (distance(a, b)) {
      case Distance::same_cpu: return Nanoseconds{0};
      case Distance::smt:
      case Distance::llc: return costs_.line_llc;
      case Distance::other_llc: return costs_.line_other_llc;
      default: return costs_.line_node;
    }
  }

  // Returns: the refill a task with a working set of `footprint_kb` pays
  // starting on `c` after last running on `last` (no_cpu: never ran,
  // nothing to refill): a cooled share of its private caches on its own
  // core (`others_ran`: other tasks' run time on `last` since it left, ns),
  // the whole of them elsewhere, plus the L3 share when the L3 changes and
  // remote memory when the node does; the rates are per 256 KB.
  Nanoseconds cache_penalty(CpuId last, CpuId c, std::int64_t others_ran, std::uint32_t footprint_kb) const noexcept {
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
    return p * footprint_kb / 256;
  }

  // Returns: what a task of `footprint_kb` pays to refill, from memory, the
  // part of its working set an over-full L3 evicted: with `resident_kb` of
  // working sets homed in an L3 of llc_bytes() (> 0), the share
  // 1 - capacity / resident of it misses (an LRU cache under uniform reuse
  // keeps capacity / resident of each), at refill_llc per 256 KB.
  // 0 when the working sets fit or the capacity is unlimited.
  Nanoseconds capacity_penalty(std::uint64_t resident_kb, std::uint32_t footprint_kb) const noexcept {
    const std::uint64_t cap_kb = llc_bytes_ / 1024;
    if (cap_kb == 0 || resident_kb <= cap_kb) return Nanoseconds{0};
    const double miss = 1.0 - static_cast<double>(cap_kb) / static_cast<double>(resident_kb);
    return Nanoseconds{static_cast<std::int64_t>(static_cast<double>(costs_.refill_llc.count()) * footprint_kb / 256.0 * miss)};
  }

  // Returns: what the receiver on `to` pays for a message of `bytes` sent
  // from `from`: message_lines plus one line per 64 bytes, each at the
  // distance (no_cpu or the same CPU: nothing).
  Nanoseconds message_cost(CpuId from, CpuId to, std::uint32_t bytes = 0) const noexcept {
    if (from == taskplace::no_cpu) return Nanoseconds{0};
    return line(from, to) * (costs_.message_lines + (bytes + 63) / 64);
  }

 private:
  Costs costs_;
  // What the cost model knows of a CPU, in one record rather than an array
  // per fact: a distance or a sibling walk reads one line per CPU.
  struct Facts {
    std::uint32_t core = 0, llc = 0, l3 = 0, node = 0, llc_size = 0;
    std::uint32_t sib_begin = 0, sib_end = 0;  // its siblings in sib_
  };
  std::vector<Facts> cpu_;
  std::vector<CpuId> sib_;  // siblings of every CPU, CPU after CPU
  std::uint32_t llcs_ = 0, l3s_ = 0;
  std::uint64_t llc_bytes_ = 0;
};

}  // namespace taskplace_sim
