// taskplace_sim/table.hpp: a scenario's result as a table (one row per
// load point, one column per policy set, plus the seed's own numbers), and
// its renderings: aligned text, CSV, Markdown summary and an SVG plot.
//
//   Table t = run_scenario("pgbench", options);
//   write_text(std::cout, t); write_svg(file, t);
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
  double wall_seconds = 0;                        // not part of deterministic output
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
  for (const auto& h : t.seed_headers) head.push_back("seed " + h);
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
  os << "seed:      " << t.seed_headline << "\n";
  os << "simulator: " << t.sim_headline << "\n";
  os << "verdict:   " << t.verdict << "\n";
  for (const auto& m : t.summaries)
    os << "  " << m.experiment << ": source " << m.source << " | simulator " << m.sim << " | " << m.verdict << "\n";
  for (const auto& n : t.notes) os << "note: " << n << "\n";
}

inline void write_csv(std::ostream& os, const Table& t) {
  os << "scenario," << t.x_name;
  for (const auto& c : t.configs) os << "," << c;
  for (const auto& h : t.seed_headers) os << ",seed " << h;
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

// Effects: a line plot of every config's values against the rows, as a
// self-contained SVG (no scripts, no external resources).
inline void write_svg(std::ostream& os, const Table& t) {
  const double W = 760, H = 440, L = 80, R = 200, T = 40, B = 60;
  const double pw = W - L - R, ph = H - T - B;
  double hi = 0;
  for (const auto& row : t.v)
    for (double d : row) hi = std::max(hi, d);
  if (hi <= 0) hi = 1;
  const double mag = std::pow(10.0, std::floor(std::log10(hi)));
  const double top = std::ceil(hi / mag) * mag;
  const std::size_t n = t.x.size();
  auto px = [&](std::size_t i) { return L + (n > 1 ? pw * static_cast<double>(i) / static_cast<double>(n - 1) : pw / 2); };
  auto py = [&](double d) { return T + ph * (1.0 - d / top); };
  static const char* colors[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f"};
  os << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << W << "\" height=\"" << H
     << "\" viewBox=\"0 0 " << W << " " << H << "\" font-family=\"sans-serif\" font-size=\"12\">\n";
  os << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  os << "<text x=\"" << L << "\" y=\"22\" font-size=\"15\">" << t.name << ": " << t.unit << " vs "
     << t.x_name << " (simulated)</text>\n";
  for (int k = 0; k <= 5; ++k) {
    const double val = top * k / 5.0;
    const double y = py(val);
    os << "<line x1=\"" << L << "\" y1=\"" << y << "\" x2=\"" << L + pw << "\" y2=\"" << y
       << "\" stroke=\"#ddd\"/>\n";
    os << "<text x=\"" << L - 6 << "\" y=\"" << y + 4 << "\" text-anchor=\"end\">" << fmt(val, val < 10 ? 2 : 0)
       << "</text>\n";
  }
  for (std::size_t i = 0; i < n; ++i)
    os << "<text x=\"" << px(i) << "\" y=\"" << T + ph + 18 << "\" text-anchor=\"middle\">" << t.x[i]
       << "</text>\n";
  os << "<text x=\"" << L + pw / 2 << "\" y=\"" << H - 18 << "\" text-anchor=\"middle\">" << t.x_name
     << "</text>\n";
  os << "<line x1=\"" << L << "\" y1=\"" << T + ph << "\" x2=\"" << L + pw << "\" y2=\"" << T + ph
     << "\" stroke=\"black\"/>\n<line x1=\"" << L << "\" y1=\"" << T << "\" x2=\"" << L << "\" y2=\""
     << T + ph << "\" stroke=\"black\"/>\n";
  for (std::size_t c = 0; c < t.configs.size(); ++c) {
    const char* col = colors[c % 8];
    os << "<polyline fill=\"none\" stroke=\"" << col << "\" stroke-width=\"2\" points=\"";
    for (std::size_t i = 0; i < n; ++i) os << px(i) << "," << py(t.v[i][c]) << " ";
    os << "\"/>\n";
    for (std::size_t i = 0; i < n; ++i)
      os << "<circle cx=\"" << px(i) << "\" cy=\"" << py(t.v[i][c]) << "\" r=\"3\" fill=\"" << col << "\"/>\n";
    const double ly = T + 16.0 * static_cast<double>(c) + 8;
    os << "<line x1=\"" << L + pw + 16 << "\" y1=\"" << ly << "\" x2=\"" << L + pw + 36 << "\" y2=\"" << ly
       << "\" stroke=\"" << col << "\" stroke-width=\"2\"/>\n<text x=\"" << L + pw + 42 << "\" y=\""
       << ly + 4 << "\">" << t.configs[c] << "</text>\n";
  }
  os << "</svg>\n";
}

}  // namespace taskplace_sim
