// Fault classes of the machine: a CPU going offline while tasks still name
// it, affinity masks with one CPU or none, topologies with one CPU, with
// thousands, and with no cache information.
#include <catch2/catch.hpp>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <unistd.h>
#include <string>
#include <vector>

#include "taskplace/testing/machine.hpp"
#include "taskplace/testing/topology_conformance.hpp"
#include "taskplace/topology/sysfs.hpp"
#include "taskplace/topology/table.hpp"
#include "taskplace/topology/uniform.hpp"
#include "taskplace/wake_placer.hpp"

using namespace taskplace;
using namespace std::chrono_literals;
using testing::CpuMask;
using testing::ScriptedMachine;

namespace {

template <class Placer>
typename Placer::Wakeup wakeup(typename Placer::task_state& waker, typename Placer::task_state& wakee,
                               CpuId waking, CpuId prev) {
  return typename Placer::Wakeup{.waker = &waker, .waker_key = 1, .wakee = &wakee, .wakee_key = 2,
                                 .waking_cpu = waking, .prev_cpu = prev};
}

// A fake sysfs tree in a fresh temporary directory, removed at the end.
struct FakeSysfs {
  std::filesystem::path root;
  explicit FakeSysfs(const std::string& name)
      : root(std::filesystem::temp_directory_path() / ("taskplace-faults-" + name + "-" +
                                                       std::to_string(::getpid()))) {
    std::filesystem::remove_all(root);
  }
  ~FakeSysfs() { std::filesystem::remove_all(root); }
  void write(const std::string& rel, const std::string& text) const {
    std::filesystem::create_directories((root / rel).parent_path());
    std::ofstream(root / rel) << text;
  }
};

}  // namespace

TEST_CASE("a wake-up naming an offline previous CPU is placed as if prev were the waking CPU",
          "[faults][topology][wake_placer]") {
  // 8 CPUs, then CPUs 6 and 7 go offline: the embedder rebuilds the
  // topology (6 CPUs) and the placer; the task states are kept.
  const TableTopology before({0, 0, 1, 1, 2, 2, 3, 3}, {0, 0, 0, 0, 0, 0, 0, 0}, {0, 0, 0, 0, 0, 0, 0, 0});
  using Placer = WakePlacer<TableTopology>;
  Placer::task_state waker, wakee;
  {
    const Placer p(before);
    ScriptedMachine<> m(8);
    m.all_busy().idle(7);
    const auto got = p.place(wakeup<Placer>(waker, wakee, 0, 7), m, 1s);
    REQUIRE(got.cpu == 7);  // prev idle: the wakee goes home
  }
  const TableTopology after({0, 0, 1, 1, 2, 2}, {0, 0, 0, 0, 0, 0}, {0, 0, 0, 0, 0, 0});
  const Placer p(after);
  ScriptedMachine<> m(6);
  m.all_busy();
  wakee.recent_cpu = 7;  // stale: names the offline CPU
  for (CpuId stale : {CpuId{6}, CpuId{7}, no_cpu}) {
    const Placement got = p.place(wakeup<Placer>(waker, wakee, 2, stale), m, 2s);
    CHECK(got.cpu < 6);
    CHECK(got.target == 2);  // the invalid prev is the waking CPU
    CHECK(got.affine == AffineReason::same_cpu);
    const auto v = testing::check_placement(after, m, AnyCpu{}, testing::PlacementQuery{2, stale}, got);
    CHECK(v.empty());
  }
  // Range-checked, never followed out of range: the search replaced the
  // stale 7 with the prev it used, the waking CPU (select_idle_sibling's
  // recent_used_cpu update).
  CHECK(wakee.recent_cpu == 2);
}

TEST_CASE("a topology refreshed from sysfs after a CPU goes offline drops it and keeps dense ids",
          "[faults][topology][sysfs]") {
  FakeSysfs fs("offline");
  auto cpu = [&](int c) {
    const std::string d = "cpu/cpu" + std::to_string(c) + "/";
    fs.write(d + "topology/core_cpus_list", std::to_string(c) + "\n");
    fs.write(d + "cache/index3/type", "Unified\n");
    fs.write(d + "cache/index3/level", "3\n");
    fs.write(d + "cache/index3/shared_cpu_list", "0-3\n");
  };
  for (int c = 0; c < 4; ++c) cpu(c);
  fs.write("cpu/online", "0-3\n");
  const auto t4 = SysfsTopology::all_online(fs.root);
  REQUIRE(t4.cpu_count() == 4);
  fs.write("cpu/online", "0-1,3\n");  // cpu2 goes offline; its directory stays, as in sysfs
  const auto t3 = SysfsTopology::all_online(fs.root);
  CHECK(t3.cpu_count() == 3);
  CHECK(t3.from_os_cpu(2) == no_cpu);
  CHECK(t3.from_os_cpu(3) == 2);  // dense ids close the gap
  CHECK(t3.llc_size(0) == 3);     // shared_cpu_list still says 0-3; only online CPUs count
  CHECK(testing::check_topology(t3).empty());
}

TEST_CASE("an affinity mask of one CPU always gets that CPU", "[faults][topology][wake_placer]") {
  const UniformTopology topo{1, 1, 4, 2};
  using Placer = WakePlacer<UniformTopology>;
  const Placer p(topo);
  Placer::task_state waker, wakee;
  ScriptedMachine<> m(8);
  m.all_idle();
  for (CpuId only = 0; only < 8; ++only) {
    const auto mask = CpuMask::only(8, {only});
    const Placement got = p.place(wakeup<Placer>(waker, wakee, 3, 5), m, 1s, mask);
    CHECK(got.cpu == only);
  }
}

TEST_CASE("an empty affinity mask gives a valid CPU with reason affinity_empty", "[faults][topology][wake_placer]") {
  const UniformTopology topo{1, 1, 4, 2};
  using Placer = WakePlacer<UniformTopology>;
  const Placer p(topo);
  Placer::task_state waker, wakee;
  ScriptedMachine<> m(8);
  m.all_busy();
  const Placement got = p.place(wakeup<Placer>(waker, wakee, 3, 5), m, 1s, CpuMask::none(8));
  CHECK(got.cpu < 8);
  CHECK(got.reason == WakeReason::affinity_empty);
  CHECK(got.cpu == got.target);  // the mask is ignored: the target
}

TEST_CASE("a one-CPU machine has no levels and every wake-up lands on CPU 0", "[faults][topology][wake_placer]") {
  const UniformTopology topo{1, 1, 1, 1};
  CHECK(topo.level_count(0) == 0);
  CHECK(testing::check_topology(topo).empty());
  const TableTopology table({0}, {0}, {0});
  CHECK(table.level_count(0) == 0);
  using Placer = WakePlacer<TableTopology>;
  const Placer p(table);
  Placer::task_state waker, wakee;
  ScriptedMachine<> m(1);
  m.busy(0);
  for (CpuId prev : {CpuId{0}, CpuId{1}, no_cpu}) CHECK(p.place(wakeup<Placer>(waker, wakee, 0, prev), m, 1s).cpu == 0);
}

TEST_CASE("a 4096-CPU machine conforms and places within the waking LLC", "[faults][topology][wake_placer]") {
  const UniformTopology topo{16, 8, 16, 2};  // 16 nodes x 8 LLCs x 16 cores x 2 threads
  REQUIRE(topo.cpu_count() == 4096);
  CHECK(topo.level_count(0) == 4);
  CHECK(topo.llc_size(4095) == 32);
  CHECK(LlcFactor::factor(topo, 4095) == 32);
  CHECK(testing::check_topology(topo).empty());
  using Placer = WakePlacer<UniformTopology>;
  const Placer p(topo);
  Placer::task_state waker, wakee;
  ScriptedMachine<> m(4096);
  m.all_busy().idle(4000);
  const Placement got = p.place(wakeup<Placer>(waker, wakee, 4001, 4001), m, 1s);
  CHECK(got.cpu == 4000);  // 4000 and 4001 share a core and an LLC: the scan finds it
  CHECK_THROWS_AS(topo.llc_size(4096), PreconditionError);
}

TEST_CASE("a sysfs tree without cache directories uses the package as the LLC", "[faults][topology][sysfs]") {
  FakeSysfs fs("nocache");
  fs.write("cpu/online", "0-3\n");
  for (int c = 0; c < 4; ++c) {
    const std::string d = "cpu/cpu" + std::to_string(c) + "/topology/";
    fs.write(d + "core_cpus_list", c < 2 ? "0-1\n" : "2-3\n");
    fs.write(d + "package_cpus_list", "0-3\n");
  }
  const auto t = SysfsTopology::all_online(fs.root);
  CHECK(t.llc_size(0) == 4);  // the package stands in for the missing cache
  CHECK(t.core_size(0) == 2);
  CHECK(t.node_size(0) == 4);  // no node directory: one node
  CHECK(testing::check_topology(t).empty());
  // Neither cache information nor a package list: SysfsError naming the file.
  std::filesystem::remove(fs.root / "cpu/cpu3/topology/package_cpus_list");
  try {
    (void)SysfsTopology::all_online(fs.root);
    FAIL("expected SysfsError");
  } catch (const SysfsError& e) {
    CHECK(e.file().find("cpu3/topology/package_cpus_list") != std::string::npos);
  }
}

TEST_CASE("a sysfs tree whose online CPUs are all disallowed is a TopologyError", "[faults][topology][sysfs]") {
  FakeSysfs fs("none");
  fs.write("cpu/online", "0-1\n");
  for (int c = 0; c < 2; ++c) fs.write("cpu/cpu" + std::to_string(c) + "/topology/core_cpus_list", std::to_string(c));
  CHECK_THROWS_AS(SysfsTopology(fs.root, std::vector<CpuId>{5, 6}), TopologyError);
  fs.write("cpu/online", "");  // no CPU online at all
  CHECK_THROWS_AS(SysfsTopology::all_online(fs.root), TopologyError);
}
