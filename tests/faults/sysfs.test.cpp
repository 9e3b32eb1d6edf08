// Fault classes of a sysfs tree that lies: files that contradict each
// other, symbolic link loops, directories, FIFOs and devices where files
// belong, files that never end. Each tree is built in a temporary folder;
// every SysfsTopology is constructed under a watchdog, so that a
// regression that blocks (a FIFO opened for reading) fails the test
// loudly instead of hanging it (CTest's TIMEOUT is the second guard).
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <functional>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include "taskplace/testing/topology_conformance.hpp"
#include "taskplace/topology/sysfs.hpp"

using namespace taskplace;
namespace fs = std::filesystem;

namespace {

// A tree of n CPUs in a fresh temporary folder, removed at the end: one
// thread per core, an L1d of its own, an L3 shared by all (index3), one
// node (node/node0) when `numa`.
struct Tree {
  fs::path root;
  explicit Tree(int n, bool numa = true) {
    static int counter = 0;
    root = fs::temp_directory_path() /
           ("taskplace-hostile-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    fs::remove_all(root);
    const std::string all = "0-" + std::to_string(n - 1) + "\n";
    write("cpu/online", all);
    for (int c = 0; c < n; ++c) {
      const std::string d = "cpu/cpu" + std::to_string(c) + "/";
      write(d + "topology/core_cpus_list", std::to_string(c) + "\n");
      write(d + "cache/index0/type", "Data\n");
      write(d + "cache/index0/level", "1\n");
      write(d + "cache/index0/shared_cpu_list", std::to_string(c) + "\n");
      write(d + "cache/index3/type", "Unified\n");
      write(d + "cache/index3/level", "3\n");
      write(d + "cache/index3/shared_cpu_list", all);
    }
    if (numa) {
      write("node/online", "0\n");
      write("node/node0/cpulist", all);
    }
  }
  ~Tree() {
    std::error_code ec;
    fs::remove_all(root, ec);
  }
  Tree(const Tree&) = delete;
  Tree& operator=(const Tree&) = delete;

  fs::path at(const std::string& rel) const { return root / rel; }
  void write(const std::string& rel, const std::string& text) const {
    fs::create_directories(at(rel).parent_path());
    std::ofstream(at(rel), std::ios::binary) << text;
  }
  // Replaces `rel` (file or folder) by a symbolic link to `target`.
  void link(const std::string& rel, const fs::path& target) const {
    fs::remove_all(at(rel));
    fs::create_directories(at(rel).parent_path());
    fs::create_symlink(target, at(rel));
  }
  // Replaces `rel` by a symbolic link to itself: ELOOP on every lookup.
  void loop(const std::string& rel) const { link(rel, at(rel).filename()); }
  void directory(const std::string& rel) const {
    fs::remove_all(at(rel));
    fs::create_directories(at(rel) / "child");
  }
  void fifo(const std::string& rel) const {
    fs::remove_all(at(rel));
    REQUIRE(::mkfifo(at(rel).c_str(), 0600) == 0);
  }
};

// Runs f on a thread of its own and waits at most `limit`: a constructor
// that blocks (the defect this file guards against) cannot be cancelled,
// so the watchdog reports it and ends the process with a failure, rather
// than leaving CI to time out with no word. Rethrows what f throws.
void within_deadline(const std::function<void()>& f, std::chrono::seconds limit = std::chrono::seconds{20}) {
  std::promise<void> done;
  std::future<void> result = done.get_future();
  std::thread([&f, p = std::move(done)]() mutable {
    try {
      f();
      p.set_value();
    } catch (...) {
      p.set_exception(std::current_exception());
    }
  }).detach();
  if (result.wait_for(limit) != std::future_status::ready) {
    std::fprintf(stderr, "watchdog: SysfsTopology blocked for %lld s (a FIFO opened for reading?)\n",
                 static_cast<long long>(limit.count()));
    std::fflush(stderr);
    std::_Exit(EXIT_FAILURE);
  }
  result.get();
}

// Expects SysfsError (not std::filesystem::filesystem_error, not
// std::bad_alloc, not a hang) whose file() is `file` and whose message
// names it and contains `says`.
void expect_sysfs_error(const Tree& t, const fs::path& file, const std::string& says) {
  try {
    within_deadline([&] { (void)SysfsTopology::all_online(t.root); });
    FAIL("no SysfsError for " << file.string());
  } catch (const SysfsError& e) {
    CAPTURE(e.what());
    CHECK(e.file() == file.string());
    CHECK_THAT(e.what(), Catch::Contains(file.string()) && Catch::Contains(says));
  }
}

// Expects TopologyError whose message names both files.
void expect_topology_error(const Tree& t, const fs::path& a, const fs::path& b) {
  try {
    within_deadline([&] { (void)SysfsTopology::all_online(t.root); });
    FAIL("no TopologyError for " << a.string() << " and " << b.string());
  } catch (const TopologyError& e) {
    CAPTURE(e.what());
    CHECK_THAT(e.what(), Catch::Contains(a.string()) && Catch::Contains(b.string()));
  }
}

}  // namespace

TEST_CASE("the tree these tests start from is consistent", "[faults][sysfs]") {
  const Tree t(4);
  within_deadline([&] {
    const auto topo = SysfsTopology::all_online(t.root);
    CHECK(topo.cpu_count() == 4);
    CHECK(topo.llc_size(0) == 4);
    CHECK(testing::check_topology(topo).empty());
  });
}

// --- Files that contradict each other: a TopologyError naming both -------

TEST_CASE("siblings whose core_cpus_list disagree are a TopologyError naming both files", "[faults][sysfs]") {
  const Tree t(4);
  t.write("cpu/cpu0/topology/core_cpus_list", "0-1\n");  // cpu1's still says "1"
  expect_topology_error(t, t.at("cpu/cpu0/topology/core_cpus_list"), t.at("cpu/cpu1/topology/core_cpus_list"));
}

TEST_CASE("L3 shared_cpu_lists that disagree are a TopologyError naming both files", "[faults][sysfs]") {
  const Tree t(4);
  for (int c = 1; c < 4; ++c) t.write("cpu/cpu" + std::to_string(c) + "/cache/index3/shared_cpu_list", "1-3\n");
  // cpu0's says 0-3.
  expect_topology_error(t, t.at("cpu/cpu0/cache/index3/shared_cpu_list"),
                        t.at("cpu/cpu1/cache/index3/shared_cpu_list"));
}

TEST_CASE("cluster_cpus_lists that disagree are a TopologyError naming both files", "[faults][sysfs]") {
  const Tree t(4);
  t.write("cpu/cpu0/topology/cluster_cpus_list", "0-1\n");
  t.write("cpu/cpu1/topology/cluster_cpus_list", "1\n");
  t.write("cpu/cpu2/topology/cluster_cpus_list", "2-3\n");
  t.write("cpu/cpu3/topology/cluster_cpus_list", "2-3\n");
  expect_topology_error(t, t.at("cpu/cpu0/topology/cluster_cpus_list"),
                        t.at("cpu/cpu1/topology/cluster_cpus_list"));
}

TEST_CASE("a CPU listed by two nodes is a TopologyError naming both node files", "[faults][sysfs]") {
  const Tree t(4);
  t.write("node/online", "0-1\n");
  t.write("node/node0/cpulist", "0-2\n");
  t.write("node/node1/cpulist", "2-3\n");
  expect_topology_error(t, t.at("node/node0/cpulist"), t.at("node/node1/cpulist"));
}

TEST_CASE("a node folder whose online list is empty is a SysfsError naming node/online", "[faults][sysfs]") {
  const Tree t(4);
  t.write("node/online", "\n");
  expect_sysfs_error(t, t.at("node/online"), "lists no node");
}

// --- Symbolic link loops, directories and devices: a SysfsError ----------

TEST_CASE("a symbolic link loop anywhere in the tree is a SysfsError naming it", "[faults][sysfs]") {
  const char* const where[] = {"cpu/cpu0/cache", "cpu/cpu0/cache/index3", "cpu/cpu1/topology/cluster_cpus_list",
                               "node/online", "cpu/online", "cpu/cpu2/topology/core_cpus_list",
                               "node/node0/cpulist", "cpu/cpu3/cache/index3/type"};
  for (const char* rel : where) {
    DYNAMIC_SECTION(rel) {
      const Tree t(4);
      t.loop(rel);
      // Never std::filesystem::filesystem_error: that would escape the
      // SysfsError handler the documentation tells users to write.
      expect_sysfs_error(t, t.at(rel), "symbolic links");
    }
  }
}

TEST_CASE("cpu/online being a directory is a SysfsError naming it", "[faults][sysfs]") {
  const Tree t(2);
  t.directory("cpu/online");
  expect_sysfs_error(t, t.at("cpu/online"), "is a directory");
}

TEST_CASE("a cache type that is a directory is a SysfsError naming it, not skipped", "[faults][sysfs]") {
  const Tree t(2);
  t.directory("cpu/cpu1/cache/index3/type");
  expect_sysfs_error(t, t.at("cpu/cpu1/cache/index3/type"), "is a directory");
}

TEST_CASE("a cache index that is a file, and a cache folder that is a file, are SysfsErrors", "[faults][sysfs]") {
  SECTION("index3 a file") {
    const Tree t(2);
    fs::remove_all(t.at("cpu/cpu0/cache/index3"));
    t.write("cpu/cpu0/cache/index3", "Unified\n");
    expect_sysfs_error(t, t.at("cpu/cpu0/cache/index3"), "is not a directory");
  }
  SECTION("cache a file") {
    const Tree t(2);
    fs::remove_all(t.at("cpu/cpu0/cache"));
    t.write("cpu/cpu0/cache", "");
    expect_sysfs_error(t, t.at("cpu/cpu0/cache"), "is not a directory");
  }
}

// --- Files that never end or never answer --------------------------------

TEST_CASE("cpu/online linked to /dev/zero is a SysfsError, not std::bad_alloc", "[faults][sysfs]") {
  if (!fs::exists("/dev/zero")) {
    WARN("no /dev/zero here: nothing to link");
    return;
  }
  const Tree t(2);
  t.link("cpu/online", "/dev/zero");
  expect_sysfs_error(t, t.at("cpu/online"), "not a regular file");
}

TEST_CASE("a regular file longer than the bound is a SysfsError that says so", "[faults][sysfs]") {
  const Tree t(2);
  // Spaces around a valid list: it would parse, were it read whole.
  t.write("cpu/cpu1/topology/core_cpus_list", std::string(detail::sysfs_max_file_bytes, ' ') + "1\n");
  expect_sysfs_error(t, t.at("cpu/cpu1/topology/core_cpus_list"),
                     "longer than " + std::to_string(detail::sysfs_max_file_bytes) + " bytes");
  // At the bound it is read (and parses).
  t.write("cpu/cpu1/topology/core_cpus_list", std::string(detail::sysfs_max_file_bytes - 2, ' ') + "1\n");
  within_deadline([&] { CHECK(SysfsTopology::all_online(t.root).cpu_count() == 2); });
}

TEST_CASE("a FIFO with no writer in place of a file is a SysfsError, and never blocks", "[faults][sysfs]") {
  for (const char* rel : {"cpu/online", "cpu/cpu1/topology/core_cpus_list", "node/online",
                          "cpu/cpu0/cache/index3/shared_cpu_list"}) {
    DYNAMIC_SECTION(rel) {
      const Tree t(2);
      t.fifo(rel);
      expect_sysfs_error(t, t.at(rel), "not a regular file");
    }
  }
}
