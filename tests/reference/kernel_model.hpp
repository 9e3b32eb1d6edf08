// tests/reference/kernel_model.hpp: an independent model of the Linux
// kernel's wake-up placement and newidle-balance gate, for the differential
// test (differential.test.cpp).
//
// Written from the semantics of kernel/sched/fair.c (v6.x, and the older
// releases each era names), not from taskplace: plain structs, masks as
// std::vector<bool>, its own arithmetic (exact 128-bit where the kernel's C
// would wrap). It includes no taskplace header. Comments name the kernel
// functions each step follows.
//
// Where taskplace documents a deliberate difference from the kernel (flips
// saturate, a clock that goes back is no time passing, loads clamped at
// 2^48, ...), the model computes the kernel's answer, records the
// difference as a deviation flag, and goes on with the documented rule, so
// that later steps of a sequence still compare.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string_view>
#include <vector>

namespace kref {

using u32 = std::uint32_t;
using u64 = std::uint64_t;
using i64 = std::int64_t;
__extension__ using i128 = __int128;
inline constexpr u32 none = 0xffffffffu;

// Deviations: documented library choices that differ from the kernel.
enum Dev : u32 {
  dev_flip_saturation = 1u << 0,  // flips stop at UINT32_MAX (kernel: unsigned int wraps)
  dev_clock_rule = 1u << 1,       // a clock gone back / 2^63 apart: no time passed, exact differences
  dev_wide_product = 1u << 2,     // the wide rule's product is exact (kernel: 32-bit wrap)
  dev_affine_clamp = 1u << 3,     // loads clamped at 2^48 in the affine load test
  dev_fallback_rq = 1u << 4,      // kernel picked a CPU the mask refuses: select_fallback_rq
  dev_empty_mask = 1u << 5,       // the task allows no CPU at all
  dev_stamp_zero = 1u << 6,       // an idle stamp taken at time 0 (kernel: 0 means none)
  dev_cpu_cost_sum = 1u << 7,     // CPU-wide balance cost kept as the floored sum at every record
  dev_cost_scale = 1u << 8,       // the 253/256 decay multiply is exact (kernel: 64-bit wrap)
  dev_avg_rounding = 1u << 9,     // update_avg divides (toward 0); kernels before 2020 shifted (toward -inf)
  dev_sync_underflow = 1u << 10,  // 2008: this CPU's load less the waker's clamped at 0 (kernel: wraps)
  dev_count = 11,
};
inline const char* dev_name(u32 bit) {
  static const char* names[] = {"flip_saturation", "clock_rule",     "wide_product",
                                "affine_clamp",    "fallback_rq",    "empty_mask",
                                "stamp_zero",      "cpu_cost_sum",   "cost_scale",
                                "avg_rounding",    "sync_underflow"};
  return bit < dev_count ? names[bit] : "?";
}

// Facts about the kernel path a decision took, used to name the category
// of a mismatch (see differential.test.cpp).
enum Trace : u32 {
  tr_select_idle_cpu = 1u << 0,   // reached select_idle_cpu()
  tr_budget_zero_core = 1u << 1,  // SIS_UTIL budget 0 with the idle-core hint set
  tr_mask_in_llc = 1u << 2,       // the mask refuses some CPU of the target's LLC
  tr_core_mode = 1u << 3,         // select_idle_core() walk (hint set)
  tr_core_partial = 1u << 4,      // core mode found no whole idle core
  tr_idle_smt = 1u << 5,          // select_idle_smt() found prev's idle sibling
  tr_cluster = 1u << 6,           // the target has a cluster domain (sched_cluster_active)
  tr_smt_elsewhere = 1u << 7,     // SMT is active but the target's core has one CPU
  tr_noncontig_core = 1u << 8,    // some core of the LLC is not contiguous in CPU numbers
};

// ---------------------------------------------------------------------------
// Topology: group labels per CPU; spans derived once.
struct Topo {
  u32 n = 0;
  std::vector<u32> core, cluster, llc, node;  // labels; equal label = same group
  // Derived.
  std::vector<std::vector<u32>> smt_span, cluster_span, llc_span, node_span;
  std::vector<bool> has_cluster_level;  // the CPU has a CLS domain
  bool smt_active = false;              // kernel: sched_smt_present
  // kernel: sched_cluster_active (also set by a CLS domain as big as its
  // LLC, where every id is the LLC's: no decision differs).
  bool cluster_active = false;

  static std::vector<std::vector<u32>> spans(const std::vector<u32>& label) {
    std::vector<std::vector<u32>> out(label.size());
    for (u32 c = 0; c < label.size(); ++c)
      for (u32 x = 0; x < label.size(); ++x)
        if (label[x] == label[c]) out[c].push_back(x);
    return out;
  }
  void finish() {
    n = static_cast<u32>(core.size());
    if (cluster.empty()) cluster = core;
    smt_span = spans(core);
    cluster_span = spans(cluster);
    llc_span = spans(llc);
    node_span = spans(node);
    has_cluster_level.assign(n, false);
    smt_active = cluster_active = false;
    for (u32 c = 0; c < n; ++c) {
      if (smt_span[c].size() >= 2) smt_active = true;
      // A domain spanning no more than its child, or as much as its parent,
      // is degenerate and removed (sd_degenerate / sd_parent_degenerate).
      if (cluster_span[c].size() > smt_span[c].size() && cluster_span[c].size() < llc_span[c].size()) {
        has_cluster_level[c] = true;
        cluster_active = true;
      }
    }
  }
  bool share_cache(u32 a, u32 b) const { return a == b || (a < n && b < n && llc[a] == llc[b]); }
  // kernel sd_share_id (update_top_cache_domain()): the first CPU of the
  // CPU's lowest SD_CLUSTER domain where it has one, else sd_llc_id, the
  // first CPU of its LLC. (A cluster as big as the LLC keeps its CLS
  // domain, the MC one being the degenerate parent, and its first CPU is
  // the LLC's: the same id.)
  u32 share_id(u32 c) const { return has_cluster_level[c] ? cluster_span[c][0] : llc_span[c][0]; }
  // kernel cpus_share_resources(): equal sd_share_id. A CPU without a
  // cluster level and a cluster whose first CPU is the LLC's first share.
  bool share_resources(u32 a, u32 b) const { return a == b || (a < n && b < n && share_id(a) == share_id(b)); }
  bool siblings(u32 a, u32 b) const { return core[a] == core[b]; }
};

// ---------------------------------------------------------------------------
// Machine state at the wake-up, as select_task_rq_fair() reads it.
struct Machine {
  std::vector<bool> idle;      // available_idle_cpu()
  std::vector<u32> nr;         // rq->nr_running
  std::vector<u64> load;       // cpu_load()
  std::vector<u32> util_pct;   // the LLC's utilisation, per CPU (one value per LLC)
  std::vector<bool> idle_core; // sd_llc_shared->has_idle_cores, per CPU (one per LLC)
};

// The SIS_UTIL scan budget, from the LLC's utilisation in percent
// (update_idle_cpu_scan(): nr = llc_weight * (1 - (pct/100 * x)^2) with
// imbalance_pct 117, 0 from x = 100/117 on).
inline u32 sis_budget(u32 llc_weight, u32 util_pct) {
  const u64 u = std::min<u32>(util_pct, 100);
  const u64 x = 117 * u;  // (1.17 * u / 100) in units of 1e-4
  const u64 sq = x * x;   // units of 1e-8
  if (sq >= 100000000ull) return 0;
  return static_cast<u32>(static_cast<u64>(llc_weight) * (100000000ull - sq) / 100000000ull);
}

// ---------------------------------------------------------------------------
// record_wakee(), wake_wide().
struct Flips {
  u64 last_wakee = 0;
  u32 flips = 0;
  i64 stamp = 0;
};
enum class FlipEra { halve_2014, wipe_2013 };
enum class WideEra { symmetric_2015, one_sided_2013, never };

// The library's rule for "now is strictly more than `period` after `stamp`":
// exact, a clock that went back is no time.
inline bool after_exact(i64 now, i64 stamp, i64 period) {
  if (now <= stamp) return false;
  return static_cast<i128>(now) - stamp > period;
}

inline u32 record_wakee(Flips& f, FlipEra era, u64 wakee, i64 now, i64 period) {
  u32 dev = 0;
  bool kernel_decays;
  if (era == FlipEra::halve_2014) {
    // v3.17+: time_after(jiffies, stamp + HZ), wrapping arithmetic.
    kernel_decays = static_cast<i64>(static_cast<u64>(f.stamp) + static_cast<u64>(period) - static_cast<u64>(now)) < 0;
  } else {
    // v3.12: jiffies > stamp + HZ, unsigned, the sum wrapping.
    kernel_decays = static_cast<u64>(now) > static_cast<u64>(f.stamp) + static_cast<u64>(period);
  }
  const bool lib_decays = after_exact(now, f.stamp, period);
  if (kernel_decays != lib_decays) dev |= dev_clock_rule;
  if (lib_decays) {
    f.flips = era == FlipEra::halve_2014 ? f.flips >> 1 : 0u;
    f.stamp = now;
  }
  if (f.last_wakee != wakee) {
    f.last_wakee = wakee;
    if (f.flips == 0xffffffffu) dev |= dev_flip_saturation;  // kernel wraps to 0
    else ++f.flips;
  }
  return dev;
}

inline bool wake_wide(WideEra era, u32 waker, u32 wakee, u32 factor, u32& dev) {
  switch (era) {
    case WideEra::never: return false;
    case WideEra::symmetric_2015: {
      // v4.3+: master = the larger, slave = the smaller; not wide when
      // slave < factor || master < slave * factor.
      const u32 master = std::max(waker, wakee), slave = std::min(waker, wakee);
      const bool exact = !(slave < factor || static_cast<u64>(master) < static_cast<u64>(slave) * factor);
      const bool wrapped = !(slave < factor || master < static_cast<u32>(slave * factor));
      if (exact != wrapped) dev |= dev_wide_product;
      return exact;
    }
    case WideEra::one_sided_2013: {
      // v3.12: wide when p->wakee_flips > factor && current->wakee_flips > factor * p->wakee_flips.
      const bool exact = wakee > factor && static_cast<u64>(waker) > static_cast<u64>(factor) * wakee;
      const bool wrapped = wakee > factor && waker > static_cast<u32>(factor * wakee);
      if (exact != wrapped) dev |= dev_wide_product;
      return exact;
    }
  }
  return false;
}

// ---------------------------------------------------------------------------
// The wake-up. Reason names match the library's strings where a path has
// one, so the test can compare them.
enum class AffineEra { wake_affine, always, never, unchecked_2008, balanced_2008, ignored_2008, wake_affine_2013 };
struct Era {
  FlipEra flips = FlipEra::halve_2014;
  WideEra wide = WideEra::symmetric_2015;
  AffineEra affine = AffineEra::wake_affine;
  bool search = true;
  bool cluster = true;  // v6.8: the cluster walk and cpus_share_resources() (SIS with clusters)
  // v3.9-v4.8: select_idle_sibling()'s group walk, run only under an
  // affine domain (select_task_rq_fair() of those releases).
  bool groups_2013 = false;
};

struct Wake {
  Flips* waker = nullptr;  // null: no waking task (nothing recorded)
  u64 waker_key = 0;
  Flips* wakee = nullptr;
  u64 wakee_key = 0;
  u32 waking = 0;
  u32 prev = none;  // invalid: read as the waking CPU
  bool sync = false;
  bool current_cpu = false;  // WF_CURRENT_CPU
  u64 wakee_load = 1024, waker_load = 1024;
  u32* recent = nullptr;  // p->recent_used_cpu
  i64 now = 0;
  i64 flip_period = 1000000000;
  const std::vector<bool>* allowed = nullptr;
  // 2008: se.avg_overlap of the waker (current) and the wakee; the
  // largest value means unknown (no waking task).
  i64 waker_overlap = INT64_MAX, wakee_overlap = INT64_MAX;
  i64 migration_cost = 500000;  // sysctl_sched_migration_cost
};

struct Outcome {
  u32 cpu = none, target = none;
  bool wide = false;
  const char* affine = "";
  const char* reason = "";
  u32 scanned = 0;  // CPUs counted against the SIS_UTIL budget
  bool cleared_hint = false;
  u32 dev = 0;
  u32 trace = 0;
};

namespace detail {
inline bool allowed(const Wake& w, u32 c) { return c < w.allowed->size() && (*w.allowed)[c]; }

// wake_affine(): wake_affine_idle() (WA_IDLE), then wake_affine_weight()
// (WA_WEIGHT with WA_BIAS); imbalance_pct 110 in the SMT domain, 117 above.
inline void wake_affine(const Topo& t, const Machine& m, const Wake& w, u32 waking, u32 prev, Outcome& o) {
  if (m.idle[waking] && t.share_cache(waking, prev)) {
    if (m.idle[prev]) { o.target = prev; o.affine = "idle_prev"; }
    else { o.target = waking; o.affine = "idle_waking"; }
    return;
  }
  if (w.sync && m.nr[waking] == 1) { o.target = waking; o.affine = "sync"; return; }
  if (m.idle[prev]) { o.target = prev; o.affine = "prev_idle"; return; }
  // Weight, exact: this = load(waking) [- current if sync] + task; prev = load(prev) - task.
  const auto verdict = [&](u64 lw, u64 lp, u64 task, u64 cur) {
    i128 this_eff = lw;
    if (w.sync) {
      if (static_cast<i128>(cur) > this_eff) return true;
      this_eff -= cur;
    }
    this_eff += task;
    this_eff *= 100;  // times capacity_of(prev): every CPU has the same capacity
    const u32 pct = t.siblings(waking, prev) ? 110 : 117;
    i128 prev_eff = static_cast<i128>(lp) - task;
    prev_eff *= 100 + (pct - 100) / 2;
    if (w.sync) prev_eff += 1;
    return this_eff < prev_eff;
  };
  const bool kernel = verdict(m.load[waking], m.load[prev], w.wakee_load, w.waker_load);
  constexpr u64 cap = u64{1} << 48;
  const bool clamped = verdict(std::min(m.load[waking], cap), std::min(m.load[prev], cap),
                               std::min(w.wakee_load, cap), std::min(w.waker_load, cap));
  if (kernel != clamped) o.dev |= dev_affine_clamp;
  if (clamped) { o.target = waking; o.affine = "load_waking"; }
  else { o.target = prev; o.affine = "load_prev"; }
}

// The wake_affine() of 2.6.25 / 2.6.26: this CPU's load less the waker's
// weight on a sync wake-up; balanced = 100 * (tl + weight of p) <= imbalance
// * load(prev), imbalance = 100 + (pct - 100) / 2 with pct 125 (110 between
// SMT siblings); a sync wake-up of two tasks whose avg_overlap are both
// below migration_cost pulls (2.6.26: only when balanced); then pull when
// (tl <= load(prev) && tl + load(prev) <= this CPU's load per task) ||
// balanced. The load per task of a CPU running nothing reads as one nice-0
// task (1024); target_load/source_load read as load(c).
inline void wake_affine_2008(const Topo& t, const Machine& m, const Wake& w, AffineEra era, u32 waking, u32 prev,
                             Outcome& o) {
  const bool sync = era != AffineEra::ignored_2008 && w.sync;  // SCHED_FEAT_SYNC_WAKEUPS off: no hint
  const u32 pct = t.siblings(waking, prev) ? 110 : 125;
  const u64 imbalance = 100 + (pct - 100) / 2;
  // raw_this: load(this CPU); tl: it less the waker's weight when sync.
  const auto decide = [&](i128 tl, u64 raw_this, u64 load, u64 weight, const char*& reason) {
    const bool balanced = 100 * (tl + weight) <= static_cast<i128>(imbalance) * load;
    if (sync && (balanced || era == AffineEra::unchecked_2008) && w.waker_overlap < w.migration_cost &&
        w.wakee_overlap < w.migration_cost) {
      reason = "sync_overlap";
      return true;
    }
    const u32 running = m.nr[waking];
    const u64 per_task = running == 0 ? 1024 : raw_this / running;
    if ((tl <= load && tl + load <= per_task) || balanced) {
      reason = "load_waking";
      return true;
    }
    reason = "load_prev";
    return false;
  };
  const u64 raw = m.load[waking], load = m.load[prev], weight = w.wakee_load, cur = w.waker_load;
  // The kernel's unsigned long: tl - weight of current wraps below zero.
  const u64 wrapped_tl = sync ? raw - cur : raw;
  const auto clamped_tl = [&](u64 r, u64 c) -> i128 { return sync ? (r > c ? r - c : 0) : r; };
  const char* kr = "";
  const char* er = "";
  const char* lr = "";
  const bool kernel = decide(static_cast<i128>(wrapped_tl), raw, load, weight, kr);
  const bool exact = decide(clamped_tl(raw, cur), raw, load, weight, er);
  if (kernel != exact || std::string_view(kr) != er) o.dev |= dev_sync_underflow;
  // Loads are clamped at 2^48 in the library.
  constexpr u64 cap = u64{1} << 48;
  const u64 rc = std::min(raw, cap), lc = std::min(load, cap), wc = std::min(weight, cap), cc = std::min(cur, cap);
  const bool lib = decide(clamped_tl(rc, cc), rc, lc, wc, lr);
  if (lib != exact || std::string_view(lr) != er) o.dev |= dev_affine_clamp;
  o.target = lib ? waking : prev;
  o.affine = lr;
}

// The wake_affine() of v3.12 (2.6.36 to v3.15). wake_idx is 0, so
// source_load(prev) and target_load(this) are both the runnable load;
// without group scheduling effective_load(tg, cpu, wl, wg) is wl. With
// this_load = load(this) - weight(current) when sync (s64), load =
// load(prev), weight = the wakee's weight:
//   balanced = this_load <= 0 ||
//              100 * power(prev) * (this_load + weight) <= (100 + (pct - 100) / 2) * power(this) * load
//   sync && balanced: pull; then pull if balanced ||
//   (this_load <= load && this_load + load <= cpu_avg_load_per_task(this)),
//   the latter load(this) / nr_running(this), 0 for an empty runqueue.
// pct: the affine domain's imbalance_pct, 110 at SMT (SD_SIBLING_INIT),
// 125 above (SD_MC_INIT, SD_CPU_INIT, the NUMA levels). power: cpu_power,
// SCHED_POWER_SCALE (1024), or for a CPU whose lowest domain is an SMT
// domain of w CPUs smt_gain / w (1178 / w, default_scale_smt_power()).
inline void wake_affine_2013(const Topo& t, const Machine& m, const Wake& w, u32 waking, u32 prev, Outcome& o) {
  const auto power = [&](u32 c) -> i128 {
    const auto sz = static_cast<u32>(t.smt_span[c].size());
    return sz >= 2 ? 1178 / sz : 1024;
  };
  const u32 pct = t.siblings(waking, prev) ? 110 : 125;
  const i128 imbalance = 100 + (pct - 100) / 2;
  const auto decide = [&](u64 raw_this, u64 load, u64 weight, u64 cur) {
    i128 this_load = raw_this;
    if (w.sync) this_load -= cur;
    bool balanced = true;
    if (this_load > 0)
      balanced = 100 * power(prev) * (this_load + weight) <= imbalance * power(waking) * static_cast<i128>(load);
    if (w.sync && balanced) return true;
    const u32 running = m.nr[waking];
    const i128 per_task = running == 0 ? 0 : static_cast<i128>(raw_this / running);
    return balanced || (this_load <= static_cast<i128>(load) && this_load + static_cast<i128>(load) <= per_task);
  };
  const bool kernel = decide(m.load[waking], m.load[prev], w.wakee_load, w.waker_load);
  constexpr u64 cap = u64{1} << 48;
  const bool clamped = decide(std::min(m.load[waking], cap), std::min(m.load[prev], cap),
                              std::min(w.wakee_load, cap), std::min(w.waker_load, cap));
  if (kernel != clamped) o.dev |= dev_affine_clamp;
  if (clamped) { o.target = waking; o.affine = "load_waking"; }
  else { o.target = prev; o.affine = "load_prev"; }
}

// The walk order of for_each_cpu_wrap(cpu, span, target + 1).
inline std::vector<u32> wrap_order(const std::vector<u32>& span, u32 target, u32 n) {
  std::vector<u32> out(span);
  const u32 start = (target + 1) % n;
  std::stable_sort(out.begin(), out.end(), [&](u32 a, u32 b) { return (a + n - start) % n < (b + n - start) % n; });
  return out;
}

// select_idle_core(): is `core`'s whole SMT mask idle? Records the first
// idle CPU of the mask that `cpus` holds in *idle_cpu (if none yet); a core
// that is not idle leaves `cpus` without its mask.
inline bool idle_core(const Topo& t, const Machine& m, u32 core, std::vector<bool>& cpus, u32& idle_cpu) {
  bool idle = true;
  for (u32 c : t.smt_span[core]) {
    if (!m.idle[c]) { idle = false; continue; }
    if (idle_cpu == none && cpus[c]) idle_cpu = c;
  }
  if (!idle)
    for (u32 c : t.smt_span[core]) cpus[c] = false;
  return idle;
}

// select_idle_cpu(): none means "nothing found".
inline u32 select_idle_cpu(const Topo& t, const Machine& m, const Wake& w, bool has_idle_core, u32 target,
                           bool clusters, Outcome& o) {
  const auto& llc = t.llc_span[target];
  std::vector<bool> cpus(t.n, false);  // sched_domain_span(sd) & p->cpus_ptr
  for (u32 c : llc) cpus[c] = allowed(w, c);
  // SIS_UTIL: nr = nr_idle_scan + 1; "!--nr" stops the scan.
  const u32 budget = sis_budget(static_cast<u32>(llc.size()), m.util_pct[target]);
  if (budget == 0) {
    if (has_idle_core) o.trace |= tr_budget_zero_core;
    return none;
  }
  i64 nr = static_cast<i64>(budget) + 1;
  u32 idle_cpu = none;
  auto step = [&](u32 cpu, bool& stop) -> u32 {
    if (has_idle_core) {
      if (idle_core(t, m, cpu, cpus, idle_cpu)) { stop = true; o.reason = "idle_core"; return cpu; }
      return none;
    }
    if (--nr <= 0) { stop = true; return none; }
    ++o.scanned;
    if (m.idle[cpu]) { stop = true; o.reason = "idle_scan"; return cpu; }
    return none;
  };
  // The target's cluster first (v6.8+, sched_cluster_active; sd->groups
  // carries SD_CLUSTER where the target has a cluster level).
  if (clusters && t.cluster_active && t.has_cluster_level[target]) {
    for (u32 cpu : wrap_order(t.cluster_span[target], target, t.n)) {
      if (!cpus[cpu]) continue;
      bool stop = false;
      const u32 r = step(cpu, stop);
      if (stop) return r;
    }
    for (u32 c : t.cluster_span[target]) cpus[c] = false;
  }
  for (u32 cpu : wrap_order(llc, target, t.n)) {
    if (!cpus[cpu]) continue;
    bool stop = false;
    const u32 r = step(cpu, stop);
    if (stop) return r;
  }
  if (has_idle_core) {
    o.trace |= tr_core_partial;
    o.cleared_hint = true;  // set_idle_cores(target, false)
    if (idle_cpu != none) o.reason = "idle_scan";
  }
  return idle_cpu;
}

// select_idle_sibling().
inline u32 select_idle_sibling(const Topo& t, const Machine& m, const Wake& w, u32 prev, u32 target, bool clusters,
                               Outcome& o) {
  const bool cl = clusters && t.cluster_active;
  if (m.idle[target]) { o.reason = "idle_target"; return target; }
  u32 prev_aff = none;
  if (prev != target && t.share_cache(prev, target) && m.idle[prev]) {
    if (!cl || t.share_resources(prev, target)) { o.reason = "idle_prev"; return prev; }
    prev_aff = prev;
    o.trace |= tr_cluster;
  }
  u32 recent = *w.recent;
  *w.recent = prev;
  if (recent < t.n && recent != prev && recent != target && t.share_cache(recent, target) && m.idle[recent] &&
      allowed(w, recent)) {
    if (!cl || t.share_resources(recent, target)) { o.reason = "idle_recent"; return recent; }
    o.trace |= tr_cluster;
  } else {
    recent = none;
  }
  // sd_llc: none for a one-CPU LLC (its domains are degenerate).
  if (t.llc_span[target].size() <= 1) { o.reason = "target_busy"; return target; }
  o.trace |= tr_select_idle_cpu;
  for (u32 c : t.llc_span[target]) if (!allowed(w, c)) o.trace |= tr_mask_in_llc;
  for (u32 c : t.llc_span[target]) {
    const auto& s = t.smt_span[c];
    for (std::size_t i = 1; i < s.size(); ++i) if (s[i] != s[i - 1] + 1) o.trace |= tr_noncontig_core;
  }
  if (cl && t.has_cluster_level[target]) o.trace |= tr_cluster;
  bool has_idle_core = false;
  if (t.smt_active) {
    if (t.smt_span[target].size() < 2) o.trace |= tr_smt_elsewhere;
    has_idle_core = m.idle_core[target];
    if (has_idle_core) o.trace |= tr_core_mode;
    if (!has_idle_core && t.share_cache(prev, target)) {
      // select_idle_smt(p, sd, prev): an idle, allowed SMT sibling of prev
      // inside the target's LLC domain.
      for (u32 c : t.smt_span[prev]) {
        if (c == prev || !allowed(w, c) || !t.share_cache(c, target)) continue;
        if (m.idle[c]) {
          o.trace |= tr_idle_smt;
          o.reason = "idle_smt";
          return c;
        }
      }
    }
  }
  const u32 i = select_idle_cpu(t, m, w, has_idle_core, target, clusters, o);
  if (i != none) return i;
  if (prev_aff != none) { o.reason = "idle_prev"; return prev_aff; }
  if (recent != none) { o.reason = "idle_recent"; return recent; }
  o.reason = "target_busy";
  return target;
}

// select_idle_sibling() of v3.9-v4.8. The target if idle; prev if idle,
// not the target and cache-affine (neither tested against the mask:
// select_task_rq()'s fallback corrects that); else, from sd_llc of the
// target down its child domains (for_each_lower_domain), the groups of
// each domain as a ring starting at the target's own group: the first
// group that intersects the mask and whose CPUs are all idle and none the
// target gives its first allowed CPU (cpumask_first_and). The groups of a
// domain are its child level's spans for each CPU of it (build_sched_groups
// reads the child per CPU before degenerate domains go: the SMT masks at
// the LLC level, single CPUs at the SMT level), linked in the order of
// their first CPUs. Domains: the LLC's (MC) with the SMT one below it when
// the target's core has siblings; a core as big as the LLC leaves the SMT
// domain alone as sd_llc (MC degenerate); a one-CPU LLC has none (sd_llc
// NULL: the target). Reason: idle_core for a group of the MC level,
// idle_scan for one of the SMT level.
inline u32 select_idle_sibling_2013(const Topo& t, const Machine& m, const Wake& w, u32 prev, u32 target,
                                    Outcome& o) {
  if (m.idle[target]) { o.reason = "idle_target"; return target; }
  if (prev != target && t.share_cache(prev, target) && m.idle[prev]) { o.reason = "idle_prev"; return prev; }
  o.reason = "target_busy";
  const auto& llc = t.llc_span[target];
  if (llc.size() <= 1) return target;
  struct Level {
    std::vector<std::vector<u32>> groups;  // in ring order from the target's group
    const char* reason;
  };
  const auto ring = [&](const std::vector<u32>& span, bool cores) {
    std::vector<std::vector<u32>> groups;
    std::vector<bool> covered(t.n, false);
    for (u32 c : span) {  // ascending: each group appended at its first CPU
      if (covered[c]) continue;
      std::vector<u32> g = cores ? t.smt_span[c] : std::vector<u32>{c};
      for (u32 x : g) covered[x] = true;
      groups.push_back(g);
    }
    std::size_t own = 0;
    for (std::size_t i = 0; i < groups.size(); ++i)
      if (std::find(groups[i].begin(), groups[i].end(), target) != groups[i].end()) own = i;
    std::rotate(groups.begin(), groups.begin() + static_cast<std::ptrdiff_t>(own), groups.end());
    return groups;
  };
  std::vector<Level> levels;
  const auto& smt = t.smt_span[target];
  if (smt.size() >= llc.size()) {
    levels.push_back({ring(smt, false), "idle_scan"});
  } else {
    levels.push_back({ring(llc, true), "idle_core"});
    if (smt.size() >= 2) levels.push_back({ring(smt, false), "idle_scan"});
  }
  for (const Level& l : levels) {
    for (const auto& g : l.groups) {
      u32 first_allowed = none;
      for (u32 c : g) if (allowed(w, c) && first_allowed == none) first_allowed = c;
      if (first_allowed == none) continue;
      bool whole = true;
      for (u32 c : g) if (c == target || !m.idle[c]) whole = false;
      if (whole) { o.reason = l.reason; return first_allowed; }
    }
  }
  return target;
}

// select_fallback_rq(prev): the first allowed CPU of prev's node, else the
// first allowed CPU.
inline u32 fallback_rq(const Topo& t, const Wake& w, u32 prev) {
  for (u32 c : t.node_span[prev]) if (allowed(w, c)) return c;
  for (u32 c = 0; c < t.n; ++c) if (allowed(w, c)) return c;
  return none;
}
}  // namespace detail

// select_task_rq_fair() for a wake-up (WF_TTWU), then select_task_rq()'s
// affinity check. Updates the waker's flips and the wakee's recent CPU.
inline Outcome place(const Topo& t, const Machine& m, const Era& era, Wake& w) {
  Outcome o;
  const u32 waking = w.waking;
  const u32 prev = w.prev < t.n ? w.prev : waking;
  u32 waker_flips = 0;
  if (w.waker != nullptr) {
    o.dev |= record_wakee(*w.waker, era.flips, w.wakee_key, w.now, w.flip_period);
    waker_flips = w.waker->flips;
  }
  const u32 wakee_flips = w.wakee->flips;  // read after the record (a task waking itself)
  if (w.current_cpu && detail::allowed(w, waking)) {
    o.cpu = o.target = waking;
    o.affine = o.reason = "current_cpu";
    return o;
  }
  const u32 factor = static_cast<u32>(t.llc_span[waking].size());  // sd_llc_size of this CPU
  o.wide = wake_wide(era.wide, waker_flips, wakee_flips, factor, o.dev);
  if (o.wide) { o.target = prev; o.affine = "wide"; }
  else if (!detail::allowed(w, waking)) { o.target = prev; o.affine = "waking_not_allowed"; }
  else if (waking == prev) { o.target = prev; o.affine = "same_cpu"; }
  else if (era.affine == AffineEra::always) { o.target = waking; o.affine = "forced_waking"; }
  else if (era.affine == AffineEra::never) { o.target = prev; o.affine = "forced_prev"; }
  else if (era.affine == AffineEra::wake_affine) detail::wake_affine(t, m, w, waking, prev, o);
  else if (era.affine == AffineEra::wake_affine_2013) detail::wake_affine_2013(t, m, w, waking, prev, o);
  else detail::wake_affine_2008(t, m, w, era.affine, waking, prev, o);

  if (era.groups_2013) {
    // v3.12's select_task_rq_fair(): want_affine needs this CPU in the
    // mask; without an affine domain the wake-up keeps prev_cpu as it is,
    // no search (no SD_BALANCE_WAKE domain to balance in either). And
    // `nr_cpus_allowed == 1: prev_cpu` gives what this path gives: that
    // one CPU, after the fallback, or prev when it is the one.
    if (detail::allowed(w, waking)) {
      o.cpu = detail::select_idle_sibling_2013(t, m, w, prev, o.target, o);
    } else {
      o.cpu = o.target;
      o.reason = "no_search";
    }
  } else if (era.search) {
    o.cpu = detail::select_idle_sibling(t, m, w, prev, o.target, era.cluster, o);
  } else {
    o.cpu = o.target;
    o.reason = "no_search";
  }
  if (!detail::allowed(w, o.cpu)) {
    o.dev |= dev_fallback_rq;
    const u32 f = detail::fallback_rq(t, w, prev);
    if (f == none) { o.dev |= dev_empty_mask; o.reason = "affinity_empty"; o.cpu = o.target; }
    else { o.reason = "affinity_fallback"; o.cpu = f; }
  }
  return o;
}

// se.avg_overlap (2.6.25 to 2010): try_to_wake_up() stamps the waker
// (se.last_wakeup); a sleep (dequeue_task) folds the time since into the
// average with update_avg(), the kernel's of the time: diff >> 3.
struct Overlap {
  i64 avg = 0, woke_at = 0;
  bool woke = false;
};
inline u32 overlap_sleep(Overlap& s, i64 now) {
  u32 dev = 0;
  if (!s.woke) return dev;
  const i128 d = static_cast<i128>(now) - s.woke_at;
  if (d < 0 || d > INT64_MAX) dev |= dev_clock_rule;
  const i64 sample = d <= 0 ? 0 : (d > INT64_MAX ? INT64_MAX : static_cast<i64>(d));
  const i128 diff = static_cast<i128>(sample) - s.avg;
  const i128 shifted = diff >= 0 ? diff / 8 : -((-diff + 7) / 8);  // >> 3: toward minus infinity
  const i128 divided = diff / 8;                                   // the library's update_avg
  if (shifted != divided) dev |= dev_avg_rounding;
  s.avg = static_cast<i64>(s.avg + divided);
  s.woke = false;
  return dev;
}

// ---------------------------------------------------------------------------
// The newidle balance: rq->avg_idle, idle_stamp, max_idle_balance_cost,
// sd->max_newidle_lb_cost per level, sched_balance_newidle()'s gates.
struct BalanceEra {
  bool saturate_2009 = false;     // avg_idle: delta > cap sets the cap (2.6.32-3.12)
  bool gate_migration = false;    // entry: avg_idle < migration_cost (2009-5.15)
  bool gate_first_level = true;   // entry: avg_idle < level 0's cost (v5.16+)
  bool budget = true;             // stop before a level avg_idle cannot pay (v3.13+)
  bool restart_on_new_max = true; // v5.16: a new max restamps, the newidle path decays
  bool bump_failed = false;       // v6.17
  bool cap_on_cost = true;        // avg_idle capped at 2 * max_idle_balance_cost (v3.13+)
  bool guard_stamp = true;        // no idle stamp, no sample
  bool shift_avg = false;         // update_avg() shifted (diff >> 3) before 2020
};

struct NewidleState {
  i64 avg_idle = 0;
  i64 stamp = 0;
  bool has_stamp = false;
  i64 cpu_cost = 0;  // max_idle_balance_cost, the library's documented rule
  std::vector<i64> max_cost, last_decay;
};

struct BalanceOut {
  const char* outcome = "";
  u32 visited = 0, stopped_before = 0, pulled_level = 0;
  i64 spent = 0;
  u32 dev = 0;
};

namespace detail {
inline i64 sat(i128 v) {
  if (v > INT64_MAX) return INT64_MAX;
  if (v < INT64_MIN) return INT64_MIN;
  return static_cast<i64>(v);
}
inline i64 nonneg(i64 v) { return v < 0 ? 0 : v; }
// A duration from two clock reads: the kernel's u64 difference; the
// library reads a backwards clock as 0 and saturates a difference past 2^63.
inline i64 elapsed(i64 from, i64 to, u32& dev) {
  const i128 d = static_cast<i128>(to) - from;
  if (d < 0 || d > INT64_MAX) dev |= dev_clock_rule;
  return d <= 0 ? 0 : sat(d);
}
// The floored sum, the library's documented CPU-wide cost.
inline i64 floored_sum(const NewidleState& s, i64 mc) {
  i128 sum = 0;
  for (i64 c : s.max_cost) sum += nonneg(c);
  return std::max(nonneg(mc), sat(sum));
}
inline bool decay_level(NewidleState& s, std::size_t i, i64 now, i64 period, u32& dev) {
  // time_after(jiffies, last + HZ): strictly more than a period, exact.
  const i128 d = static_cast<i128>(now) - s.last_decay[i];
  if (d < 0 || d > INT64_MAX) dev |= dev_clock_rule;
  if (!(d > nonneg(period))) return false;
  const i64 v = nonneg(s.max_cost[i]);
  const u64 wrapped = static_cast<u64>(v) * 253u / 256u;
  const i64 exact = static_cast<i64>(static_cast<i128>(v) * 253 / 256);
  if (static_cast<i64>(wrapped) != exact) dev |= dev_cost_scale;
  s.max_cost[i] = exact;
  s.last_decay[i] = now;
  return true;
}
}  // namespace detail

// ttwu_do_activate()'s avg_idle sample at the end of an idle period.
inline u32 idle_end(const BalanceEra& e, NewidleState& s, i64 now, i64 mc) {
  u32 dev = 0;
  if (!s.has_stamp && e.guard_stamp) return dev;
  const i64 delta = detail::elapsed(s.stamp, now, dev);
  const i64 cost = e.cap_on_cost ? s.cpu_cost : detail::nonneg(mc);
  const i64 cap = detail::sat(static_cast<i128>(detail::nonneg(cost)) * 2);
  if (e.saturate_2009 && delta > cap) {
    s.avg_idle = cap;
  } else {
    // update_avg(): avg += (sample - avg) / 8, signed, truncating.
    const i128 diff = static_cast<i128>(delta) - s.avg_idle;
    const i128 shifted = diff >= 0 ? diff / 8 : -((-diff + 7) / 8);
    if (e.shift_avg && shifted != diff / 8) dev |= dev_avg_rounding;
    s.avg_idle = detail::sat(s.avg_idle + diff / 8);
    if (!e.saturate_2009 && s.avg_idle > cap) s.avg_idle = cap;
  }
  s.avg_idle = detail::nonneg(s.avg_idle);
  s.has_stamp = false;
  s.stamp = 0;
  return dev;
}

// The periodic tick: update_newidle_cost(sd, 0) on every level (v5.16), or
// the every-period decay of rebalance_domains() (v3.13); a decay recomputes
// max_idle_balance_cost = max(migration_cost, sum of level costs).
inline u32 tick(const BalanceEra&, NewidleState& s, i64 now, i64 mc, i64 period) {
  u32 dev = 0;
  bool need = false;
  for (std::size_t i = 0; i < s.max_cost.size(); ++i) need |= detail::decay_level(s, i, now, period, dev);
  const i64 kernel = need ? detail::floored_sum(s, mc) : s.cpu_cost;
  s.cpu_cost = detail::floored_sum(s, mc);
  if (kernel != s.cpu_cost) dev |= dev_cpu_cost_sum;
  return dev;
}

// sched_balance_newidle(). `pulls[i]` says whether level i's pull finds
// work, `clock[k]` is the k-th clock read (start, then after each pull).
inline BalanceOut balance(const BalanceEra& e, NewidleState& s, bool overloaded, const std::vector<bool>& pulls,
                          const std::vector<i64>& clock, i64 mc, i64 period) {
  BalanceOut r;
  std::size_t k = 0;
  const i64 start = clock[k++];
  r.outcome = "nothing_found";
  bool pulled = false;
  i128 kernel_curr = 0;  // the sum of this balance's domain costs
  if (!overloaded) {
    r.outcome = "not_overloaded";
  } else if ((e.gate_migration && s.avg_idle < mc) ||
             (e.gate_first_level && !s.max_cost.empty() && s.avg_idle < s.max_cost[0])) {
    r.outcome = "entry_gate";
  } else {
    i64 t0 = start;
    for (u32 i = 0; i < s.max_cost.size(); ++i) {
      // avg_idle < curr_cost + sd->max_newidle_lb_cost: stop.
      if (e.budget && static_cast<i128>(s.avg_idle) < static_cast<i128>(r.spent) + s.max_cost[i]) {
        r.outcome = "budget";
        r.stopped_before = i;
        break;
      }
      const bool got = pulls[i];
      const i64 t1 = clock[k++];
      const i64 cost = detail::elapsed(t0, t1, r.dev);
      t0 = t1;
      kernel_curr += cost;
      r.spent = detail::sat(static_cast<i128>(r.spent) + cost);
      // update_newidle_cost(sd, domain_cost), bumped on failure in v6.17.
      i64 c = cost;
      if (e.bump_failed && !got) c = detail::sat(static_cast<i128>(s.max_cost[i]) * 3 / 2);
      if (c > s.max_cost[i]) {
        if (e.bump_failed) c = std::min<i64>(c, detail::sat(static_cast<i128>(mc) + 200));
        s.max_cost[i] = c;
        if (e.restart_on_new_max) s.last_decay[i] = t1;
      } else if (e.restart_on_new_max) {
        detail::decay_level(s, i, t1, period, r.dev);
      }
      ++r.visited;
      if (got) {
        pulled = true;
        r.outcome = "pulled";
        r.pulled_level = i;
        break;
      }
    }
  }
  // max_idle_balance_cost: the kernel raises it to this balance's cost; the
  // library keeps the floored sum of the level costs.
  const i64 kernel = std::max(s.cpu_cost, detail::sat(kernel_curr));
  s.cpu_cost = detail::floored_sum(s, mc);
  if (kernel != s.cpu_cost) r.dev |= dev_cpu_cost_sum;
  // idle_stamp set before balancing; cleared (0) after a pull.
  if (pulled) {
    s.has_stamp = false;
    s.stamp = 0;
  } else {
    s.has_stamp = true;
    s.stamp = start;
    if (start == 0) r.dev |= dev_stamp_zero;
  }
  return r;
}

}  // namespace kref
