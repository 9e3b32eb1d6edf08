// The library's WakePlacer and IdleBalancer against an independent model of
// the kernel's decision (kernel_model.hpp), over random topologies, machine
// states, masks, hints, clocks and every shipped policy set.
//
// Seed: TASKPLACE_REFERENCE_SEED (default fixed, printed). Size:
// TASKPLACE_REFERENCE_SCALE multiplies the default rounds (1 by default,
// about 1.37 million compared decisions).
//
// A mismatch is one of:
// - a deviation: a documented library choice (docs/reference.md) made the
//   kernel's answer differ; counted apart, never a failure;
// - a known divergence: a step of the kernel's search the library does not
//   take (see cluster_and_smt_switch_landed below); counted, failing only
//   once the switch is flipped;
// - anything else: a failure, printed with a reproducer.
#include <catch2/catch.hpp>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "kernel_model.hpp"
#include "taskplace/idle_balancer.hpp"
#include "taskplace/testing/machine.hpp"
#include "taskplace/topology/table.hpp"
#include "taskplace/topology/uniform.hpp"
#include "taskplace/wake_placer.hpp"

namespace {

using namespace taskplace;
using kref::i64;
using kref::u32;
using kref::u64;

// The idle search's steps that once diverged from the kernel (SIS_UTIL
// budget 0 with the idle-core hint, the walk over allowed CPUs only, idle
// cores whatever the mask, the walk order and the CPU a core walk returns,
// select_idle_smt(), the scan count, the newidle stamp after a pull, the
// cost decay at a saturated elapsed time). The library's search decides
// as the kernel's in all of them, so any mismatch there fails.
constexpr bool search_fix_landed = true;
const std::array<const char*, 8> search_categories = {
    "sis_util_zero_budget", "select_idle_smt", "walk_mask",  "core_no_whole_idle",
    "core_walk",            "scanned",         "pull_stamp", "decay_saturated"};

// Two more steps of the kernel's search, once not taken by the library:
// the cluster scan (v6.8+: with a CLS domain, select_idle_cpu() walks the
// target's cluster first, and an idle prev or recent CPU outside the
// target's cluster is kept as a last resort; cpus_share_resources()), and
// the machine-wide SMT switch (sched_smt_active(): the idle-core walk runs
// whenever any core has siblings, also from a target whose own core has
// none, as on hybrid parts). The library's search takes both, so any
// mismatch there fails.
constexpr bool cluster_and_smt_switch_landed = true;
const std::array<const char*, 2> cluster_smt_categories = {"cluster_scan", "smt_machine_wide"};

bool excused(const std::string& c) {
  if (!search_fix_landed)
    for (const char* s : search_categories)
      if (c == s) return true;
  if (!cluster_and_smt_switch_landed)
    for (const char* s : cluster_smt_categories)
      if (c == s) return true;
  return false;
}

struct Tally {
  u64 cases = 0;
  std::map<std::string, u64> deviations;  // documented choices exercised
  std::map<std::string, u64> mismatches;  // by category
  std::map<std::string, std::vector<std::string>> examples;
  void mismatch(const std::string& category, const std::string& repro) {
    ++mismatches[category];
    auto& ex = examples[category];
    if (ex.size() < 3) ex.push_back(repro);
  }
  void deviation(u32 bits) {
    for (u32 b = 0; b < kref::dev_count; ++b)
      if (bits & (1u << b)) ++deviations[kref::dev_name(b)];
  }
};

u64 env_u64(const char* name, u64 fallback) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return fallback;
  return std::strtoull(v, nullptr, 0);
}

// ---------------------------------------------------------------------------
// Random inputs.
struct Rng {
  std::mt19937_64 g;
  u64 u(u64 lo, u64 hi) { return std::uniform_int_distribution<u64>(lo, hi)(g); }
  bool p(double x) { return std::bernoulli_distribution(x)(g); }
  template <class T, std::size_t N>
  T pick(const std::array<T, N>& a) { return a[u(0, N - 1)]; }
};

i64 random_time(Rng& r) {
  switch (r.u(0, 7)) {
    case 0: return 0;
    case 1: return static_cast<i64>(r.u(0, 3'000'000'000ull));
    case 2: return INT64_MAX - static_cast<i64>(r.u(0, 2'000'000'000ull));
    case 3: return INT64_MIN + static_cast<i64>(r.u(0, 2'000'000'000ull));
    case 4: return -static_cast<i64>(r.u(0, 3'000'000'000ull));
    default: return static_cast<i64>(r.u(1'000'000'000'000ull, 2'000'000'000'000ull));
  }
}

// a + b, saturated to the i64 range (clocks near the maxima).
i64 sat_add(i64 a, i64 b) {
  const kref::i128 t = static_cast<kref::i128>(a) + b;
  return t > INT64_MAX ? INT64_MAX : (t < INT64_MIN ? INT64_MIN : static_cast<i64>(t));
}

i64 advance(Rng& r, i64 now) {
  i64 d = 0;
  switch (r.u(0, 9)) {
    case 0: d = 0; break;
    case 1: d = 1'000'000'000; break;  // exactly one period: no decay
    case 2: d = 1'000'000'001; break;
    case 3: d = -static_cast<i64>(r.u(1, 5'000'000'000ull)); break;  // back
    case 4: d = static_cast<i64>(r.u(0, 1ull << 62)); break;
    case 5: d = static_cast<i64>(r.u(1'000'000'000ull, 4'000'000'000ull)); break;
    default: d = static_cast<i64>(r.u(0, 2'000'000ull)); break;
  }
  return sat_add(now, d);
}

// ---------------------------------------------------------------------------
// Topologies: the model's labels first, then the library's object.

// A uniform machine: labels from the numbering's definition (nested: cpu =
// core * T + thread; smt_last: cpu = thread * cores + core).
kref::Topo uniform_labels(u32 nodes, u32 llcs, u32 cores, u32 threads, bool smt_last) {
  kref::Topo t;
  const u32 total_cores = nodes * llcs * cores, n = total_cores * threads;
  t.core.resize(n);
  t.llc.resize(n);
  t.node.resize(n);
  for (u32 cpu = 0; cpu < n; ++cpu) {
    const u32 g = smt_last ? cpu % total_cores : cpu / threads;
    t.core[cpu] = g;
    t.llc[cpu] = g / cores;
    t.node[cpu] = g / (cores * llcs);
  }
  t.finish();
  return t;
}

// A table machine: cores of 1-3 threads (one size per machine, or mixed),
// clusters of cores, LLCs of clusters, nodes of LLCs (or LLCs of nodes, the
// hardware's view under SNC), CPU numbers shuffled or in x86's siblings-last
// order.
struct TableLabels {
  kref::Topo model;
  bool clusters = false;
};
TableLabels table_labels(Rng& r) {
  TableLabels out;
  const u32 ncores = static_cast<u32>(r.u(1, 24));
  const bool mixed = r.p(0.25);
  const u32 tpc = static_cast<u32>(r.u(1, 3));
  out.clusters = r.p(0.4);
  const u32 cores_per_cluster = static_cast<u32>(r.u(1, 4));
  const u32 clusters_per_llc = static_cast<u32>(r.u(1, 4));
  const bool llc_in_node = r.p(0.7);
  const u32 group = static_cast<u32>(r.u(1, 3));
  std::vector<u32> core_of_slot, cluster_of_slot, llc_of_slot, node_of_slot;
  for (u32 g = 0; g < ncores; ++g) {
    const u32 threads = mixed ? static_cast<u32>(r.u(1, 2)) : tpc;
    const u32 cluster = g / cores_per_cluster;
    const u32 llc = out.clusters ? cluster / clusters_per_llc : g / (cores_per_cluster * clusters_per_llc);
    // Nodes: `group` LLCs per node, or `group` nodes per LLC (split at cores).
    const u32 node = llc_in_node ? llc / group : (g / std::max<u32>(1, cores_per_cluster)) ;
    for (u32 th = 0; th < threads; ++th) {
      core_of_slot.push_back(g);
      cluster_of_slot.push_back(out.clusters ? cluster : g);
      llc_of_slot.push_back(llc);
      node_of_slot.push_back(llc_in_node ? node : (out.clusters ? cluster : node));
    }
  }
  // Under "nodes inside an LLC" a node must not cut a cluster or a core;
  // nodes are whole clusters (or whole cores) there, by construction.
  const u32 n = static_cast<u32>(core_of_slot.size());
  std::vector<u32> perm(n);
  for (u32 i = 0; i < n; ++i) perm[i] = i;
  if (r.p(0.5)) {
    std::shuffle(perm.begin(), perm.end(), r.g);
  } else if (r.p(0.5)) {
    // siblings last: slot order sorted by thread index, then core.
    std::vector<u32> th(n);
    for (u32 i = 0; i < n; ++i) th[i] = (i > 0 && core_of_slot[i] == core_of_slot[i - 1]) ? th[i - 1] + 1 : 0;
    std::stable_sort(perm.begin(), perm.end(), [&](u32 a, u32 b) { return th[a] < th[b]; });
  }
  // CPU c is slot perm[c].
  auto& t = out.model;
  for (u32 c = 0; c < n; ++c) {
    t.core.push_back(core_of_slot[perm[c]]);
    t.cluster.push_back(cluster_of_slot[perm[c]]);
    t.llc.push_back(llc_of_slot[perm[c]]);
    t.node.push_back(node_of_slot[perm[c]]);
  }
  t.finish();
  return out;
}

// Do the library's groups equal the model's (same partition)?
template <class T>
bool same_partition(const T& lib, const kref::Topo& m, std::string& why) {
  if (lib.cpu_count() != m.n) {
    why = "cpu_count";
    return false;
  }
  for (u32 a = 0; a < m.n; ++a)
    for (u32 b = 0; b < m.n; ++b) {
      if ((lib.core_of(a) == lib.core_of(b)) != (m.core[a] == m.core[b])) { why = "core"; return false; }
      if ((lib.llc_of(a) == lib.llc_of(b)) != (m.llc[a] == m.llc[b])) { why = "llc"; return false; }
      if ((lib.node_of(a) == lib.node_of(b)) != (m.node[a] == m.node[b])) { why = "node"; return false; }
    }
  return true;
}

// ---------------------------------------------------------------------------
// Policy sets and the model's era of each.
struct UnguardedNewidle : DefaultNewidleTraits {
  static constexpr bool skip_without_stamp = false;
};
// Today's kernel with the search of v6.0-v6.7 (no cluster walk).
struct LlcOnlySearch : traits::Current {
  using Search = sis_cluster::LlcOnly2022;
};

template <class Traits>
kref::Era era_of();
template <> kref::Era era_of<traits::Current>() { return {}; }
template <> kref::Era era_of<LlcOnlySearch>() {
  kref::Era e;
  e.cluster = false;
  return e;
}
template <> kref::Era era_of<traits::Linux2013>() {
  return {kref::FlipEra::wipe_2013, kref::WideEra::one_sided_2013, kref::AffineEra::wake_affine, true};
}
template <> kref::Era era_of<traits::Linux2013Kernel>() {
  kref::Era e{kref::FlipEra::wipe_2013, kref::WideEra::one_sided_2013, kref::AffineEra::wake_affine_2013, false};
  e.cluster = false;
  e.groups_2013 = true;
  return e;
}
template <> kref::Era era_of<traits::AlwaysAffine>() {
  return {kref::FlipEra::halve_2014, kref::WideEra::never, kref::AffineEra::always, false};
}
template <> kref::Era era_of<traits::PrevCpu>() {
  return {kref::FlipEra::halve_2014, kref::WideEra::symmetric_2015, kref::AffineEra::never, false};
}

template <> kref::Era era_of<traits::Linux2008<sync_affine::Unchecked2008>>() {
  return {kref::FlipEra::halve_2014, kref::WideEra::never, kref::AffineEra::unchecked_2008, false};
}
template <> kref::Era era_of<traits::Linux2008<sync_affine::Balanced2008>>() {
  return {kref::FlipEra::halve_2014, kref::WideEra::never, kref::AffineEra::balanced_2008, false};
}
template <> kref::Era era_of<traits::Linux2008<sync_affine::Ignored2008>>() {
  return {kref::FlipEra::halve_2014, kref::WideEra::never, kref::AffineEra::ignored_2008, false};
}

template <class Traits>
const char* era_name();
template <> const char* era_name<traits::Linux2008<sync_affine::Unchecked2008>>() { return "Linux2008<Unchecked2008>"; }
template <> const char* era_name<traits::Linux2008<sync_affine::Balanced2008>>() { return "Linux2008<Balanced2008>"; }
template <> const char* era_name<traits::Linux2008<sync_affine::Ignored2008>>() { return "Linux2008<Ignored2008>"; }
template <> const char* era_name<traits::Current>() { return "Current"; }
template <> const char* era_name<LlcOnlySearch>() { return "LlcOnly2022"; }
template <> const char* era_name<traits::Linux2013>() { return "Linux2013"; }
template <> const char* era_name<traits::Linux2013Kernel>() { return "Linux2013Kernel"; }
template <> const char* era_name<traits::AlwaysAffine>() { return "AlwaysAffine"; }
template <> const char* era_name<traits::PrevCpu>() { return "PrevCpu"; }

using Machine = testing::ScriptedMachine<true, true>;

std::string mask_string(const std::vector<bool>& m) {
  std::string s;
  for (bool b : m) s += b ? '1' : '0';
  return s;
}

// The category of a search mismatch, from the facts of the kernel's path.
std::string search_category(u32 trace) {
  using namespace kref;
  // The steps the library does not take at all come first: where the
  // kernel's path went through them, they explain what follows.
  if (trace & tr_cluster) return "cluster_scan";
  if (trace & tr_smt_elsewhere) return "smt_machine_wide";
  if (trace & tr_budget_zero_core) return "sis_util_zero_budget";
  if (trace & tr_idle_smt) return "select_idle_smt";
  if (trace & tr_mask_in_llc) return "walk_mask";
  if (trace & tr_core_partial) return "core_no_whole_idle";
  if (trace & tr_core_mode) return "core_walk";
  return "search_other";
}

// ---------------------------------------------------------------------------
// Wake-up sequences on one topology, one policy set.
template <class Traits, class T>
void run_wakeups(const T& topo, const kref::Topo& mt, Rng& r, Tally& tally, u32 sequences, const std::string& tname) {
  using Placer = WakePlacer<T, Traits>;
  const Placer placer{topo};
  const kref::Era era = era_of<Traits>();
  const u32 n = mt.n;
  constexpr u32 ntasks = 4;
  for (u32 seq = 0; seq < sequences; ++seq) {
    std::array<typename Placer::task_state, ntasks> lib{};
    std::array<kref::Flips, ntasks> mod{};
    std::array<u32, ntasks> mrecent{};
    std::array<kref::Overlap, ntasks> movl{};
    constexpr bool overlap = Placer::tracking_overlap;
    const std::array<u64, ntasks> keys = {1, 2, 3, r.p(0.2) ? ~u64{0} : 4};
    const u32 factor = static_cast<u32>(mt.llc_span[0].size());
    for (u32 i = 0; i < ntasks; ++i) {
      u32 f = 0;
      switch (r.u(0, 5)) {
        case 0: f = 0; break;
        case 1: f = static_cast<u32>(r.u(0, 3)); break;
        case 2: f = static_cast<u32>(r.u(factor > 1 ? factor - 1 : 0, factor + 2)); break;
        case 3: f = static_cast<u32>(r.u(0, 4ull * factor * factor + 8)); break;
        case 4: f = 0xffffffffu - static_cast<u32>(r.u(0, 2)); break;
        default: f = static_cast<u32>(r.u(0, 0xffffffffull)); break;
      }
      const u64 last = r.p(0.3) ? 0 : keys[r.u(0, ntasks - 1)];
      const i64 stamp = random_time(r);
      const u32 rc = r.p(0.1) ? no_cpu : (r.p(0.05) ? n + 3 : static_cast<u32>(r.u(0, n - 1)));
      lib[i].flips.flips.store(f);
      lib[i].flips.last_wakee.store(last);
      lib[i].flips.decay_stamp_ns.store(stamp);
      lib[i].recent_cpu = rc;
      mod[i] = {last, f, stamp};
      mrecent[i] = rc;
      if constexpr (overlap) {
        const std::array<i64, 6> avgs = {0, 1, 499'999, 500'000, 500'001, INT64_MAX};
        const i64 avg = r.p(0.5) ? r.pick(avgs) : static_cast<i64>(r.u(0, 2'000'000));
        const bool woke = r.p(0.5);
        const i64 at = woke ? random_time(r) : 0;
        lib[i].overlap.avg = Nanoseconds{avg};
        lib[i].overlap.woke = woke;
        lib[i].overlap.woke_at = Nanoseconds{at};
        movl[i] = {avg, at, woke};
      }
    }
    i64 now = random_time(r);
    const u32 steps = static_cast<u32>(r.u(1, 6));
    for (u32 step = 0; step < steps; ++step) {
      now = advance(r, now);
      if constexpr (overlap) {
        // Some task goes to sleep first (dequeue_task on a sleep).
        if (r.p(0.5)) {
          const u32 i = static_cast<u32>(r.u(0, ntasks - 1));
          placer.task_sleeps(lib[i], Nanoseconds{now});
          tally.deviation(kref::overlap_sleep(movl[i], now));
          if (lib[i].overlap.avg.count() != movl[i].avg || lib[i].overlap.woke != movl[i].woke) {
            tally.mismatch("overlap", std::string(era_name<Traits>()) + ": sleep at " + std::to_string(now) +
                                          " avg " + std::to_string(lib[i].overlap.avg.count()) + " vs " +
                                          std::to_string(movl[i].avg));
            movl[i] = {lib[i].overlap.avg.count(), lib[i].overlap.woke_at.count(), lib[i].overlap.woke};
          }
        }
      }
      // Machine state.
      Machine m{n};
      kref::Machine mm;
      mm.idle.assign(n, false);
      mm.nr.assign(n, 0);
      mm.load.assign(n, 0);
      mm.util_pct.assign(n, 0);
      mm.idle_core.assign(n, false);
      const std::array<double, 5> idle_p = {0.0, 0.1, 0.5, 0.9, 1.0};
      const double ip = r.pick(idle_p);
      const bool huge_loads = r.p(0.05);
      for (u32 c = 0; c < n; ++c) {
        const bool idle = r.p(ip);
        const u32 nr = idle ? 0 : static_cast<u32>(r.u(1, 3));
        u64 load = idle ? (r.p(0.2) ? r.u(0, 1024) : 0) : r.u(0, 4096);
        if (huge_loads) load = r.p(0.5) ? r.u(1ull << 47, 1ull << 50) : ~u64{0} - r.u(0, 3);
        auto& x = m.cpu(c);
        x.idle = idle;
        x.nr_running = nr;
        x.load = load;
        mm.idle[c] = idle;
        mm.nr[c] = nr;
        mm.load[c] = load;
      }
      std::map<u32, std::pair<u32, bool>> per_llc;
      const std::array<u32, 8> utils = {0, 10, 50, 80, 85, 86, 100, 130};
      for (u32 c = 0; c < n; ++c) {
        auto it = per_llc.find(mt.llc[c]);
        if (it == per_llc.end())
          it = per_llc.emplace(mt.llc[c], std::pair<u32, bool>{r.p(0.5) ? r.pick(utils) : static_cast<u32>(r.u(0, 100)),
                                                                r.p(0.5)}).first;
        m.cpu(c).llc_util_pct = it->second.first;
        m.cpu(c).idle_core_hint = it->second.second;
        mm.util_pct[c] = it->second.first;
        mm.idle_core[c] = it->second.second;
      }
      // Mask.
      std::vector<bool> mask(n, true);
      const u64 mk = r.u(0, 99);
      if (mk < 45) {
      } else if (mk < 75) {
        const double q = r.p(0.5) ? 0.5 : 0.85;
        for (u32 c = 0; c < n; ++c) mask[c] = r.p(q);
      } else if (mk < 85) {
        mask.assign(n, false);
        mask[r.u(0, n - 1)] = true;
      } else if (mk < 98) {
        const u32 pick = static_cast<u32>(r.u(0, n - 1));
        for (u32 c = 0; c < n; ++c) mask[c] = mt.llc[c] == mt.llc[pick] && r.p(0.8);
      } else {
        mask.assign(n, false);
      }
      // The wake-up.
      const bool no_waker = r.p(0.05);
      const u32 wi = static_cast<u32>(r.u(0, ntasks - 1));
      u32 ei = static_cast<u32>(r.u(0, ntasks - 1));
      if (ei == wi && r.p(0.9)) ei = (ei + 1) % ntasks;
      const u32 waking = static_cast<u32>(r.u(0, n - 1));
      u32 prev = static_cast<u32>(r.u(0, n - 1));
      if (r.p(0.3)) prev = waking;
      if (r.p(0.03)) prev = no_cpu;
      else if (r.p(0.02)) prev = n + static_cast<u32>(r.u(0, 5));
      // Most restricted masks still allow prev (the kernel's affinity
      // changes move a task off refused CPUs), so that the search under
      // a mask is compared, not only select_fallback_rq().
      if (prev < n && r.p(0.6)) mask[prev] = true;
      const testing::CpuMask lmask{mask};
      const bool sync = r.p(0.5), cur = r.p(0.05);
      const std::array<u64, 6> loads = {0, 1, 512, 1024, 3000, ~u64{0}};
      const u64 wl = r.p(0.8) ? r.pick(loads) : r.u(0, 1ull << 49);
      const u64 kl = r.p(0.8) ? r.pick(loads) : r.u(0, 1ull << 49);

      typename Placer::Wakeup w{};
      w.waker = no_waker ? nullptr : &lib[wi];
      w.waker_key = no_waker ? no_task : keys[wi];
      w.wakee = &lib[ei];
      w.wakee_key = keys[ei];
      w.waking_cpu = waking;
      w.prev_cpu = prev;
      w.sync = sync;
      w.current_cpu = cur;
      w.wakee_load = wl;
      w.waker_load = kl;

      kref::Wake kw;
      kw.waker = no_waker ? nullptr : &mod[wi];
      kw.waker_key = no_waker ? 0 : keys[wi];
      kw.wakee = &mod[ei];
      kw.wakee_key = keys[ei];
      kw.waking = waking;
      kw.prev = prev;
      kw.sync = sync;
      kw.current_cpu = cur;
      kw.wakee_load = wl;
      kw.waker_load = kl;
      kw.recent = &mrecent[ei];
      kw.now = now;
      kw.allowed = &mask;
      if constexpr (overlap) {
        kw.waker_overlap = no_waker ? INT64_MAX : movl[wi].avg;
        kw.wakee_overlap = movl[ei].avg;
      }

      std::ostringstream repro;
      repro << era_name<Traits>() << " on " << tname << ": waking " << waking << " prev " << prev << " sync " << sync
            << " current_cpu " << cur << " loads " << wl << "/" << kl << " waker "
            << (no_waker ? std::string("none") : std::to_string(mod[wi].flips) + "@" + std::to_string(mod[wi].stamp))
            << " wakee " << mod[ei].flips << " recent " << mrecent[ei] << " now " << now << " mask " << mask_string(mask)
            << " idle ";
      for (u32 c = 0; c < n; ++c) repro << (mm.idle[c] ? 'I' : '.');
      repro << " util " << mm.util_pct[waking] << "/hint " << mm.idle_core[waking];

      const Placement p = placer.place(w, m, Nanoseconds{now}, lmask);
      const kref::Outcome o = kref::place(mt, mm, era, kw);
      if constexpr (overlap) {
        if (!no_waker) movl[wi] = {movl[wi].avg, now, true};  // try_to_wake_up stamps the waker
        for (u32 i = 0; i < ntasks; ++i)
          if (lib[i].overlap.avg.count() != movl[i].avg || lib[i].overlap.woke != movl[i].woke ||
              (movl[i].woke && lib[i].overlap.woke_at.count() != movl[i].woke_at)) {
            tally.mismatch("overlap", repro.str() + " | overlap state of task " + std::to_string(i));
            movl[i] = {lib[i].overlap.avg.count(), lib[i].overlap.woke_at.count(), lib[i].overlap.woke};
          }
      }
      ++tally.cases;
      tally.deviation(o.dev);

      auto fail = [&](const std::string& category, const std::string& what) {
        std::ostringstream s;
        s << repro.str() << " | " << what << " | library cpu " << p.cpu << " target " << p.target << " "
          << to_string(p.affine) << "/" << to_string(p.reason) << " wide " << p.wide << " scanned " << p.scanned
          << " | kernel cpu " << o.cpu << " target " << o.target << " " << o.affine << "/" << o.reason << " wide "
          << o.wide << " scanned " << o.scanned;
        tally.mismatch(category, s.str());
      };
      bool resync = false;
      // The affine decision: never excused.
      if (p.wide != o.wide || p.target != o.target || std::string(to_string(p.affine)) != o.affine) {
        fail("affine", "target");
        resync = true;
      } else if (o.dev & (kref::dev_fallback_rq | kref::dev_empty_mask)) {
        // The kernel chose a CPU the mask refuses; select_fallback_rq()
        // picks prev's node's first allowed CPU. The library tests the mask
        // on every path and falls back nearest first (docs/reference.md).
        const bool any = std::find(mask.begin(), mask.end(), true) != mask.end();
        if (any && !lmask(p.cpu)) fail("affine", "library cpu not allowed");
        resync = true;
      } else {
        const std::string lr = to_string(p.reason);
        const bool reason_stable = std::string(o.reason) != "idle_smt";
        std::string what;
        if (p.cpu != o.cpu) what = "cpu";
        else if (reason_stable && lr != o.reason) what = "reason";
        else if (lib[ei].recent_cpu != mrecent[ei]) what = "recent_cpu";
        if (!what.empty()) {
          const bool searched = (era.search || era.groups_2013) && std::string(o.affine) != "current_cpu";
          fail(searched ? search_category(o.trace) : "decision", what);
          resync = true;
        } else if (era.search && !(o.trace & kref::tr_core_mode) && (o.trace & kref::tr_select_idle_cpu) &&
                   p.scanned != o.scanned) {
          const std::string c = search_category(o.trace);
          fail(c == "cluster_scan" || c == "smt_machine_wide" ? c : "scanned", "scanned");
        }
      }
      // The waker's flips after the record: never excused.
      if (!no_waker) {
        const auto& f = lib[wi].flips;
        if (f.flips.load() != mod[wi].flips || f.last_wakee.load() != mod[wi].last_wakee ||
            f.decay_stamp_ns.load() != mod[wi].stamp) {
          fail("flips", "flip state " + std::to_string(f.flips.load()) + "@" +
                            std::to_string(f.decay_stamp_ns.load()) + " vs " + std::to_string(mod[wi].flips) + "@" +
                            std::to_string(mod[wi].stamp));
          resync = true;
        }
      }
      if (resync) {
        for (u32 i = 0; i < ntasks; ++i) {
          mod[i] = {lib[i].flips.last_wakee.load(), lib[i].flips.flips.load(), lib[i].flips.decay_stamp_ns.load()};
          mrecent[i] = lib[i].recent_cpu;
        }
      }
    }
  }
}

template <class T>
void run_all_eras(const T& topo, const kref::Topo& mt, Rng& r, Tally& tally, u32 sequences, const std::string& tname) {
  run_wakeups<traits::Current>(topo, mt, r, tally, sequences, tname);
  run_wakeups<LlcOnlySearch>(topo, mt, r, tally, sequences / 4 + 1, tname);
  run_wakeups<traits::Linux2013>(topo, mt, r, tally, sequences / 4 + 1, tname);
  run_wakeups<traits::Linux2013Kernel>(topo, mt, r, tally, sequences / 4 + 1, tname);
  run_wakeups<traits::AlwaysAffine>(topo, mt, r, tally, sequences / 4 + 1, tname);
  run_wakeups<traits::PrevCpu>(topo, mt, r, tally, sequences / 4 + 1, tname);
  run_wakeups<traits::Linux2008<sync_affine::Unchecked2008>>(topo, mt, r, tally, sequences / 6 + 1, tname);
  run_wakeups<traits::Linux2008<sync_affine::Balanced2008>>(topo, mt, r, tally, sequences / 6 + 1, tname);
  run_wakeups<traits::Linux2008<sync_affine::Ignored2008>>(topo, mt, r, tally, sequences / 6 + 1, tname);
}

// ---------------------------------------------------------------------------
// The newidle balance.
struct ListClock {
  const std::vector<Nanoseconds>* times;
  mutable std::size_t at = 0;
  Nanoseconds now() const noexcept { return at < times->size() ? (*times)[at++] : times->back(); }
};
static_assert(Clock<ListClock>);

template <class NewidleTraits>
kref::BalanceEra balance_era();
template <> kref::BalanceEra balance_era<newidle::StampGuard2026>() { return {}; }
template <> kref::BalanceEra balance_era<UnguardedNewidle>() {
  kref::BalanceEra e;
  e.guard_stamp = false;
  return e;
}
template <> kref::BalanceEra balance_era<newidle::BumpFailed2025>() {
  kref::BalanceEra e;
  e.bump_failed = true;
  return e;
}
template <> kref::BalanceEra balance_era<newidle::PerLevel2014>() {
  kref::BalanceEra e;
  e.shift_avg = true;
  e.gate_migration = true;
  e.gate_first_level = false;
  e.restart_on_new_max = false;
  return e;
}
template <> kref::BalanceEra balance_era<newidle::Gate2009>() {
  kref::BalanceEra e;
  e.shift_avg = true;
  e.saturate_2009 = true;
  e.gate_migration = true;
  e.gate_first_level = false;
  e.budget = false;
  e.restart_on_new_max = false;
  e.cap_on_cost = false;
  return e;
}
template <> kref::BalanceEra balance_era<newidle::NoLimit>() {
  kref::BalanceEra e;
  e.gate_first_level = false;
  e.budget = false;
  return e;
}

template <class NewidleTraits>
void run_balances(Rng& r, Tally& tally, u32 sequences, const char* name) {
  const kref::BalanceEra era = balance_era<NewidleTraits>();
  for (u32 seq = 0; seq < sequences; ++seq) {
    // 1 to 4 levels: smt, llc, node, machine.
    const u32 t = static_cast<u32>(r.u(1, 2)), c = static_cast<u32>(r.u(1, 3)), l = static_cast<u32>(r.u(1, 2)),
              nd = static_cast<u32>(r.u(1, 2));
    const UniformTopology topo{nd, l, c, t};
    using B = IdleBalancer<UniformTopology, traits::Balance<NewidleTraits>>;
    NewidleCostTracker<NewidleTraits> tracker{};
    const std::array<i64, 5> mcs = {500'000, 0, 1, 250'000, INT64_MAX};
    const std::array<i64, 4> periods = {1'000'000'000, 0, 1, INT64_MAX};
    const i64 mc = r.p(0.8) ? 500'000 : r.pick(mcs);
    const i64 period = r.p(0.8) ? 1'000'000'000 : r.pick(periods);
    tracker.migration_cost = Nanoseconds{mc};
    tracker.decay_period = Nanoseconds{period};
    const B balancer{topo, tracker};
    i64 now = random_time(r);
    auto st = balancer.make_state(0, Nanoseconds{now});
    const u32 levels = st.level_count;
    kref::NewidleState ms;
    ms.avg_idle = st.avg_idle.count();
    ms.cpu_cost = st.max_idle_balance_cost.count();
    ms.max_cost.assign(levels, 0);
    ms.last_decay.assign(levels, now);
    if (r.p(0.6)) {
      // A state met later in life: costs, averages and stamps anywhere.
      for (u32 i = 0; i < levels; ++i) {
        const i64 v = r.p(0.1) ? INT64_MAX - static_cast<i64>(r.u(0, 3)) : static_cast<i64>(r.u(0, 2'000'000));
        st.max_cost[i] = Nanoseconds{v};
        ms.max_cost[i] = v;
        const i64 d = r.p(0.1) ? random_time(r) : sat_add(now, -static_cast<i64>(r.u(0, 3'000'000'000ull)));
        st.last_decay[i] = Nanoseconds{d};
        ms.last_decay[i] = d;
      }
      kref::i128 sum = 0;
      for (i64 v : ms.max_cost) sum += v;
      const i64 cc = std::max<i64>(mc, sum > INT64_MAX ? INT64_MAX : static_cast<i64>(sum));
      st.max_idle_balance_cost = Nanoseconds{cc};
      ms.cpu_cost = cc;
      const i64 a = r.p(0.1) ? INT64_MAX : static_cast<i64>(r.u(0, 3'000'000));
      st.avg_idle = Nanoseconds{a};
      ms.avg_idle = a;
    }
    const u32 steps = static_cast<u32>(r.u(1, 8));
    for (u32 step = 0; step < steps; ++step) {
      std::ostringstream repro;
      repro << name << " levels " << levels << " mc " << mc << " period " << period << " avg_idle " << ms.avg_idle
            << " cpu_cost " << ms.cpu_cost << " stamp " << (ms.has_stamp ? std::to_string(ms.stamp) : "none")
            << " costs";
      for (u32 i = 0; i < levels; ++i) repro << " " << ms.max_cost[i] << "@" << ms.last_decay[i];
      const u64 op = r.u(0, 9);
      u32 dev = 0;
      std::string what;
      if (op < 5) {
        std::vector<bool> pulls(levels);
        for (u32 i = 0; i < levels; ++i) pulls[i] = r.p(0.3);
        std::vector<Nanoseconds> times;
        std::vector<i64> mtimes;
        i64 t0 = advance(r, now);
        times.push_back(Nanoseconds{t0});
        mtimes.push_back(t0);
        for (u32 i = 0; i < levels; ++i) {
          i64 t1 = r.p(0.9) ? sat_add(t0, static_cast<i64>(r.u(0, 800'000))) : advance(r, t0);
          if (t1 < t0 && r.p(0.5)) t1 = t0;
          times.push_back(Nanoseconds{t1});
          mtimes.push_back(t1);
          t0 = t1;
        }
        now = t0;
        const bool overloaded = r.p(0.9);
        const ListClock clock{&times};
        const auto res = balancer.balance(0, st, [&](std::uint32_t i, LevelKind, auto) noexcept { return static_cast<bool>(pulls[i]); },
                                          clock, overloaded ? Overload::some : Overload::none);
        const kref::BalanceOut ko = kref::balance(era, ms, overloaded, pulls, mtimes, mc, period);
        dev |= ko.dev;
        repro << " | balance pulls";
        for (bool b : pulls) repro << b;
        repro << " times";
        for (i64 x : mtimes) repro << " " << x;
        repro << " overloaded " << overloaded;
        if (std::string(to_string(res.outcome)) != ko.outcome || res.levels_visited != ko.visited ||
            (ko.outcome == std::string("budget") && res.stopped_before != ko.stopped_before) ||
            (ko.outcome == std::string("pulled") && res.pulled_level != ko.pulled_level) || res.spent.count() != ko.spent)
          what = std::string("result ") + to_string(res.outcome) + " visited " + std::to_string(res.levels_visited) +
                 " vs " + ko.outcome + " visited " + std::to_string(ko.visited);
      } else if (op < 8) {
        now = advance(r, now);
        balancer.idle_end(st, Nanoseconds{now});
        dev |= kref::idle_end(era, ms, now, mc);
        repro << " | idle_end at " << now;
      } else {
        now = advance(r, now);
        balancer.tick(st, Nanoseconds{now});
        dev |= kref::tick(era, ms, now, mc, period);
        repro << " | tick at " << now;
      }
      ++tally.cases;
      tally.deviation(dev);
      // The state after the step.
      if (what.empty()) {
        if (st.avg_idle.count() != ms.avg_idle) what = "avg_idle " + std::to_string(st.avg_idle.count()) + " vs " + std::to_string(ms.avg_idle);
        else if (st.has_stamp != ms.has_stamp || (ms.has_stamp && st.idle_stamp.count() != ms.stamp)) what = "stamp";
        else if (st.max_idle_balance_cost.count() != ms.cpu_cost) what = "cpu_cost";
        else
          for (u32 i = 0; i < levels && what.empty(); ++i)
            if (st.max_cost[i].count() != ms.max_cost[i] || st.last_decay[i].count() != ms.last_decay[i])
              what = "level " + std::to_string(i) + " cost " + std::to_string(st.max_cost[i].count()) + "@" +
                     std::to_string(st.last_decay[i].count()) + " vs " + std::to_string(ms.max_cost[i]) + "@" +
                     std::to_string(ms.last_decay[i]);
      }
      if (!what.empty()) {
        // Categories: the stamp a pull leaves (point 7 of the search fix),
        // a decay whose elapsed time saturates (point 8), else newidle.
        std::string cat = "newidle";
        if (!era.guard_stamp && op >= 5 && op < 8) cat = "pull_stamp";
        if (period == INT64_MAX && (what.rfind("level", 0) == 0 || what == "cpu_cost" || what.rfind("avg_idle", 0) == 0 ||
                                    what.rfind("result", 0) == 0))
          cat = "decay_saturated";
        tally.mismatch(cat, repro.str() + " | " + what);
        // Adopt the library's state so that the sequence goes on comparing.
        ms.avg_idle = st.avg_idle.count();
        ms.has_stamp = st.has_stamp;
        ms.stamp = st.idle_stamp.count();
        ms.cpu_cost = st.max_idle_balance_cost.count();
        for (u32 i = 0; i < levels; ++i) {
          ms.max_cost[i] = st.max_cost[i].count();
          ms.last_decay[i] = st.last_decay[i].count();
        }
      }
    }
  }
}

void report(const Tally& t, u64 seed) {
  std::printf("reference: seed %llu, %llu cases\n", static_cast<unsigned long long>(seed),
              static_cast<unsigned long long>(t.cases));
  for (const auto& [k, v] : t.deviations)
    std::printf("  deviation %-20s %llu (documented, not a failure)\n", k.c_str(), static_cast<unsigned long long>(v));
  for (const auto& [k, v] : t.mismatches) {
    std::printf("  mismatch  %-20s %llu%s\n", k.c_str(), static_cast<unsigned long long>(v),
                excused(k) ? " (known divergence, its switch is off)" : " (FAILURE)");
    for (const auto& e : t.examples.at(k)) std::printf("    e.g. %s\n", e.c_str());
  }
  std::fflush(stdout);
}

u64 failures(const Tally& t) {
  u64 f = 0;
  for (const auto& [k, v] : t.mismatches)
    if (!excused(k)) f += v;
  return f;
}

}  // namespace

TEST_CASE("the wake-up placement and the newidle balance decide as the kernel model does", "[reference]") {
  const u64 seed = env_u64("TASKPLACE_REFERENCE_SEED", 20261206);
  const u64 scale = std::max<u64>(1, env_u64("TASKPLACE_REFERENCE_SCALE", 1));
  Rng r{std::mt19937_64{seed}};
  Tally tally;

  // Topologies: uniform (both numberings), then tables (shuffled and
  // siblings-last numbering, mixed core sizes, clusters, nodes inside an
  // LLC), then the edges (one CPU, one LLC of one core).
  const u32 uniform_rounds = static_cast<u32>(64 * scale), table_rounds = static_cast<u32>(64 * scale);
  for (u32 i = 0; i < uniform_rounds; ++i) {
    const u32 nodes = static_cast<u32>(r.u(1, 2)), llcs = static_cast<u32>(r.u(1, 3)),
              cores = static_cast<u32>(r.u(1, 8)), threads = static_cast<u32>(r.u(1, 3));
    const bool smt_last = r.p(0.5);
    const UniformTopology topo{nodes, llcs, cores, threads, smt_last ? CpuNumbering::smt_last : CpuNumbering::nested};
    const kref::Topo mt = uniform_labels(nodes, llcs, cores, threads, smt_last);
    std::string why;
    if (!same_partition(topo, mt, why)) tally.mismatch("topology", "uniform " + why);
    const std::string name = "Uniform{" + std::to_string(nodes) + "," + std::to_string(llcs) + "," +
                             std::to_string(cores) + "," + std::to_string(threads) +
                             (smt_last ? ",smt_last}" : ",nested}");
    run_all_eras(topo, mt, r, tally, 1000, name);
  }
  for (u32 i = 0; i < table_rounds; ++i) {
    TableLabels tl = table_labels(r);
    const auto& mt = tl.model;
    const TableTopology topo = tl.clusters ? TableTopology::with_clusters(mt.core, mt.cluster, mt.llc, mt.node)
                                           : TableTopology(mt.core, mt.llc, mt.node);
    std::string why;
    if (!same_partition(topo, mt, why)) tally.mismatch("topology", "table " + why);
    std::string name = std::string("Table{") + std::to_string(mt.n) + " cpus" + (tl.clusters ? ", clusters" : "") + "}";
    run_all_eras(topo, mt, r, tally, 1000, name);
  }
  {
    const UniformTopology one{1, 1, 1, 1};
    run_all_eras(one, uniform_labels(1, 1, 1, 1, false), r, tally, 2000, "Uniform{1,1,1,1}");
    const UniformTopology smt_only{1, 4, 1, 2, CpuNumbering::smt_last};
    run_all_eras(smt_only, uniform_labels(1, 4, 1, 2, true), r, tally, 2000, "Uniform{1,4,1,2,smt_last}");
  }
  // The newidle balance, every shipped era and the unguarded stamp.
  const u32 bal = static_cast<u32>(6000 * scale);
  run_balances<newidle::StampGuard2026>(r, tally, bal, "StampGuard2026");
  run_balances<newidle::BumpFailed2025>(r, tally, bal / 2, "BumpFailed2025");
  run_balances<newidle::PerLevel2014>(r, tally, bal / 2, "PerLevel2014");
  run_balances<newidle::Gate2009>(r, tally, bal / 2, "Gate2009");
  run_balances<newidle::NoLimit>(r, tally, bal / 2, "NoLimit");
  run_balances<UnguardedNewidle>(r, tally, bal / 2, "Unguarded");

  report(tally, seed);
  CHECK(tally.cases >= 1'000'000 * std::min<u64>(scale, 1));
  CHECK(failures(tally) == 0);
}
