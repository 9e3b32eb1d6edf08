// taskplace_sim/scenarios_userspace.hpp: the policy sets compared under a
// user-space runtime's costs (Costs::userspace()) on machines of 16, 64
// and 256 CPUs (rt16, rt64, rt256: SMT, several LLCs, two nodes), with
// each set's throughput as a ratio to the best fixed policy and to
// AlwaysAffine and PrevCpu.
//
// The workloads are the scenarios' own, with the work a runtime's tasks do
// in place of system calls: pipe and udp_rr at a tenth of the kernel
// scenarios' per-message work (a channel send and receive instead of a
// write and a read), hackbench likewise; pgbench keeps its client's and
// backends' work (the database's, not the kernel's).
//
//   taskplace_sim::UserspaceOptions o;                 // rt16, rt64, rt256
//   taskplace_sim::UserspaceResult r = taskplace_sim::run_userspace(o);
//   taskplace_sim::write_userspace_text(std::cout, r);
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "taskplace/wake_placer.hpp"
#include "taskplace_sim/scenarios.hpp"
#if __has_include("taskplace/placer/cost_gate.hpp")
#include "taskplace/placer/cost_gate.hpp"
#endif

namespace taskplace_sim {

// Whether traits::Runtime (the runtime-calibrated policy set) is built in.
#if __has_include("taskplace/placer/cost_gate.hpp")
inline constexpr bool userspace_has_runtime = true;
#else
inline constexpr bool userspace_has_runtime = false;
#endif

struct UserspaceOptions {
  std::vector<std::string> machines{"rt16", "rt64", "rt256"};
  std::vector<std::string> workloads{"pipe", "pgbench", "hackbench", "udp_rr"};
  std::uint64_t seed = 1;
  std::uint32_t seeds = 3;  // random-stream seeds per load point: each throughput is their median
  bool quick = false;       // shorter windows, fewer load points
  Costs costs = Costs::userspace();
  std::function<void(const std::string&)> progress;
};

// One load point: its throughput under each policy set (UserspaceResult::policies).
struct UserspaceRow {
  std::string machine, workload, x;  // x: "pairs=1", "clients=8", ...
  std::string unit;
  std::vector<double> v;
  std::uint32_t unsteady = 0;  // runs whose warm-up never settled
};

struct UserspaceResult {
  std::vector<std::string> policies;  // the fixed ones first, then Runtime if built in
  std::size_t fixed = 0;              // how many of them are fixed policies
  std::vector<UserspaceRow> rows;
  std::uint64_t events = 0;

  std::size_t column(const std::string& name) const {
    return static_cast<std::size_t>(std::find(policies.begin(), policies.end(), name) - policies.begin());
  }
  // Returns: the best fixed policy's throughput on row r.
  double best_fixed(const UserspaceRow& r) const {
    return *std::max_element(r.v.begin(), r.v.begin() + static_cast<std::ptrdiff_t>(fixed));
  }
};

namespace detail {
using namespace std::chrono_literals;

inline const std::vector<std::string>& userspace_policies() {
  static const std::vector<std::string> n = [] {
    std::vector<std::string> v{"AlwaysAffine", "PrevCpu", "Current", "Linux2013", "Linux2008"};
    if (userspace_has_runtime) v.push_back("Runtime");
    return v;
  }();
  return n;
}
inline constexpr std::size_t userspace_fixed = 5;

// Returns: the throughput of `w` on `ms` under policy set `Wake` (finite
// workloads: completed runs per second of their length).
template <class Wake>
double userspace_one(const MachineSpec& ms, const Workload& w, bool finite, const Costs& costs, std::uint64_t seed,
                     bool quick, std::uint64_t& events, std::uint32_t& unsteady) {
  SimMachine<Wake> m{ms.topology, w, costs, seed, ms.hw};
  if (finite) {
    const Report r = m.run_to_completion(Nanoseconds{2'000'000'000}, Nanoseconds{100'000});
    events += r.events_all;
    return r.all_done.count() > 0 ? 1e9 / static_cast<double>(r.all_done.count()) : 0.0;
  }
  const Nanoseconds warm = quick ? 3ms : 10ms, measure = quick ? 6ms : 20ms;
  const SteadyState st{.min = warm, .window = std::max(Nanoseconds{2ms}, measure / 5), .max = warm + 10 * measure,
                       .tolerance_pct = 3};
  const Report r = m.run_steady(st, measure);
  events += r.events_all;
  if (!r.steady) ++unsteady;
  return r.throughput;
}

// Effects: runs `w` under every policy set into `row`, at o.seeds seeds
// (interleaved: every set at one seed, then the next), each set's figure
// the median over them.
inline void userspace_row(const MachineSpec& ms, const Workload& w, bool finite, const UserspaceOptions& o,
                          std::uint64_t seed, UserspaceRow& row, std::uint64_t& events) {
  namespace tr = taskplace::traits;
  const bool q = o.quick;
  std::vector<std::vector<double>> runs;
  for (std::uint32_t k = 0; k < std::max(1u, o.seeds); ++k) {
    const std::uint64_t s = mix(seed + k * 1000, k);
    std::vector<double> v;
    v.push_back(userspace_one<tr::AlwaysAffine>(ms, w, finite, o.costs, s, q, events, row.unsteady));
    v.push_back(userspace_one<tr::PrevCpu>(ms, w, finite, o.costs, s, q, events, row.unsteady));
    v.push_back(userspace_one<tr::Current>(ms, w, finite, o.costs, s, q, events, row.unsteady));
    v.push_back(userspace_one<tr::Linux2013>(ms, w, finite, o.costs, s, q, events, row.unsteady));
    v.push_back(userspace_one<tr::Linux2008<>>(ms, w, finite, o.costs, s, q, events, row.unsteady));
#if __has_include("taskplace/placer/cost_gate.hpp")
    v.push_back(userspace_one<tr::Runtime>(ms, w, finite, o.costs, s, q, events, row.unsteady));
#endif
    runs.push_back(std::move(v));
  }
  for (std::size_t i = 0; i < runs[0].size(); ++i) {
    std::vector<double> x;
    for (const auto& v : runs) x.push_back(v[i]);
    std::sort(x.begin(), x.end());
    row.v.push_back(x.size() % 2 ? x[x.size() / 2] : (x[x.size() / 2 - 1] + x[x.size() / 2]) / 2);
  }
}
}  // namespace detail

// Returns: every workload's load points on every machine, under every policy set.
// Throws: MachineError for an unknown machine, std::invalid_argument for an unknown workload.
inline UserspaceResult run_userspace(const UserspaceOptions& o) {
  using namespace std::chrono_literals;
  UserspaceResult res;
  res.policies = detail::userspace_policies();
  res.fixed = detail::userspace_fixed;
  for (const auto& mname : o.machines) {
    const MachineSpec ms = parse_machine(mname);
    const std::uint32_t cpus = ms.topology.cpu_count();
    // Each load point's seed: the machine's size and the point's index on
    // it, so a machine run alone (--machine) gives the rows it gives in
    // the full table.
    std::uint32_t point_index = 0;
    for (const auto& wname : o.workloads) {
      struct Point {
        std::string x;
        Workload w;
        bool finite;
      };
      std::vector<Point> points;
      if (wname == "pipe") {
        for (std::uint32_t p : {1u, 4u}) points.push_back({"pairs=" + std::to_string(p), workloads::pipe(p, cpus, 200ns), false});
      } else if (wname == "pgbench") {
        const std::vector<std::uint32_t> clients = o.quick ? std::vector<std::uint32_t>{1, 8, 32}
                                                           : std::vector<std::uint32_t>{1, 2, 4, 8, 16, 32, 48};
        for (std::uint32_t n : clients) points.push_back({"clients=" + std::to_string(n), workloads::pgbench(n, cpus), false});
      } else if (wname == "hackbench") {
        points.push_back({"groups=1", workloads::hackbench(cpus, o.seed, o.quick ? 10 : 40, 1, 10, spread_order(ms), 150ns, 100ns), true});
      } else if (wname == "udp_rr") {
        for (std::uint32_t n : {std::max(1u, cpus / 4), cpus / 2})
          points.push_back({"pairs=" + std::to_string(n), workloads::netperf(n, cpus, 300ns, 200ns), false});
      } else {
        throw std::invalid_argument("unknown user-space workload '" + wname + "' (pipe, pgbench, hackbench, udp_rr)");
      }
      for (auto& p : points) {
        UserspaceRow row;
        row.machine = ms.name;
        row.workload = wname;
        row.x = p.x;
        row.unit = p.finite ? "runs/s" : p.w.unit;
        detail::userspace_row(ms, p.w, p.finite, o, detail::mix(o.seed, cpus * 1000 + point_index++), row,
                              res.events);
        if (o.progress) o.progress(ms.name + " " + wname + " " + p.x + " done");
        res.rows.push_back(std::move(row));
      }
    }
  }
  return res;
}

// Effects: one table per machine: each policy set's throughput on each
// load point as a ratio to the best fixed policy, then the ratios of the
// last set (Runtime when built in, else Linux2008) to AlwaysAffine and PrevCpu.
inline void write_userspace_text(std::ostream& os, const UserspaceResult& r) {
  const std::size_t aa = r.column("AlwaysAffine"), pc = r.column("PrevCpu"), last = r.policies.size() - 1;
  std::string machine;
  char b[256];
  for (const auto& row : r.rows) {
    if (row.machine != machine) {
      machine = row.machine;
      os << "\n" << machine << " (user-space costs): each set / the best fixed policy; "
         << r.policies[last] << " / AlwaysAffine, / PrevCpu\n";
      std::snprintf(b, sizeof b, "%-10s %-11s %12s", "workload", "point", "best fixed");
      os << b;
      for (const auto& p : r.policies) {
        std::snprintf(b, sizeof b, " %12s", p.c_str());
        os << b;
      }
      os << "   vs-AA  vs-Prev\n";
    }
    const double best = r.best_fixed(row);
    std::snprintf(b, sizeof b, "%-10s %-11s %12.0f", row.workload.c_str(), row.x.c_str(), best);
    os << b;
    for (double v : row.v) {
      std::snprintf(b, sizeof b, " %12.3f", best > 0 ? v / best : 0.0);
      os << b;
    }
    std::snprintf(b, sizeof b, "  %6.2fx %6.2fx%s\n", row.v[aa] > 0 ? row.v[last] / row.v[aa] : 0.0,
                  row.v[pc] > 0 ? row.v[last] / row.v[pc] : 0.0, row.unsteady ? "  (unsteady)" : "");
    os << b;
  }
}

// Effects: the Markdown table of docs/simulator.md: a line per machine and
// load point, each policy set's ratio to the best fixed policy (the best
// fixed one reads 1.00), and the last set's ratios to AlwaysAffine and PrevCpu.
inline void write_userspace_markdown(std::ostream& os, const UserspaceResult& r) {
  const std::size_t aa = r.column("AlwaysAffine"), pc = r.column("PrevCpu"), last = r.policies.size() - 1;
  os << "| machine | workload | point | best fixed (/s) |";
  for (const auto& p : r.policies) os << " " << p << " |";
  os << " " << r.policies[last] << " / AlwaysAffine | / PrevCpu |\n|---|---|---|---|";
  for (std::size_t i = 0; i < r.policies.size() + 2; ++i) os << "---|";
  os << "\n";
  char b[64];
  for (const auto& row : r.rows) {
    const double best = r.best_fixed(row);
    std::snprintf(b, sizeof b, "%.0f", best);
    os << "| " << row.machine << " | " << row.workload << " | " << row.x << " | " << b << " |";
    for (double v : row.v) {
      std::snprintf(b, sizeof b, " %.2f |", best > 0 ? v / best : 0.0);
      os << b;
    }
    std::snprintf(b, sizeof b, " %.2fx | %.2fx |", row.v[aa] > 0 ? row.v[last] / row.v[aa] : 0.0,
                  row.v[pc] > 0 ? row.v[last] / row.v[pc] : 0.0);
    os << b << "\n";
  }
}

// Effects: one CSV line per load point and policy set: machine, workload,
// point, policy, throughput, unit, and its ratios to the best fixed
// policy, AlwaysAffine and PrevCpu; `header` lines first, as "# " comments.
inline void write_userspace_csv(std::ostream& os, const UserspaceResult& r, const std::vector<std::string>& header = {}) {
  for (const auto& h : header) os << "# " << h << "\n";
  os << "machine,workload,point,policy,throughput,unit,vs_best_fixed,vs_always_affine,vs_prev_cpu\n";
  const std::size_t aa = r.column("AlwaysAffine"), pc = r.column("PrevCpu");
  char b[128];
  for (const auto& row : r.rows) {
    const double best = r.best_fixed(row);
    for (std::size_t i = 0; i < r.policies.size(); ++i) {
      std::snprintf(b, sizeof b, "%.1f,%s,%.4f,%.4f,%.4f", row.v[i], row.unit.c_str(), best > 0 ? row.v[i] / best : 0.0,
                    row.v[aa] > 0 ? row.v[i] / row.v[aa] : 0.0, row.v[pc] > 0 ? row.v[i] / row.v[pc] : 0.0);
      os << row.machine << "," << row.workload << "," << row.x << "," << r.policies[i] << "," << b << "\n";
    }
  }
}

}  // namespace taskplace_sim
