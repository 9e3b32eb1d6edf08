// tools/replay/chrome_trace.cpp: the strict JSON reader (see
// chrome_trace.hpp). Each element of "traceEvents" is read into a small
// value tree and converted at once, so that memory follows the events
// kept, not the document's size.
#include "chrome_trace.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <utility>

namespace taskplace::replay {

namespace {

struct Value {
  enum class Kind : std::uint8_t { null, boolean, number, string, array, object } kind = Kind::null;
  bool b = false;
  std::string text;  // a number's token, or a string's contents
  std::vector<Value> items;      // an array's; an object's values
  std::vector<std::string> keys; // an object's keys, one per item

  const Value* find(std::string_view k) const {
    if (kind != Kind::object) return nullptr;
    for (std::size_t i = 0; i < keys.size(); ++i)
      if (keys[i] == k) return &items[i];
    return nullptr;
  }
};

class Reader {
 public:
  explicit Reader(std::string_view s) : s_(s) {}

  [[noreturn]] void fail(const std::string& what) const {
    std::size_t line = 1, col = 1;
    for (std::size_t k = 0; k < i_ && k < s_.size(); ++k) {
      if (s_[k] == '\n') ++line, col = 1;
      else ++col;
    }
    throw TraceError("line " + std::to_string(line) + " column " + std::to_string(col) + ": " + what);
  }
  void ws() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\n' || s_[i_] == '\r' || s_[i_] == '\t')) ++i_;
  }
  char peek() const { return i_ < s_.size() ? s_[i_] : '\0'; }
  bool at_end() const { return i_ >= s_.size(); }
  void expect(char c) {
    if (peek() != c) fail(std::string("expected '") + c + "'");
    ++i_;
  }
  // Effects: consumes ch (after white space) if it is next. Returns: whether it was.
  bool take(char ch) {
    ws();
    if (peek() != ch) return false;
    ++i_;
    return true;
  }

  std::string string() {
    ws();
    expect('"');
    std::string out;
    for (;;) {
      if (at_end()) fail("unterminated string");
      const char c = s_[i_];
      if (static_cast<unsigned char>(c) < 0x20) fail("control character in a string");
      ++i_;
      if (c == '"') return out;
      if (c != '\\') {
        out += c;
        continue;
      }
      const char e = peek();
      ++i_;
      switch (e) {
        case '"': case '\\': case '/': out += e; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'u': {
          unsigned cp = 0;
          for (int k = 0; k < 4; ++k, ++i_) {
            const char h = peek();
            const unsigned d = h >= '0' && h <= '9' ? unsigned(h - '0')
                               : h >= 'a' && h <= 'f' ? unsigned(h - 'a' + 10)
                               : h >= 'A' && h <= 'F' ? unsigned(h - 'A' + 10)
                                                      : 16u;
            if (d == 16) fail("bad \\u escape");
            cp = cp * 16 + d;
          }
          // Names only: a code point outside ASCII is kept as '?'.
          out += cp < 0x80 ? static_cast<char>(cp) : '?';
          break;
        }
        default: fail("bad escape");
      }
    }
  }

  // Effects: reads one value, at most max_depth arrays and objects deep
  // (a deeper one is refused, not a stack overflow).
  Value value() {
    struct Depth {
      Reader& r;
      explicit Depth(Reader& rd) : r(rd) {
        if (++r.depth_ > max_depth) r.fail("nested more than " + std::to_string(max_depth) + " deep");
      }
      ~Depth() { --r.depth_; }
    } depth{*this};
    ws();
    Value v;
    switch (peek()) {
      case '{':
        ++i_;
        v.kind = Value::Kind::object;
        if (take('}')) return v;
        do {
          std::string k = string();
          ws();
          expect(':');
          v.keys.push_back(std::move(k));
          v.items.push_back(value());
        } while (take(','));
        ws();
        expect('}');
        return v;
      case '[':
        ++i_;
        v.kind = Value::Kind::array;
        if (take(']')) return v;
        do v.items.push_back(value());
        while (take(','));
        ws();
        expect(']');
        return v;
      case '"':
        v.kind = Value::Kind::string;
        v.text = string();
        return v;
      case 't': word("true"), v.kind = Value::Kind::boolean, v.b = true; return v;
      case 'f': word("false"), v.kind = Value::Kind::boolean; return v;
      case 'n': word("null"); return v;
      default:
        v.kind = Value::Kind::number;
        v.text = number();
        return v;
    }
  }

 private:
  void word(std::string_view w) {
    if (s_.substr(i_, w.size()) != w) fail("not a JSON value");
    i_ += w.size();
  }
  std::string number() {
    const std::size_t start = i_;
    auto digits = [&] {
      const std::size_t d = i_;
      while (peek() >= '0' && peek() <= '9') ++i_;
      return i_ > d;
    };
    if (peek() == '-') ++i_;
    if (peek() == '0') ++i_;
    else if (!digits()) fail("not a JSON value");
    if (peek() == '.') {
      ++i_;
      if (!digits()) fail("bad number");
    }
    if (peek() == 'e' || peek() == 'E') {
      ++i_;
      if (peek() == '+' || peek() == '-') ++i_;
      if (!digits()) fail("bad number");
    }
    return std::string(s_.substr(start, i_ - start));
  }

  static constexpr int max_depth = 64;
  std::string_view s_;
  std::size_t i_ = 0;
  int depth_ = 0;
};

// An unsigned integer field; `what` names it in the error.
std::uint64_t integer(const Reader& r, const Value& ev, const Value* args, std::string_view key) {
  const Value* v = args != nullptr ? args->find(key) : nullptr;
  if (v == nullptr) v = ev.find(key);
  std::uint64_t n = 0;
  if (v == nullptr || v->kind != Value::Kind::number ||
      std::from_chars(v->text.data(), v->text.data() + v->text.size(), n).ec != std::errc{} ||
      v->text.find_first_of(".eE-") != std::string::npos)
    r.fail("an event's " + std::string(key) + " is missing or not a whole number");
  return n;
}

CpuId cpu_field(const Reader& r, const Value& ev, const Value* args, std::string_view key) {
  const std::uint64_t n = integer(r, ev, args, key);
  if (n >= std::numeric_limits<CpuId>::max()) r.fail("an event's " + std::string(key) + " is no CPU");
  return static_cast<CpuId>(n);
}

// ts in microseconds with up to three decimals (more are cut) as ns; at
// most max_ts_us either side of 0, so that differences of two fit.
constexpr std::int64_t max_ts_us = 4'000'000'000'000'000;
std::int64_t time_ns(const Reader& r, const Value* ts) {
  if (ts == nullptr || ts->kind != Value::Kind::number) r.fail("an event has no ts");
  const std::string& t = ts->text;
  if (t.find_first_of("eE") != std::string::npos) {
    const double us = std::strtod(t.c_str(), nullptr);
    if (!(us >= -double(max_ts_us) && us <= double(max_ts_us))) r.fail("an event's ts is out of range");
    return std::llround(us * 1000.0);
  }
  const bool neg = !t.empty() && t[0] == '-';
  const std::size_t dot = t.find('.');
  std::int64_t us = 0, frac = 0;
  const char* end = t.data() + (dot == std::string::npos ? t.size() : dot);
  if (std::from_chars(t.data() + (neg ? 1 : 0), end, us).ec != std::errc{} || us > max_ts_us)
    r.fail("an event's ts is out of range");
  if (dot != std::string::npos) {
    std::string f = t.substr(dot + 1, 3);
    f.append(3 - f.size(), '0');
    std::from_chars(f.data(), f.data() + 3, frac);
  }
  const std::int64_t ns = us * 1000 + frac;
  return neg ? -ns : ns;
}

// An unsigned integer member `key` of object `o` (`what` names o in the error).
std::uint64_t member(const Reader& r, const Value& o, std::string_view key, std::string_view what,
                     std::uint64_t max = std::numeric_limits<std::uint64_t>::max()) {
  const Value* v = o.find(key);
  std::uint64_t n = 0;
  if (v == nullptr || v->kind != Value::Kind::number ||
      std::from_chars(v->text.data(), v->text.data() + v->text.size(), n).ec != std::errc{} ||
      v->text.find_first_of(".eE-") != std::string::npos || n > max)
    r.fail("a wake event's " + std::string(what) + "." + std::string(key) + " is missing or out of range");
  return n;
}

// args.machine, as ChromeTrace::write_view writes it.
kit::MachineView machine_view(const Reader& r, const Value& m) {
  if (m.kind != Value::Kind::object) r.fail("a wake event's machine is not an object");
  constexpr std::uint64_t cpu_max = std::numeric_limits<CpuId>::max() - 1;
  kit::MachineView v;
  v.cpus = static_cast<std::uint32_t>(member(r, m, "cpus", "machine", cpu_max));
  if (v.cpus == 0) r.fail("a wake event's machine.cpus is 0");
  v.idle = member(r, m, "idle", "machine");
  v.known = member(r, m, "known", "machine");
  v.read = member(r, m, "read", "machine");
  v.torn = member(r, m, "torn", "machine");
  const Value* counts = m.find("counts");
  if (counts == nullptr || counts->kind != Value::Kind::array || counts->items.size() > 2)
    r.fail("a wake event's machine.counts is missing or not an array of at most 2");
  for (std::size_t i = 0; i < counts->items.size(); ++i) {
    const Value& c = counts->items[i];
    if (c.kind != Value::Kind::object) r.fail("a wake event's machine.counts holds a non-object");
    v.counts[i].cpu = static_cast<CpuId>(member(r, c, "cpu", "machine.counts", cpu_max));
    v.counts[i].nr_running =
        static_cast<std::uint32_t>(member(r, c, "nr_running", "machine.counts", std::numeric_limits<std::uint32_t>::max()));
    v.counts[i].load = member(r, c, "load", "machine.counts");
    v.counts[i].has_nr = v.counts[i].has_load = true;
  }
  if (const Value* l = m.find("llc")) {
    if (l->kind != Value::Kind::object) r.fail("a wake event's machine.llc is not an object");
    v.llc_cpu = static_cast<CpuId>(member(r, *l, "cpu", "machine.llc", cpu_max));
    v.llc_pct = static_cast<std::uint32_t>(member(r, *l, "pct", "machine.llc", 100));
  }
  if (const Value* c = m.find("idle_core")) {
    if (c->kind != Value::Kind::object) r.fail("a wake event's machine.idle_core is not an object");
    v.core_cpu = static_cast<CpuId>(member(r, *c, "cpu", "machine.idle_core", cpu_max));
    const Value* h = c->find("hint");
    if (h == nullptr || h->kind != Value::Kind::boolean) r.fail("a wake event's machine.idle_core.hint is missing");
    v.idle_core = h->b;
  }
  // The move costs (written since the view recorded them; optional).
  auto nanoseconds = [&](const Value& o, std::string_view key, std::string_view what) {
    const Value* n = o.find(key);
    std::int64_t x = 0;
    if (n == nullptr || n->kind != Value::Kind::number ||
        std::from_chars(n->text.data(), n->text.data() + n->text.size(), x).ec != std::errc{} ||
        n->text.find_first_of(".eE") != std::string::npos)
      r.fail("a wake event's " + std::string(what) + "." + std::string(key) + " is missing or out of range");
    return Nanoseconds{x};
  };
  if (const Value* w = m.find("wake_cost")) {
    if (w->kind != Value::Kind::array || w->items.size() > 2)
      r.fail("a wake event's machine.wake_cost is not an array of at most 2");
    for (std::size_t i = 0; i < w->items.size(); ++i) {
      const Value& k = w->items[i];
      if (k.kind != Value::Kind::object) r.fail("a wake event's machine.wake_cost holds a non-object");
      v.wake_costs[i].cpu = static_cast<CpuId>(member(r, k, "cpu", "machine.wake_cost", cpu_max));
      v.wake_costs[i].ns = static_cast<std::uint32_t>(member(r, k, "ns", "machine.wake_cost", 0xffffffffu));
    }
  }
  if (m.find("crossing_ns") != nullptr) {
    v.crossing = nanoseconds(m, "crossing_ns", "machine");
    v.has_crossing = true;
  }
  auto boolean = [&](std::string_view key) {
    const Value* b = m.find(key);
    if (b == nullptr || b->kind != Value::Kind::boolean)
      r.fail("a wake event's machine." + std::string(key) + " is missing or not true or false");
    return b->b;
  };
  v.beyond = boolean("beyond");
  v.has_llc = boolean("has_llc");
  v.has_core_hint = boolean("has_idle_core");
  return v;
}

bool flag(const Value* args, std::string_view key) {
  const Value* v = args != nullptr ? args->find(key) : nullptr;
  return v != nullptr && v->kind == Value::Kind::boolean && v->b;
}
std::string text(const Value* v) { return v != nullptr && v->kind == Value::Kind::string ? v->text : std::string(); }

}  // namespace

bool starts_as_json(std::string_view text) noexcept {
  const std::size_t i = text.find_first_not_of(" \t\r\n");
  return i != std::string_view::npos && text[i] == '{';
}

ChromeTraceInput read_chrome_trace(std::string_view s) {
  ChromeTraceInput out;
  Reader r(s);
  bool saw_events = false;
  r.ws();
  r.expect('{');
  if (!r.take('}')) {
    do {
      const std::string key = r.string();
      r.ws();
      r.expect(':');
      if (key != "traceEvents") {
        const Value v = r.value();
        if (key == "otherData")
          if (const Value* d = v.find("dropped"); d != nullptr && d->kind == Value::Kind::number)
            std::from_chars(d->text.data(), d->text.data() + d->text.size(), out.dropped);
        continue;
      }
      saw_events = true;
      r.ws();
      r.expect('[');
      if (r.take(']')) continue;
      do {
        const Value ev = r.value();
        if (ev.kind != Value::Kind::object) r.fail("an element of traceEvents is not an object");
        const std::string cat = text(ev.find("cat"));
        const Value* args = ev.find("args");
        if (cat == "balance") {
          ++out.balances;
        } else if (cat == "task") {
          RecordedTask t;
          t.seq = out.wakes.size() + out.tasks.size();
          const std::string name = text(ev.find("name"));
          if (name == "runs") t.event.kind = kit::TaskEvent::Kind::runs;
          else if (name == "stops") t.event.kind = kit::TaskEvent::Kind::stops;
          else if (name == "sleeps") t.event.kind = kit::TaskEvent::Kind::sleeps;
          else r.fail("a task event's name is not runs, stops or sleeps");
          t.event.at = Nanoseconds{time_ns(r, ev.find("ts"))};
          t.event.task = integer(r, ev, args, "task");
          t.event.cpu = cpu_field(r, ev, args, "cpu");
          t.event.cpu_idle = flag(args, "cpu_idle");
          if (t.event.cpu > out.max_cpu_seen) out.max_cpu_seen = t.event.cpu;
          out.tasks.push_back(t);
        } else if (cat == "wake") {
          RecordedWake w;
          w.seq = out.wakes.size() + out.tasks.size();
          w.time_ns = time_ns(r, ev.find("ts"));
          w.waker = integer(r, ev, args, "waker");
          w.wakee = integer(r, ev, args, "wakee");
          w.waking_cpu = cpu_field(r, ev, args, "waking_cpu");
          w.prev_cpu = cpu_field(r, ev, args, "prev_cpu");
          w.target = cpu_field(r, ev, args, "target");
          w.cpu = cpu_field(r, ev, args, "cpu");
          w.reason = text(ev.find("name"));
          w.affine = text(args != nullptr ? args->find("affine") : nullptr);
          w.wide = flag(args, "wide");
          w.sync = flag(args, "sync");
          w.waker_by_key = flag(args, "waker_by_key");
          if (w.waker_by_key && args != nullptr && args->find("waker_flips") != nullptr)
            w.waker_flips = static_cast<std::uint32_t>(
                std::min<std::uint64_t>(integer(r, ev, args, "waker_flips"), UINT32_MAX));
          if (const Value* m = args != nullptr ? args->find("machine") : nullptr) {
            w.view = machine_view(r, *m);
            ++out.views;
          }
          for (CpuId c : {w.waking_cpu, w.prev_cpu, w.target, w.cpu})
            if (c > out.max_cpu_seen) out.max_cpu_seen = c;
          out.wakes.push_back(std::move(w));
        } else {
          ++out.other_events;
          if (text(ev.find("name")) == "process_name" && args != nullptr) out.process = text(args->find("name"));
        }
      } while (r.take(','));
      r.ws();
      r.expect(']');
    } while (r.take(','));
    r.ws();
    r.expect('}');
  }
  r.ws();
  if (!r.at_end()) r.fail("text after the JSON document");
  if (!saw_events) throw TraceError("no \"traceEvents\" array: not a Chrome trace");
  if (out.wakes.empty())
    throw TraceError("no wake event in the Chrome trace: expected the output of taskplace::kit::ChromeTrace");
  return out;
}

}  // namespace taskplace::replay
