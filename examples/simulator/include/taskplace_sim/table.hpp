// taskplace_sim/table.hpp: a scenario's result as a table (one row per
// load point, one column per policy set, plus the seed's own numbers), and
// its renderings: aligned text, CSV (what scripts/sim-plots draws with
// gnuplot) and the Markdown summary.
//
//   Table t = run_scenario("pgbench", options);
//   write_text(std::cout, t); write_csv(file, t);
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <ostream>
#include <string>
#include <vector>

namespace taskplace_sim {

// One experiment's line of the "source measured / simulator shows /
// verdict" table (a scenario may have several: netperf at 168 and at 224
// threads).
struct Summary {
  std::string experiment;  // e.g. "Chen 2023 netperf, 168 threads"
  std::string source;      // what the source measured
  std::string sim;         // what the simulator shows (mean, and the range over seeds)
  std::string verdict;
};

struct Table {
  std::string name;        // scenario name, e.g. "pgbench"
  std::string machine;     // the machine it ran on (MachineSpec::name)
  std::string title;       // one line: workload and machine
  std::string x_name;      // e.g. "clients"
  std::string unit;        // unit of the values, e.g. "tps"
  std::vector<std::string> configs;               // simulated columns
  std::vector<std::string> x;                     // rows
  std::vector<std::vector<double>> v;             // [row][config]
  std::vector<std::string> seed_headers;          // seed's columns
  std::vector<std::vector<std::string>> seed;     // [row][seed column], may be empty
  std::string seed_headline;                      // what the seed measured
  std::string sim_headline;                       // what the simulator shows
  std::string verdict;                            // reproduced? (direction, size)
  std::vector<std::string> notes;
  std::vector<Summary> summaries;                 // the table's lines (empty: one from the headlines)
  std::uint64_t events = 0;                       // simulated events, warm-ups included
  std::uint32_t unsteady = 0;                     // runs whose warm-up never settled
  double wall_seconds = 0;                        // CPU seconds it took; not part of deterministic output
};

inline std::string fmt(double v, int prec = 0) {
  char b[64];
  std::snprintf(b, sizeof b, "%.*f", prec, v);
  return b;
}

inline std::string pct(double ratio) {
  char b[64];
  std::snprintf(b, sizeof b, "%+.1f%%", (ratio - 1.0) * 100.0);
  return b;
}

// Effects: writes the table laid out like the seed's: x, the seed's
// columns, then the simulator's. Deterministic.
inline void write_text(std::ostream& os, const Table& t) {
  os << "== " << t.name << ": " << t.title << "\n";
  if (!t.machine.empty()) os << "machine: " << t.machine << "\n";
  std::vector<std::string> head{t.x_name};
  for (const auto& h : t.seed_headers) head.push_back("source " + h);
  for (const auto& c : t.configs) head.push_back(c);
  std::vector<std::vector<std::string>> rows;
  for (std::size_t r = 0; r < t.x.size(); ++r) {
    std::vector<std::string> row{t.x[r]};
    for (std::size_t k = 0; k < t.seed_headers.size(); ++k)
      row.push_back(r < t.seed.size() && k < t.seed[r].size() ? t.seed[r][k] : "");
    for (double d : t.v[r]) row.push_back(fmt(d, std::fabs(d) < 100 ? 3 : 0));
    rows.push_back(row);
  }
  std::vector<std::size_t> w(head.size());
  for (std::size_t i = 0; i < head.size(); ++i) {
    w[i] = head[i].size();
    for (const auto& row : rows) w[i] = std::max(w[i], row[i].size());
  }
  auto put = [&](const std::vector<std::string>& row) {
    os << "|";
    for (std::size_t i = 0; i < row.size(); ++i) {
      os << " " << std::string(w[i] - row[i].size(), ' ') << row[i] << " |";
    }
    os << "\n";
  };
  put(head);
  os << "|";
  for (auto x : w) os << std::string(x + 2, '-') << "|";
  os << "\n";
  for (const auto& row : rows) put(row);
  os << "unit: " << t.unit << "\n";
  os << "source:    " << t.seed_headline << "\n";
  os << "simulator: " << t.sim_headline << "\n";
  os << "verdict:   " << t.verdict << "\n";
  for (const auto& m : t.summaries)
    os << "  " << m.experiment << ": source " << m.source << " | simulator " << m.sim << " | " << m.verdict << "\n";
  for (const auto& n : t.notes) os << "note: " << n << "\n";
}

inline void write_csv(std::ostream& os, const Table& t) {
  os << "scenario," << t.x_name;
  for (const auto& c : t.configs) os << "," << c;
  for (const auto& h : t.seed_headers) os << ",source " << h;
  os << "\n";
  for (std::size_t r = 0; r < t.x.size(); ++r) {
    os << t.name << "," << t.x[r];
    for (double d : t.v[r]) os << "," << fmt(d, 6);
    for (std::size_t k = 0; k < t.seed_headers.size(); ++k)
      os << "," << (r < t.seed.size() && k < t.seed[r].size() ? t.seed[r][k] : "");
    os << "\n";
  }
}

// Effects: the Markdown rows of the "source measured / simulator shows /
// verdict" table: one per Summary, or one from the headlines.
inline void write_markdown_row(std::ostream& os, const Table& t) {
  if (t.summaries.empty()) {
    os << "| " << t.name << " | " << t.machine << " | " << t.seed_headline << " | " << t.sim_headline << " | "
       << t.verdict << " |\n";
    return;
  }
  for (const auto& m : t.summaries)
    os << "| " << m.experiment << " | " << t.machine << " | " << m.source << " | " << m.sim << " | " << m.verdict
       << " |\n";
}

}  // namespace taskplace_sim
