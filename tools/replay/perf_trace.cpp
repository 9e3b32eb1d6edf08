// tools/replay/perf_trace.cpp: the decoder of `perf script` text (see
// perf_trace.hpp).
#include "perf_trace.hpp"

#include <array>
#include <charconv>
#include <string>

namespace taskplace::replay {

const char* to_string(EventKind k) noexcept {
  switch (k) {
    case EventKind::waking: return "sched_waking";
    case EventKind::wakeup: return "sched_wakeup";
    case EventKind::wakeup_new: return "sched_wakeup_new";
    case EventKind::switch_to: return "sched_switch";
    case EventKind::migrate: return "sched_migrate_task";
    case EventKind::fork: return "sched_process_fork";
  }
  return "unknown";
}

namespace {

struct Known {
  std::string_view name;  // as perf prints it, without the trailing ':'
  EventKind kind;
};
constexpr std::array<Known, 6> known_events{{
    {"sched:sched_waking", EventKind::waking},
    {"sched:sched_wakeup", EventKind::wakeup},
    {"sched:sched_wakeup_new", EventKind::wakeup_new},
    {"sched:sched_switch", EventKind::switch_to},
    {"sched:sched_migrate_task", EventKind::migrate},
    {"sched:sched_process_fork", EventKind::fork},
}};

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

[[noreturn]] void fail(std::size_t line_no, std::string_view what) {
  throw TraceError("line " + std::to_string(line_no) + ": " + std::string(what));
}

template <class Int>
bool to_int(std::string_view s, Int& out) {
  if (s.empty()) return false;
  const auto r = std::from_chars(s.data(), s.data() + s.size(), out);
  return r.ec == std::errc{} && r.ptr == s.data() + s.size();
}

// Where perf's columns end: "[cpu] sec.frac:" after the comm and pid/tid.
struct Columns {
  std::string_view comm, pid_col, cpu, sec, frac, rest;
};

std::optional<Columns> split_columns(std::string_view line) {
  for (std::size_t open = line.find('['); open != std::string_view::npos; open = line.find('[', open + 1)) {
    std::size_t i = open + 1;
    while (i < line.size() && is_digit(line[i])) ++i;
    if (i == open + 1 || i >= line.size() || line[i] != ']') continue;
    const std::string_view cpu = line.substr(open + 1, i - open - 1);
    ++i;
    const std::size_t spaces = i;
    while (i < line.size() && is_space(line[i])) ++i;
    if (i == spaces) continue;
    const std::size_t sec_begin = i;
    while (i < line.size() && is_digit(line[i])) ++i;
    if (i == sec_begin || i >= line.size() || line[i] != '.') continue;
    const std::string_view sec = line.substr(sec_begin, i - sec_begin);
    const std::size_t frac_begin = ++i;
    while (i < line.size() && is_digit(line[i])) ++i;
    if (i == frac_begin || i >= line.size() || line[i] != ':') continue;
    const std::string_view frac = line.substr(frac_begin, i - frac_begin);
    const std::string_view left = trim(line.substr(0, open));
    const std::size_t cut = left.find_last_of(" \t");
    if (cut == std::string_view::npos) return std::nullopt;  // no comm before pid/tid
    return Columns{trim(left.substr(0, cut)), left.substr(cut + 1), cpu, sec, frac, line.substr(i + 1)};
  }
  return std::nullopt;
}

// The fields of a tracepoint's text: "key=value key=value ...". A comm may
// hold spaces, so a comm's value runs to the next " <key>=" given.
class Fields {
 public:
  Fields(std::string_view text, std::size_t line_no, std::string_view event)
      : text_(text), line_(line_no), event_(event) {}

  std::size_t at(std::string_view key) const {
    for (std::size_t p = text_.find(key); p != std::string_view::npos; p = text_.find(key, p + 1)) {
      const std::size_t eq = p + key.size();
      if ((p == 0 || is_space(text_[p - 1])) && eq < text_.size() && text_[eq] == '=') return eq + 1;
    }
    missing(key);
  }
  std::string_view word(std::string_view key) const {
    const std::size_t v = at(key);
    std::size_t e = v;
    while (e < text_.size() && !is_space(text_[e])) ++e;
    return text_.substr(v, e - v);
  }
  // The comm of `key`, up to the field `next`.
  std::string_view comm(std::string_view key, std::string_view next) const {
    const std::size_t v = at(key);
    const std::size_t n = at(next) - next.size() - 1;  // the start of " next="
    if (n < v) missing(next);
    return trim(text_.substr(v, n - v));
  }
  template <class Int>
  Int number(std::string_view key) const {
    const std::string_view w = word(key);
    Int out{};
    if (!to_int(w, out))
      fail(line_, std::string(event_) + ": field " + std::string(key) + " is not a number ('" + std::string(w) + "')");
    return out;
  }

 private:
  [[noreturn]] void missing(std::string_view key) const {
    fail(line_, std::string(event_) + ": field " + std::string(key) + " is missing");
  }
  std::string_view text_;
  std::size_t line_;
  std::string_view event_;
};

void read_header_line(std::string_view line, TraceHeader& h) {
  auto value_of = [&](std::string_view key) -> std::optional<std::string_view> {
    const std::size_t p = line.find(key);
    if (p == std::string_view::npos) return std::nullopt;
    const std::size_t colon = line.find(':', p + key.size());
    if (colon == std::string_view::npos) return std::nullopt;
    return trim(line.substr(colon + 1));
  };
  if (auto v = value_of("nrcpus online")) (void)to_int(*v, h.nr_cpus_online);
  else if (auto a = value_of("nrcpus avail")) (void)to_int(*a, h.nr_cpus_avail);
  else if (auto c = value_of("# cmdline")) h.cmdline = std::string(*c);
}

}  // namespace

std::optional<Event> parse_line(std::string_view raw, std::size_t line_no) {
  const std::string_view line = trim(raw);
  if (line.empty() || line.front() == '#') return std::nullopt;
  const auto cols = split_columns(line);
  const Known* known = nullptr;
  std::string_view trace;
  if (cols) {
    std::string_view rest = trim(cols->rest);
    const std::size_t end = rest.find_first_of(" \t");
    std::string_view name = rest.substr(0, end);
    if (name.empty() || name.back() != ':') return std::nullopt;  // not "system:event:"
    name.remove_suffix(1);
    for (const Known& k : known_events)
      if (k.name == name) known = &k;
    if (known == nullptr) return std::nullopt;  // another event: skipped
    trace = end == std::string_view::npos ? std::string_view{} : trim(rest.substr(end));
  } else {
    // Not perf's columns: free text, unless it names one of our events.
    for (const Known& k : known_events)
      if (line.find(std::string(k.name) + ":") != std::string_view::npos)
        fail(line_no, std::string(to_string(k.kind)) +
                          " without perf's columns (expected 'comm pid/tid [cpu] seconds.fraction: event: fields')");
    return std::nullopt;
  }

  const char* ev = to_string(known->kind);
  Event e;
  e.kind = known->kind;
  e.line = line_no;
  e.comm = std::string(cols->comm);
  // The pid column: "pid/tid" (-F pid,tid) or "tid" (perf's default).
  const std::string_view pid_col = cols->pid_col;
  const std::size_t slash = pid_col.find('/');
  const std::string_view tid = slash == std::string_view::npos ? pid_col : pid_col.substr(slash + 1);
  if (!to_int(tid, e.tid)) fail(line_no, std::string(ev) + ": the pid/tid column is not a number ('" + std::string(pid_col) + "')");
  if (!to_int(cols->cpu, e.cpu)) fail(line_no, std::string(ev) + ": bad CPU column");
  std::int64_t sec = 0, frac = 0;
  // Up to 9e9 s (285 years), so that the time in ns fits 64 bits.
  if (cols->frac.size() > 9 || !to_int(cols->sec, sec) || !to_int(cols->frac, frac) || sec > 9'000'000'000)
    fail(line_no, std::string(ev) + ": bad timestamp '" + std::string(cols->sec) + "." + std::string(cols->frac) + "'");
  for (std::size_t d = cols->frac.size(); d < 9; ++d) frac *= 10;
  e.time_ns = sec * 1'000'000'000 + frac;

  const Fields f(trace, line_no, ev);
  switch (e.kind) {
    case EventKind::waking:
    case EventKind::wakeup:
    case EventKind::wakeup_new:
      e.task_comm = std::string(f.comm("comm", "pid"));
      e.pid = f.number<std::int32_t>("pid");
      e.prio = f.number<std::int32_t>("prio");
      e.target_cpu = f.number<std::uint32_t>("target_cpu");
      break;
    case EventKind::migrate:
      e.task_comm = std::string(f.comm("comm", "pid"));
      e.pid = f.number<std::int32_t>("pid");
      e.prio = f.number<std::int32_t>("prio");
      e.orig_cpu = f.number<std::uint32_t>("orig_cpu");
      e.target_cpu = f.number<std::uint32_t>("dest_cpu");
      break;
    case EventKind::switch_to:
      e.prev_comm = std::string(f.comm("prev_comm", "prev_pid"));
      e.prev_pid = f.number<std::int32_t>("prev_pid");
      e.prev_prio = f.number<std::int32_t>("prev_prio");
      e.prev_state = std::string(f.word("prev_state"));
      e.task_comm = std::string(f.comm("next_comm", "next_pid"));
      e.pid = f.number<std::int32_t>("next_pid");
      e.prio = f.number<std::int32_t>("next_prio");
      break;
    case EventKind::fork:
      e.prev_comm = std::string(f.comm("comm", "pid"));
      e.prev_pid = f.number<std::int32_t>("pid");
      e.task_comm = std::string(f.comm("child_comm", "child_pid"));
      e.pid = f.number<std::int32_t>("child_pid");
      break;
  }
  return e;
}

Trace read_trace(std::istream& in) {
  Trace t;
  std::string line;
  while (std::getline(in, line)) {
    ++t.lines;
    const std::string_view s = trim(line);
    if (!s.empty() && s.front() == '#') read_header_line(s, t.header);
    if (auto e = parse_line(line, t.lines)) {
      if (e->cpu > t.max_cpu_seen) t.max_cpu_seen = e->cpu;
      t.events.push_back(std::move(*e));
    } else {
      ++t.skipped_lines;
    }
  }
  if (in.bad()) throw TraceError("read error after line " + std::to_string(t.lines));
  if (t.events.empty())
    throw TraceError("no scheduler events in " + std::to_string(t.lines) +
                     " lines: expected the text of `perf script` on a `perf sched record` trace "
                     "(sched_waking, sched_wakeup, sched_switch, sched_migrate_task)");
  return t;
}

}  // namespace taskplace::replay
