// taskplace_demo: the simulator's command line.
//
// With no arguments: the pgbench scenario (Wang 2013), its table beside the
// seed's numbers, and the plot in ./out/. See --help and
// docs/simulator.md.
//
//   taskplace_demo                      # pgbench, table + out/pgbench.svg
//   taskplace_demo --all --markdown     # every scenario, docs table
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "taskplace_sim/scenarios.hpp"

namespace {

void usage(std::ostream& os) {
  os << "usage: taskplace_demo [options]\n"
        "  (no options)        run the pgbench scenario, print it beside Wang 2013, write out/pgbench.svg\n"
        "  --all               run every scenario, with progress lines\n"
        "  --scenario NAME     run one scenario:";
  for (const auto& n : taskplace_sim::scenario_names()) os << " " << n;
  os << "\n"
        "  --seed N            random seed (default 1); same seed, same output\n"
        "  --csv               also print each table as CSV\n"
        "  --markdown          print the 'seed measured / simulator shows' Markdown table at the end\n"
        "  --trace FILE        write a Chrome/Perfetto trace (JSON) of the scenario's first run (20 ms window)\n"
        "  --out DIR           where plots and CSV files go (default ./out)\n"
        "  --quick             shorter runs (a smoke test)\n"
        "  --cache-hot MODEL   the balances' cache-hot test: table (default; the one the docs' table was\n"
        "                      measured with) or kernel (per-level tries, SMT exempt, newidle tests too)\n"
        "  --help              this text\n";
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> names;
  taskplace_sim::Options opt;
  bool csv = false, markdown = false;
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
    const auto t0 = std::chrono::steady_clock::now();
    taskplace_sim::Table t = taskplace_sim::run_scenario(n, opt);
    t.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    opt.trace = nullptr;
    taskplace_sim::write_text(std::cout, t);
    if (csv) taskplace_sim::write_csv(std::cout, t);
    const std::string base = (std::filesystem::path(out) / t.name).string();
    {
      std::ofstream f(base + ".svg");
      taskplace_sim::write_svg(f, t);
    }
    {
      std::ofstream f(base + ".csv");
      taskplace_sim::write_csv(f, t);
    }
    std::cout << "wrote " << base << ".svg and " << base << ".csv\n";
    if (trace) {
      std::ofstream f(trace_file);
      // The trace's CPU tracks: the largest machine any scenario uses.
      trace->write(f, 224);
      std::cout << "wrote trace " << trace_file << " (" << trace->size() << " events)\n";
    }
    std::printf("simulated %llu events in %.2f s wall: %.2f million events/s\n\n",
                static_cast<unsigned long long>(t.events), t.wall_seconds,
                static_cast<double>(t.events) / 1e6 / (t.wall_seconds > 0 ? t.wall_seconds : 1));
    std::fflush(stdout);
    total_events += t.events;
    total_wall += t.wall_seconds;
    tables.push_back(std::move(t));
  }
  if (all)
    std::printf("all scenarios: %llu events in %.1f s wall (%.2f million events/s)\n",
                static_cast<unsigned long long>(total_events), total_wall,
                static_cast<double>(total_events) / 1e6 / (total_wall > 0 ? total_wall : 1));
  if (markdown) {
    std::cout << "\n| scenario | seed measured | simulator shows | verdict |\n|---|---|---|---|\n";
    for (const auto& t : tables) taskplace_sim::write_markdown_row(std::cout, t);
  }
  return 0;
}
