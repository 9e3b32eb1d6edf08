// Tests for taskplace/topology/sysfs.hpp: SysfsTopology over the fake
// trees in tests/data/sysfs (written by tests/data/sysfs/generate.py) and
// over this machine's /sys.
#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <unistd.h>

#include "taskplace/testing/topology_conformance.hpp"
#include "taskplace/topology/sysfs.hpp"

using taskplace::CpuId;
using taskplace::LevelKind;
using taskplace::LlcView;
using taskplace::SysfsError;
using taskplace::SysfsTopology;
using V = std::vector<CpuId>;
namespace fs = std::filesystem;

namespace {

fs::path tree(const char* name) { return fs::path(TASKPLACE_TEST_DATA) / "sysfs" / name; }

template <class R>
V vec(const R& r) {
  return V(r.begin(), r.end());
}

std::vector<LevelKind> kinds(const SysfsTopology& t, CpuId c) {
  std::vector<LevelKind> out;
  for (std::uint32_t i = 0; i < t.level_count(c); ++i) out.push_back(t.level_kind(c, i));
  return out;
}

// A writable copy of a fake tree, removed at the end of the test.
struct TreeCopy {
  fs::path root;
  explicit TreeCopy(const char* name) {
    static std::atomic<int> counter{0};
    root = fs::temp_directory_path() /
           ("taskplace-sysfs-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    fs::remove_all(root);
    fs::copy(tree(name), root, fs::copy_options::recursive);
  }
  ~TreeCopy() {
    std::error_code ec;
    fs::remove_all(root, ec);
  }
  void write(const std::string& rel, const std::string& text) const {
    std::ofstream(root / rel) << text;
  }
  void remove(const std::string& rel) const { fs::remove_all(root / rel); }
};

// Expects SysfsError whose file() ends with `rel`.
template <class F>
void expect_sysfs_error(F&& f, const std::string& rel) {
  try {
    f();
    FAIL("no SysfsError for " << rel);
  } catch (const SysfsError& e) {
    CAPTURE(e.what());
    const std::string file = e.file();
    CHECK(file.size() >= rel.size());
    CHECK(file.compare(file.size() - rel.size(), rel.size(), rel) == 0);
    CHECK(std::string(e.what()).find(rel) != std::string::npos);
  }
}

void conforms(const SysfsTopology& t) {
  const auto v = taskplace::testing::check_topology(t);
  for (const auto& x : v) UNSCOPED_INFO(x.cpu << " " << x.rule << ": " << x.detail);
  CHECK(v.empty());
}

}  // namespace

TEST_CASE("a 2-CPU VM is one LLC of two cores", "[sysfs]") {
  const auto t = SysfsTopology::all_online(tree("vm2"));
  CHECK(t.cpu_count() == 2);
  CHECK(t.core_size(0) == 1);
  CHECK(vec(t.llc_cpus(1)) == V{0, 1});  // index3 (L3) shared_cpu_list 0-1
  CHECK(t.node_size(0) == 2);
  CHECK(kinds(t, 0) == std::vector<LevelKind>{LevelKind::llc});
  conforms(t);
}

TEST_CASE("two Intel sockets with SMT follow Linux x86 numbering", "[sysfs]") {
  const auto t = SysfsTopology::all_online(tree("intel_2s_smt"));
  REQUIRE(t.cpu_count() == 16);
  CHECK(vec(t.core_cpus(3)) == V{3, 11});  // sibling of k is k + 8
  CHECK(vec(t.llc_cpus(9)) == V{0, 1, 2, 3, 8, 9, 10, 11});
  CHECK(t.node_of(12) == 1);
  CHECK(t.node_of(11) == 0);
  CHECK(t.table().llc_count() == 2);
  CHECK(kinds(t, 5) == std::vector<LevelKind>{LevelKind::smt, LevelKind::llc, LevelKind::machine});
  CHECK(t.os_cpu(7) == 7);
  conforms(t);
}

TEST_CASE("an AMD socket has four LLCs, so the LLC is a quarter of the node", "[sysfs]") {
  const auto t = SysfsTopology::all_online(tree("amd_multi_llc"));
  REQUIRE(t.cpu_count() == 32);
  CHECK(t.llc_size(0) == 8);   // 4 cores x 2 threads per CCX: the wake_wide factor
  CHECK(t.node_size(0) == 32);
  CHECK(t.table().llc_count() == 4);
  CHECK(vec(t.llc_cpus(21)) == V{4, 5, 6, 7, 20, 21, 22, 23});
  CHECK(kinds(t, 0) == std::vector<LevelKind>{LevelKind::smt, LevelKind::llc, LevelKind::node});
  conforms(t);
}

TEST_CASE("offline CPUs are left out and the rest renumbered densely", "[sysfs]") {
  const auto t = SysfsTopology::all_online(tree("offline_cpus"));  // 8 CPUs, 2 and 5 offline
  REQUIRE(t.cpu_count() == 6);
  V os;
  for (CpuId c = 0; c < t.cpu_count(); ++c) os.push_back(t.os_cpu(c));
  CHECK(os == V{0, 1, 3, 4, 6, 7});
  CHECK(t.from_os_cpu(2) == taskplace::no_cpu);
  CHECK(t.from_os_cpu(5) == taskplace::no_cpu);
  CHECK(t.from_os_cpu(6) == 4);
  // OS cores {0,4} {1,(5)} {(2),6} {3,7}: dense {0,3} {1} {4} {2,5}.
  CHECK(vec(t.core_cpus(0)) == V{0, 3});
  CHECK(t.core_size(1) == 1);
  CHECK(t.core_size(4) == 1);
  CHECK(vec(t.core_cpus(5)) == V{2, 5});
  CHECK(kinds(t, 1) == std::vector<LevelKind>{LevelKind::llc});
  CHECK(kinds(t, 0) == std::vector<LevelKind>{LevelKind::smt, LevelKind::llc});
  conforms(t);
}

TEST_CASE("without an L3 the highest shared cache is the LLC", "[sysfs]") {
  // L2 shared by pairs; thread_siblings_list only (pre-5.4); no node dir.
  const auto t = SysfsTopology::all_online(tree("no_l3"));
  REQUIRE(t.cpu_count() == 4);
  CHECK(vec(t.llc_cpus(2)) == V{2, 3});
  CHECK(t.node_size(0) == 4);
  CHECK(kinds(t, 0) == std::vector<LevelKind>{LevelKind::llc, LevelKind::node});
  conforms(t);
}

TEST_CASE("sub-NUMA nodes cut the L3 as the scheduler does; the hardware view keeps it whole",
          "[sysfs][snc]") {
  // snc2: 8 cores, one L3 listed as shared by all 8 (cache/index3), two
  // nodes 0-3 and 4-7. The kernel's MC domain stops at the node (x86
  // match_llc() since 2018: SNC nodes do not share the LLC), so the LLC a
  // wake-up searches is the node's 4 CPUs, and the machine level joins the
  // two nodes.
  const auto t = SysfsTopology::all_online(tree("snc2"));
  CHECK(t.llc_size(0) == 4);
  CHECK(vec(t.llc_cpus(5)) == V{4, 5, 6, 7});
  CHECK(t.node_size(0) == 4);
  CHECK(t.llc_of(3) != t.llc_of(4));
  CHECK(kinds(t, 7) == std::vector<LevelKind>{LevelKind::llc, LevelKind::machine});
  conforms(t);
  // The same tree, caches as the hardware lists them: one LLC of 8 with
  // the nodes inside it, which is no level of its own.
  const auto hw = SysfsTopology::all_online(tree("snc2"), LlcView::hardware);
  CHECK(hw.llc_size(0) == 8);
  CHECK(hw.llc_of(3) == hw.llc_of(4));
  CHECK(hw.node_size(0) == 4);
  CHECK(kinds(hw, 7) == std::vector<LevelKind>{LevelKind::llc});
  conforms(hw);
  // An affinity mask inside one node: the split LLC is that node's part.
  const SysfsTopology some(tree("snc2"), {2, 3, 4});
  CHECK(some.llc_size(0) == 2);
  CHECK(some.llc_size(2) == 1);
  conforms(some);
}

TEST_CASE("split_llc_at_nodes labels each (LLC, node) pair once", "[sysfs][snc]") {
  using taskplace::detail::split_llc_at_nodes;
  using L = std::vector<std::uint32_t>;
  CHECK(split_llc_at_nodes(L{7, 7, 7, 7}, L{0, 0, 1, 1}) == L{0, 0, 1, 1});
  CHECK(split_llc_at_nodes(L{3, 3, 9, 9}, L{0, 0, 0, 0}) == L{0, 0, 1, 1});  // nodes inside no LLC: unchanged groups
  CHECK(split_llc_at_nodes(L{5, 5, 5, 5}, L{1, 0, 1, 0}) == L{0, 1, 0, 1});  // interleaved numbering
  CHECK(split_llc_at_nodes(L{}, L{}).empty());
}

TEST_CASE("cluster_cpus_list gives a cluster level between the core and the LLC",
          "[sysfs][cluster]") {
  // cluster_l2: 8 cores, clusters {0-3} {4-7} sharing an L2, one L3, one
  // node. Each CPU: core 1 < cluster 4 < LLC 8 -> cluster, llc.
  const auto t = SysfsTopology::all_online(tree("cluster_l2"));
  REQUIRE(t.cpu_count() == 8);
  CHECK(t.has_clusters());
  CHECK(t.cluster_count() == 2);
  CHECK(vec(t.cluster_cpus(5)) == V{4, 5, 6, 7});
  CHECK(t.llc_size(5) == 8);  // the L3 (index3), not the clustered L2
  for (CpuId c = 0; c < 8; ++c) {
    INFO("cpu " << c);
    CHECK(kinds(t, c) == std::vector<LevelKind>{LevelKind::cluster, LevelKind::llc});
  }
  CHECK(vec(t.level_cpus(2, 0)) == V{0, 1, 2, 3});
  CHECK(vec(t.level_cpus(5, 0)) == V{4, 5, 6, 7});
  conforms(t);
}

TEST_CASE("a cluster_cpus_list equal to the core gives no cluster level", "[sysfs][cluster]") {
  // cluster_is_core: x86, 4 cores x 2 threads (sibling of k is k + 4), a
  // private L2 per core, so cluster_cpus_list = core_cpus_list: smt, llc,
  // as for a kernel without the file.
  const auto t = SysfsTopology::all_online(tree("cluster_is_core"));
  REQUIRE(t.cpu_count() == 8);
  CHECK(vec(t.cluster_cpus(5)) == V{1, 5});
  CHECK(t.cluster_size(5) == t.core_size(5));
  for (CpuId c = 0; c < 8; ++c) {
    INFO("cpu " << c);
    CHECK(kinds(t, c) == std::vector<LevelKind>{LevelKind::smt, LevelKind::llc});
  }
  conforms(t);
}

TEST_CASE("a hybrid part's E-core module is a cluster, its P-cores are not",
          "[sysfs][cluster]") {
  // cluster_hybrid: P-cores {0,1} {2,3} (cluster = core), E-cores 4-7 in
  // one module sharing an L2 (cluster {4-7}), one L3 of 8.
  //   CPU 1: smt {0,1}, llc {0-7};  CPU 6: cluster {4-7}, llc {0-7}.
  const auto t = SysfsTopology::all_online(tree("cluster_hybrid"));
  REQUIRE(t.cpu_count() == 8);
  CHECK(kinds(t, 1) == std::vector<LevelKind>{LevelKind::smt, LevelKind::llc});
  CHECK(kinds(t, 6) == std::vector<LevelKind>{LevelKind::cluster, LevelKind::llc});
  CHECK(vec(t.level_cpus(6, 0)) == V{4, 5, 6, 7});
  CHECK(t.cluster_count() == 3);  // {0,1} {2,3} {4-7}
  conforms(t);
}

TEST_CASE("trees without cluster_cpus_list have no clusters", "[sysfs][cluster]") {
  // Kernels before v5.16 write no such file: each core is its own cluster.
  for (const char* name : {"vm2", "intel_2s_smt", "amd_multi_llc", "offline_cpus", "no_l3", "snc2"}) {
    INFO(name);
    const auto t = SysfsTopology::all_online(tree(name));
    CHECK_FALSE(t.has_clusters());
    for (CpuId c = 0; c < t.cpu_count(); ++c)
      for (std::uint32_t i = 0; i < t.level_count(c); ++i) CHECK(t.level_kind(c, i) != LevelKind::cluster);
  }
}

TEST_CASE("an allowed set shrinks the clusters it cuts", "[sysfs][cluster][affinity]") {
  // cluster_l2 restricted to OS CPUs 0, 1 and 4: dense 0, 1 (cluster {0,1})
  // and 2 (cluster {2}, no bigger than its core). LLC {0,1,2}.
  //   CPU 0: cluster {0,1} (2) < llc (3) -> cluster, llc;
  //   CPU 2: cluster 1 = core 1           -> llc.
  const SysfsTopology t(tree("cluster_l2"), V{0, 1, 4});
  REQUIRE(t.cpu_count() == 3);
  CHECK(kinds(t, 0) == std::vector<LevelKind>{LevelKind::cluster, LevelKind::llc});
  CHECK(vec(t.level_cpus(0, 0)) == V{0, 1});
  CHECK(kinds(t, 2) == std::vector<LevelKind>{LevelKind::llc});
  CHECK(t.cluster_size(2) == 1);
  conforms(t);
}

TEST_CASE("bad cluster lists raise SysfsError or TopologyError", "[sysfs][cluster][errors]") {
  SECTION("a malformed cluster_cpus_list") {
    TreeCopy t("cluster_l2");
    t.write("cpu/cpu6/topology/cluster_cpus_list", "4-\n");
    expect_sysfs_error([&] { (void)SysfsTopology::all_online(t.root); },
                       "cpu/cpu6/topology/cluster_cpus_list");
  }
  SECTION("a cluster list that leaves out its own CPU") {
    TreeCopy t("cluster_l2");
    t.write("cpu/cpu6/topology/cluster_cpus_list", "0-3\n");
    expect_sysfs_error([&] { (void)SysfsTopology::all_online(t.root); },
                       "cpu/cpu6/topology/cluster_cpus_list");
  }
  SECTION("a cluster across two LLCs") {
    // Split the L3 into {0-3} and {4-7} but keep one cluster of all 8.
    TreeCopy t("cluster_l2");
    for (int c = 0; c < 8; ++c) {
      const std::string dir = "cpu/cpu" + std::to_string(c);
      t.write(dir + "/cache/index3/shared_cpu_list", c < 4 ? "0-3\n" : "4-7\n");
      t.write(dir + "/topology/cluster_cpus_list", "0-7\n");
    }
    CHECK_THROWS_WITH(SysfsTopology::all_online(t.root),
                      Catch::Contains("cpu 4: a cluster lies in one LLC") &&
                          Catch::Contains(t.root.string()));
  }
  SECTION("a CPU without the file is a cluster of its own core") {
    // CPU 7 loses its file: clusters {0-3}, {4,5,6}, {7}. CPU 7 then has
    // llc only, CPU 5 a 3-CPU cluster.
    TreeCopy t("cluster_l2");
    t.remove("cpu/cpu7/topology/cluster_cpus_list");
    const auto topo = SysfsTopology::all_online(t.root);
    CHECK(kinds(topo, 7) == std::vector<LevelKind>{LevelKind::llc});
    CHECK(vec(topo.level_cpus(5, 0)) == V{4, 5, 6});
    conforms(topo);
  }
}

TEST_CASE("an allowed set restricts and re-indexes the CPUs", "[sysfs][affinity]") {
  // OS CPUs 3 and 11 are one core of socket 0; 12 is on socket 1; 40 does
  // not exist and is ignored.
  const SysfsTopology t(tree("intel_2s_smt"), V{12, 3, 11, 40});
  REQUIRE(t.cpu_count() == 3);
  CHECK(t.os_cpu(0) == 3);
  CHECK(t.os_cpu(1) == 11);
  CHECK(t.os_cpu(2) == 12);
  CHECK(t.from_os_cpu(4) == taskplace::no_cpu);
  CHECK(vec(t.core_cpus(1)) == V{0, 1});
  CHECK(t.llc_size(2) == 1);
  CHECK(t.node_of(2) != t.node_of(0));
  // The LLC level equals the core here (degenerate), the node too: smt, machine.
  CHECK(kinds(t, 0) == std::vector<LevelKind>{LevelKind::smt, LevelKind::machine});
  conforms(t);
  CHECK_THROWS_WITH(SysfsTopology(tree("offline_cpus"), V{2, 5}),
                    Catch::Contains("no usable CPU") && Catch::Contains("0-1,3-4,6-7"));
}

TEST_CASE("missing and malformed files raise SysfsError naming the file", "[sysfs][errors]") {
  SECTION("a bad cpulist in cpu/online") {
    TreeCopy t("vm2");
    t.write("cpu/online", "0-x\n");
    expect_sysfs_error([&] { (void)SysfsTopology::all_online(t.root); }, "cpu/online");
  }
  SECTION("no tree at all") {
    expect_sysfs_error([&] { (void)SysfsTopology::all_online(tree("does-not-exist")); }, "cpu/online");
  }
  SECTION("a missing sibling list") {
    TreeCopy t("vm2");
    t.remove("cpu/cpu1/topology/core_cpus_list");
    expect_sysfs_error([&] { (void)SysfsTopology::all_online(t.root); },
                       "cpu/cpu1/topology/core_cpus_list");
  }
  SECTION("a reversed range in a cache's shared_cpu_list") {
    TreeCopy t("vm2");
    t.write("cpu/cpu0/cache/index3/shared_cpu_list", "1-0\n");
    expect_sysfs_error([&] { (void)SysfsTopology::all_online(t.root); },
                       "cpu/cpu0/cache/index3/shared_cpu_list");
  }
  SECTION("a cache level that is not a number") {
    TreeCopy t("vm2");
    t.write("cpu/cpu1/cache/index2/level", "two\n");
    expect_sysfs_error([&] { (void)SysfsTopology::all_online(t.root); }, "cpu/cpu1/cache/index2/level");
  }
  SECTION("a list that leaves out its own CPU") {
    TreeCopy t("vm2");
    t.write("cpu/cpu1/topology/core_cpus_list", "0\n");
    expect_sysfs_error([&] { (void)SysfsTopology::all_online(t.root); },
                       "cpu/cpu1/topology/core_cpus_list");
  }
  SECTION("a missing node cpulist") {
    TreeCopy t("intel_2s_smt");
    t.remove("node/node1/cpulist");
    expect_sysfs_error([&] { (void)SysfsTopology::all_online(t.root); }, "node/node1/cpulist");
  }
  SECTION("a CPU in no node") {
    TreeCopy t("vm2");
    t.write("node/node0/cpulist", "0\n");
    expect_sysfs_error([&] { (void)SysfsTopology::all_online(t.root); }, "node/online");
  }
}

TEST_CASE("contradictory masks raise TopologyError naming the tree", "[sysfs][errors]") {
  // CPU 0 and 1 claim to be SMT siblings, but each has its own L3.
  TreeCopy t("vm2");
  t.write("cpu/cpu0/topology/core_cpus_list", "0-1\n");
  t.write("cpu/cpu1/topology/core_cpus_list", "0-1\n");
  t.write("cpu/cpu0/cache/index3/shared_cpu_list", "0\n");
  t.write("cpu/cpu1/cache/index3/shared_cpu_list", "1\n");
  CHECK_THROWS_WITH(SysfsTopology::all_online(t.root),
                    Catch::Contains("SMT siblings share an LLC") && Catch::Contains(t.root.string()));
}

TEST_CASE("a CPU without cache information falls back to its package", "[sysfs]") {
  TreeCopy t("vm2");
  t.remove("cpu/cpu0/cache");
  t.remove("cpu/cpu1/cache");
  t.write("cpu/cpu0/topology/package_cpus_list", "0-1\n");
  t.write("cpu/cpu1/topology/package_cpus_list", "0-1\n");
  const auto topo = SysfsTopology::all_online(t.root);
  CHECK(topo.llc_size(0) == 2);
  // And with no package list either, the error names the file it wanted.
  t.remove("cpu/cpu1/topology/package_cpus_list");
  expect_sysfs_error([&] { (void)SysfsTopology::all_online(t.root); },
                     "cpu/cpu1/topology/package_cpus_list");
}

TEST_CASE("this machine's sysfs loads and conforms", "[sysfs][live]") {
  const fs::path root = SysfsTopology::default_root;
  if (!fs::exists(root / "cpu" / "online") || !fs::exists(root / "cpu" / "cpu0" / "topology")) {
    WARN("skipped: " << root.string() << " lacks cpu/online or cpu0/topology");
    return;
  }
  const SysfsTopology mine;  // this process's affinity
  const auto all = SysfsTopology::all_online();
  CHECK(mine.cpu_count() >= 1);
  CHECK(mine.cpu_count() <= all.cpu_count());
  const auto affinity = taskplace::detail::sysfs_affinity();
#ifdef __linux__
  REQUIRE(affinity);  // sched_getaffinity always answers on Linux
#endif
  if (affinity) {
    CHECK(mine.cpu_count() <= affinity->size());
    for (CpuId c = 0; c < mine.cpu_count(); ++c)
      CHECK(std::binary_search(affinity->begin(), affinity->end(), mine.os_cpu(c)));
  }
  conforms(mine);
  conforms(all);
}
