// Tests for taskplace/topology/hwloc.hpp: HwlocTopology on hwloc synthetic
// topologies and on this machine, compared with SysfsTopology. Built only
// where CMake found hwloc (target taskplace::hwloc).
#include <catch2/catch.hpp>

#include <filesystem>
#include <set>
#include <vector>

#include "taskplace/testing/topology_conformance.hpp"
#include "taskplace/topology/hwloc.hpp"
#include "taskplace/topology/sysfs.hpp"

using taskplace::CpuId;
using taskplace::HwlocTopology;
using taskplace::LevelKind;
using V = std::vector<CpuId>;

namespace {

template <class R>
V vec(const R& r) {
  return V(r.begin(), r.end());
}

template <class T>
std::vector<LevelKind> kinds(const T& t, CpuId c) {
  std::vector<LevelKind> out;
  for (std::uint32_t i = 0; i < t.level_count(c); ++i) out.push_back(t.level_kind(c, i));
  return out;
}

// The partition a topology's member function makes, as a set of OS-CPU sets.
template <class T, class F>
std::set<V> partition(const T& t, F cpus_of) {
  std::set<V> out;
  for (CpuId c = 0; c < t.cpu_count(); ++c) {
    V os;
    for (CpuId m : cpus_of(t, c)) os.push_back(t.os_cpu(m));
    out.insert(os);
  }
  return out;
}

template <class T>
void conforms(const T& t) {
  const auto v = taskplace::testing::check_topology(t);
  for (const auto& x : v) UNSCOPED_INFO(x.cpu << " " << x.rule << ": " << x.detail);
  CHECK(v.empty());
}

}  // namespace

TEST_CASE("an hwloc synthetic two-socket SMT box has the expected groups", "[hwloc]") {
  // 2 packages x 1 L3 x 4 cores x 2 PUs, logical (nested) numbering.
  const auto t = HwlocTopology::synthetic("pack:2 l3:1 core:4 pu:2");
  REQUIRE(t.cpu_count() == 16);
  CHECK(vec(t.core_cpus(5)) == V{4, 5});
  CHECK(vec(t.llc_cpus(9)) == V{8, 9, 10, 11, 12, 13, 14, 15});
  CHECK(t.node_size(0) == 16);  // one NUMA node unless the description names more
  CHECK(kinds(t, 0) == std::vector<LevelKind>{LevelKind::smt, LevelKind::llc, LevelKind::node});
  conforms(t);
}

TEST_CASE("hwloc NUMA nodes and several L3s per package are read", "[hwloc]") {
  const auto t = HwlocTopology::synthetic("numa:2 pack:1 l3:2 core:4 pu:2");
  REQUIRE(t.cpu_count() == 32);
  CHECK(t.llc_size(0) == 8);
  CHECK(t.node_size(31) == 16);
  CHECK(t.table().llc_count() == 4);
  CHECK(kinds(t, 0) ==
        std::vector<LevelKind>{LevelKind::smt, LevelKind::llc, LevelKind::node, LevelKind::machine});
  conforms(t);
  // SNC: two nodes inside one L3. The scheduler's view cuts the L3 at the
  // nodes (x86 match_llc(): SNC nodes do not share the LLC); the hardware
  // view keeps one LLC, and the nodes inside it are no level.
  const auto snc = HwlocTopology::synthetic("pack:1 l3:1 numa:2 core:4 pu:1");
  CHECK(snc.node_size(0) == 4);
  CHECK(snc.llc_size(0) == 4);
  CHECK(snc.llc_of(3) != snc.llc_of(4));
  CHECK(kinds(snc, 0) == std::vector<LevelKind>{LevelKind::llc, LevelKind::machine});
  conforms(snc);
  const auto hw = HwlocTopology::synthetic("pack:1 l3:1 numa:2 core:4 pu:1", taskplace::LlcView::hardware);
  CHECK(hw.llc_size(0) == 8);
  CHECK(kinds(hw, 0) == std::vector<LevelKind>{LevelKind::llc});
  conforms(hw);
}

TEST_CASE("an L2 shared by several cores is an hwloc cluster; a private one is not", "[hwloc][cluster]") {
  // 1 package, one L3, two L2s each shared by 4 single-PU cores: clusters
  // {0-3} and {4-7}, levels [cluster, llc] on every CPU.
  const auto t = HwlocTopology::synthetic("pack:1 l3:1 l2:2 core:4 pu:1");
  REQUIRE(t.cpu_count() == 8);
  CHECK(t.has_clusters());
  CHECK(kinds(t, 5) == std::vector<LevelKind>{LevelKind::cluster, LevelKind::llc});
  CHECK(vec(t.level_cpus(5, 0)) == V{4, 5, 6, 7});
  CHECK(vec(t.llc_cpus(5)) == V{0, 1, 2, 3, 4, 5, 6, 7});
  conforms(t);
  // A private L2 per SMT core: each core is its own cluster, no level.
  const auto p = HwlocTopology::synthetic("pack:1 l3:1 l2:4 core:1 pu:2");
  REQUIRE(p.cpu_count() == 8);
  CHECK_FALSE(p.has_clusters());
  CHECK(kinds(p, 3) == std::vector<LevelKind>{LevelKind::smt, LevelKind::llc});
  conforms(p);
}

TEST_CASE("an hwloc machine without caches uses the package, then the machine", "[hwloc]") {
  const auto t = HwlocTopology::synthetic("core:4 pu:2");
  CHECK(t.llc_size(0) == 8);
  conforms(t);
  CHECK_THROWS_WITH(HwlocTopology::synthetic("not a topology"), Catch::Contains("not a topology"));
}

TEST_CASE("hwloc and sysfs agree on this machine", "[hwloc][live]") {
  if (!std::filesystem::exists("/sys/devices/system/cpu/online")) {
    WARN("skipped: no /sys/devices/system/cpu/online");
    return;
  }
  const HwlocTopology h;
  const taskplace::SysfsTopology s;
  conforms(h);
  REQUIRE(h.cpu_count() == s.cpu_count());
  for (CpuId c = 0; c < h.cpu_count(); ++c) CHECK(h.os_cpu(c) == s.os_cpu(c));
  auto core = [](const auto& t, CpuId c) { return t.core_cpus(c); };
  auto llc = [](const auto& t, CpuId c) { return t.llc_cpus(c); };
  CHECK(partition(h, core) == partition(s, core));
  // Without cache entries in sysfs (some virtual machines) SysfsTopology
  // falls back to the package for the LLC, while hwloc reads the caches
  // from CPUID, which a hypervisor may describe per core: the two sources
  // then disagree by design, and only the cores are compared.
  if (!std::filesystem::exists("/sys/devices/system/cpu/cpu0/cache/index0")) {
    WARN("LLCs not compared: sysfs lists no caches on this machine");
    return;
  }
  CHECK(partition(h, llc) == partition(s, llc));
}
