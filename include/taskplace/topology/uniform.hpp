// taskplace/topology/uniform.hpp: a symmetric machine described by four
// numbers, usable at compile time, and named presets of the machines the
// seed threads measured on.
//
// Kernel analogue: the sched-domain hierarchy build_sched_domains() makes
// for a symmetric box (SMT, MC = LLC, PKG/NUMA), with degenerate levels
// removed as sd_degenerate() removes them. No sysfs, no allocation.
//
//   constexpr taskplace::UniformTopology t{2, 1, 20, 2};   // 80 CPUs, Fleming 2017
//   static_assert(t.llc_size(0) == 40 && t.level_count(0) == 3);
#pragma once

#include "taskplace/detail/config.hpp"

#include <cstdint>

#include "taskplace/concepts.hpp"
#include "taskplace/detail/assert.hpp"
#include "taskplace/detail/divisor.hpp"
#include "taskplace/detail/topology_blocks.hpp"
#include "taskplace/types.hpp"

namespace taskplace {

// How CPU numbers map to hardware threads. `g` below is the global core
// number, counted nested (node, then LLC, then core), `t` the thread in
// the core, C the number of cores, T the threads per core.
enum class CpuNumbering : std::uint8_t {
  // cpu = g * T + t: the siblings of a core are adjacent (arm64, POWER,
  // and what hwloc calls logical order).
  nested,
  // cpu = t * C + g: Linux on x86 numbers every core's first thread, then
  // every core's second one, so the sibling of cpu k is k + C.
  smt_last,
};

// A machine of `nodes` NUMA nodes, each of `llcs_per_node` last-level
// caches, each shared by `cores_per_llc` cores of `threads_per_core`
// hardware threads.
//
// Ids: core_of is the global core number g; llc_of = g / cores_per_llc;
// node_of = g / (cores_per_llc * llcs_per_node). Levels, in order, those
// that are not degenerate (the kernel drops a domain that spans no more
// than its child): smt (threads > 1), llc (cores_per_llc > 1), node
// (llcs_per_node > 1), machine (nodes > 1). Every CPU has the same levels.
//
// Invariant: all four dimensions >= 1 and their product fits in uint32
// (the largest CPU id stays below no_cpu).
// Invariant: every range is ascending; for nested numbering contiguous.
// Invariant: every size (core, LLC, node) is >= 1.
//
// The sizes, the level list and the divisors of the id formulas are
// computed once in the constructor, as the kernel caches sd_llc_size and
// sd_llc_id per CPU: the wake-up path reads a field or multiplies instead
// of dividing (detail::Divisor; CpuBlocks divides only past a range's
// second block, i.e. on machines of more than two threads per core).
class UniformTopology {
 public:
  using cpu_range = detail::CpuBlocks;

  // Effects: describes the machine.
  // Throws: TopologyError when a dimension is 0 or the CPU count does not
  //   fit in 32 bits (no_cpu must stay out of range).
  // Complexity: O(1), constexpr.
  constexpr UniformTopology(std::uint32_t nodes, std::uint32_t llcs_per_node,
                            std::uint32_t cores_per_llc, std::uint32_t threads_per_core,
                            CpuNumbering numbering = CpuNumbering::nested)
      : nodes_(nodes),
        llcs_(llcs_per_node),
        cores_(cores_per_llc),
        threads_(threads_per_core),
        numbering_(numbering) {
    if (nodes == 0) throw TopologyError("UniformTopology: nodes must be >= 1 (got 0)");
    if (llcs_per_node == 0) throw TopologyError("UniformTopology: llcs_per_node must be >= 1 (got 0)");
    if (cores_per_llc == 0) throw TopologyError("UniformTopology: cores_per_llc must be >= 1 (got 0)");
    if (threads_per_core == 0)
      throw TopologyError("UniformTopology: threads_per_core must be >= 1 (got 0)");
    // floor(floor(M / a) / b) == floor(M / (a * b)): the test cannot overflow.
    if (nodes > std::uint32_t{0xffffffffu} / llcs_per_node / cores_per_llc / threads_per_core)
      throw TopologyError("UniformTopology: nodes x llcs x cores x threads exceeds 2^32 - 1 CPUs");
    cpus_ = nodes * llcs_per_node * cores_per_llc * threads_per_core;
    core_count_ = cpus_ / threads_;
    llc_size_ = cores_ * threads_;
    node_size_ = llcs_ * llc_size_;
    by_threads_ = detail::Divisor{threads_};
    by_core_count_ = detail::Divisor{core_count_};
    by_cores_ = detail::Divisor{cores_};
    by_node_cores_ = detail::Divisor{cores_ * llcs_};
    by_llc_size_ = detail::Divisor{llc_size_};
    by_node_size_ = detail::Divisor{node_size_};
    constexpr LevelKind order[] = {LevelKind::smt, LevelKind::llc, LevelKind::node, LevelKind::machine};
    for (LevelKind k : order)
      if (has(k)) kinds_[level_count_++] = k;
  }

  // --- shape ---------------------------------------------------------------
  constexpr std::uint32_t nodes() const noexcept { return nodes_; }
  constexpr std::uint32_t llcs_per_node() const noexcept { return llcs_; }
  constexpr std::uint32_t cores_per_llc() const noexcept { return cores_; }
  constexpr std::uint32_t threads_per_core() const noexcept { return threads_; }
  constexpr CpuNumbering numbering() const noexcept { return numbering_; }
  constexpr std::uint32_t core_count() const noexcept { return core_count_; }
  constexpr std::uint32_t llc_count() const noexcept { return nodes_ * llcs_; }

  // --- Topology (R1-R7); every CpuId is checked (TASKPLACE_EXPECTS) ---------
  // Complexity: O(1) each. Thread-safety: const members, safe to share.
  constexpr std::uint32_t cpu_count() const noexcept { return cpus_; }

  constexpr std::uint32_t core_of(CpuId c) const TASKPLACE_NOEXCEPT {
    TASKPLACE_EXPECTS(c < cpu_count(), "cpu must be < cpu_count()");
    return global_core(c);
  }
  constexpr std::uint32_t llc_of(CpuId c) const TASKPLACE_NOEXCEPT {
    TASKPLACE_EXPECTS(c < cpu_count(), "cpu must be < cpu_count()");
    return llc_index(c);
  }
  constexpr std::uint32_t node_of(CpuId c) const TASKPLACE_NOEXCEPT {
    TASKPLACE_EXPECTS(c < cpu_count(), "cpu must be < cpu_count()");
    // Nested: floor(floor(c / T) / (C_llc * L)) == floor(c / node_size).
    return numbering_ == CpuNumbering::nested ? by_node_size_.div(c)
                                              : by_node_cores_.div(global_core(c));
  }

  // The sizes are cached and >= 1 by construction; the compiler is told so,
  // which lets a generic "0 reads as 1" guard (LlcFactor) compile away.
  constexpr std::uint32_t core_size(CpuId c) const TASKPLACE_NOEXCEPT {
    TASKPLACE_EXPECTS(c < cpu_count(), "cpu must be < cpu_count()");
    TASKPLACE_ASSUME(threads_ != 0);
    return threads_;
  }
  constexpr std::uint32_t llc_size(CpuId c) const TASKPLACE_NOEXCEPT {
    TASKPLACE_EXPECTS(c < cpu_count(), "cpu must be < cpu_count()");
    TASKPLACE_ASSUME(llc_size_ != 0);
    return llc_size_;
  }
  constexpr std::uint32_t node_size(CpuId c) const TASKPLACE_NOEXCEPT {
    TASKPLACE_EXPECTS(c < cpu_count(), "cpu must be < cpu_count()");
    TASKPLACE_ASSUME(node_size_ != 0);
    return node_size_;
  }

  constexpr cpu_range core_cpus(CpuId c) const TASKPLACE_NOEXCEPT {
    TASKPLACE_EXPECTS(c < cpu_count(), "cpu must be < cpu_count()");
    return cores_from(global_core(c), 1);
  }
  constexpr cpu_range llc_cpus(CpuId c) const TASKPLACE_NOEXCEPT {
    TASKPLACE_EXPECTS(c < cpu_count(), "cpu must be < cpu_count()");
    return cores_from(llc_index(c) * cores_, cores_);
  }
  constexpr cpu_range node_cpus(CpuId c) const TASKPLACE_NOEXCEPT {
    TASKPLACE_EXPECTS(c < cpu_count(), "cpu must be < cpu_count()");
    const std::uint32_t per_node = cores_ * llcs_;
    return cores_from(node_of(c) * per_node, per_node);
  }
  // Every CPU (not part of the concept; the machine level's span).
  constexpr cpu_range all_cpus() const noexcept { return cores_from(0, core_count()); }

  constexpr std::uint32_t level_count(CpuId c) const TASKPLACE_NOEXCEPT {
    TASKPLACE_EXPECTS(c < cpu_count(), "cpu must be < cpu_count()");
    return level_count_;
  }
  constexpr LevelKind level_kind(CpuId c, std::uint32_t i) const TASKPLACE_NOEXCEPT {
    TASKPLACE_EXPECTS(c < cpu_count(), "cpu must be < cpu_count()");
    TASKPLACE_EXPECTS(i < level_count_, "level index must be < level_count(cpu)");
    return kind_at(i);
  }
  constexpr cpu_range level_cpus(CpuId c, std::uint32_t i) const TASKPLACE_NOEXCEPT {
    TASKPLACE_EXPECTS(c < cpu_count(), "cpu must be < cpu_count()");
    TASKPLACE_EXPECTS(i < level_count_, "level index must be < level_count(cpu)");
    switch (kind_at(i)) {
      case LevelKind::smt: return core_cpus(c);
      case LevelKind::llc: return llc_cpus(c);
      case LevelKind::node: return node_cpus(c);
      default: return all_cpus();
    }
  }

  friend constexpr bool operator==(const UniformTopology&, const UniformTopology&) = default;

 private:
  constexpr std::uint32_t global_core(CpuId c) const noexcept {
    return numbering_ == CpuNumbering::nested ? by_threads_.div(c) : by_core_count_.mod(c);
  }
  // llc_of without the check. Nested: floor(floor(c / T) / C_llc) ==
  // floor(c / llc_size), one step.
  constexpr std::uint32_t llc_index(CpuId c) const noexcept {
    return numbering_ == CpuNumbering::nested ? by_llc_size_.div(c) : by_cores_.div(global_core(c));
  }
  // The hardware threads of cores [g0, g0 + n), ascending.
  constexpr cpu_range cores_from(std::uint32_t g0, std::uint32_t n) const noexcept {
    if (numbering_ == CpuNumbering::nested) return {g0 * threads_, n * threads_, 0, n * threads_};
    return {g0, n, core_count(), n * threads_};
  }
  // Which kinds survive, in order. A level that spans no more CPUs than the
  // one below it would balance nothing new (kernel sd_degenerate).
  constexpr bool has(LevelKind k) const noexcept {
    switch (k) {
      case LevelKind::smt: return threads_ > 1;
      case LevelKind::llc: return cores_ > 1;
      case LevelKind::node: return llcs_ > 1;
      case LevelKind::machine: return nodes_ > 1;
      default: return false;
    }
  }
  // The i-th surviving level; machine past the last (unchecked builds).
  constexpr LevelKind kind_at(std::uint32_t i) const noexcept {
    return i < level_count_ ? kinds_[i] : LevelKind::machine;
  }

  std::uint32_t nodes_, llcs_, cores_, threads_;
  CpuNumbering numbering_;
  std::uint32_t cpus_ = 0;
  // Derived in the constructor from the five above (so == stays the
  // comparison of the shapes).
  std::uint32_t core_count_ = 1, llc_size_ = 1, node_size_ = 1;
  detail::Divisor by_threads_, by_core_count_, by_cores_, by_node_cores_, by_llc_size_, by_node_size_;
  LevelKind kinds_[4] = {LevelKind::machine, LevelKind::machine, LevelKind::machine, LevelKind::machine};
  std::uint32_t level_count_ = 0;
};

static_assert(Topology<UniformTopology>);
static_assert(CpuRange<UniformTopology::cpu_range>);

// The machines of the seed threads. Each is numbered as Linux numbers that
// box (x86: SMT siblings one cores-total apart).
namespace presets {

// Smith 2008 (pgbench on 2.6.25): Intel Core 2 Quad Q6600, one socket,
// two dual-core dies, each die's L2 the last-level cache. 4 CPUs, 2 LLCs.
constexpr UniformTopology q6600_2008() { return {1, 2, 2, 1, CpuNumbering::smt_last}; }

// Wang 2013 (smart wake-affine): "12 cpu X86 server", one node (the
// patch's factor was the node size, 12). Read as a single-socket Westmere,
// 6 cores x 2 threads sharing one L3: the sd_llc_size of patch 2/2 is 12.
constexpr UniformTopology westmere_12cpu_2013() { return {1, 1, 6, 2, CpuNumbering::smt_last}; }

// Low 2013 (idle balance cost): "8 socket (80 core) machine", 8 nodes
// of 10 cores, one L3 per socket; modelled without SMT (80 CPUs).
constexpr UniformTopology eight_socket_80core() { return {8, 1, 10, 1, CpuNumbering::smt_last}; }

// Fleming 2017 (wake_wide experiment): "80-cpu 2 NUMA node box", 2 nodes
// of 20 cores x 2 threads, one L3 per node.
constexpr UniformTopology two_node_80cpu() { return {2, 1, 20, 2, CpuNumbering::smt_last}; }

// Chen 2023 (SIS_CACHE): Intel Sapphire Rapids, "112 CPUs/socket, 2
// sockets": 2 nodes x 56 cores x 2 threads = 224, one L3 per socket.
constexpr UniformTopology sapphire_rapids_2x56x2() { return {2, 1, 56, 2, CpuNumbering::smt_last}; }

// AMD EPYC (Zen 2/3 style) 2 sockets x 64 cores x 2 threads = 256 CPUs, an
// L3 per 8-core CCX/CCD: 8 LLCs per node (the sd_llc_size factor is
// 16, not 128).
constexpr UniformTopology epyc_2x64x2() { return {2, 8, 8, 2, CpuNumbering::smt_last}; }

}  // namespace presets

}  // namespace taskplace
