// 030_custom_topology.cpp: write your own Topology and check it with the
// conformance kit.
//
// The machine: 6 CPUs, no SMT, two L3s of 3 cores (CPUs 0-2 and 3-5), one
// NUMA node; levels llc then node. Any type with the members of the
// Topology concept works; the compiler checks the signatures, and
// testing::check_topology checks the invariants no compiler can (SMT
// siblings share an LLC, equal llc_of means equal sets, levels nest, ...).
// A deliberately broken copy shows what a violation looks like.
#include <array>
#include <cstdint>
#include <cstdio>
#include <span>
#include <vector>

#include <taskplace/taskplace.hpp>
#include <taskplace/testing.hpp>

using taskplace::CpuId;
using taskplace::LevelKind;

class TwoLlcTopology {
 public:
  explicit TwoLlcTopology(bool broken = false) : broken_(broken) {}

  std::uint32_t cpu_count() const { return 6; }
  std::uint32_t core_of(CpuId c) const { return c; }
  // The broken copy claims CPU 2 is in LLC 1, but lists it in LLC 0's set.
  std::uint32_t llc_of(CpuId c) const { return broken_ && c == 2 ? 1 : c / 3; }
  std::uint32_t node_of(CpuId) const { return 0; }
  std::uint32_t core_size(CpuId) const { return 1; }
  std::uint32_t llc_size(CpuId) const { return 3; }
  std::uint32_t node_size(CpuId) const { return 6; }
  std::span<const CpuId> core_cpus(CpuId c) const { return {&all_[c], 1}; }
  std::span<const CpuId> llc_cpus(CpuId c) const { return {&all_[c / 3 * 3], 3}; }
  std::span<const CpuId> node_cpus(CpuId) const { return all_; }
  std::uint32_t level_count(CpuId) const { return 2; }
  LevelKind level_kind(CpuId, std::uint32_t i) const { return i == 0 ? LevelKind::llc : LevelKind::node; }
  std::span<const CpuId> level_cpus(CpuId c, std::uint32_t i) const {
    return i == 0 ? llc_cpus(c) : node_cpus(c);
  }

 private:
  static constexpr std::array<CpuId, 6> all_{0, 1, 2, 3, 4, 5};
  bool broken_;
};
static_assert(taskplace::Topology<TwoLlcTopology>);  // the signatures

struct Machine {
  std::vector<std::uint32_t> running;
  bool is_idle(CpuId c) const { return running[c] == 0; }
  std::uint32_t nr_running(CpuId c) const { return running[c]; }
  std::uint64_t load(CpuId c) const { return running[c] * 1024u; }
};

int main() {
  const TwoLlcTopology good;
  const auto ok = taskplace::testing::check_topology(good);
  std::printf("TwoLlcTopology: %zu violations\n", ok.size());

  const TwoLlcTopology broken{true};
  const auto bad = taskplace::testing::check_topology(broken);
  std::printf("broken copy: %zu violations, for instance\n", bad.size());
  for (std::size_t i = 0; i < bad.size() && i < 3; ++i)
    std::printf("  cpu %u: %s\n    %s\n", bad[i].cpu, bad[i].rule.c_str(), bad[i].detail.c_str());

  // The conforming topology drives the placer like a shipped one. The waker
  // on cpu 0 wakes a task that last ran on cpu 4 (other LLC): both busy, so
  // the load test decides (prev stays), and the search stays in the
  // target's LLC: cpu 5, not the idle cpu 1 of the other LLC.
  const taskplace::WakePlacer<TwoLlcTopology> placer{good};
  Machine machine{{1, 0, 1, 1, 1, 0}};
  decltype(placer)::task_state waker, wakee;
  const auto p = placer.place({.waker = &waker, .waker_key = 1, .wakee = &wakee, .wakee_key = 2,
                               .waking_cpu = 0, .prev_cpu = 4},
                              machine, taskplace::Nanoseconds{1'000'000});
  std::printf("wake-up from cpu 0, prev cpu 4: target %u (%s), cpu %u (%s)\n", p.target,
              taskplace::to_string(p.affine), p.cpu, taskplace::to_string(p.reason));
  return ok.empty() && !bad.empty() ? 0 : 1;
}
