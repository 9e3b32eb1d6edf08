// The idle search on cluster machines and on machines whose cores differ
// in SMT (placer/select_idle_sibling.hpp, detail/llc_walk.hpp): the
// cluster walk and the last resort of v6.8 (kernel: select_idle_cpu(),
// select_idle_sibling()'s prev_aff and recent_used_cpu,
// cpus_share_resources() over sd_share_id), and the machine-wide SMT
// switch (kernel: sched_smt_active()). Golden values follow the kernel's
// semantics step by step, as each case's comment counts them.
#include <catch2/catch.hpp>

#include <cstdint>

#include "taskplace/placer/select_idle_sibling.hpp"
#include "taskplace/testing/machine.hpp"
#include "taskplace/topology/table.hpp"
#include "taskplace/topology/uniform.hpp"
#include "taskplace/wake_placer.hpp"

using namespace taskplace;
using testing::ScriptedMachine;

namespace {
// Eight one-thread cores in one LLC, clusters {0..3} and {4..7} (a
// Kunpeng 920 or an Intel E-core module pair): every CPU has a cluster
// level, its resource id (sd_share_id) is its cluster's first CPU.
const TableTopology kunpeng = TableTopology::with_clusters({0, 1, 2, 3, 4, 5, 6, 7}, {0, 0, 0, 0, 1, 1, 1, 1},
                                                           {0, 0, 0, 0, 0, 0, 0, 0}, {0, 0, 0, 0, 0, 0, 0, 0});

template <class T, class M, class S = IdleSiblingSearch>
SearchResult search(const T& t, const M& m, CpuId target, CpuId prev, CpuId& recent, S s = {}) {
  return s.search(SearchInput<T, M, AnyCpu, void>{t, m, AnyCpu{}, nullptr, 1, Nanoseconds{0}, target, prev,
                                                  &recent});
}
template <class T, class M, class S = IdleSiblingSearch>
SearchResult search(const T& t, const M& m, CpuId target, CpuId prev, S s = {}) {
  CpuId recent = no_cpu;
  return search(t, m, target, prev, recent, s);
}
}  // namespace

TEST_CASE("the facts of a topology: SMT anywhere, a cluster level anywhere", "[cluster_scan]") {
  // kernel: sched_smt_present is set by any core with two CPUs online;
  // sched_cluster_active by any CPU with an SD_CLUSTER domain.
  const SearchFacts w = search_facts(presets::westmere_12cpu_2013());
  CHECK(w.smt_active);
  CHECK_FALSE(w.cluster_active);
  const SearchFacts e = search_facts(presets::eight_socket_80core());
  CHECK_FALSE(e.smt_active);
  CHECK_FALSE(e.cluster_active);
  const SearchFacts k = search_facts(kunpeng);
  CHECK_FALSE(k.smt_active);
  CHECK(k.cluster_active);
  // One core of two threads among single-thread cores: SMT is active.
  const TableTopology hybrid({0, 0, 1, 2, 3, 4}, {0, 0, 0, 0, 0, 0}, {0, 0, 0, 0, 0, 0});
  CHECK(search_facts(hybrid).smt_active);
  // Clusters that are the cores, or the whole LLC, are no cluster level.
  const TableTopology whole = TableTopology::with_clusters({0, 1, 2, 3}, {0, 0, 0, 0}, {0, 0, 0, 0}, {0, 0, 0, 0});
  CHECK_FALSE(search_facts(whole).cluster_active);
}

TEST_CASE("an idle CPU in the target's cluster wins over one the LLC walk meets first", "[cluster_scan]") {
  ScriptedMachine<> m{8};
  m.all_busy().idle(0).idle(4);
  // kernel select_idle_cpu() (v6.8): target 2's cluster {0..3} first, from
  // target + 1 wrapping: 3 busy, 0 idle -> 0 (two CPUs on the budget).
  auto r = search(kunpeng, m, 2, 2);
  CHECK(r.cpu == 0);
  CHECK(r.reason == WakeReason::idle_scan);
  CHECK(r.scanned == 2);
  // The v6.0-v6.7 search walks the LLC from 3: 3 busy, 4 idle -> 4.
  r = search(kunpeng, m, 2, 2, sis_cluster::LlcOnly2022{});
  CHECK(r.cpu == 4);
  CHECK(r.scanned == 2);
  // Nothing idle in the cluster: the walk goes on with the rest of the LLC,
  // from target + 1 again (4 is the first CPU above 2 outside the
  // cluster): 3, 0, 1, 2 then 4 -> 4 after five CPUs.
  m.busy(0);
  r = search(kunpeng, m, 2, 2);
  CHECK(r.cpu == 4);
  CHECK(r.scanned == 5);
  // From target 6 the cluster {4..7} is walked 7, 4, 5, 6, then the rest
  // of the LLC from 7 wrapping: 0, 1: nothing idle in the cluster
  // -> CPU 1, found after 4 + 2 CPUs.
  m.all_busy().idle(1);
  r = search(kunpeng, m, 6, 6);
  CHECK(r.cpu == 1);
  CHECK(r.scanned == 6);
}

TEST_CASE("an idle prev or recent CPU outside the target's cluster is the last resort", "[cluster_scan]") {
  // 65% busy: budget 8 * (1 - (1.17 * 0.65)^2) = 8 * 0.42164 = 3.4 -> 3.
  ScriptedMachine<true> m{8};
  m.all_busy().utilization(65).idle(5);
  // kernel select_idle_sibling(): prev 5 is idle and shares the LLC, but
  // sd_share_id(5) = 4 != sd_share_id(2) = 0: kept as prev_aff; the
  // recent CPU becomes prev; select_idle_cpu() walks 3, 0, 1 (the budget)
  // and finds nothing: prev_aff.
  CpuId recent = 7;
  auto r = search(kunpeng, m, 2, 5, recent);
  CHECK(r.cpu == 5);
  CHECK(r.reason == WakeReason::idle_prev);
  CHECK(r.scanned == 3);
  CHECK(recent == 5);
  // With the whole LLC to walk (0% busy) the walk reaches 5 itself, after
  // the cluster (3, 0, 1, 2) and 4: an idle CPU found by the scan.
  m.utilization(0);
  r = search(kunpeng, m, 2, 5);
  CHECK(r.cpu == 5);
  CHECK(r.reason == WakeReason::idle_scan);
  CHECK(r.scanned == 6);
  // 90% busy: budget 0, select_idle_cpu() returns at once: prev_aff.
  m.utilization(90);
  r = search(kunpeng, m, 2, 5);
  CHECK(r.cpu == 5);
  CHECK(r.reason == WakeReason::idle_prev);
  CHECK(r.scanned == 0);
  // An idle prev in the target's cluster is taken at once, as before v6.8;
  // the recent CPU is not touched.
  m.utilization(65).busy(5).idle(1);
  recent = 7;
  r = search(kunpeng, m, 2, 1, recent);
  CHECK(r.cpu == 1);
  CHECK(r.reason == WakeReason::idle_prev);
  CHECK(r.scanned == 0);
  CHECK(recent == 7);
  // The recent CPU likewise: recent 6 idle outside the cluster, prev 7
  // busy: 3, 0, 1 busy -> recent_used_cpu, the last of the last resorts.
  m.busy(1).idle(6);
  recent = 6;
  r = search(kunpeng, m, 2, 7, recent);
  CHECK(r.cpu == 6);
  CHECK(r.reason == WakeReason::idle_recent);
  CHECK(r.scanned == 3);
  CHECK(recent == 7);
  // Both kept: prev_aff comes first.
  m.idle(5);
  recent = 6;
  r = search(kunpeng, m, 2, 5, recent);
  CHECK(r.cpu == 5);
  CHECK(r.reason == WakeReason::idle_prev);
  // The v6.0-v6.7 search takes prev at once anywhere in the LLC.
  r = search(kunpeng, m, 2, 5, sis_cluster::LlcOnly2022{});
  CHECK(r.cpu == 5);
  CHECK(r.reason == WakeReason::idle_prev);
  CHECK(r.scanned == 0);
}

TEST_CASE("resource ids follow the kernel's sd_share_id, also where they coincide", "[cluster_scan]") {
  // kernel update_top_cache_domain(): sd_share_id is the first CPU of the
  // CPU's SD_CLUSTER domain, else sd_llc_id, the first CPU of its LLC.
  // Cores {0}, {1} form cluster {0, 1} (a cluster level); core {2, 3} is
  // its own cluster (no level, id = the LLC's first CPU, 0). Both ids are
  // 0: cpus_share_resources(0, 2) holds, and an idle prev 0 is taken at
  // once from target 2.
  const TableTopology first = TableTopology::with_clusters({0, 1, 2, 2}, {0, 0, 1, 1}, {0, 0, 0, 0}, {0, 0, 0, 0});
  ScriptedMachine<> m{4};
  m.all_busy().idle(0);
  auto r = search(first, m, 2, 0);
  CHECK(r.cpu == 0);
  CHECK(r.reason == WakeReason::idle_prev);
  CHECK(r.scanned == 0);
  // Numbered the other way (core {0, 1}, cluster {2, 3} of cores {2}, {3}):
  // ids 0 and 2 differ. Prev 2 is kept; SMT is active (core {0, 1}) and
  // there is no hint, so the walk from target 0 tests cores within the
  // budget: core {0, 1} at 1 (0 busy), then core {2} at 2, wholly idle.
  const TableTopology later = TableTopology::with_clusters({0, 0, 1, 2}, {0, 0, 1, 1}, {0, 0, 0, 0}, {0, 0, 0, 0});
  m.all_busy().idle(2);
  r = search(later, m, 0, 2);
  CHECK(r.cpu == 2);
  CHECK(r.reason == WakeReason::idle_core);
  CHECK(r.scanned == 2);
}

TEST_CASE("the idle-core walk runs wherever some core has SMT, also from a one-thread core", "[cluster_scan]") {
  // A hybrid part: a two-thread core {0, 1} and four one-thread cores
  // {2}..{5} sharing the LLC. kernel: sched_smt_active() is machine-wide,
  // so from target 5 (one thread) has_idle_core = test_idle_cores(5).
  const TableTopology hybrid({0, 0, 1, 2, 3, 4}, {0, 0, 0, 0, 0, 0}, {0, 0, 0, 0, 0, 0});
  ScriptedMachine<false, true> m{6};
  m.all_busy().idle(0).idle(3).idle_core_hint(true);
  // Hint set: select_idle_core() from 0: core {0, 1} not idle (1 runs; 0
  // is recorded as idle_cpu), 1 leaves the mask, 2 busy, 3 wholly idle.
  auto r = search(hybrid, m, 5, 5);
  CHECK(r.cpu == 3);
  CHECK(r.reason == WakeReason::idle_core);
  CHECK(r.scanned == 3);
  // Hint clear: the CPU walk's first idle CPU, 0.
  m.idle_core_hint(false);
  r = search(hybrid, m, 5, 5);
  CHECK(r.cpu == 0);
  CHECK(r.reason == WakeReason::idle_scan);
  CHECK(r.scanned == 1);
  // Hint clear, prev 1 (busy) shares the cache: select_idle_smt(prev)
  // finds its idle sibling 0 before any walk, though the target's core has
  // one thread.
  r = search(hybrid, m, 5, 1);
  CHECK(r.cpu == 0);
  CHECK(r.reason == WakeReason::idle_smt_sibling);
  CHECK(r.scanned == 0);
  // Without SMT anywhere the hint is never read: the CPU walk, 0 first.
  const TableTopology flat({0, 1, 2, 3, 4, 5}, {0, 0, 0, 0, 0, 0}, {0, 0, 0, 0, 0, 0});
  m.idle_core_hint(true);
  r = search(flat, m, 5, 5);
  CHECK(r.cpu == 0);
  CHECK(r.reason == WakeReason::idle_scan);
  CHECK(m.idle_core_clears() == 0);
}

TEST_CASE("the placer hands its facts to the search", "[cluster_scan]") {
  // The same hybrid part through WakePlacer: waking == prev == 5 keeps the
  // target on 5 (same_cpu), and the core walk finds core {3}.
  const TableTopology hybrid({0, 0, 1, 2, 3, 4}, {0, 0, 0, 0, 0, 0}, {0, 0, 0, 0, 0, 0});
  const WakePlacer<TableTopology> placer{hybrid};
  ScriptedMachine<false, true> m{6};
  m.all_busy().idle(0).idle(3).idle_core_hint(true);
  WakePlacer<TableTopology>::task_state wakee{};
  const Placement p = placer.place({.wakee = &wakee, .wakee_key = 2, .waking_cpu = 5, .prev_cpu = 5}, m,
                                   Nanoseconds{0});
  CHECK(p.target == 5);
  CHECK(p.cpu == 3);
  CHECK(p.reason == WakeReason::idle_core);
  // On the cluster machine: target 2's cluster first.
  const WakePlacer<TableTopology> kp{kunpeng};
  ScriptedMachine<> k{8};
  k.all_busy().idle(0).idle(4);
  WakePlacer<TableTopology>::task_state t2{};
  const Placement q = kp.place({.wakee = &t2, .wakee_key = 2, .waking_cpu = 2, .prev_cpu = 2}, k, Nanoseconds{0});
  CHECK(q.cpu == 0);
  CHECK(q.reason == WakeReason::idle_scan);
}
