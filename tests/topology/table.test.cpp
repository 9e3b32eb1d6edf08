// Tests for taskplace/topology/table.hpp: TableTopology.
#include <catch2/catch.hpp>

#include <cstdint>
#include <vector>

#include "taskplace/testing/topology_conformance.hpp"
#include "taskplace/topology/table.hpp"

using taskplace::CpuId;
using taskplace::LevelKind;
using taskplace::TableTopology;
using taskplace::TopologyError;
using V = std::vector<CpuId>;

namespace {

template <class R>
V vec(const R& r) {
  return V(r.begin(), r.end());
}

std::vector<LevelKind> kinds(const TableTopology& t, CpuId c) {
  std::vector<LevelKind> out;
  for (std::uint32_t i = 0; i < t.level_count(c); ++i) out.push_back(t.level_kind(c, i));
  return out;
}

}  // namespace

TEST_CASE("labels are renumbered densely in order of each group's lowest CPU", "[table]") {
  // Labels 70/30 for cores, 9 for the LLC, 4 for the node: arbitrary.
  const TableTopology t({70, 30, 70, 30}, {9, 9, 9, 9}, {4, 4, 4, 4});
  CHECK(t.core_of(0) == 0);
  CHECK(t.core_of(1) == 1);
  CHECK(t.core_of(2) == 0);
  CHECK(vec(t.core_cpus(3)) == V{1, 3});
  CHECK(t.llc_of(3) == 0);
  CHECK(t.node_of(3) == 0);
  CHECK(t.core_count() == 2);
  CHECK(t.llc_size(2) == 4);
  CHECK(kinds(t, 0) == std::vector<LevelKind>{LevelKind::smt, LevelKind::llc});
  CHECK(taskplace::testing::check_topology(t).empty());
}

TEST_CASE("an asymmetric table gives each CPU its own levels", "[table]") {
  // An 8-CPU box with CPUs 2 and 5 gone (offline_cpus): cores {0,3}, {1},
  // {2,5}, {4}, one LLC. CPU 1 has no SMT level, CPU 0 has one.
  const TableTopology t({0, 1, 3, 0, 6, 3}, {0, 0, 0, 0, 0, 0}, {0, 0, 0, 0, 0, 0},
                        {0, 1, 3, 4, 6, 7});
  CHECK(kinds(t, 0) == std::vector<LevelKind>{LevelKind::smt, LevelKind::llc});
  CHECK(kinds(t, 1) == std::vector<LevelKind>{LevelKind::llc});
  CHECK(t.core_size(1) == 1);
  CHECK(vec(t.core_cpus(5)) == V{2, 5});
  CHECK(t.os_cpu(4) == 6);
  CHECK(t.from_os_cpu(7) == 5);
  CHECK(t.from_os_cpu(2) == taskplace::no_cpu);  // offline
  CHECK(t.from_os_cpu(100) == taskplace::no_cpu);
  CHECK(taskplace::testing::check_topology(t).empty());
}

TEST_CASE("nodes inside an LLC (Intel SNC) are not a balance level", "[table][snc]") {
  // 8 cores, one L3, 2 sub-NUMA nodes of 4.
  const TableTopology t({0, 1, 2, 3, 4, 5, 6, 7}, {0, 0, 0, 0, 0, 0, 0, 0}, {0, 0, 0, 0, 1, 1, 1, 1});
  CHECK(t.node_size(0) == 4);
  CHECK(t.llc_size(0) == 8);
  CHECK(kinds(t, 6) == std::vector<LevelKind>{LevelKind::llc});
  CHECK(taskplace::testing::check_topology(t).empty());
}

TEST_CASE("several LLCs in a node give llc then node levels (AMD)", "[table]") {
  // 1 node, 2 LLCs of 2 cores: llc (2), node (4).
  const TableTopology t({0, 1, 2, 3}, {0, 0, 1, 1}, {0, 0, 0, 0});
  CHECK(kinds(t, 3) == std::vector<LevelKind>{LevelKind::llc, LevelKind::node});
  CHECK(vec(t.level_cpus(3, 0)) == V{2, 3});
  CHECK(vec(t.level_cpus(3, 1)) == V{0, 1, 2, 3});
  // Two nodes of those: the machine level on top.
  const TableTopology two({0, 1, 2, 3, 4, 5, 6, 7}, {0, 0, 1, 1, 2, 2, 3, 3}, {0, 0, 0, 0, 1, 1, 1, 1});
  CHECK(kinds(two, 7) == std::vector<LevelKind>{LevelKind::llc, LevelKind::node, LevelKind::machine});
  CHECK(taskplace::testing::check_topology(two).empty());
}

TEST_CASE("a single CPU has no levels", "[table]") {
  const TableTopology t({5}, {5}, {5});
  CHECK(t.cpu_count() == 1);
  CHECK(t.level_count(0) == 0);
  CHECK(taskplace::testing::check_topology(t).empty());
}

TEST_CASE("inconsistent tables are rejected with the CPU and the rule", "[table][errors]") {
  CHECK_THROWS_WITH(TableTopology({}, {}, {}), Catch::Contains("no CPUs"));
  CHECK_THROWS_WITH(TableTopology({0, 1}, {0}, {0, 0}), Catch::Contains("differ in length"));
  CHECK_THROWS_WITH(TableTopology({0, 1}, {0, 0}, {0, 0}, {4}), Catch::Contains("1 OS cpu numbers for 2"));
  // Core 0 = CPUs 0 and 2, in LLCs 0 and 1.
  CHECK_THROWS_WITH(TableTopology({0, 1, 0, 1}, {0, 0, 1, 1}, {0, 0, 0, 0}),
                    Catch::Contains("cpu 2: SMT siblings share an LLC"));
  // Core 0 = CPUs 0 and 1, one LLC, but nodes 0 and 1 (an LLC spanning two
  // nodes is allowed, a core is not).
  CHECK_THROWS_WITH(TableTopology({0, 0}, {0, 0}, {0, 1}), Catch::Contains("cpu 1: a core lies in one node"));
  // LLC 0 = {0,1}, LLC 1 = {2,3}; node 0 = {0}, node 1 = {1,2,3}: LLC 0
  // spans two nodes, and node 1 sticks out of it.
  CHECK_THROWS_WITH(TableTopology({0, 1, 2, 3}, {0, 0, 1, 1}, {0, 1, 1, 1}),
                    Catch::Contains("LLCs and nodes nest") && Catch::Contains("cpu 2"));
  CHECK_THROWS_WITH(TableTopology({0, 1}, {0, 0}, {0, 0}, {3, 3}), Catch::Contains("OS cpu number 3"));
  CHECK_THROWS_WITH(TableTopology({0}, {0}, {0}, {taskplace::no_cpu}), Catch::Contains("no_cpu"));
  CHECK_THROWS_AS(TableTopology({0, 0}, {0, 1}, {0, 0}), TopologyError);
}

TEST_CASE("table members check their cpu and level ids", "[table]") {
  const TableTopology t({0, 1}, {0, 0}, {0, 0});
  CHECK_THROWS_AS(t.core_of(2), taskplace::PreconditionError);
  CHECK_THROWS_AS(t.llc_cpus(9), taskplace::PreconditionError);
  CHECK_THROWS_AS(t.level_kind(0, 1), taskplace::PreconditionError);
  CHECK_THROWS_AS(t.os_cpu(2), taskplace::PreconditionError);
  CHECK(t.level_kind(1, 0) == LevelKind::llc);
}

TEST_CASE("a copied table hands out its own ranges", "[table]") {
  auto make = [] { return TableTopology({0, 0, 1, 1}, {0, 0, 0, 0}, {0, 0, 0, 0}); };
  TableTopology a = make();
  const TableTopology b = a;
  a = TableTopology({0}, {0}, {0});
  CHECK(vec(b.core_cpus(3)) == V{2, 3});
  CHECK(b.cpu_count() == 4);
}
