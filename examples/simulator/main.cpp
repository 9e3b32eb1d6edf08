// taskplace_demo: the simulator's command line.
//
// With no arguments: the pgbench scenario (Wang 2013), its table beside
// the source's numbers, and its CSV in ./out/ (scripts/sim-plots draws
// it). See --help and docs/simulator.md.
//
//   taskplace_demo                      # pgbench, table + out/pgbench.csv
//   taskplace_demo --all --markdown     # every scenario, docs table
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <utility>
#include <string>
#include <vector>

#include "taskplace_sim/scenarios.hpp"
#include "taskplace_sim/scenarios_userspace.hpp"

namespace {

void usage(std::ostream& os) {
  os << "usage: taskplace_demo [options]\n"
        "  (no options)        run the pgbench scenario, print it beside Wang 2013's numbers, write out/pgbench.csv\n"
        "  --all               run every scenario, with progress lines\n"
        "  --scenario NAME     run one scenario:";
  for (const auto& n : taskplace_sim::scenario_names()) os << " " << n;
  os << "\n"
        "  --seed N            random seed (default 1); same seed, same output\n"
        "  --seeds N           random-stream seeds each verdict needs (default 3; --quick: at most 2)\n"
        "  --machine M         the machine: a preset (see --list), a shape SxLxCxT[,smt_last|nested][,sncN][,llc=SIZE]\n"
        "                      (sockets x LLCs per socket x cores per LLC x threads per core), or sysfs:DIR\n"
        "                      (a sysfs tree holding cpu/ and node/); default: each scenario's source machine\n"
        "  --list              print the scenarios and the machine presets, and exit\n"
        "  --speed             run each scenario's workload at full load on the machine (default big4096)\n"
        "                      for 20 ms of simulated time and print events per second\n"
        "  --csv               also print each table as CSV\n"
        "  --markdown          print the 'source measured / simulator shows / verdict' Markdown table at the end\n"
        "  --trace FILE        write a Chrome/Perfetto trace (JSON) of the scenario's first run (20 ms window)\n"
        "  --out DIR           where the CSV files go (default ./out)\n"
        "  --quick             shorter runs (a smoke test)\n"
        "  --costs SET         the cost set: kernel (default; the table's) or userspace (a user-space\n"
        "                      runtime's: resumes, line hand-offs, unparks; docs/simulator.md)\n"
        "  --userspace         compare the policy sets under the userspace costs on rt16, rt64 and rt256\n"
        "                      (or --machine), print ratios to the best fixed policy, write out/sim-userspace.csv\n"
        "  --cache-hot MODEL   the balances' cache-hot test: table (default; the one the docs' table was\n"
        "                      measured with) or kernel (per-level tries, SMT exempt, newidle tests too)\n"
        "  --help              this text\n";
}

}  // namespace

// The process's CPU time, in seconds: the speed figures divide by it, so
// other load on the machine does not count against the simulator.
double cpu_seconds() { return static_cast<double>(std::clock()) / CLOCKS_PER_SEC; }

// Effects: runs `name`'s full-load workload on `m` for `span` of simulated
// time under today's policies. Returns: (events, CPU seconds), the
// machine's construction excluded.
std::pair<std::uint64_t, double> speed_run(const std::string& name, const taskplace_sim::MachineSpec& m,
                                           taskplace::Nanoseconds span) {
  using M = taskplace_sim::Machine<taskplace::TableTopology, taskplace::traits::Current>;
  M machine{m.topology, taskplace_sim::full_load(name, m.topology.cpu_count(), 1), taskplace_sim::Costs{}, 1, m.hw};
  const double t0 = cpu_seconds();
  machine.run_until(span);
  return {machine.report().events_all, cpu_seconds() - t0};
}

// Effects: the --userspace comparison: its tables on stdout, its CSV in
// `out`/sim-userspace.csv. `machine`: one machine instead of the three;
// `names`: the workloads (default all); `markdown`: the docs' table too. Returns: the exit status.
int run_userspace(const taskplace_sim::Options& opt, const std::string& machine, const std::vector<std::string>& names,
                  const std::string& out, bool markdown) {
  taskplace_sim::UserspaceOptions u;
  if (!machine.empty()) u.machines = {machine};
  if (!names.empty()) u.workloads = names;
  u.seed = opt.seed;
  u.seeds = opt.quick ? std::min(opt.seeds, 2u) : opt.seeds;
  u.quick = opt.quick;
  u.progress = [](const std::string& s) { std::cerr << "  ... " << s << "\n"; };
  const double t0 = cpu_seconds();
  taskplace_sim::UserspaceResult r;
  try {
    r = taskplace_sim::run_userspace(u);
  } catch (const std::exception& e) {
    std::cerr << "taskplace_demo: --userspace: " << e.what() << "\n";
    return 2;
  }
  std::cout << "taskplace_demo --userspace" << (opt.quick ? " --quick" : "") << " (seed " << opt.seed << ", medians over "
            << u.seeds << " seeds)\n";
  taskplace_sim::write_userspace_text(std::cout, r);
  if (markdown) {
    std::cout << "\n";
    taskplace_sim::write_userspace_markdown(std::cout, r);
  }
  std::error_code ec;
  std::filesystem::create_directories(out, ec);
  const std::string path = (std::filesystem::path(out) / "sim-userspace.csv").string();
  std::ofstream f(path);
  taskplace_sim::write_userspace_csv(f, r, {"benchmark: sim-userspace", std::string("command: taskplace_demo --userspace") + (opt.quick ? " --quick" : "") + " --seed " + std::to_string(opt.seed) + " --seeds " + std::to_string(u.seeds)});
  std::printf("\nwrote %s; %llu events in %.1f s of CPU\n", path.c_str(), static_cast<unsigned long long>(r.events),
              cpu_seconds() - t0);
  return f ? 0 : 1;
}

int main(int argc, char** argv) {
  std::vector<std::string> names;
  taskplace_sim::Options opt;
  bool csv = false, markdown = false, list = false, speed = false, userspace = false;
  std::string machine_name;
  std::string out = "out", trace_file;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::cerr << "taskplace_demo: " << a << " needs a value\n";
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--help" || a == "-h") {
      usage(std::cout);
      return 0;
    } else if (a == "--all") {
      names = taskplace_sim::scenario_names();
    } else if (a == "--scenario") {
      names.push_back(value());
    } else if (a == "--seed") {
      const std::string v = value();
      try {
        opt.seed = std::stoull(v);
      } catch (const std::exception&) {
        std::cerr << "taskplace_demo: --seed needs a number, got '" << v << "'\n";
        return 2;
      }
    } else if (a == "--seeds") {
      const std::string v = value();
      if (v.empty() || v.size() > 3 || v.find_first_not_of("0123456789") != std::string::npos || std::stoul(v) == 0) {
        std::cerr << "taskplace_demo: --seeds needs a number from 1 to 999, got '" << v << "'\n";
        return 2;
      }
      opt.seeds = static_cast<std::uint32_t>(std::stoul(v));
    } else if (a == "--machine") {
      const std::string v = value();
      machine_name = v;
      try {
        opt.machine = taskplace_sim::parse_machine(v);
      } catch (const std::exception& e) {
        std::cerr << "taskplace_demo: " << e.what() << "\n";
        return 2;
      }
    } else if (a == "--list") {
      list = true;
    } else if (a == "--speed") {
      speed = true;
    } else if (a == "--csv") {
      csv = true;
    } else if (a == "--markdown") {
      markdown = true;
    } else if (a == "--trace") {
      trace_file = value();
    } else if (a == "--out") {
      out = value();
    } else if (a == "--quick") {
      opt.quick = true;
    } else if (a == "--costs") {
      const std::string v = value();
      if (v == "kernel") {
        opt.costs = taskplace_sim::Costs{};
      } else if (v == "userspace") {
        opt.costs = taskplace_sim::Costs::userspace();
      } else {
        std::cerr << "taskplace_demo: --costs takes kernel or userspace, got '" << v << "'\n";
        return 2;
      }
    } else if (a == "--userspace") {
      userspace = true;
    } else if (a == "--cache-hot") {
      const std::string v = value();
      if (v == "table") {
        opt.cache_hot = taskplace_sim::CacheHotModel::table;
      } else if (v == "kernel") {
        opt.cache_hot = taskplace_sim::CacheHotModel::kernel;
      } else {
        std::cerr << "taskplace_demo: --cache-hot takes table or kernel, got '" << v << "'\n";
        return 2;
      }
    } else {
      std::cerr << "taskplace_demo: unknown option '" << a << "'\n";
      usage(std::cerr);
      return 2;
    }
  }
  if (list) {
    std::cout << "scenarios (--scenario NAME; --all runs them all):\n";
    for (const auto& [n, d] : taskplace_sim::scenario_descriptions()) std::cout << "  " << n << ": " << d << "\n";
    std::cout << "machine presets (--machine NAME), each with its shape:\n";
    for (const auto& p : taskplace_sim::machine_presets())
      std::cout << "  " << p.name << " (" << p.shape << "): " << p.description << "\n";
    std::cout << "shapes: --machine SOCKETSxLLCSxCORESxTHREADS[,smt_last|nested][,sncN][,llc=SIZE]; trees: --machine sysfs:DIR\n";
    return 0;
  }
  if (speed) {
    const taskplace_sim::MachineSpec m = opt.machine ? *opt.machine : taskplace_sim::parse_machine("big4096");
    if (names.empty()) names = taskplace_sim::scenario_names();
    std::printf("full-load speed on %s (%u CPUs), 20 ms simulated, today's policies:\n", m.name.c_str(),
                m.topology.cpu_count());
    std::printf("| scenario | events | CPU s | million events/s |\n|---|---|---|---|\n");
    for (const auto& n : names) {
      if (n == "pgbench-2008" || n == "pgbench-2008-sync") continue;  // pgbench's workload
      const auto [events, cpu] = speed_run(n, m, taskplace::Nanoseconds{20'000'000});
      std::printf("| %s | %llu | %.2f | %.2f |\n", n.c_str(), static_cast<unsigned long long>(events), cpu,
                  static_cast<double>(events) / 1e6 / (cpu > 0 ? cpu : 1));
      std::fflush(stdout);
    }
    return 0;
  }
  if (userspace) return run_userspace(opt, machine_name, names, out, markdown);
  if (names.empty()) names.push_back("pgbench");
  for (const auto& n : names) {
    bool known = false;
    for (const auto& k : taskplace_sim::scenario_names()) known = known || k == n;
    if (!known && n != "netperf") {
      std::cerr << "taskplace_demo: unknown scenario '" << n << "'\n";
      usage(std::cerr);
      return 2;
    }
  }
  std::error_code ec;
  std::filesystem::create_directories(out, ec);
  if (ec) {
    std::cerr << "taskplace_demo: cannot create " << out << ": " << ec.message() << "\n";
    return 1;
  }
  const bool all = names.size() > 1;
  if (all) opt.progress = [](const std::string& s) { std::cerr << "  ... " << s << "\n"; };

  std::vector<taskplace_sim::Table> tables;
  std::uint64_t total_events = 0;
  double total_wall = 0;
  for (const auto& n : names) {
    using namespace std::chrono_literals;
    std::unique_ptr<taskplace_sim::Trace> trace;
    if (!trace_file.empty() && tables.empty()) {
      trace = std::make_unique<taskplace_sim::Trace>(taskplace::Nanoseconds{30ms}, taskplace::Nanoseconds{50ms});
      opt.trace = trace.get();
    }
    if (all) std::cerr << "[" << tables.size() + 1 << "/" << names.size() << "] " << n << "\n";
    const double t0 = cpu_seconds();
    taskplace_sim::Table t;
    try {
      t = taskplace_sim::run_scenario(n, opt);
    } catch (const std::exception& e) {
      std::cerr << "taskplace_demo: scenario " << n << ": " << e.what() << "\n";
      return 1;
    }
    t.wall_seconds = cpu_seconds() - t0;
    opt.trace = nullptr;
    taskplace_sim::write_text(std::cout, t);
    if (csv) taskplace_sim::write_csv(std::cout, t);
    const std::string base = (std::filesystem::path(out) / t.name).string();
    {
      std::ofstream f(base + ".csv");
      taskplace_sim::write_csv(f, t);
    }
    std::cout << "wrote " << base << ".csv (scripts/sim-plots draws it)\n";
    if (trace) {
      std::ofstream f(trace_file);
      trace->write(f, opt.machine ? opt.machine->topology.cpu_count() : 224);
      std::cout << "wrote trace " << trace_file << " (" << trace->size() << " events)\n";
    }
    std::printf("simulated %llu events in %.2f s of CPU: %.2f million events/s\n\n",
                static_cast<unsigned long long>(t.events), t.wall_seconds,
                static_cast<double>(t.events) / 1e6 / (t.wall_seconds > 0 ? t.wall_seconds : 1));
    std::fflush(stdout);
    total_events += t.events;
    total_wall += t.wall_seconds;
    tables.push_back(std::move(t));
  }
  if (all)
    std::printf("all scenarios: %llu events in %.1f s of CPU (%.2f million events/s)\n",
                static_cast<unsigned long long>(total_events), total_wall,
                static_cast<double>(total_events) / 1e6 / (total_wall > 0 ? total_wall : 1));
  if (markdown) {
    std::cout << "\n| experiment | machine | source measured | simulator shows | verdict |\n|---|---|---|---|---|\n";
    for (const auto& t : tables) taskplace_sim::write_markdown_row(std::cout, t);
    std::cout << "\n| scenario | machine | events | million events/s |\n|---|---|---|---|\n";
    for (const auto& t : tables)
      std::printf("| %s | %s | %llu | %.1f |\n", t.name.c_str(), t.machine.c_str(),
                  static_cast<unsigned long long>(t.events),
                  static_cast<double>(t.events) / 1e6 / (t.wall_seconds > 0 ? t.wall_seconds : 1));
  }
  return 0;
}
