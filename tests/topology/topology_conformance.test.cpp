// Tests for taskplace/testing/topology_conformance.hpp (check_topology) and
// taskplace/testing/builders.hpp.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "taskplace/testing/builders.hpp"
#include "taskplace/testing/topology_conformance.hpp"
#include "taskplace/topology/table.hpp"
#include "taskplace/topology/uniform.hpp"

using taskplace::CpuId;
using taskplace::LevelKind;
using taskplace::testing::check_topology;
using taskplace::testing::Violation;
using V = std::vector<CpuId>;

namespace {

// A user topology made of plain data, so that a test can break exactly one
// thing. Starts as a copy of a correct topology.
struct DataTopology {
  std::uint32_t n = 0;
  std::vector<std::uint32_t> ids[3];
  std::vector<V> sets[3];
  std::vector<std::uint32_t> sizes[3];
  std::vector<std::vector<std::pair<LevelKind, V>>> levels;

  template <class T>
  static DataTopology of(const T& t) {
    DataTopology d;
    d.n = t.cpu_count();
    d.levels.resize(d.n);
    for (CpuId c = 0; c < d.n; ++c) {
      d.ids[0].push_back(t.core_of(c));
      d.ids[1].push_back(t.llc_of(c));
      d.ids[2].push_back(t.node_of(c));
      d.sets[0].emplace_back(t.core_cpus(c).begin(), t.core_cpus(c).end());
      d.sets[1].emplace_back(t.llc_cpus(c).begin(), t.llc_cpus(c).end());
      d.sets[2].emplace_back(t.node_cpus(c).begin(), t.node_cpus(c).end());
      for (int k = 0; k < 3; ++k) d.sizes[k].push_back(static_cast<std::uint32_t>(d.sets[k][c].size()));
      for (std::uint32_t i = 0; i < t.level_count(c); ++i) {
        const auto r = t.level_cpus(c, i);
        d.levels[c].emplace_back(t.level_kind(c, i), V(r.begin(), r.end()));
      }
    }
    return d;
  }

  std::uint32_t cpu_count() const { return n; }
  std::uint32_t core_of(CpuId c) const { return ids[0][c]; }
  std::uint32_t llc_of(CpuId c) const { return ids[1][c]; }
  std::uint32_t node_of(CpuId c) const { return ids[2][c]; }
  std::uint32_t core_size(CpuId c) const { return sizes[0][c]; }
  std::uint32_t llc_size(CpuId c) const { return sizes[1][c]; }
  std::uint32_t node_size(CpuId c) const { return sizes[2][c]; }
  std::span<const CpuId> core_cpus(CpuId c) const { return sets[0][c]; }
  std::span<const CpuId> llc_cpus(CpuId c) const { return sets[1][c]; }
  std::span<const CpuId> node_cpus(CpuId c) const { return sets[2][c]; }
  std::uint32_t level_count(CpuId c) const { return static_cast<std::uint32_t>(levels[c].size()); }
  LevelKind level_kind(CpuId c, std::uint32_t i) const { return levels[c][i].first; }
  std::span<const CpuId> level_cpus(CpuId c, std::uint32_t i) const { return levels[c][i].second; }
};
static_assert(taskplace::Topology<DataTopology>);

// 2 nodes x 1 LLC x 2 cores x 2 threads, nested: cores {0,1} {2,3} {4,5}
// {6,7}; LLC = node = {0-3}, {4-7}; levels smt, llc, machine.
DataTopology good() { return DataTopology::of(taskplace::UniformTopology{2, 1, 2, 2}); }

// 16 CPUs, nested: core k = {2k, 2k+1}, clusters of 2 cores, one LLC and
// node per 8 CPUs: levels smt, cluster, llc, machine.
DataTopology clustered() {
  std::vector<std::uint32_t> core, cluster, llc;
  for (std::uint32_t c = 0; c < 16; ++c) {
    core.push_back(c / 2);
    cluster.push_back(c / 4);
    llc.push_back(c / 8);
  }
  return DataTopology::of(taskplace::TableTopology::with_clusters(core, cluster, llc, llc));
}

bool reports(const std::vector<Violation>& v, const std::string& rule, CpuId cpu) {
  return std::any_of(v.begin(), v.end(), [&](const Violation& x) {
    return x.cpu == cpu && x.rule.rfind(rule, 0) == 0;
  });
}

std::string dump(const std::vector<Violation>& v) {
  std::string s;
  for (const auto& x : v) s += std::to_string(x.cpu) + " " + x.rule + ": " + x.detail + "\n";
  return s;
}

}  // namespace

TEST_CASE("the unbroken data topology conforms", "[conformance]") {
  const auto v = check_topology(good());
  INFO(dump(v));
  CHECK(v.empty());
}

TEST_CASE("a clustered table conforms", "[conformance][cluster]") {
  const auto v = check_topology(clustered());
  INFO(dump(v));
  CHECK(v.empty());
}

TEST_CASE("each broken invariant is reported with its CPU and number", "[conformance]") {
  SECTION("R1: no CPUs") {
    DataTopology t = good();
    t.n = 0;
    CHECK(reports(check_topology(t), "Topology R1", taskplace::no_cpu));
  }
  SECTION("CpuRange I1: a range out of order") {
    DataTopology t = good();
    t.sets[0][2] = {3, 2};
    const auto v = check_topology(t);
    INFO(dump(v));
    CHECK(reports(v, "CpuRange I1: elements distinct and ascending", 2));
  }
  SECTION("CpuRange I1: an element past cpu_count") {
    DataTopology t = good();
    t.sets[2][7] = {4, 5, 6, 7, 8};
    t.sizes[2][7] = 5;
    CHECK(reports(check_topology(t), "CpuRange I1: elements < cpu_count()", 7));
  }
  SECTION("I1: a CPU missing from its own LLC") {
    DataTopology t = good();
    t.sets[1][1] = {0, 2, 3, 4};
    CHECK(reports(check_topology(t), "Topology I1", 1));
  }
  SECTION("I2: a size that disagrees with its range") {
    DataTopology t = good();
    t.sizes[1][5] = 99;
    const auto v = check_topology(t);
    CHECK(reports(v, "Topology I2", 5));
    CHECK(v.size() == 1);
  }
  SECTION("I3: siblings in different LLCs") {
    DataTopology t = good();
    t.sets[0][3] = {3, 4};
    CHECK(reports(check_topology(t), "Topology I3", 3));
  }
  SECTION("I4: equal llc ids for different LLCs") {
    DataTopology t = good();
    for (CpuId c = 4; c < 8; ++c) t.ids[1][c] = t.ids[1][0];
    const auto v = check_topology(t);
    CHECK(reports(v, "Topology I4: equal llc_of", 0));
    CHECK(reports(v, "Topology I4: equal llc_of", 6));
  }
  SECTION("I5: an LLC and a node that overlap without nesting") {
    DataTopology t = good();
    t.sets[2][0] = {0, 1, 4, 5};
    t.sizes[2][0] = 4;
    CHECK(reports(check_topology(t), "Topology I5", 0));
  }
  SECTION("I6: levels out of order") {
    DataTopology t = good();
    std::swap(t.levels[2][0], t.levels[2][1]);  // llc first, then smt
    const auto v = check_topology(t);
    CHECK(reports(v, "Topology I6: each level a strict superset", 2));
    CHECK(reports(v, "Topology I6: level kinds never decrease", 2));
  }
  SECTION("I6: level 0 without the CPU") {
    DataTopology t = good();
    t.levels[1][0].second = {0};
    CHECK(reports(check_topology(t), "Topology I6: c is in level 0", 1));
  }
  SECTION("I7: the last level short of the machine") {
    DataTopology t = good();
    t.levels[6].pop_back();
    CHECK(reports(check_topology(t), "Topology I7", 6));
  }
  SECTION("I7: levels on a single CPU") {
    DataTopology t = DataTopology::of(taskplace::UniformTopology{1, 1, 1, 1});
    t.levels[0].push_back({LevelKind::machine, {0}});
    CHECK(reports(check_topology(t), "Topology I7: a single-CPU topology has no levels", 0));
  }
  SECTION("I8: an smt level that is not the core") {
    DataTopology t = good();
    t.levels[0][0].second = {0, 1, 2};
    const auto v = check_topology(t);
    CHECK(reports(v, "Topology I8: the smt level equals core_cpus", 0));
  }
  SECTION("I8: an llc level that is not the LLC") {
    DataTopology t = good();
    t.levels[4][1].second = {4, 5, 6};
    CHECK(reports(check_topology(t), "Topology I8: the llc level equals llc_cpus", 4));
  }
  SECTION("I8: a cluster level that leaves out a sibling") {
    // 16 CPUs, core k = {2k, 2k+1}, clusters of 4, LLCs of 8: CPU 13 has
    // smt {12,13}, cluster {12-15}, llc {8-15}, machine. Its cluster level
    // made {13,14,15} no longer holds sibling 12 (I6 reports it too).
    DataTopology t = clustered();
    REQUIRE(t.levels[13][1].first == LevelKind::cluster);
    t.levels[13][1].second = {13, 14, 15};
    const auto v = check_topology(t);
    INFO(dump(v));
    CHECK(reports(v, "Topology I8: the cluster level lies between core_cpus and llc_cpus", 13));
    CHECK(reports(v, "Topology I6: each level a strict superset", 13));
  }
  SECTION("I8: a cluster level outside the LLC, with no llc level to catch it") {
    // 1 node x 2 LLCs x 2 cores, no SMT: CPU 0 has levels llc {0,1}, node
    // {0-3}. Make its first level a cluster of {0,1,2}: still strictly
    // inside the node level (I6 holds) and there is no llc level left for
    // I8's llc rule, but the cluster is not inside llc_cpus {0,1}.
    DataTopology t = DataTopology::of(taskplace::UniformTopology{1, 2, 2, 1});
    REQUIRE(t.levels[0].size() == 2);
    t.levels[0][0] = {LevelKind::cluster, {0, 1, 2}};
    const auto v = check_topology(t);
    INFO(dump(v));
    CHECK(reports(v, "Topology I8: the cluster level lies between core_cpus and llc_cpus", 0));
    CHECK(v.size() == 1);
  }
  SECTION("R5: more than max_levels levels") {
    DataTopology t = good();
    t.levels[3].resize(taskplace::max_levels + 1, {LevelKind::machine, {0, 1, 2, 3, 4, 5, 6, 7}});
    CHECK(reports(check_topology(t), "Topology R5", 3));
  }
}

TEST_CASE("table_from_string reads one core llc node row per CPU", "[builders]") {
  const auto t = taskplace::testing::table_from_string("0 0 0 | 0 0 0 | 1 1 0 | 1 1 0");
  CHECK(t.cpu_count() == 4);
  CHECK(t.core_size(0) == 2);
  CHECK(t.llc_count() == 2);
  CHECK(t.node_size(3) == 4);
  const auto os = taskplace::testing::table_from_string("0 0 0 10|1 0 0 12");
  CHECK(os.os_cpu(1) == 12);
  CHECK(os.from_os_cpu(10) == 0);
  CHECK(check_topology(os).empty());
  CHECK_THROWS_WITH(taskplace::testing::table_from_string("0 0|1 0 0"), Catch::Contains("row 0 has 2"));
  CHECK_THROWS_WITH(taskplace::testing::table_from_string("0 0 x"), Catch::Contains("unexpected 'x'"));
  CHECK_THROWS_WITH(taskplace::testing::table_from_string("0 0 0 1|1 0 0"),
                    Catch::Contains("every CPU or for none"));
  CHECK_THROWS_AS(taskplace::testing::table_from_string("0 0 0|0 1 0"), taskplace::TopologyError);
}

TEST_CASE("to_table and restrict_to keep a topology's groups", "[builders]") {
  const auto epyc = taskplace::presets::epyc_2x64x2();
  const auto t = taskplace::testing::to_table(epyc);
  REQUIRE(t.cpu_count() == 256);
  for (CpuId c = 0; c < 256; c += 17) {
    CHECK(V(t.llc_cpus(c).begin(), t.llc_cpus(c).end()) == V(epyc.llc_cpus(c).begin(), epyc.llc_cpus(c).end()));
    CHECK(t.level_count(c) == epyc.level_count(c));
  }
  // A cpuset of CPUs 1, 2 and 3 of a Q6600 (Smith 2008: LLCs {0,1}, {2,3}):
  // LLC sizes 1 and 2, renumbered 0..2.
  const auto part = taskplace::testing::restrict_to(taskplace::presets::q6600_2008(), {3, 1, 2});
  CHECK(part.cpu_count() == 3);
  CHECK(part.llc_size(0) == 1);
  CHECK(part.llc_size(2) == 2);
  CHECK(part.os_cpu(0) == 1);
  CHECK(check_topology(part).empty());
  CHECK_THROWS_AS(taskplace::testing::restrict_to(taskplace::presets::q6600_2008(), {4}),
                  taskplace::TopologyError);
  CHECK_THROWS_AS(taskplace::testing::restrict_to(taskplace::presets::q6600_2008(), {}),
                  taskplace::TopologyError);
}

TEST_CASE("every restriction of a preset still conforms", "[builders][conformance]") {
  // Drop every third CPU of Fleming 2017's box: asymmetric cores and LLCs.
  const auto t = taskplace::presets::two_node_80cpu();
  V keep;
  for (CpuId c = 0; c < t.cpu_count(); ++c)
    if (c % 3 != 0) keep.push_back(c);
  const auto part = taskplace::testing::restrict_to(t, keep);
  CHECK(part.cpu_count() == 53);
  const auto v = check_topology(part);
  INFO(dump(v));
  CHECK(v.empty());
}

TEST_CASE("to_table and restrict_to keep clusters", "[builders][cluster]") {
  // 8 cores, one LLC, clusters {0-3} and {4-7} (four cores sharing an L2):
  // every CPU has levels [cluster, llc].
  const auto t = taskplace::TableTopology::with_clusters({0, 1, 2, 3, 4, 5, 6, 7}, {0, 0, 0, 0, 1, 1, 1, 1},
                                                         {0, 0, 0, 0, 0, 0, 0, 0}, {0, 0, 0, 0, 0, 0, 0, 0});
  const auto copy = taskplace::testing::to_table(t);
  for (CpuId c = 0; c < 8; ++c) {
    REQUIRE(copy.level_count(c) == 2);
    CHECK(copy.level_kind(c, 0) == taskplace::LevelKind::cluster);
    CHECK(V(copy.level_cpus(c, 0).begin(), copy.level_cpus(c, 0).end()) ==
          V(t.level_cpus(c, 0).begin(), t.level_cpus(c, 0).end()));
  }
  // Keep CPUs 1, 2, 5: cluster {1, 2} stays a level (2 cores < LLC of 3);
  // CPU 5 is alone in its cluster, which is its core: no cluster level.
  const auto part = taskplace::testing::restrict_to(t, {5, 1, 2});
  REQUIRE(part.cpu_count() == 3);
  CHECK(part.level_kind(0, 0) == taskplace::LevelKind::cluster);
  CHECK(V(part.level_cpus(1, 0).begin(), part.level_cpus(1, 0).end()) == V{0, 1});
  CHECK(part.level_kind(2, 0) == taskplace::LevelKind::llc);
  CHECK(part.os_cpu(2) == 5);
  CHECK(check_topology(part).empty());
  // A topology without clusters gives a table without them.
  CHECK_FALSE(taskplace::testing::to_table(taskplace::presets::q6600_2008()).has_clusters());
}
