// Fuzz target: SysfsTopology over a fake sysfs tree written from the input.
// The files' contents (cpu/online, node/online, nodeN/cpulist,
// core_cpus_list or thread_siblings_list, package_cpus_list, cache/indexK
// type, level and shared_cpu_list) come from the fuzzer, as does which of
// them exist. Every tree either throws SysfsError / TopologyError or gives
// a topology that passes testing::check_topology.
#include <stdlib.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "fuzz_support.hpp"
#include "taskplace/testing/topology_conformance.hpp"
#include "taskplace/topology/sysfs.hpp"

namespace {

namespace fs = std::filesystem;

const fs::path& scratch() {
  static const fs::path root = [] {
    std::string tmpl = (fs::temp_directory_path() / "taskplace-fuzz-sysfs-XXXXXX").string();
    if (::mkdtemp(tmpl.data()) == nullptr) std::abort();
    return fs::path(tmpl);
  }();
  return root;
}

void put(const fs::path& file, const std::string& text) {
  fs::create_directories(file.parent_path());
  std::ofstream(file, std::ios::binary) << text;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace taskplace;
  fuzz::Bytes in(data, size);
  const fs::path root = scratch() / "sys";
  fs::remove_all(root);
  const std::uint32_t n = in.below(6) + 1;
  put(root / "cpu" / "online", in.text());
  if (in.flag()) {
    put(root / "node" / "online", in.text());
    put(root / "node" / "node0" / "cpulist", in.text());
    if (in.flag()) put(root / "node" / "node1" / "cpulist", in.text());
  }
  static const char* const types[] = {"Unified", "Data", "Instruction", "Unified\n"};
  for (std::uint32_t c = 0; c < n; ++c) {
    const fs::path dir = root / "cpu" / ("cpu" + std::to_string(c));
    const std::uint8_t which = in.u8();
    if (which & 1u) put(dir / "topology" / "core_cpus_list", in.text());
    if (which & 2u) put(dir / "topology" / "thread_siblings_list", in.text());
    if (which & 4u) put(dir / "topology" / "package_cpus_list", in.text());
    const std::uint32_t caches = (which >> 3) % 4u;
    for (std::uint32_t k = 0; k < caches; ++k) {
      const fs::path idx = dir / "cache" / ("index" + std::to_string(k));
      const std::uint8_t t = in.u8();
      put(idx / "type", t < 200 ? std::string(types[t % 4]) : in.text(16));
      put(idx / "level", in.text(8));
      put(idx / "shared_cpu_list", in.text());
    }
  }
  std::vector<CpuId> allowed;
  const std::uint8_t mask = in.u8();
  for (CpuId c = 0; c < 8; ++c)
    if (mask >> c & 1u) allowed.push_back(c);
  try {
    const SysfsTopology t = (mask & 0x80u) ? SysfsTopology::all_online(root) : SysfsTopology(root, allowed);
    FUZZ_CHECK(t.cpu_count() >= 1 && t.cpu_count() <= n);
    const auto v = testing::check_topology(t);
    if (!v.empty()) {
      std::fprintf(stderr, "%s: %s\n", v.front().rule.c_str(), v.front().detail.c_str());
      FUZZ_CHECK(v.empty());
    }
    for (CpuId c = 0; c < t.cpu_count(); ++c) FUZZ_CHECK(t.from_os_cpu(t.os_cpu(c)) == c);
  } catch (const SysfsError&) {
  } catch (const TopologyError&) {
  }
  return 0;
}
