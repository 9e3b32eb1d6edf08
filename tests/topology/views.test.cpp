// Tests for taskplace/topology/views.hpp: range-v3 views over topologies.
// Built only where range-v3 is installed (tests/CMakeLists.txt).
#include <catch2/catch.hpp>

#include <vector>

#include <range/v3/range/conversion.hpp>
#include <range/v3/range/concepts.hpp>

#include "taskplace/testing/builders.hpp"
#include "taskplace/topology/table.hpp"
#include "taskplace/topology/uniform.hpp"
#include "taskplace/topology/views.hpp"

using taskplace::CpuId;
using taskplace::LevelKind;
using V = std::vector<CpuId>;
namespace tv = taskplace::views;

TEST_CASE("views walk the CPUs of a uniform machine", "[views]") {
  const auto t = taskplace::presets::two_node_80cpu();  // Fleming 2017, x86 numbering
  static_assert(ranges::random_access_range<decltype(tv::cpus(t))>);
  static_assert(ranges::sized_range<decltype(tv::llc_cpus(t, 0))>);
  CHECK(ranges::size(tv::cpus(t)) == 80);
  CHECK((tv::core_cpus(t, 3) | ranges::to<V>()) == V{3, 43});
  CHECK(ranges::size(tv::llc_cpus(t, 0)) == 40);
  CHECK(tv::node_cpus(t, 79)[0] == 20);  // node 1: cores 20-39, threads 20-39 and 60-79
  // One representative per LLC: the lowest CPU of each, 0 and 20.
  CHECK((tv::llcs(t) | ranges::to<V>()) == V{0, 20});
  CHECK(ranges::distance(tv::cores(t)) == 40);
  CHECK((tv::nodes(t) | ranges::to<V>()) == V{0, 20});
}

TEST_CASE("views list a CPU's levels with their spans", "[views]") {
  const auto t = taskplace::presets::epyc_2x64x2();
  std::vector<LevelKind> kinds;
  std::vector<std::size_t> sizes;
  for (auto level : tv::levels(t, 100)) {
    kinds.push_back(level.kind);
    sizes.push_back(static_cast<std::size_t>(ranges::size(level.cpus)));
  }
  // 2 threads, 8-core CCX (16 CPUs), 64-core socket (128), both sockets.
  CHECK(kinds == std::vector<LevelKind>{LevelKind::smt, LevelKind::llc, LevelKind::node,
                                         LevelKind::machine});
  CHECK(sizes == std::vector<std::size_t>{2, 16, 128, 256});
  CHECK(ranges::distance(tv::llcs(t)) == 16);
}

TEST_CASE("views work on a table topology too", "[views]") {
  const auto t = taskplace::testing::table_from_string("0 0 0|1 0 0|2 1 0|2 1 0");
  CHECK((tv::llc_cpus(t, 3) | ranges::to<V>()) == V{2, 3});
  CHECK((tv::llcs(t) | ranges::to<V>()) == V{0, 2});
  CHECK((tv::cores(t) | ranges::to<V>()) == V{0, 1, 2});
  CHECK(ranges::distance(tv::levels(t, 0)) == 2);  // llc {0,1}, node {0-3}
}
