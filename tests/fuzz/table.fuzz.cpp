// Fuzz target: TableTopology construction from arbitrary arrays.
// Every input either throws TopologyError or builds a topology that passes
// testing::check_topology with no violation, and whose OS mapping is a
// bijection; with cluster ids too, and ClusterFactor reads the cluster level.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "fuzz_support.hpp"
#include "taskplace/policy/llc_factor.hpp"
#include "taskplace/testing/topology_conformance.hpp"
#include "taskplace/topology/table.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace taskplace;
  fuzz::Bytes in(data, size);
  const std::uint8_t shape = in.u8();
  // Up to 64 CPUs; lengths may disagree on purpose (bit 7 of the shape).
  const std::size_t n = shape & 63u;
  const bool ragged = (shape & 0x80u) != 0;
  const bool with_os = (shape & 0x40u) != 0;
  // Labels from a small alphabet, so that groups actually form.
  const std::uint8_t alphabet = static_cast<std::uint8_t>(in.u8() % 16u + 1u);
  std::vector<std::uint32_t> core, llc, node;
  std::vector<CpuId> os;
  for (std::size_t c = 0; c < n; ++c) {
    core.push_back(in.u8() % alphabet);
    llc.push_back(in.u8() % alphabet);
    node.push_back(in.u8() % alphabet);
    if (with_os) {
      const std::uint8_t o = in.u8();
      os.push_back(o == 0xff ? no_cpu : o);
    }
  }
  if (ragged && !node.empty()) node.pop_back();
  // A trailing byte with bit 0 set adds a cluster id per CPU (inputs that
  // end before it build the plain table, as they always did).
  std::vector<std::uint32_t> cluster;
  const bool clustered = (in.u8() & 1u) != 0;
  if (clustered)
    for (std::size_t c = 0; c < n; ++c) cluster.push_back(in.u8() % alphabet);
  try {
    const TableTopology t = clustered ? TableTopology::with_clusters(core, cluster, llc, node, os)
                                      : TableTopology(core, llc, node, os);
    FUZZ_CHECK(t.cpu_count() == n);
    // ClusterFactor: the cluster level's size where there is one, else the
    // LLC's; never 0.
    for (CpuId c = 0; c < t.cpu_count(); ++c) {
      const std::uint32_t f = ClusterFactor::factor(t, c);
      FUZZ_CHECK(f >= 1);
      bool level = false;
      for (std::uint32_t i = 0; i < t.level_count(c); ++i)
        if (t.level_kind(c, i) == LevelKind::cluster) {
          level = true;
          FUZZ_CHECK(f == t.level_cpus(c, i).size());
          FUZZ_CHECK(f == t.cluster_size(c));
        }
      if (!level) FUZZ_CHECK(f == t.llc_size(c));
    }
    const auto v = testing::check_topology(t);
    if (!v.empty()) {
      std::fprintf(stderr, "%s: %s\n", v.front().rule.c_str(), v.front().detail.c_str());
      FUZZ_CHECK(v.empty());
    }
    for (CpuId c = 0; c < t.cpu_count(); ++c) FUZZ_CHECK(t.from_os_cpu(t.os_cpu(c)) == c);
  } catch (const TopologyError&) {
    // the defined outcome for inconsistent arrays
  }
  return 0;
}
