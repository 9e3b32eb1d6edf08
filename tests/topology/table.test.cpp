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

// --- clusters (TableTopology::with_clusters) -------------------------------

namespace {

using K = std::vector<LevelKind>;

void conforms(const TableTopology& t) {
  const auto v = taskplace::testing::check_topology(t);
  for (const auto& x : v) UNSCOPED_INFO(x.cpu << " " << x.rule << ": " << x.detail);
  CHECK(v.empty());
}

}  // namespace

TEST_CASE("two clusters of four cores in one LLC give a cluster level below the llc",
          "[table][cluster]") {
  // 8 cores without SMT; clusters {0-3} and {4-7} (labels 7 and 3: any
  // label will do); one LLC, one node. Per CPU: core 1 < cluster 4 < LLC 8,
  // so the levels are cluster (4), llc (8); the LLC is the whole machine,
  // so there is no machine level.
  const auto t = TableTopology::with_clusters({0, 1, 2, 3, 4, 5, 6, 7}, {7, 7, 7, 7, 3, 3, 3, 3},
                                              {0, 0, 0, 0, 0, 0, 0, 0}, {0, 0, 0, 0, 0, 0, 0, 0});
  CHECK(t.has_clusters());
  CHECK(t.cluster_count() == 2);
  CHECK(t.cluster_of(2) == 0);  // renumbered: the cluster of CPU 0 is 0
  CHECK(t.cluster_of(5) == 1);
  CHECK(t.cluster_size(5) == 4);
  CHECK(vec(t.cluster_cpus(5)) == V{4, 5, 6, 7});
  for (CpuId c = 0; c < 8; ++c) {
    INFO("cpu " << c);
    CHECK(kinds(t, c) == K{LevelKind::cluster, LevelKind::llc});
    CHECK(vec(t.level_cpus(c, 1)) == V{0, 1, 2, 3, 4, 5, 6, 7});
  }
  CHECK(vec(t.level_cpus(0, 0)) == V{0, 1, 2, 3});
  CHECK(vec(t.level_cpus(5, 0)) == V{4, 5, 6, 7});
  conforms(t);
}

TEST_CASE("smt, cluster, llc and machine levels stack on a two-node SMT box",
          "[table][cluster]") {
  // 16 CPUs, nested numbering: core k = CPUs {2k, 2k+1}; a cluster is 2
  // cores (4 CPUs), an LLC 2 clusters (8 CPUs), one node per LLC, 2 nodes.
  // CPU 13: smt {12,13} (2) < cluster {12-15} (4) < llc {8-15} (8) <
  // machine (16); the node equals the LLC, so it is no level of its own.
  std::vector<std::uint32_t> core, cluster, llc, node;
  for (std::uint32_t c = 0; c < 16; ++c) {
    core.push_back(c / 2);
    cluster.push_back(c / 4);
    llc.push_back(c / 8);
    node.push_back(c / 8);
  }
  const auto t = TableTopology::with_clusters(core, cluster, llc, node);
  CHECK(t.cluster_count() == 4);
  for (CpuId c = 0; c < 16; ++c) {
    INFO("cpu " << c);
    CHECK(kinds(t, c) == K{LevelKind::smt, LevelKind::cluster, LevelKind::llc, LevelKind::machine});
  }
  CHECK(vec(t.level_cpus(13, 0)) == V{12, 13});
  CHECK(vec(t.level_cpus(13, 1)) == V{12, 13, 14, 15});
  CHECK(vec(t.level_cpus(13, 2)) == V{8, 9, 10, 11, 12, 13, 14, 15});
  CHECK(t.level_cpus(13, 3).size() == 16);
  conforms(t);
}

TEST_CASE("a hybrid part has a cluster level on its E-cores only", "[table][cluster]") {
  // Intel hybrid in small: P-cores {0,1} {2,3} with SMT and a private L2
  // (cluster = core), E-cores 4-11 in 2 modules of 4 sharing an L2
  // (clusters {4-7} {8-11}), one L3 of 12.
  //   P CPU 0:  core 2 = cluster 2        -> smt (2), llc (12);
  //   E CPU 9:  core 1 < cluster 4 < 12   -> cluster (4), llc (12).
  const auto t = TableTopology::with_clusters({0, 0, 1, 1, 2, 3, 4, 5, 6, 7, 8, 9},
                                              {0, 0, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3},
                                              std::vector<std::uint32_t>(12, 0),
                                              std::vector<std::uint32_t>(12, 0));
  CHECK(kinds(t, 0) == K{LevelKind::smt, LevelKind::llc});
  CHECK(kinds(t, 3) == K{LevelKind::smt, LevelKind::llc});
  CHECK(kinds(t, 9) == K{LevelKind::cluster, LevelKind::llc});
  CHECK(vec(t.level_cpus(9, 0)) == V{8, 9, 10, 11});
  CHECK(t.level_cpus(9, 1).size() == 12);
  CHECK(t.cluster_size(0) == 2);  // the P-core's cluster is its core
  CHECK(t.cluster_count() == 4);
  conforms(t);
}

TEST_CASE("a cluster as big as the core or the LLC is degenerate and gives no level",
          "[table][cluster]") {
  // 2 cores x 2 threads, one LLC of 4, one node (the class comment's example).
  const TableTopology plain({0, 0, 1, 1}, {0, 0, 0, 0}, {0, 0, 0, 0});
  const K expected{LevelKind::smt, LevelKind::llc};
  SECTION("cluster = core (x86 with a private L2 per core)") {
    const auto t = TableTopology::with_clusters({0, 0, 1, 1}, {0, 0, 1, 1}, {0, 0, 0, 0}, {0, 0, 0, 0});
    for (CpuId c = 0; c < 4; ++c) {
      CHECK(kinds(t, c) == expected);
      CHECK(t.level_count(c) == plain.level_count(c));
      for (std::uint32_t i = 0; i < t.level_count(c); ++i) CHECK(vec(t.level_cpus(c, i)) == vec(plain.level_cpus(c, i)));
    }
    CHECK(t.cluster_size(0) == 2);
    conforms(t);
  }
  SECTION("cluster = LLC (one cluster per L3): the llc level stays") {
    const auto t = TableTopology::with_clusters({0, 0, 1, 1}, {5, 5, 5, 5}, {0, 0, 0, 0}, {0, 0, 0, 0});
    for (CpuId c = 0; c < 4; ++c) CHECK(kinds(t, c) == expected);
    CHECK(vec(t.level_cpus(2, 1)) == V{0, 1, 2, 3});
    CHECK(t.cluster_size(2) == 4);
    conforms(t);
  }
  SECTION("a cluster of one CPU on a non-SMT core") {
    // 2 cores without SMT, one LLC: cluster 1 = core 1 < LLC 2: llc only.
    const auto t = TableTopology::with_clusters({0, 1}, {0, 1}, {0, 0}, {0, 0});
    CHECK(kinds(t, 1) == K{LevelKind::llc});
  }
}

TEST_CASE("a table without cluster ids has each core as its cluster and no cluster level",
          "[table][cluster]") {
  // The 8-core single-LLC box of the first cluster test, built the old way:
  // levels llc only (no SMT, no cluster, LLC = node = machine).
  const TableTopology t({0, 1, 2, 3, 4, 5, 6, 7}, std::vector<std::uint32_t>(8, 0),
                        std::vector<std::uint32_t>(8, 0));
  CHECK_FALSE(t.has_clusters());
  CHECK(t.cluster_count() == 8);
  CHECK(t.cluster_of(5) == t.core_of(5));
  CHECK(vec(t.cluster_cpus(5)) == V{5});
  CHECK(kinds(t, 5) == K{LevelKind::llc});
  CHECK_THROWS_AS(t.cluster_of(8), taskplace::PreconditionError);
}

TEST_CASE("clusters that do not nest are rejected with the CPU and the rule",
          "[table][cluster][errors]") {
  // 2 cluster ids for 3 CPUs.
  CHECK_THROWS_WITH(TableTopology::with_clusters({0, 1, 2}, {0, 0}, {0, 0, 0}, {0, 0, 0}),
                    Catch::Contains("differ in length") && Catch::Contains("2 cluster ids"));
  // Core 0 = CPUs 0 and 1, in clusters 0 and 1.
  CHECK_THROWS_WITH(TableTopology::with_clusters({0, 0, 1, 1}, {0, 1, 1, 1}, {0, 0, 0, 0}, {0, 0, 0, 0}),
                    Catch::Equals("cpu 1: a core lies in one cluster (sibling 0 is in cluster 0, "
                                  "cpu 1 in cluster 1)"));
  // One cluster {0-3} over LLCs {0,1} and {2,3}.
  CHECK_THROWS_WITH(TableTopology::with_clusters({0, 1, 2, 3}, {0, 0, 0, 0}, {0, 0, 1, 1}, {0, 0, 0, 0}),
                    Catch::Equals("cpu 2: a cluster lies in one LLC (cpu 0 of cluster 0 is in llc 0, "
                                  "cpu 2 in llc 1)"));
  CHECK_THROWS_AS(TableTopology::with_clusters({0, 1}, {0, 0}, {0, 1}, {0, 0}), TopologyError);
  // The constructor's own rules still come first.
  CHECK_THROWS_WITH(TableTopology::with_clusters({0, 1, 0, 1}, {0, 0, 0, 0}, {0, 0, 1, 1}, {0, 0, 0, 0}),
                    Catch::Contains("cpu 2: SMT siblings share an LLC"));
  CHECK_THROWS_WITH(TableTopology::with_clusters({}, {}, {}, {}), Catch::Contains("no CPUs"));
  // Without clusters the length message is the one it always was.
  CHECK_THROWS_WITH(TableTopology({0, 1}, {0}, {0, 0}),
                    Catch::Equals("TableTopology: arrays differ in length (2 core ids, 1 llc ids, 2 node ids)"));
}

TEST_CASE("os numbers and clusters combine", "[table][cluster]") {
  // The clustered 8-core box with CPUs 2 and 5 offline: OS 0 1 3 4 6 7,
  // clusters {0,1,3} {4,6,7} -> dense {0,1,2} {3,4,5}: each 3 CPUs, still
  // between core (1) and LLC (6).
  const auto t = TableTopology::with_clusters({0, 1, 3, 4, 6, 7}, {0, 0, 0, 1, 1, 1},
                                              std::vector<std::uint32_t>(6, 0),
                                              std::vector<std::uint32_t>(6, 0), {0, 1, 3, 4, 6, 7});
  CHECK(kinds(t, 4) == K{LevelKind::cluster, LevelKind::llc});
  CHECK(vec(t.level_cpus(4, 0)) == V{3, 4, 5});
  CHECK(t.os_cpu(4) == 6);
  CHECK(t.from_os_cpu(4) == 3);
  conforms(t);
}
