// Tests for taskplace/topology/uniform.hpp: UniformTopology and the presets.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <tuple>
#include <vector>

#include "taskplace/testing/topology_conformance.hpp"
#include "taskplace/topology/uniform.hpp"

using taskplace::CpuId;
using taskplace::CpuNumbering;
using taskplace::LevelKind;
using taskplace::UniformTopology;
namespace presets = taskplace::presets;

namespace {

template <class R>
std::vector<CpuId> vec(const R& r) {
  return std::vector<CpuId>(r.begin(), r.end());
}

std::vector<LevelKind> kinds(const UniformTopology& t, CpuId c) {
  std::vector<LevelKind> out;
  for (std::uint32_t i = 0; i < t.level_count(c); ++i) out.push_back(t.level_kind(c, i));
  return out;
}

}  // namespace

// Compile time: the whole topology is usable in constant expressions.
constexpr UniformTopology fleming2017 = presets::two_node_80cpu();
static_assert(fleming2017.cpu_count() == 80);        // Fleming 2017: "80-cpu 2 NUMA node box"
static_assert(fleming2017.llc_size(0) == 40);        // 20 cores x 2 threads per L3
static_assert(fleming2017.core_cpus(3)[1] == 43);    // x86 numbering: sibling of 3 is 3 + 40
static_assert(fleming2017.level_count(0) == 3);      // smt, llc, machine (node == llc, dropped)
static_assert(fleming2017.level_kind(0, 2) == LevelKind::machine);

TEST_CASE("nested numbering puts a core's threads next to each other", "[uniform]") {
  const UniformTopology t{2, 2, 2, 2};  // 16 CPUs: node > llc > core > thread
  REQUIRE(t.cpu_count() == 16);
  CHECK(vec(t.core_cpus(5)) == std::vector<CpuId>{4, 5});
  CHECK(vec(t.llc_cpus(5)) == std::vector<CpuId>{4, 5, 6, 7});
  CHECK(vec(t.node_cpus(5)) == std::vector<CpuId>{0, 1, 2, 3, 4, 5, 6, 7});
  CHECK(vec(t.node_cpus(9)) == std::vector<CpuId>{8, 9, 10, 11, 12, 13, 14, 15});
  // core_of is the global core number cpu / threads; llc and node follow.
  CHECK(t.core_of(5) == 2);
  CHECK(t.llc_of(5) == 1);
  CHECK(t.node_of(9) == 1);
  CHECK(t.llc_of(15) == 3);
  CHECK(kinds(t, 0) == std::vector<LevelKind>{LevelKind::smt, LevelKind::llc, LevelKind::node,
                                             LevelKind::machine});
  CHECK(vec(t.level_cpus(9, 3)).size() == 16);
}

TEST_CASE("smt_last numbering makes the sibling of cpu k be k plus the core count", "[uniform]") {
  const UniformTopology t{2, 1, 4, 2, CpuNumbering::smt_last};  // intel_2s_smt's shape
  REQUIRE(t.core_count() == 8);
  CHECK(vec(t.core_cpus(3)) == std::vector<CpuId>{3, 11});
  CHECK(vec(t.core_cpus(11)) == std::vector<CpuId>{3, 11});
  CHECK(t.core_of(11) == 3);
  // Socket 1: cores 4-7, threads 4-7 and 12-15, ascending.
  CHECK(vec(t.llc_cpus(13)) == std::vector<CpuId>{4, 5, 6, 7, 12, 13, 14, 15});
  CHECK(vec(t.node_cpus(0)) == std::vector<CpuId>{0, 1, 2, 3, 8, 9, 10, 11});
  CHECK(t.node_of(12) == 1);
  CHECK(vec(t.level_cpus(0, 2)).size() == 16);
}

TEST_CASE("degenerate levels are dropped as the kernel drops them", "[uniform]") {
  // One CPU: no levels at all (I7).
  CHECK(UniformTopology{1, 1, 1, 1}.level_count(0) == 0);
  // Only SMT: the smt level is the machine.
  CHECK(kinds(UniformTopology{1, 1, 1, 4}, 2) == std::vector<LevelKind>{LevelKind::smt});
  // Q6600 (Smith 2008): no SMT, 2 LLCs of 2, one node: llc then node.
  CHECK(kinds(presets::q6600_2008(), 0) == std::vector<LevelKind>{LevelKind::llc, LevelKind::node});
  // Low 2013: 8 nodes of one 10-core LLC: llc then machine, no node level.
  CHECK(kinds(presets::eight_socket_80core(), 79) ==
        std::vector<LevelKind>{LevelKind::llc, LevelKind::machine});
  // One LLC per node, several nodes, one core per LLC: machine only.
  CHECK(kinds(UniformTopology{4, 1, 1, 1}, 0) == std::vector<LevelKind>{LevelKind::machine});
}

TEST_CASE("the presets have the seeds' CPU counts and LLC sizes", "[uniform][presets]") {
  // (topology, CPUs, LLC size, LLCs) from the source documents (docs/provenance.md).
  const std::vector<std::tuple<UniformTopology, std::uint32_t, std::uint32_t, std::uint32_t>> cases{
      {presets::q6600_2008(), 4, 2, 2},              // Smith 2008: 2 dies x 2 cores
      {presets::westmere_12cpu_2013(), 12, 12, 1},   // Wang 2013: "12 cpu X86 server"
      {presets::eight_socket_80core(), 80, 10, 8},   // Low 2013: "8 socket (80 core)"
      {presets::two_node_80cpu(), 80, 40, 2},        // Fleming 2017: "80-cpu 2 NUMA node box"
      {presets::sapphire_rapids_2x56x2(), 224, 112, 2},  // Chen 2023: "112 CPUs/socket, 2 sockets"
      {presets::epyc_2x64x2(), 256, 16, 16},         // 8 CCX x 8 cores x 2 threads per socket
  };
  for (const auto& [t, n, llc, llcs] : cases) {
    CAPTURE(n, llc);
    CHECK(t.cpu_count() == n);
    CHECK(t.llc_size(n - 1) == llc);
    CHECK(t.llc_count() == llcs);
    CHECK(taskplace::testing::check_topology(t).empty());
  }
}

TEST_CASE("every shape satisfies the topology invariants", "[uniform][conformance]") {
  for (std::uint32_t nodes : {1u, 3u})
    for (std::uint32_t llcs : {1u, 2u})
      for (std::uint32_t cores : {1u, 5u})
        for (std::uint32_t threads : {1u, 2u, 4u})
          for (auto numbering : {CpuNumbering::nested, CpuNumbering::smt_last}) {
            const UniformTopology t{nodes, llcs, cores, threads, numbering};
            CAPTURE(nodes, llcs, cores, threads, static_cast<int>(numbering));
            const auto v = taskplace::testing::check_topology(t);
            for (const auto& x : v) UNSCOPED_INFO(x.rule << ": " << x.detail);
            CHECK(v.empty());
          }
}

TEST_CASE("a zero dimension or a CPU count past 32 bits is rejected", "[uniform]") {
  CHECK_THROWS_AS(UniformTopology(0, 1, 1, 1), taskplace::TopologyError);
  CHECK_THROWS_WITH(UniformTopology(1, 0, 1, 1), Catch::Contains("llcs_per_node"));
  CHECK_THROWS_WITH(UniformTopology(1, 1, 0, 1), Catch::Contains("cores_per_llc"));
  CHECK_THROWS_WITH(UniformTopology(1, 1, 1, 0), Catch::Contains("threads_per_core"));
  // 2^16 x 2^16 = 2^32 CPUs: one too many.
  CHECK_THROWS_WITH(UniformTopology(65536, 1, 65536, 1), Catch::Contains("exceeds"));
  // 65535 x 65537 = 2^32 - 1 CPUs still fits.
  CHECK(UniformTopology(65535, 1, 65537, 1).cpu_count() == 4294967295u);
}

TEST_CASE("out-of-range cpu and level ids are checked preconditions", "[uniform]") {
  const auto t = presets::q6600_2008();
  CHECK_THROWS_AS(t.llc_of(4), taskplace::PreconditionError);
  CHECK_THROWS_AS(t.core_cpus(taskplace::no_cpu), taskplace::PreconditionError);
  CHECK_THROWS_AS(t.level_kind(0, 2), taskplace::PreconditionError);
  CHECK_THROWS_AS(t.level_cpus(0, 7), taskplace::PreconditionError);
  CHECK_NOTHROW(t.level_cpus(3, 1));
}

TEST_CASE("ids and ranges follow the plain division formulas on every shape", "[uniform]") {
  // The topology precomputes its divisors (detail::Divisor); check every
  // answer against the formulas of the class comment, divided the plain
  // way, on power-of-two and other shapes, both numberings.
  for (std::uint32_t nodes : {1u, 2u, 3u})
    for (std::uint32_t llcs : {1u, 2u, 5u})
      for (std::uint32_t cores : {1u, 3u, 6u, 7u, 16u, 56u})
        for (std::uint32_t threads : {1u, 2u, 3u, 4u})
          for (CpuNumbering num : {CpuNumbering::nested, CpuNumbering::smt_last}) {
            const UniformTopology t{nodes, llcs, cores, threads, num};
            const std::uint32_t C = nodes * llcs * cores;
            REQUIRE(t.cpu_count() == C * threads);
            REQUIRE(t.core_count() == C);
            std::uint32_t bad = 0;
            for (CpuId c = 0; c < t.cpu_count(); ++c) {
              const std::uint32_t g = num == CpuNumbering::nested ? c / threads : c % C;
              bad += t.core_of(c) != g;
              bad += t.llc_of(c) != g / cores;
              bad += t.node_of(c) != g / (cores * llcs);
              bad += t.core_size(c) != threads;
              bad += t.llc_size(c) != cores * threads;
              bad += t.node_size(c) != llcs * cores * threads;
              // Every range holds exactly the CPUs with the same id, ascending.
              const auto core = vec(t.core_cpus(c));
              const auto llc = vec(t.llc_cpus(c));
              const auto node = vec(t.node_cpus(c));
              bad += core.size() != threads || llc.size() != cores * threads ||
                     node.size() != llcs * cores * threads;
              for (CpuId x : core) bad += t.core_of(x) != g;
              for (CpuId x : llc) bad += t.llc_of(x) != g / cores;
              for (CpuId x : node) bad += t.node_of(x) != g / (cores * llcs);
              bad += !std::is_sorted(llc.begin(), llc.end()) || !std::is_sorted(node.begin(), node.end());
            }
            INFO(nodes << "x" << llcs << "x" << cores << "x" << threads << " numbering "
                       << static_cast<int>(num));
            CHECK(bad == 0);
          }
}

TEST_CASE("the cached sizes and levels keep equality a comparison of shapes", "[uniform]") {
  constexpr UniformTopology a{2, 1, 56, 2, CpuNumbering::smt_last};
  static_assert(a == presets::sapphire_rapids_2x56x2());
  static_assert(!(a == UniformTopology{2, 1, 56, 2}));  // other numbering
  static_assert(a.llc_of(223) == 1 && a.core_of(223) == 111 && a.node_of(112) == 0);
  constexpr UniformTopology b{16, 8, 16, 2};
  static_assert(b.llc_of(4095) == 127 && b.node_of(4095) == 15 && b.core_of(4095) == 2047);
  UniformTopology c{1, 1, 6, 2};
  c = a;  // assignable; the copy answers like the original
  CHECK(c == a);
  CHECK(c.llc_size(5) == 112);
  CHECK(kinds(c, 0) == kinds(a, 0));
}
