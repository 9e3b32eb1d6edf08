// Tests for taskplace/policy/llc_factor.hpp (kernel sd_llc_size) and the
// factor part of taskplace/testing/flip_conformance.hpp.
#include "taskplace/policy/llc_factor.hpp"

#include <catch2/catch.hpp>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "taskplace/policy/wide_detector.hpp"
#include "taskplace/testing/flip_conformance.hpp"
#include "taskplace/topology/table.hpp"
#include "taskplace/topology/uniform.hpp"

using taskplace::ClusterFactor;
using taskplace::CoresPerLlcFactor;
using taskplace::CpuId;
using taskplace::FixedFactor;
using taskplace::LevelKind;
using taskplace::LlcFactor;
using taskplace::NodeFactor;

namespace {

// A small symmetric machine: nodes x LLCs per node x cores per LLC x
// threads per core, CPUs numbered thread-fastest (cpu = ((node * llcs +
// llc) * cores + core) * threads + thread). Models taskplace::Topology.
// `zero_sizes` makes it report sizes of 0, breaking its own invariants, to
// show the factors' clamping.
class FakeTopology {
 public:
  // Spans into a table of all ids (std::span rather than an iota view:
  // clang 14 cannot use libstdc++ 12's iota_view as a range).
  using Cpus = std::span<const CpuId>;

  FakeTopology(std::uint32_t nodes, std::uint32_t llcs_per_node, std::uint32_t cores_per_llc,
               std::uint32_t threads_per_core, bool zero_sizes = false)
      : nodes_(nodes), llcs_(llcs_per_node), cores_(cores_per_llc), threads_(threads_per_core),
        zero_(zero_sizes) {
    ids_.resize(cpu_count());
    for (CpuId c = 0; c < cpu_count(); ++c) ids_[c] = c;
  }

  std::uint32_t cpu_count() const { return nodes_ * node_span(); }
  std::uint32_t core_of(CpuId c) const { return c / threads_; }
  std::uint32_t llc_of(CpuId c) const { return c / llc_span(); }
  std::uint32_t node_of(CpuId c) const { return c / node_span(); }
  std::uint32_t core_size(CpuId) const { return zero_ ? 0 : threads_; }
  std::uint32_t llc_size(CpuId) const { return zero_ ? 0 : llc_span(); }
  std::uint32_t node_size(CpuId) const { return zero_ ? 0 : node_span(); }
  Cpus core_cpus(CpuId c) const { return block(c, threads_); }
  Cpus llc_cpus(CpuId c) const { return block(c, llc_span()); }
  Cpus node_cpus(CpuId c) const { return block(c, node_span()); }

  // Levels: SMT (if threads > 1), LLC (if bigger), node (if bigger),
  // machine (if bigger). A single CPU has none.
  std::uint32_t level_count(CpuId) const { return static_cast<std::uint32_t>(spans().size()); }
  LevelKind level_kind(CpuId, std::uint32_t i) const { return spans()[i].kind; }
  Cpus level_cpus(CpuId c, std::uint32_t i) const { return block(c, spans()[i].span); }

 private:
  struct Level {
    LevelKind kind;
    std::uint32_t span;
  };
  struct Levels {
    Level items[4];
    std::uint32_t n = 0;
    std::size_t size() const { return n; }
    const Level& operator[](std::uint32_t i) const { return items[i]; }
  };
  Levels spans() const {
    Levels out{};
    std::uint32_t last = 1;
    const Level all[] = {{LevelKind::smt, threads_},
                         {LevelKind::llc, llc_span()},
                         {LevelKind::node, node_span()},
                         {LevelKind::machine, cpu_count()}};
    for (const Level& l : all)
      if (l.span > last) {
        out.items[out.n++] = l;
        last = l.span;
      }
    return out;
  }
  std::uint32_t llc_span() const { return cores_ * threads_; }
  std::uint32_t node_span() const { return llcs_ * llc_span(); }
  Cpus block(CpuId c, std::uint32_t span) const {
    const CpuId first = c / span * span;
    return Cpus(ids_).subspan(first, span);
  }

  std::uint32_t nodes_, llcs_, cores_, threads_;
  bool zero_;
  std::vector<CpuId> ids_;
};
static_assert(taskplace::Topology<FakeTopology>);

using AllFactors = std::tuple<LlcFactor, NodeFactor, FixedFactor<1>, FixedFactor<12>,
                              CoresPerLlcFactor, ClusterFactor>;

// Every CPU of t has factor `expected` under F.
template <class F, class T>
void check_every_cpu(const T& t, std::uint32_t expected) {
  for (CpuId c = 0; c < t.cpu_count(); ++c) {
    INFO("cpu " << c);
    CHECK(F::factor(t, c) == expected);
  }
}

}  // namespace

TEST_CASE("the 12-CPU box of Wang 2013 has factor 12 under every topology factor",
          "[llc_factor]") {
  // One node, one LLC, 12 cores without SMT (Wang 2013: "12 cpu X86 server").
  const FakeTopology t(1, 1, 12, 1);
  check_every_cpu<LlcFactor>(t, 12);
  check_every_cpu<NodeFactor>(t, 12);        // patch 1/2 and 2/2 agree here
  check_every_cpu<CoresPerLlcFactor>(t, 12);
}

TEST_CASE("SMT doubles the LLC factor but not the cores-per-LLC factor", "[llc_factor]") {
  // The same 12 cores with 2 threads each: 24 CPUs share the LLC.
  const FakeTopology smt(1, 1, 12, 2);
  check_every_cpu<LlcFactor>(smt, 24);
  check_every_cpu<CoresPerLlcFactor>(smt, 12);  // 24 / 2
  check_every_cpu<NodeFactor>(smt, 24);
}

TEST_CASE("SMT makes a wake-up less likely to be wide under the LLC factor", "[llc_factor]") {
  const FakeTopology plain(1, 1, 12, 1);
  const FakeTopology smt(1, 1, 12, 2);
  // A dispatcher with 300 flips waking a worker with 13 (wide::Symmetric2015,
  // lo >= f && hi >= f*lo):
  //   no SMT, f = 12: 13 >= 12 and 300 >= 156 -> wide;
  //   SMT,    f = 24: 13 >= 24 fails          -> affine (pulled);
  //   SMT, cores-per-LLC f = 12               -> wide again.
  using W = taskplace::WideDetector<>;
  CHECK(W::wide(300, 13, LlcFactor::factor(plain, 0)));
  CHECK_FALSE(W::wide(300, 13, LlcFactor::factor(smt, 0)));
  CHECK(W::wide(300, 13, CoresPerLlcFactor::factor(smt, 0)));
  // On SMT the worker must flip 24 times and the dispatcher 576 (24*24).
  CHECK(W::wide(576, 24, LlcFactor::factor(smt, 0)));
  CHECK_FALSE(W::wide(575, 24, LlcFactor::factor(smt, 0)));
}

TEST_CASE("an AMD-shaped machine has small LLCs inside big nodes", "[llc_factor]") {
  // 2 sockets x 64 cores x 2 threads = 256 CPUs, one node per socket, an L3
  // per 8-core complex: 8 LLCs per node (several L3s per
  // socket).
  const FakeTopology amd(2, 8, 8, 2);
  REQUIRE(amd.cpu_count() == 256);
  check_every_cpu<LlcFactor>(amd, 16);          // 8 cores x 2 threads
  check_every_cpu<CoresPerLlcFactor>(amd, 8);   // 16 / 2
  check_every_cpu<NodeFactor>(amd, 128);        // 64 cores x 2 threads; the whole box is 256
  // A 56-core SMT Intel socket with one L3 for comparison: 112 CPUs, a
  // factor 7x the AMD one (docs/topology.md: 8-16x smaller on AMD).
  const FakeTopology intel(1, 1, 56, 2);
  CHECK(LlcFactor::factor(intel, 0) == 112);
  CHECK(LlcFactor::factor(intel, 0) / LlcFactor::factor(amd, 0) == 7);
  // A worker with 20 flips (wide::Symmetric2015): on AMD (f = 16) it passes
  // lo >= f, so the dispatcher needs 16*20 = 320 flips to be wide; on the
  // Intel socket (f = 112) 20 >= 112 fails and no dispatcher is wide.
  using W = taskplace::WideDetector<>;
  CHECK_FALSE(W::wide(300, 20, LlcFactor::factor(amd, 0)));  // 300 >= 16*20 = 320 fails
  CHECK(W::wide(320, 20, LlcFactor::factor(amd, 0)));        // 320 >= 320
  CHECK_FALSE(W::wide(320, 20, LlcFactor::factor(intel, 0))); // 20 >= 112 fails
}

TEST_CASE("the 80-CPU two-node box of Fleming 2017 has factor 40", "[llc_factor]") {
  // 2 nodes, one LLC each, 20 cores x 2 threads.
  const FakeTopology t(2, 1, 20, 2);
  check_every_cpu<LlcFactor>(t, 40);
  check_every_cpu<NodeFactor>(t, 40);
  check_every_cpu<CoresPerLlcFactor>(t, 20);
}

TEST_CASE("a fixed factor is the same on every CPU", "[llc_factor]") {
  const FakeTopology amd(2, 8, 8, 2);
  check_every_cpu<FixedFactor<7>>(amd, 7);
  check_every_cpu<FixedFactor<1>>(amd, 1);
  STATIC_REQUIRE(FixedFactor<4096>::value == 4096);
}

TEMPLATE_LIST_TEST_CASE("a single CPU has factor at least one", "[llc_factor]", AllFactors) {
  const FakeTopology up(1, 1, 1, 1);
  const std::uint32_t f = TestType::factor(up, 0);
  CHECK(f >= 1);
  if constexpr (!std::is_same_v<TestType, FixedFactor<12>>) CHECK(f == 1);
}

TEMPLATE_LIST_TEST_CASE("a topology reporting zero sizes still gives factor at least one",
                        "[llc_factor]", AllFactors) {
  // Breaks Topology I2 on purpose: llc_size, node_size and core_size are 0.
  // The factors clamp to 1 instead of returning 0 or dividing by zero.
  const FakeTopology broken(1, 1, 4, 2, /*zero_sizes=*/true);
  for (CpuId c = 0; c < broken.cpu_count(); ++c) {
    const std::uint32_t f = TestType::factor(broken, c);
    if constexpr (std::is_same_v<TestType, FixedFactor<12>>)
      CHECK(f == 12);
    else
      CHECK(f == 1);
  }
}

TEMPLATE_LIST_TEST_CASE("the shipped factors pass the conformance kit on several shapes",
                        "[llc_factor][conformance]", AllFactors) {
  const FakeTopology shapes[] = {{1, 1, 1, 1}, {1, 1, 12, 1}, {1, 1, 12, 2},
                                 {2, 8, 8, 2}, {2, 1, 20, 2}, {1, 1, 4, 2, true}};
  for (const auto& t : shapes) {
    const auto v = taskplace::testing::check_factor<TestType>(t);
    CHECK(v.empty());
  }
}

namespace {
// Deliberately broken: one less than the LLC size, 0 on a CPU that shares
// its LLC with nobody.
struct LlcMinusOne {
  template <taskplace::Topology T>
  static std::uint32_t factor(const T& t, CpuId c) {
    return static_cast<std::uint32_t>(t.llc_size(c)) - 1u;
  }
};
// Deliberately broken: a signed factor that goes negative.
struct SignedFactor {
  template <taskplace::Topology T>
  static int factor(const T& t, CpuId c) {
    return static_cast<int>(t.llc_size(c)) - 2;
  }
};
}  // namespace

TEST_CASE("a factor of zero is reported for every CPU", "[llc_factor][conformance]") {
  const FakeTopology no_sharing(2, 2, 1, 1);  // 4 CPUs, each its own LLC
  const auto v = taskplace::testing::check_factor<LlcMinusOne>(no_sharing);
  REQUIRE(v.size() == 4);
  for (CpuId c = 0; c < 4; ++c) {
    CHECK(v[c].cpu == c);
    CHECK(v[c].rule == "FactorPolicy I1: factor >= 1");
    CHECK(v[c].detail == "factor(cpu " + std::to_string(c) + ") = 0");
  }
  // Where the LLC is shared, the same policy conforms (factor 11).
  CHECK(taskplace::testing::check_factor<LlcMinusOne>(FakeTopology(1, 1, 12, 1)).empty());
}

TEST_CASE("a negative signed factor is reported before conversion", "[llc_factor][conformance]") {
  const FakeTopology no_sharing(1, 1, 1, 1);
  const auto v = taskplace::testing::check_factor<SignedFactor>(no_sharing);
  REQUIRE(v.size() == 1);
  CHECK(v[0].detail == "factor(cpu 0) = -1");
  // Converted to uint32 it would read 4294967295 and pass.
}

TEST_CASE("the factors agree with the fake on UniformTopology in both numberings",
          "[llc_factor]") {
  // The AMD shape of above, 2 x 8 x 8 x 2 = 256 CPUs: LLC 16, cores 8,
  // node 128, whether siblings are adjacent or x86-style k and k + 128.
  for (const auto numbering : {taskplace::CpuNumbering::nested, taskplace::CpuNumbering::smt_last}) {
    const taskplace::UniformTopology amd(2, 8, 8, 2, numbering);
    REQUIRE(amd.cpu_count() == 256);
    check_every_cpu<LlcFactor>(amd, 16);
    check_every_cpu<CoresPerLlcFactor>(amd, 8);
    check_every_cpu<NodeFactor>(amd, 128);
    CHECK(taskplace::testing::check_factor<LlcFactor>(amd).empty());
    CHECK(taskplace::testing::check_factor<CoresPerLlcFactor>(amd).empty());
  }
}

// --- ClusterFactor -----------------------------------------------------------

namespace {

// An Intel hybrid part in small: P-cores {0,1} {2,3} with SMT (cluster =
// core, so no cluster level), E-cores 4-11 in two modules of 4 sharing an
// L2 (clusters {4-7} {8-11}), one L3 of 12 CPUs, one node.
taskplace::TableTopology hybrid() {
  return taskplace::TableTopology::with_clusters({0, 0, 1, 1, 2, 3, 4, 5, 6, 7, 8, 9},
                                                 {0, 0, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3},
                                                 std::vector<std::uint32_t>(12, 0),
                                                 std::vector<std::uint32_t>(12, 0));
}

}  // namespace

TEST_CASE("the cluster factor is the cluster's size where the CPU has a cluster level",
          "[llc_factor][cluster]") {
  const auto t = hybrid();
  // E-cores: cluster level of 4 CPUs -> 4; LLC factor 12.
  for (CpuId c = 4; c < 12; ++c) {
    INFO("cpu " << c);
    CHECK(ClusterFactor::factor(t, c) == 4);
    CHECK(LlcFactor::factor(t, c) == 12);
  }
  // P-cores: the cluster is the core (degenerate, no level) -> LLC, 12.
  for (CpuId c = 0; c < 4; ++c) {
    INFO("cpu " << c);
    CHECK(ClusterFactor::factor(t, c) == 12);
  }
  CHECK(taskplace::testing::check_factor<ClusterFactor>(t).empty());

  // A Kunpeng 920-like node: 24 cores, no SMT, clusters of 4, one L3.
  std::vector<std::uint32_t> core, cluster;
  for (std::uint32_t c = 0; c < 24; ++c) {
    core.push_back(c);
    cluster.push_back(c / 4);
  }
  const auto kp = taskplace::TableTopology::with_clusters(core, cluster, std::vector<std::uint32_t>(24, 0),
                                                          std::vector<std::uint32_t>(24, 0));
  check_every_cpu<ClusterFactor>(kp, 4);   // 24 / 6 clusters
  check_every_cpu<LlcFactor>(kp, 24);
}

TEST_CASE("without a cluster level the cluster factor is the LLC factor",
          "[llc_factor][cluster]") {
  // UniformTopology has no clusters: Fleming 2017's box, smt then llc levels,
  // LLC 40; the AMD shape, LLC 16.
  check_every_cpu<ClusterFactor>(taskplace::UniformTopology{2, 1, 20, 2}, 40);
  check_every_cpu<ClusterFactor>(taskplace::UniformTopology{2, 8, 8, 2, taskplace::CpuNumbering::smt_last}, 16);
  check_every_cpu<ClusterFactor>(FakeTopology(1, 1, 12, 2), 24);
  // A table without cluster ids, and one whose cluster is the whole LLC
  // (degenerate: the llc level stays, no cluster level): LLC 4.
  check_every_cpu<ClusterFactor>(taskplace::TableTopology({0, 0, 1, 1}, {0, 0, 0, 0}, {0, 0, 0, 0}), 4);
  check_every_cpu<ClusterFactor>(
      taskplace::TableTopology::with_clusters({0, 0, 1, 1}, {0, 0, 0, 0}, {0, 0, 0, 0}, {0, 0, 0, 0}), 4);
  // A single CPU has no levels at all: 1.
  check_every_cpu<ClusterFactor>(taskplace::TableTopology({0}, {0}, {0}), 1);
}

TEST_CASE("the cluster factor turns a wake-up wide that the LLC factor keeps affine",
          "[llc_factor][cluster]") {
  const auto t = hybrid();
  using W = taskplace::WideDetector<>;
  // An E-core dispatcher with 60 flips waking a worker with 5
  // (wide::Symmetric2015, lo >= f && hi >= f*lo), waking on CPU 5:
  //   ClusterFactor f = 4:  5 >= 4 and 60 >= 20 -> wide (spread over the LLC);
  //   LlcFactor     f = 12: 5 >= 12 fails       -> affine (pulled).
  CHECK(W::wide(60, 5, ClusterFactor::factor(t, 5)));
  CHECK_FALSE(W::wide(60, 5, LlcFactor::factor(t, 5)));
  // The threshold under the cluster factor: hi >= 4 * 5 = 20.
  CHECK(W::wide(20, 5, ClusterFactor::factor(t, 5)));
  CHECK_FALSE(W::wide(19, 5, ClusterFactor::factor(t, 5)));
  // Waking on a P-core (no cluster level) both factors are 12: affine.
  CHECK_FALSE(W::wide(60, 5, ClusterFactor::factor(t, 1)));
  // wide::OneSided2013 (e > f && w > f*e) agrees: 5 > 4 and 60 > 20 -> wide; 5 > 12 fails.
  using W13 = taskplace::WideDetector<taskplace::wide::OneSided2013>;
  CHECK(W13::wide(60, 5, ClusterFactor::factor(t, 5)));
  CHECK_FALSE(W13::wide(60, 5, LlcFactor::factor(t, 5)));
}

namespace {
// Deliberately broken: CPU 0's only level is a cluster level with no CPUs
// (breaks Topology I6 and I8); every size it reports is 0.
struct EmptyClusterTopology {
  std::uint32_t cpu_count() const { return 1; }
  std::uint32_t core_of(CpuId) const { return 0; }
  std::uint32_t llc_of(CpuId) const { return 0; }
  std::uint32_t node_of(CpuId) const { return 0; }
  std::uint32_t core_size(CpuId) const { return 0; }
  std::uint32_t llc_size(CpuId) const { return 0; }
  std::uint32_t node_size(CpuId) const { return 0; }
  std::span<const CpuId> core_cpus(CpuId) const { return {}; }
  std::span<const CpuId> llc_cpus(CpuId) const { return {}; }
  std::span<const CpuId> node_cpus(CpuId) const { return {}; }
  std::uint32_t level_count(CpuId) const { return 1; }
  LevelKind level_kind(CpuId, std::uint32_t) const { return LevelKind::cluster; }
  std::span<const CpuId> level_cpus(CpuId, std::uint32_t) const { return {}; }
};
static_assert(taskplace::Topology<EmptyClusterTopology>);
}  // namespace

TEST_CASE("an empty cluster level still gives factor at least one", "[llc_factor][cluster]") {
  CHECK(ClusterFactor::factor(EmptyClusterTopology{}, 0) == 1);
  CHECK(taskplace::testing::check_factor<ClusterFactor>(EmptyClusterTopology{}).empty());
}
