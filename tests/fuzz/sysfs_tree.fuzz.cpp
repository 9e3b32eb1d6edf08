// Fuzz target: SysfsTopology over a hostile file tree built from the input.
// Where the `sysfs` target varies the files' text, this one varies what
// each path is: a regular file (a kernel-like default, a cpulist made from
// a bit mask, raw text, an empty file, one past the size bound), a
// directory, a symbolic link (to itself, to another path of the tree,
// which can close a loop, to /dev/zero, to nothing), a FIFO with no
// writer, or nothing. Every tree either throws SysfsError / TopologyError
// or gives a topology that passes testing::check_topology with a bijective
// OS mapping; any other exception, a hang (a FIFO opened for reading:
// libFuzzer's -timeout) or running out of memory (a device read whole) is
// a finding. An input of zeros is a consistent tree of four CPUs.
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>
#include <vector>

#include "fuzz_support.hpp"
#include "taskplace/testing/topology_conformance.hpp"
#include "taskplace/topology/sysfs.hpp"

namespace {

namespace fs = std::filesystem;

// A folder of its own, in memory (/dev/shm) where there is one: each input
// writes some 70 files and folders. Removed at exit (never freed: the exit
// handler reads it).
fs::path* scratch_root = nullptr;

void remove_scratch() {
  std::error_code ec;
  if (scratch_root != nullptr) fs::remove_all(*scratch_root, ec);
}

const fs::path& scratch() {
  if (scratch_root == nullptr) {
    std::error_code ec;
    const fs::path base = ::access("/dev/shm", W_OK) == 0 ? fs::path("/dev/shm") : fs::temp_directory_path(ec);
    std::string tmpl = (base / "taskplace-fuzz-sysfs-tree-XXXXXX").string();
    if (::mkdtemp(tmpl.data()) == nullptr) std::abort();
    scratch_root = new fs::path(tmpl);
    std::atexit(remove_scratch);
  }
  return *scratch_root;
}

// One path of the tree: a folder (holds others) or a file, with the text a
// kernel would write there for a machine of n CPUs, one core each, one L3
// and one node (the default an input byte of 0 picks).
struct Slot {
  std::string rel;
  bool folder;
  std::string text;
};

std::vector<Slot> slots(std::uint32_t n) {
  const std::string all = "0-" + std::to_string(n - 1) + "\n";
  std::vector<Slot> s{{"cpu", true, ""}, {"cpu/online", false, all}, {"node", true, ""},
                      {"node/online", false, "0\n"}, {"node/node0", true, ""}, {"node/node0/cpulist", false, all},
                      {"node/node1", true, ""}, {"node/node1/cpulist", false, "\n"}};
  for (std::uint32_t c = 0; c < n; ++c) {
    const std::string cpu = "cpu/cpu" + std::to_string(c);
    const std::string own = std::to_string(c) + "\n";
    for (const Slot& x : std::vector<Slot>{{cpu, true, ""},
                                           {cpu + "/topology", true, ""},
                                           {cpu + "/topology/core_cpus_list", false, own},
                                           {cpu + "/topology/thread_siblings_list", false, own},
                                           {cpu + "/topology/cluster_cpus_list", false, own},
                                           {cpu + "/topology/package_cpus_list", false, all},
                                           {cpu + "/cache", true, ""},
                                           {cpu + "/cache/index0", true, ""},
                                           {cpu + "/cache/index0/type", false, "Data\n"},
                                           {cpu + "/cache/index0/level", false, "1\n"},
                                           {cpu + "/cache/index0/shared_cpu_list", false, own},
                                           {cpu + "/cache/index3", true, ""},
                                           {cpu + "/cache/index3/type", false, "Unified\n"},
                                           {cpu + "/cache/index3/level", false, "3\n"},
                                           {cpu + "/cache/index3/shared_cpu_list", false, all}})
      s.push_back(x);
  }
  return s;
}

// A cpulist of the CPUs whose bits are set in `mask`, as the kernel prints it.
std::string cpulist(std::uint8_t mask) {
  std::vector<taskplace::CpuId> cpus;
  for (taskplace::CpuId c = 0; c < 8; ++c)
    if (mask >> c & 1u) cpus.push_back(c);
  return taskplace::detail::format_cpulist(cpus) + "\n";
}

void put(const fs::path& file, const std::string& text) { std::ofstream(file, std::ios::binary) << text; }

// Makes `p` a symbolic link chosen by the input (failures leave it absent).
void make_link(fuzz::Bytes& in, const fs::path& root, const fs::path& p, const std::vector<Slot>& all) {
  const std::uint8_t t = in.u8();
  fs::path target;
  switch (t % 5u) {
    case 0: target = p.filename(); break;                  // itself: ELOOP
    case 1: target = root / all[t / 5u % all.size()].rel; break;  // another path: may close a loop
    case 2: target = "/dev/zero"; break;
    case 3: target = "/dev/null"; break;
    default: target = root / "nowhere"; break;            // dangling
  }
  std::error_code ec;
  fs::create_symlink(target, p, ec);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace taskplace;
  fuzz::Bytes in(data, size);
  const fs::path root = scratch() / "sys";
  std::error_code ec;
  fs::remove_all(root, ec);  // does not follow links
  fs::create_directories(root);
  const std::uint32_t n = 4 - in.below(4);  // 4 CPUs for an input of zeros
  const std::vector<Slot> all = slots(n);
  for (const Slot& s : all) {
    const fs::path p = root / s.rel;
    // A path whose folder is not a real folder (a file, a link, nothing)
    // cannot be made: the slot stays as the folder makes it.
    if (!fs::is_directory(fs::symlink_status(p.parent_path(), ec)) || fs::exists(fs::symlink_status(p, ec)))
      continue;
    const std::uint8_t k = in.u8();
    if (s.folder) {
      switch (k % 8u) {
        case 5: break;  // absent
        case 6: make_link(in, root, p, all); break;
        case 7: put(p, in.text(16)); break;
        default: fs::create_directory(p, ec); break;
      }
      continue;
    }
    switch (k % 16u) {
      case 8: put(p, cpulist(in.u8())); break;
      case 9: put(p, in.text(24)); break;
      case 10: break;  // absent
      case 11: fs::create_directories(p / "child", ec); break;
      case 12: make_link(in, root, p, all); break;
      case 13: (void)::mkfifo(p.c_str(), 0600); break;
      case 14: put(p, ""); break;
      case 15:
        // Rarely (it costs a megabyte): one byte past the size bound.
        if (k >= 0xf0) put(p, std::string(detail::sysfs_max_file_bytes + 1, ' '));
        else put(p, s.text);
        break;
      default: put(p, s.text); break;
    }
  }
  std::vector<CpuId> allowed;
  const std::uint8_t mask = in.u8();
  for (CpuId c = 0; c < 7; ++c)
    if (mask >> c & 1u) allowed.push_back(c);
  try {
    const SysfsTopology t = (mask & 0x80u) == 0 ? SysfsTopology::all_online(root) : SysfsTopology(root, allowed);
    FUZZ_CHECK(t.cpu_count() >= 1 && t.cpu_count() <= 8);
    const auto v = testing::check_topology(t);
    if (!v.empty()) {
      std::fprintf(stderr, "%s: %s\n", v.front().rule.c_str(), v.front().detail.c_str());
      FUZZ_CHECK(v.empty());
    }
    for (CpuId c = 0; c < t.cpu_count(); ++c) FUZZ_CHECK(t.from_os_cpu(t.os_cpu(c)) == c);
  } catch (const SysfsError& e) {
    FUZZ_CHECK(!e.file().empty());
  } catch (const TopologyError&) {
  }
  return 0;
}
