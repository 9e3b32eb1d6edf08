// tools/replay/report.cpp: the comparison's counts, table and CSV (see
// replay.hpp).
#include <algorithm>
#include <cstdio>
#include <map>
#include <ostream>
#include <utility>

#include "replay.hpp"

namespace taskplace::replay {

using detail::lpad;
using detail::pad;
using detail::pct;

namespace {
// The affine policy itself decided: neither wide, nor waking == prev.
bool affine_decided(AffineReason a) {
  return a != AffineReason::wide && a != AffineReason::same_cpu && a != AffineReason::waking_not_allowed &&
         a != AffineReason::current_cpu && a != AffineReason::wake_on_current;
}

std::string csv_text(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}
}  // namespace

namespace detail {
std::string pct(std::size_t part, std::size_t whole) {
  if (whole == 0) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f%%", 100.0 * double(part) / double(whole));
  return buf;
}
std::string pad(std::string s, std::size_t w) {
  if (s.size() < w) s.append(w - s.size(), ' ');
  return s;
}
std::string lpad(std::string s, std::size_t w) {
  if (s.size() < w) s.insert(0, w - s.size(), ' ');
  return s;
}
}  // namespace detail

namespace {
bool idle_reason(WakeReason r) {
  return r == WakeReason::idle_target || r == WakeReason::idle_prev || r == WakeReason::idle_recent ||
         r == WakeReason::idle_core || r == WakeReason::idle_scan || r == WakeReason::idle_smt_sibling;
}
void count(SetResult& s, const WakeRecord& w, const Placement& p) {
  ++s.wakeups;
  s.same_cpu += p.cpu == w.kernel_cpu;
  s.affine += p.target == w.waking_cpu && w.waking_cpu != w.prev_cpu;
  s.idle += idle_reason(p.reason);
  s.wide += p.wide;
}
}  // namespace

Summary summarize(const Result& r) {
  Summary s;
  const auto& names = perf_policy_sets();
  s.sets.resize(names.size() + 1);
  s.sets[0].name = "the kernel";
  for (std::size_t i = 0; i < names.size(); ++i) s.sets[i + 1].name = names[i];
  std::map<std::pair<std::string, std::string>, ReasonCount> reasons;
  for (const WakeRecord& w : r.wakeups) {
    ++s.sched_waking;
    ++s.by_category[static_cast<std::size_t>(w.category)];
    if (w.category != Category::placed) continue;
    if (w.kernel_cpu == no_cpu) {
      ++s.unmatched;
      continue;
    }
    const bool agree = w.placement.cpu == w.kernel_cpu;
    // The kernel's own row: its CPU, its pulls; no reasons to count.
    ++s.sets[0].wakeups;
    ++s.sets[0].same_cpu;
    s.sets[0].affine += w.kernel_cpu == w.waking_cpu && w.waking_cpu != w.prev_cpu;
    count(s.sets[1], w, w.placement);
    for (std::size_t i = 0; i < w.others.size() && i + 2 < s.sets.size(); ++i) count(s.sets[i + 2], w, w.others[i]);
    ++s.compared;
    s.agree += agree;
    s.wide += w.placement.wide;
    if (affine_decided(w.placement.affine)) {
      ++s.affine_compared;
      s.affine_agree += agree;
    }
    ReasonCount& rc = reasons[{to_string(w.placement.affine), to_string(w.placement.reason)}];
    rc.affine = to_string(w.placement.affine);
    rc.reason = to_string(w.placement.reason);
    ++rc.total;
    rc.agree += agree;
  }
  for (auto& [k, v] : reasons) s.reasons.push_back(v);
  std::stable_sort(s.reasons.begin(), s.reasons.end(),
                   [](const ReasonCount& a, const ReasonCount& b) { return a.total > b.total; });
  return s;
}

void print_table(std::ostream& out, const Result& r, const Summary& s) {
  const char* sync = r.sync == SyncMode::never ? "never" : r.sync == SyncMode::always ? "always" : "infer";
  out << "machine: " << r.topology << "; policy set: traits::Current; sync: " << sync << "\n";
  out << "recording perf process: " << (r.tool_pid ? std::to_string(r.tool_pid) : std::string("none")) << "\n\n";
  const auto row = [&](const char* what, std::size_t n) {
    out << "  " << pad(what, 44) << lpad(std::to_string(n), 8) << "\n";
  };
  out << "sched_waking events" << lpad(std::to_string(s.sched_waking), 35) << "\n";
  row("placed by the fair class, compared", s.compared);
  row("placed, no sched_wakeup in the trace", s.unmatched);
  row("placed, the recording perf process (apart)", s.by_category[static_cast<int>(Category::tool)]);
  row("wakee not a CFS task (RT, deadline, stop)", s.by_category[static_cast<int>(Category::not_fair)]);
  row("wakee a per-CPU kernel thread", s.by_category[static_cast<int>(Category::pinned)]);
  row("wakee still queued (no placement)", s.by_category[static_cast<int>(Category::queued)]);
  out << "\nagreement with the kernel's CPU: " << s.agree << " of " << s.compared << " (" << pct(s.agree, s.compared)
      << ")\n";
  out << "where the affine step decided:   " << s.affine_agree << " of " << s.affine_compared << " ("
      << pct(s.affine_agree, s.affine_compared) << ")\n";
  out << "wide wake-ups: " << s.wide << "\n\n";
  out << pad("affine step", 20) << pad("final step", 20) << lpad("total", 8) << lpad("agree", 8) << lpad("differ", 8)
      << lpad("agree%", 9) << "\n";
  for (const ReasonCount& rc : s.reasons)
    out << pad(rc.affine, 20) << pad(rc.reason, 20) << lpad(std::to_string(rc.total), 8)
        << lpad(std::to_string(rc.agree), 8) << lpad(std::to_string(rc.total - rc.agree), 8)
        << lpad(pct(rc.agree, rc.total), 9) << "\n";
  out << "\nwhat each policy set would have decided (same CPU: it picks the kernel's CPU):\n";
  out << pad("policy set", 24) << lpad("wake-ups", 10) << lpad("same CPU", 10) << lpad("same%", 9)
      << lpad("affine", 9) << lpad("idle", 9) << lpad("wide", 9) << "\n";
  for (std::size_t i = 0; i < s.sets.size(); ++i) {
    const SetResult& x = s.sets[i];
    out << pad(x.name, 24) << lpad(std::to_string(x.wakeups), 10) << lpad(std::to_string(x.same_cpu), 10)
        << lpad(pct(x.same_cpu, x.wakeups), 9) << lpad(std::to_string(x.affine), 9)
        << lpad(i == 0 ? std::string("-") : std::to_string(x.idle), 9)
        << lpad(i == 0 ? std::string("-") : std::to_string(x.wide), 9) << "\n";
  }
}

void print_csv(std::ostream& out, const Result& r) {
  out << "line,time_ns,waking_cpu,waker_tid,waker_comm,wakee_tid,wakee_comm,prev_cpu,category,sync,"
         "waker_flips,wakee_flips,wide,target,affine,reason,taskplace_cpu,kernel_cpu,agree\n";
  for (const WakeRecord& w : r.wakeups) {
    const bool placed = w.category == Category::placed || w.category == Category::tool;
    out << w.line << ',' << w.time_ns << ',' << w.waking_cpu << ',' << w.waker_tid << ',' << csv_text(w.waker_comm)
        << ',' << w.wakee_tid << ',' << csv_text(w.wakee_comm) << ',' << w.prev_cpu << ',' << to_string(w.category)
        << ',' << w.sync << ',';
    if (placed)
      out << w.waker_flips << ',' << w.wakee_flips << ',' << w.placement.wide << ',' << w.placement.target << ','
          << to_string(w.placement.affine) << ',' << to_string(w.placement.reason) << ',' << w.placement.cpu;
    else
      out << ",,,,,,";
    out << ',';
    if (w.kernel_cpu != no_cpu) out << w.kernel_cpu;
    out << ',';
    if (placed && w.kernel_cpu != no_cpu) out << (w.placement.cpu == w.kernel_cpu);
    out << '\n';
  }
}

}  // namespace taskplace::replay
