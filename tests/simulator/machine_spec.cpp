// Tests of taskplace_sim/machine_spec.hpp: the --machine parser (presets,
// shapes, SNC, sysfs trees), its errors on bad input, and the cost model's
// hardware view of an SNC machine.
#include <catch2/catch.hpp>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>

#include "taskplace_sim/cost_model.hpp"
#include "taskplace_sim/machine_spec.hpp"

using namespace std::chrono_literals;
using namespace taskplace_sim;

TEST_CASE("a shape names sockets, LLCs, cores and threads, numbered as Linux on x86 numbers them", "[simulator][machine_spec]") {
  const MachineSpec m = parse_machine("2x1x56x2");
  const auto& t = m.topology;
  CHECK(t.cpu_count() == 224);
  CHECK(t.llc_size(0) == 112);
  CHECK(t.node_of(0) != t.node_of(56));
  CHECK(t.core_of(0) == t.core_of(112));  // smt_last: cpu 112 is cpu 0's sibling
  CHECK(m.hw.llc_bytes == 32u << 20);     // the default L3 size
  const MachineSpec nested = parse_machine("1x2x2x2,nested,llc=1536K");
  CHECK(nested.topology.core_of(0) == nested.topology.core_of(1));
  CHECK(nested.topology.llc_size(0) == 4);
  CHECK(nested.hw.llc_bytes == 1536u * 1024);
}

TEST_CASE("every preset parses and names the source's machine", "[simulator][machine_spec]") {
  for (const auto& p : machine_presets()) {
    INFO(p.name);
    const MachineSpec m = parse_machine(p.name);
    CHECK(m.name == p.name);
    CHECK(m.topology.cpu_count() > 0);
  }
  CHECK(parse_machine("wang2013").topology.cpu_count() == 12);
  CHECK(parse_machine("wang2013").topology.llc_size(0) == 6);
  CHECK(parse_machine("low2013").topology.cpu_count() == 160);
  CHECK(parse_machine("chen2023").topology.cpu_count() == 224);
  CHECK(parse_machine("big4096").topology.cpu_count() == 4096);
}

TEST_CASE("SNC: the scheduler's LLC is cut at node boundaries, the cost model keeps the shared L3", "[simulator][machine_spec]") {
  // One socket of 4 cores, SNC in two nodes: cpus 0-1 and 2-3.
  const MachineSpec snc = parse_machine("1x1x4x1,snc2");
  const MachineSpec plain = parse_machine("1x1x4x1");
  CHECK(snc.topology.llc_size(0) == 2);   // the kernel's view (x86 match_llc)
  CHECK(plain.topology.llc_size(0) == 4);
  CHECK(snc.topology.node_of(0) != snc.topology.node_of(2));
  CHECK(snc.hw.l3[0] == snc.hw.l3[2]);
  Costs c;
  c.refill_core = 8us;
  c.refill_llc = 20us;
  c.refill_node = 15us;
  const CostModel cm{snc.topology, c, snc.hw};
  // Moving between the two nodes of one L3 refills the private caches only,
  // and a message moves lines within the L3.
  CHECK(cm.distance(0, 2) == Distance::llc);
  CHECK(cm.cache_penalty(0, 2, 0, 256) == 8us);
  CHECK(cm.message_cost(0, 2) == c.line_llc * c.message_lines);
  // Two sockets: other node, other L3.
  const MachineSpec two = parse_machine("2x1x2x1");
  const CostModel cm2{two.topology, c, two.hw};
  CHECK(cm2.distance(0, 2) == Distance::other_node);
  CHECK(cm2.cache_penalty(0, 2, 0, 256) == 43us);
}

TEST_CASE("a bad --machine value is refused with what is wrong", "[simulator][machine_spec]") {
  using Catch::Contains;
  CHECK_THROWS_AS(parse_machine(""), MachineError);
  CHECK_THROWS_WITH(parse_machine(""), Contains("empty"));
  CHECK_THROWS_WITH(parse_machine("2x1x56"), Contains("four numbers") && Contains("got 3"));
  CHECK_THROWS_WITH(parse_machine("nosuchbox"), Contains("not a preset"));
  CHECK_THROWS_WITH(parse_machine("2x0x56x2"), Contains("LLCs per socket must be >= 1"));
  CHECK_THROWS_WITH(parse_machine("2x1xabcx2"), Contains("cores per LLC must be a number"));
  CHECK_THROWS_WITH(parse_machine("2x1x-4x2"), Contains("cores per LLC must be a number"));
  CHECK_THROWS_WITH(parse_machine("2x1x56x2,fast"), Contains("unknown option 'fast'"));
  CHECK_THROWS_WITH(parse_machine("2x1x56x2,snc3"), Contains("snc3 must divide the 56 cores"));
  CHECK_THROWS_WITH(parse_machine("2x3x4x1,snc2"), Contains("would cut an LLC"));
  CHECK_THROWS_WITH(parse_machine("2x1x4x2,llc="), Contains("llc= needs a size"));
  CHECK_THROWS_WITH(parse_machine("2x1x4x2,llc=12Q"), Contains("the LLC size must be a number"));
  CHECK_THROWS_WITH(parse_machine("64x64x64x64"), Contains("at most 65536 CPUs"));
  CHECK_THROWS_WITH(parse_machine("sysfs:/no/such/dir"), Contains("no such directory"));
  // The message always names the value given.
  CHECK_THROWS_WITH(parse_machine("2x1x56x2,fast"), Contains("--machine '2x1x56x2,fast'"));
}

TEST_CASE("a sysfs tree is read as the kernel exports it, with its L3 size", "[simulator][machine_spec]") {
  namespace fs = std::filesystem;
  const fs::path root = fs::temp_directory_path() / "taskplace_sim_sysfs_test";
  fs::remove_all(root);
  auto put = [](const fs::path& f, const std::string& s) {
    fs::create_directories(f.parent_path());
    std::ofstream(f) << s << "\n";
  };
  // Two cores of two threads (0,2 and 1,3), one 8 MB L3, one node.
  put(root / "cpu/online", "0-3");
  for (int c = 0; c < 4; ++c) {
    const fs::path d = root / ("cpu/cpu" + std::to_string(c));
    put(d / "topology/core_cpus_list", c % 2 == 0 ? "0,2" : "1,3");
    put(d / "topology/package_cpus_list", "0-3");
    put(d / "cache/index3/level", "3");
    put(d / "cache/index3/type", "Unified");
    put(d / "cache/index3/shared_cpu_list", "0-3");
    put(d / "cache/index3/size", "8192K");
  }
  const MachineSpec m = parse_machine("sysfs:" + root.string());
  CHECK(m.topology.cpu_count() == 4);
  CHECK(m.topology.core_of(0) == m.topology.core_of(2));
  CHECK(m.hw.llc_bytes == 8u << 20);
  // A broken tree: the error names the file.
  put(root / "cpu/cpu1/topology/core_cpus_list", "0,2");
  CHECK_THROWS_WITH(parse_machine("sysfs:" + root.string()), Catch::Contains("core_cpus_list"));
  fs::remove_all(root);
}
