// taskplace_sim/scenarios.hpp: one scenario per seed experiment
// (docs/provenance.md), each run under the policy sets it compares,
// with the seed's own numbers beside the simulator's.
//
// Every scenario uses the one set of Costs defaults; only the workload
// (what the tasks do) differs, calibrated where the seed gives a
// single-client number (pgbench: ~94 us a round trip).
//
//   taskplace_sim::Options o; o.seed = 7;
//   taskplace_sim::Table t = taskplace_sim::run_scenario("pgbench", o);
#pragma once

#include <chrono>
#include <cmath>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "taskplace/idle_balancer.hpp"
#include "taskplace/topology/uniform.hpp"
#include "taskplace/wake_placer.hpp"
#include "taskplace_sim/machine.hpp"
#include "taskplace_sim/search_2013.hpp"
#include "taskplace_sim/table.hpp"
#include "taskplace_sim/workloads.hpp"

namespace taskplace_sim {

namespace cfg {
// v3.10 (Wang 2013's base): every wake-up considers the pull, 2013 search.
struct Base2013 : taskplace::DefaultWakeTraits {
  using Flips = taskplace::FlipCounter<taskplace::flip_decay::Wipe2013>;
  using Wide = taskplace::wide::Never;
  using Search = SiblingSearch2013;
};
// v3.12 (Wang 2013's smart): Wang's one-sided rule on the same kernel.
struct Smart2013 : Base2013 {
  using Wide = taskplace::WideDetector<taskplace::wide::OneSided2013>;
};
// Fleming 2017's experiment: the wide rule without the `lo >= factor` test.
struct MasterOnly : taskplace::DefaultWakeTraits {
  using Wide = taskplace::WideDetector<taskplace::wide::MasterOnly2017>;
};
// Today's newidle with the 2013 unconditional decay.
struct CurrentEverySecond : taskplace::DefaultNewidleTraits {
  using Schedule = taskplace::cost_decay::EverySecond2014;
};
// Balance traits `B` as the kernels before v3.16 ran them: a newly idle
// CPU balances whether or not any CPU has a task to give. Every policy set
// that stands for such a kernel (2.6.25's always-affine, v3.10, v3.12, the
// 2009 and 2013 newidle rules) runs with it; later ones skip the balance
// while no CPU runs two or more (Machine::overload_gated).
template <class B = taskplace::DefaultBalanceTraits>
struct Before2014 : B {
  static constexpr bool newidle_overload_gate = false;
};
}  // namespace cfg

struct Options {
  std::uint64_t seed = 1;
  Trace* trace = nullptr;      // filled by the first run of the scenario
  bool quick = false;          // shorter runs (tests, smoke checks)
  // The balances' cache-hot test (Costs::cache_hot); the table's verdicts
  // are for the default.
  CacheHotModel cache_hot = CacheHotModel::table;
  std::function<void(const std::string&)> progress;  // one line per run
};

namespace detail {
inline std::uint64_t mix(std::uint64_t seed, std::uint64_t a) { return seed * 0x9e3779b97f4a7c15ull + a; }

template <class Wake, class Balance = taskplace::DefaultBalanceTraits, class Topo>
Report simulate(const Topo& topo, Workload w, Nanoseconds warm, Nanoseconds measure, std::uint64_t seed,
                Options& o, Table& t) {
  Machine<Topo, Wake, Balance> m{topo, std::move(w), Costs{.cache_hot = o.cache_hot}, seed};
  if (o.trace != nullptr) {
    m.set_trace(o.trace);
    o.trace = nullptr;
  }
  Report r = m.run(warm, measure);
  t.events += r.events_all;
  return r;
}

template <class Wake, class Balance = taskplace::DefaultBalanceTraits, class Topo>
Report simulate_finite(const Topo& topo, Workload w, Nanoseconds limit, std::uint64_t seed, Options& o,
                       Table& t) {
  Machine<Topo, Wake, Balance> m{topo, std::move(w), Costs{.cache_hot = o.cache_hot}, seed};
  if (o.trace != nullptr) {
    m.set_trace(o.trace);
    o.trace = nullptr;
  }
  Report r = m.run_to_completion(limit);
  t.events += r.events_all;
  return r;
}

inline Table make_table(std::string name, std::string title, std::string x_name, std::string unit) {
  Table t;
  t.name = std::move(name);
  t.title = std::move(title);
  t.x_name = std::move(x_name);
  t.unit = std::move(unit);
  return t;
}
inline void say(const Options& o, const std::string& s) {
  if (o.progress) o.progress(s);
}
inline double mean_over(const Table& t, std::size_t col, std::size_t from, std::size_t to) {
  double s = 0;
  for (std::size_t r = from; r < to; ++r) s += t.v[r][col];
  return s / static_cast<double>(to - from);
}
}  // namespace detail

// --- pgbench (Wang 2013): 12 CPUs, 1 client process, N backends --------------
inline Table pgbench(Options o) {
  using namespace std::chrono_literals;
  Table t = detail::make_table("pgbench", "pgbench -S, one client process, N backends; 12-CPU Westmere (6 cores x 2 threads)", "clients", "tps");
  t.configs = {"always-affine", "base-3.10", "smart-3.12", "current"};
  t.seed_headers = {"base", "smart"};
  const std::vector<std::uint32_t> clients{1, 2, 4, 8, 12, 16, 24, 32};
  const std::vector<std::vector<std::string>> seed{{"10598", "10796"}, {"21257", "21336"}, {"41386", "41622"},
                                                   {"51253", "57932"}, {"48570", "54000"}, {"46748", "55982"},
                                                   {"44346", "55847"}, {"43460", "54614"}};
  const auto topo = taskplace::presets::westmere_12cpu_2013();
  const Nanoseconds warm = o.quick ? 20ms : 100ms, meas = o.quick ? 100ms : 500ms;
  for (std::size_t i = 0; i < clients.size(); ++i) {
    const auto n = clients[i];
    const auto s = detail::mix(o.seed, n);
    std::vector<double> row;
    row.push_back(detail::simulate<taskplace::traits::AlwaysAffine, cfg::Before2014<>>(topo, workloads::pgbench(n, 12), warm, meas, s, o, t).throughput);
    row.push_back(detail::simulate<cfg::Base2013, cfg::Before2014<>>(topo, workloads::pgbench(n, 12), warm, meas, s, o, t).throughput);
    row.push_back(detail::simulate<cfg::Smart2013, cfg::Before2014<>>(topo, workloads::pgbench(n, 12), warm, meas, s, o, t).throughput);
    row.push_back(detail::simulate<taskplace::traits::Current>(topo, workloads::pgbench(n, 12), warm, meas, s, o, t).throughput);
    t.x.push_back(std::to_string(n));
    t.v.push_back(row);
    t.seed.push_back(seed[i]);
    detail::say(o, "pgbench clients=" + std::to_string(n) + " done");
  }
  const double gain = detail::mean_over(t, 2, 5, 8) / detail::mean_over(t, 1, 5, 8);
  const double low = detail::mean_over(t, 2, 0, 3) / detail::mean_over(t, 1, 0, 3);
  const double aff = detail::mean_over(t, 0, 5, 8) / detail::mean_over(t, 3, 5, 8);
  t.seed_headline = "smart vs base +19.8..+25.9% at 16-32 clients (22 MB), +26..+41% (larger DBs); 1-4 clients flat";
  t.sim_headline = "smart vs base " + pct(gain) + " at 16-32, " + pct(low) + " at 1-4; always-affine vs current " +
                   pct(aff) + " at 16-32";
  const bool dir = gain > 1.0 && std::fabs(low - 1.0) < 0.05;
  const bool size = gain - 1.0 >= 0.19 / 2 && gain - 1.0 <= 0.41 * 2;
  t.verdict = dir ? (size ? "reproduced (direction and size)" : "direction only (size off by more than 2x)")
                  : "not reproduced";
  t.notes.push_back("base-3.10 = wide::Never + WakeAffine + the v3.10 idle-sibling search (SiblingSearch2013); smart-3.12 = the same with the one-sided wide rule (wide::OneSided2013)");
  return t;
}

// --- pgbench 2008 (Smith 2008): Q6600, 4 CPUs -----------------------------------
inline Table pgbench_2008(Options o) {
  using namespace std::chrono_literals;
  Table t = detail::make_table("pgbench-2008", "pgbench -S, clients 1..50; Q6600 (4 CPUs, 2 LLCs); seed columns: AMD X2 table of Smith 2008", "clients", "tps");
  t.configs = {"always-affine", "current"};
  t.seed_headers = {"2.6.22", "2.6.25"};
  const std::vector<std::uint32_t> clients{1, 2, 4, 6, 8, 10, 15, 20, 30, 40, 50};
  const std::vector<std::vector<std::string>> seed{{"11052", "10700"}, {"16352", "10370"}, {"14290", "8882"},
                                                   {"13291", "9473"},  {"12374", "9093"},  {"11218", "9057"},
                                                   {"11116", "7113"},  {"11412", "7017"},  {"11191", "6896"},
                                                   {"11062", "6820"},  {"11255", "6797"}};
  const auto topo = taskplace::presets::q6600_2008();
  const Nanoseconds warm = o.quick ? 20ms : 50ms, meas = o.quick ? 80ms : 300ms;
  for (std::size_t i = 0; i < clients.size(); ++i) {
    const auto n = clients[i];
    const auto s = detail::mix(o.seed, n);
    std::vector<double> row;
    row.push_back(detail::simulate<taskplace::traits::AlwaysAffine, cfg::Before2014<>>(topo, workloads::pgbench(n, 4), warm, meas, s, o, t).throughput);
    row.push_back(detail::simulate<taskplace::traits::Current>(topo, workloads::pgbench(n, 4), warm, meas, s, o, t).throughput);
    t.x.push_back(std::to_string(n));
    t.v.push_back(row);
    t.seed.push_back(seed[i]);
    detail::say(o, "pgbench-2008 clients=" + std::to_string(n) + " done");
  }
  const double hi = detail::mean_over(t, 0, 6, t.x.size()) / detail::mean_over(t, 1, 6, t.x.size());
  t.seed_headline = "affine-always (2.6.25) collapses above ~8 clients: 0.62x of 2.6.22 at 15-50 (X2), ~1/3 on the Q6600";
  t.sim_headline = "always-affine vs current " + fmt(hi, 2) + "x at 15-50 clients";
  t.verdict = hi < 0.9 ? (hi > 0.33 / 2 && hi < 0.62 * 2 ? "reproduced (direction and size)" : "direction only")
                       : "not reproduced";
  return t;
}

// --- pgbench 2008 sync (Smith 2008): the avg_overlap rule on the Q6600 ---------
// Greg Smith's Q6600 table of May 26 2008 (stock 2.6.26-git, and the same
// with SYNC_WAKEUPS off, sched_features 863) and Mike Galbraith's numbers
// with his fix (default features, 2.6.26-smp, his own machine): the 2008
// wake_affine() whose sync pull is gated by the tasks' average overlap, in
// its three forms (traits::Linux2008 with sync_affine::Unchecked2008, Balanced2008,
// Ignored2008).
inline Table pgbench_2008_sync(Options o) {
  using namespace std::chrono_literals;
  Table t = detail::make_table("pgbench-2008-sync", "pgbench -S, clients 1..50, the 2008 avg_overlap sync rule; Q6600 (4 CPUs, 2 LLCs)", "clients", "tps");
  t.configs = {"2.6.26-rc (unchecked)", "2.6.26 (balanced)", "sync off"};
  t.seed_headers = {".26.git", "f=863", "fix (Mike)"};
  const std::vector<std::uint32_t> clients{1, 2, 4, 6, 8, 10, 15, 20, 30, 40, 50};
  const std::vector<std::vector<std::string>> seed{
      {"11043", "9232", "10121"},  {"11452", "16686", "14360"}, {"13053", "25094", "18748"},
      {"12263", "30525", "24913"}, {"11748", "31775", "27976"}, {"11612", "29644", "29346"},
      {"11414", "28651", "29157"}, {"11332", "25776", "28392"}, {"10743", "21772", "26590"},
      {"10406", "20600", "24422"}, {"10534", "19949", "23305"}};
  const auto topo = taskplace::presets::q6600_2008();
  const Nanoseconds warm = o.quick ? 20ms : 50ms, meas = o.quick ? 80ms : 300ms;
  namespace s8 = taskplace::sync_affine;
  using B = cfg::Before2014<>;
  for (std::size_t i = 0; i < clients.size(); ++i) {
    const auto n = clients[i];
    const auto s = detail::mix(o.seed, n);
    std::vector<double> row;
    row.push_back(detail::simulate<taskplace::traits::Linux2008<s8::Unchecked2008>, B>(topo, workloads::pgbench(n, 4), warm, meas, s, o, t).throughput);
    row.push_back(detail::simulate<taskplace::traits::Linux2008<s8::Balanced2008>, B>(topo, workloads::pgbench(n, 4), warm, meas, s, o, t).throughput);
    row.push_back(detail::simulate<taskplace::traits::Linux2008<s8::Ignored2008>, B>(topo, workloads::pgbench(n, 4), warm, meas, s, o, t).throughput);
    t.x.push_back(std::to_string(n));
    t.v.push_back(row);
    t.seed.push_back(seed[i]);
    detail::say(o, "pgbench-2008-sync clients=" + std::to_string(n) + " done");
  }
  // Rows 2-5 are 4-10 clients, rows 6 on 15-50.
  const std::size_t mid = 2, hi = 6, end = t.x.size();
  const double fix = detail::mean_over(t, 0, hi, end) / detail::mean_over(t, 1, hi, end);
  const double off = detail::mean_over(t, 0, hi, end) / detail::mean_over(t, 2, hi, end);
  const double fix_mid = detail::mean_over(t, 0, mid, hi) / detail::mean_over(t, 1, mid, hi);
  t.seed_headline = ".26.git (unchecked) vs the fix 0.41x at 15-50 clients (0.39-0.45x row by row; 0.48x at 4-10), vs f=863 (sync off) 0.47x (0.40-0.53x)";
  t.sim_headline = "unchecked vs balanced " + fmt(fix, 2) + "x at 15-50 clients, " + fmt(fix_mid, 2) +
                   "x at 4-10; vs sync off " + fmt(off, 2) + "x at 15-50";
  // Direction: the unchecked rule more than 5% below the fix. Size: its
  // loss within a factor of two of the seed's, row by row against the fix
  // and f=863 (0.47-0.61 at 15-50, 0.30-0.63 at 4-10), i.e. the ratio in
  // [0.20, 0.77] at 15-50 and [0.19, 0.85] at 4-10. The headline is 15-50;
  // a fix that wins at 4-10 only is "partly".
  const bool dir = fix < 0.95;
  const bool size = fix >= 0.39 / 2 && fix <= 1.0 - 0.47 / 2;
  const bool mid_ok = fix_mid >= 0.37 / 2 && fix_mid <= 1.0 - 0.30 / 2;
  t.verdict = dir ? (size ? "reproduced (direction and size)" : "direction only")
                  : (mid_ok ? "partly reproduced (4-10 clients only)" : "not reproduced");
  t.notes.push_back("seed columns: .26.git = stock 2.6.26-git (unchecked rule), f=863 = SYNC_WAKEUPS off, both Greg Smith's Q6600; fix (Mike) = Mike Galbraith's patch (sync_affine::Balanced2008) with default features on his own machine, not Greg's Q6600");
  return t;
}

// --- pipe (Smith 2008): ping-pong -----------------------------------------------
inline Table pipe(Options o) {
  using namespace std::chrono_literals;
  Table t = detail::make_table("pipe", "perf bench sched pipe: two tasks ping-pong; 12-CPU Westmere", "pairs", "round trips/s");
  t.configs = {"always-affine (same CPU)", "current", "prev-cpu (spread)", "sis-current (2023 proposal)"};
  const auto topo = taskplace::presets::westmere_12cpu_2013();
  const Nanoseconds warm = 10ms, meas = o.quick ? 50ms : 200ms;
  // SIS_CURRENT keeps a pair only once both tasks' flip counts have
  // decayed to 0, one flip period after the pair formed: its column is
  // measured after that.
  const Nanoseconds warm_sis = taskplace::tunables::flip_decay_period + 100ms;
  for (std::uint32_t pairs : {1u, 2u, 4u}) {
    const auto s = detail::mix(o.seed, pairs);
    std::vector<double> row;
    row.push_back(detail::simulate<taskplace::traits::AlwaysAffine, cfg::Before2014<>>(topo, workloads::pipe(pairs, 12), warm, meas, s, o, t).throughput);
    row.push_back(detail::simulate<taskplace::traits::Current>(topo, workloads::pipe(pairs, 12), warm, meas, s, o, t).throughput);
    row.push_back(detail::simulate<taskplace::traits::PrevCpu>(topo, workloads::pipe(pairs, 12), warm, meas, s, o, t).throughput);
    row.push_back(detail::simulate<taskplace::traits::SisCurrent<>>(topo, workloads::pipe(pairs, 12), warm_sis, meas, s, o, t).throughput);
    t.x.push_back(std::to_string(pairs));
    t.v.push_back(row);
    detail::say(o, "pipe pairs=" + std::to_string(pairs) + " done");
  }
  const double r = t.v[0][0] / t.v[0][2];
  t.seed_headline = "same-CPU ping-pong beats spreading the pair over two CPUs";
  t.sim_headline = "same CPU vs spread " + pct(r) + " (1 pair), current " + pct(t.v[0][1] / t.v[0][2]) +
                   ", sis-current " + pct(t.v[0][3] / t.v[0][2]);
  t.notes.push_back("sis-current = traits::SisCurrent<> (SIS_CURRENT v8, 2023, never merged): current plus a kept pair of short tasks that wake each other; its column is measured after " +
                    std::to_string(warm_sis.count() / 1'000'000) + " ms, once the pairs' flip counts have decayed to 0 (before that it places as current)");
  t.verdict = r > 1.0 ? "reproduced (direction; the seed gives no size)" : "not reproduced";
  return t;
}

// --- hackbench (Fleming 2017): 80 CPUs, 2 nodes, 1 group of 20+20 ----------------
inline Table hackbench(Options o) {
  using namespace std::chrono_literals;
  Table t = detail::make_table("hackbench", "hackbench -g 1 (20 senders + 20 receivers), 20 seeds; 80 CPUs, 2 nodes", "statistic", "seconds (simulated)");
  t.configs = {"symmetric-2015", "master-only-2017"};
  t.seed_headers = {"4.4.71", "patched"};
  const auto topo = taskplace::presets::two_node_80cpu();
  const std::uint32_t runs = o.quick ? 5 : 20;
  std::vector<double> a, b;
  for (std::uint32_t k = 0; k < runs; ++k) {
    const auto s = detail::mix(o.seed, k);
    const auto ra = detail::simulate_finite<taskplace::traits::Current>(topo, workloads::hackbench(80, s, o.quick), 10s, s, o, t);
    const auto rb = detail::simulate_finite<cfg::MasterOnly>(topo, workloads::hackbench(80, s, o.quick), 10s, s, o, t);
    a.push_back(static_cast<double>(ra.all_done.count()) / 1e9);
    b.push_back(static_cast<double>(rb.all_done.count()) / 1e9);
  }
  detail::say(o, "hackbench " + std::to_string(runs) + " seeds done");
  auto stats = [](const std::vector<double>& v) {
    double mn = v[0], mx = v[0], s = 0, s2 = 0;
    for (double x : v) {
      mn = std::min(mn, x);
      mx = std::max(mx, x);
      s += x;
    }
    const double mean = s / static_cast<double>(v.size());
    for (double x : v) s2 += (x - mean) * (x - mean);
    const double sd = std::sqrt(s2 / static_cast<double>(v.size() > 1 ? v.size() - 1 : 1));
    return std::vector<double>{mn, mean, sd, 100.0 * sd / mean, mx};
  };
  const auto sa = stats(a), sb = stats(b);
  const char* names[] = {"Min", "Amean", "Stddev", "CoeffVar", "Max"};
  const std::vector<std::vector<std::string>> seed{{"0.7000", "0.8480"}, {"1.0343", "0.9073"}, {"0.2373", "0.0447"},
                                                   {"22.9447", "4.9300"}, {"1.2270", "0.9560"}};
  for (std::size_t i = 0; i < 5; ++i) {
    t.x.push_back(names[i]);
    t.v.push_back({sa[i], sb[i]});
    t.seed.push_back(seed[i]);
  }
  t.seed_headline = "master-only: mean -12.3%, stddev -81%, min +21% worse, max -22%";
  t.sim_headline = "master-only: mean " + pct(sb[1] / sa[1]) + ", stddev " + pct(sb[2] / sa[2]) + ", min " +
                   pct(sb[0] / sa[0]) + ", max " + pct(sb[4] / sa[4]);
  const bool var = sb[2] < sa[2];
  const bool best = sb[0] > sa[0];
  t.verdict = var && best ? "reproduced (trades best case for variance)"
                          : (var || best ? "partly reproduced" : "not reproduced");
  return t;
}

// --- aim7 (Low 2013): 8 sockets x 10 cores x 2 threads -----------------------
// The seed's headline table (+12.2% alltests) was measured "with
// Hyperthreading enabled": the 80-core preset with two threads per core,
// 160 CPUs, as the kernel saw that box.
inline Table aim7(Options o) {
  using namespace std::chrono_literals;
  Table t = detail::make_table("aim7", "AIM7-like: users computing with short sleeps; 8 sockets x 10 cores x 2 threads", "users", "jobs/s");
  t.configs = {"no-limit", "gate-2009", "per-level-2013", "current", "current-decay-2013", "kernel-2026"};
  const taskplace::UniformTopology topo{8, 1, 10, 2, taskplace::CpuNumbering::smt_last};
  const auto cpus = static_cast<std::uint32_t>(topo.cpu_count());
  const std::vector<std::uint32_t> users = o.quick ? std::vector<std::uint32_t>{10, 1000}
                                                   : std::vector<std::uint32_t>{10, 100, 500, 1100, 1500, 2000};
  const Nanoseconds warm = o.quick ? 20ms : 50ms, meas = o.quick ? 50ms : 150ms;
  using C = taskplace::traits::Current;
  namespace ni = taskplace::newidle;
  for (auto n : users) {
    const auto s = detail::mix(o.seed, n);
    std::vector<double> row;
    // The seed's kernels (and the no-limit strawman) predate the overload
    // gate of v3.16: they balance on every newly idle CPU.
    row.push_back(detail::simulate<C, cfg::Before2014<taskplace::traits::Balance<ni::NoLimit>>>(topo, workloads::aim7(n, cpus), warm, meas, s, o, t).throughput);
    row.push_back(detail::simulate<C, cfg::Before2014<taskplace::traits::Balance<ni::Gate2009>>>(topo, workloads::aim7(n, cpus), warm, meas, s, o, t).throughput);
    row.push_back(detail::simulate<C, cfg::Before2014<taskplace::traits::Balance<ni::PerLevel2014>>>(topo, workloads::aim7(n, cpus), warm, meas, s, o, t).throughput);
    row.push_back(detail::simulate<C, taskplace::traits::Balance<ni::StampGuard2026>>(topo, workloads::aim7(n, cpus), warm, meas, s, o, t).throughput);
    row.push_back(detail::simulate<C, taskplace::traits::Balance<cfg::CurrentEverySecond>>(topo, workloads::aim7(n, cpus), warm, meas, s, o, t).throughput);
    // Today's kernel: the current cost tracking plus the success-rate dice
    // of v6.18/v7.0 (NewidleSuccessRate); not in the seed.
    row.push_back(detail::simulate<C, taskplace::traits::BalanceLinux2026>(topo, workloads::aim7(n, cpus), warm, meas, s, o, t).throughput);
    t.x.push_back(std::to_string(n));
    t.v.push_back(row);
    detail::say(o, "aim7 users=" + std::to_string(n) + " done");
  }
  const std::size_t last = t.x.size();
  const double hi = t.v[last - 1][2] / t.v[last - 1][1];
  const double lo = t.v[0][2] / t.v[0][1];
  t.seed_headline = "per-level cost limit vs 3.11: alltests +12.2% at 1100-2000 users (fserver +74.7%), +1.0% at 10-100";
  t.sim_headline = "per-level-2013 vs gate-2009 " + pct(hi) + " at " + t.x[last - 1] + " users, " + pct(lo) + " at " + t.x[0];
  // A gain must clear 1% to count as a direction: this ratio moves by
  // +-0.4% from seed to seed with no policy difference behind it.
  t.verdict = hi > 1.01 && std::fabs(lo - 1.0) < 0.05
                  ? (hi - 1.0 >= 0.06 && hi - 1.0 <= 1.5 ? "reproduced (direction and size)" : "direction only")
                  : "not reproduced";
  return t;
}

// --- netperf UDP_RR (Chen 2023): 2 x 112 CPUs ----------------------------------
inline Table netperf(Options o) {
  using namespace std::chrono_literals;
  Table t = detail::make_table("netperf-udp-rr", "netperf UDP_RR, N client/server pairs; Sapphire Rapids 2 x 56 cores x 2 threads", "threads", "transactions/s");
  t.configs = {"current", "sis-cache-rfc2023", "sis-cache-v1", "sis-cache-v2"};
  t.seed_headers = {"compare%"};
  const auto topo = taskplace::presets::sapphire_rapids_2x56x2();
  const std::vector<std::uint32_t> threads = o.quick ? std::vector<std::uint32_t>{56, 224}
                                                     : std::vector<std::uint32_t>{56, 112, 168, 224};
  const std::vector<std::string> seed{"+1.05", "-0.68", "+49.63", "+122.53"};
  const Nanoseconds warm = o.quick ? 5ms : 10ms, meas = o.quick ? 10ms : 40ms;
  namespace sc = taskplace::sis_cache;
  for (std::size_t i = 0; i < threads.size(); ++i) {
    const auto n = threads[i];
    const auto s = detail::mix(o.seed, n);
    std::vector<double> row;
    row.push_back(detail::simulate<taskplace::traits::Current>(topo, workloads::netperf(n, 224), warm, meas, s, o, t).throughput);
    row.push_back(detail::simulate<taskplace::traits::CacheHot<sc::EverySleep2023>>(topo, workloads::netperf(n, 224), warm, meas, s, o, t).throughput);
    row.push_back(detail::simulate<taskplace::traits::CacheHot<sc::ShortSleeps2023>>(topo, workloads::netperf(n, 224), warm, meas, s, o, t).throughput);
    row.push_back(detail::simulate<taskplace::traits::CacheHot<sc::HalveLong2023>>(topo, workloads::netperf(n, 224), warm, meas, s, o, t).throughput);
    t.x.push_back(std::to_string(n));
    t.v.push_back(row);
    const std::size_t si = o.quick ? (i == 0 ? 0 : 3) : i;
    t.seed.push_back({seed[si]});
    detail::say(o, "netperf threads=" + std::to_string(n) + " done");
  }
  const std::size_t last = t.x.size() - 1;
  const double hi = t.v[last][1] / t.v[last][0];
  const double lo = t.v[0][1] / t.v[0][0];
  t.seed_headline = "SIS_CACHE RFC: +49.6% at 168 threads, +122.5% at 224, flat at 56-112";
  t.sim_headline = "rfc2023 vs current " + pct(hi) + " at " + t.x[last] + " threads, " + pct(lo) + " at " + t.x[0];
  t.verdict = hi > 1.0 && std::fabs(lo - 1.0) < 0.05
                  ? (hi - 1.0 >= 0.6 && hi - 1.0 <= 2.45 ? "reproduced (direction and size)" : "direction only")
                  : "not reproduced";
  return t;
}

// --- mixed: short sleepers and CPU-bound tasks ---------------------------------
inline Table mixed(Options o) {
  using namespace std::chrono_literals;
  Table t = detail::make_table("mixed", "8 short sleepers + 10 mostly CPU-bound batch tasks; 12-CPU Westmere", "metric", "see row");
  t.configs = {"current", "sis-cache-v1", "sis-cache-v2"};
  const auto topo = taskplace::presets::westmere_12cpu_2013();
  const Nanoseconds warm = 20ms, meas = o.quick ? 100ms : 400ms;
  namespace sc = taskplace::sis_cache;
  const auto s = detail::mix(o.seed, 1);
  const Report a = detail::simulate<taskplace::traits::Current>(topo, workloads::mixed(12), warm, meas, s, o, t);
  const Report b = detail::simulate<taskplace::traits::CacheHot<sc::ShortSleeps2023>>(topo, workloads::mixed(12), warm, meas, s, o, t);
  const Report c = detail::simulate<taskplace::traits::CacheHot<sc::HalveLong2023>>(topo, workloads::mixed(12), warm, meas, s, o, t);
  auto per_s = [](const Report& r, Nanoseconds d) {
    return static_cast<double>(d.count()) / 1e6 / (static_cast<double>(r.measured.count()) / 1e9);
  };
  t.x = {"batch jobs/s", "idle-while-runnable ms/s", "migrations/s"};
  t.v = {{a.throughput, b.throughput, c.throughput},
         {per_s(a, a.idle_while_runnable), per_s(b, b.idle_while_runnable), per_s(c, c.idle_while_runnable)},
         {static_cast<double>(a.migrations_total()) / 0.4, static_cast<double>(b.migrations_total()) / 0.4,
          static_cast<double>(c.migrations_total()) / 0.4}};
  if (o.quick) t.v[2] = {static_cast<double>(a.migrations_total()) / 0.1, static_cast<double>(b.migrations_total()) / 0.1,
                         static_cast<double>(c.migrations_total()) / 0.1};
  detail::say(o, "mixed done");
  t.seed_headline = "not measured by the seeds; Ingo Molnar: leaving CPUs idle costs utilisation in mixed workloads";
  t.sim_headline = "v2 vs current: batch " + pct(t.v[0][2] / t.v[0][0]) + ", idle-while-runnable " +
                   fmt(t.v[1][0], 2) + " -> " + fmt(t.v[1][2], 2) + " ms/s";
  // As for aim7's direction, a difference must clear 1% to count: a tie
  // to the hundredth of a ms/s is no cost.
  t.verdict = t.v[1][2] > 1.01 * t.v[1][0] ? "shows the cost (more idle-while-runnable time)" : "no cost visible";
  return t;
}

inline const std::vector<std::string>& scenario_names() {
  static const std::vector<std::string> n{"pgbench", "pgbench-2008", "pgbench-2008-sync", "pipe", "hackbench", "aim7", "netperf-udp-rr", "mixed"};
  return n;
}

// Returns: the named scenario's table. Throws std::invalid_argument for an
// unknown name (the message lists the known ones).
inline Table run_scenario(const std::string& name, const Options& o) {
  if (name == "pgbench") return pgbench(o);
  if (name == "pgbench-2008") return pgbench_2008(o);
  if (name == "pgbench-2008-sync") return pgbench_2008_sync(o);
  if (name == "pipe") return pipe(o);
  if (name == "hackbench") return hackbench(o);
  if (name == "aim7") return aim7(o);
  if (name == "netperf-udp-rr" || name == "netperf") return netperf(o);
  if (name == "mixed") return mixed(o);
  std::string known;
  for (const auto& n : scenario_names()) known += " " + n;
  throw std::invalid_argument("unknown scenario '" + name + "'; known:" + known);
}

}  // namespace taskplace_sim
