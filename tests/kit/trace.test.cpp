// kit::ChromeTrace and ChromeTraceHook: the JSON is valid and complete (a
// strict parser below reads it back), one event per decision, safe from
// several threads at once, bounded with a dropped count.
#include "taskplace/kit/trace.hpp"

#include <catch2/catch.hpp>

#include <cctype>
#include <map>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <variant>
#include <vector>

#include "taskplace/clock.hpp"
#include "taskplace/testing.hpp"
#include "taskplace/topology/uniform.hpp"

using namespace taskplace;
using namespace std::chrono_literals;
using taskplace::kit::ChromeTrace;
using taskplace::kit::ChromeTraceHook;
using taskplace::kit::Traced;

namespace {

// A strict JSON (RFC 8259) reader: throws on anything else (trailing
// commas, bare words, unescaped control characters, trailing text).
struct Json {
  using Object = std::map<std::string, Json>;
  using Array = std::vector<Json>;
  std::variant<std::nullptr_t, bool, double, std::string, Array, Object> v;
  const Json& operator[](const std::string& k) const { return std::get<Object>(v).at(k); }
  const Array& array() const { return std::get<Array>(v); }
  const std::string& str() const { return std::get<std::string>(v); }
  double num() const { return std::get<double>(v); }
  bool has(const std::string& k) const { return std::get<Object>(v).count(k) != 0; }
};

class Reader {
 public:
  explicit Reader(std::string s) : s_(std::move(s)) {}
  Json document() {
    Json j = value();
    ws();
    if (i_ != s_.size()) fail("trailing text");
    return j;
  }

 private:
  [[noreturn]] void fail(const char* what) { throw std::runtime_error(std::string(what) + " at " + std::to_string(i_)); }
  void ws() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\n' || s_[i_] == '\r' || s_[i_] == '\t')) ++i_;
  }
  char peek() { return i_ < s_.size() ? s_[i_] : '\0'; }
  void expect(char c) {
    if (peek() != c) fail("unexpected character");
    ++i_;
  }
  void word(const char* w) {
    for (; *w; ++w) expect(*w);
  }
  Json value() {
    ws();
    switch (peek()) {
      case '{': {
        ++i_;
        Json::Object o;
        ws();
        if (peek() == '}') return ++i_, Json{o};
        for (;;) {
          ws();
          std::string k = string();
          ws();
          expect(':');
          if (!o.emplace(k, value()).second) fail("duplicate key");
          ws();
          if (peek() == '}') return ++i_, Json{o};
          expect(',');
        }
      }
      case '[': {
        ++i_;
        Json::Array a;
        ws();
        if (peek() == ']') return ++i_, Json{a};
        for (;;) {
          a.push_back(value());
          ws();
          if (peek() == ']') return ++i_, Json{a};
          expect(',');
        }
      }
      case '"': return Json{string()};
      case 't': return word("true"), Json{true};
      case 'f': return word("false"), Json{false};
      case 'n': return word("null"), Json{nullptr};
      default: return Json{number()};
    }
  }
  std::string string() {
    expect('"');
    std::string out;
    for (;;) {
      if (i_ >= s_.size()) fail("unterminated string");
      const char c = s_[i_++];
      if (c == '"') return out;
      if (static_cast<unsigned char>(c) < 0x20) fail("control character in a string");
      if (c != '\\') {
        out += c;
        continue;
      }
      const char e = s_[i_++];
      if (e == 'u') {
        for (int k = 0; k < 4; ++k)
          if (!std::isxdigit(static_cast<unsigned char>(peek()))) fail("bad \\u escape");
          else ++i_;
        out += '?';
      } else if (const auto k = std::string_view("\"\\/bfnrt").find(e); k != std::string_view::npos) {
        out += "\"\\/\b\f\n\r\t"[k];
      } else {
        fail("bad escape");
      }
    }
  }
  double number() {
    const std::size_t start = i_;
    if (peek() == '-') ++i_;
    if (peek() == '0') ++i_;
    else if (std::isdigit(static_cast<unsigned char>(peek()))) while (std::isdigit(static_cast<unsigned char>(peek()))) ++i_;
    else fail("not a value");
    if (peek() == '.') {
      ++i_;
      if (!std::isdigit(static_cast<unsigned char>(peek()))) fail("bad fraction");
      while (std::isdigit(static_cast<unsigned char>(peek()))) ++i_;
    }
    if (peek() == 'e' || peek() == 'E') {
      ++i_;
      if (peek() == '+' || peek() == '-') ++i_;
      if (!std::isdigit(static_cast<unsigned char>(peek()))) fail("bad exponent");
      while (std::isdigit(static_cast<unsigned char>(peek()))) ++i_;
    }
    return std::stod(s_.substr(start, i_ - start));
  }
  std::string s_;
  std::size_t i_ = 0;
};

Json parse(const ChromeTrace& t) {
  std::ostringstream out;
  t.write(out);
  return Reader(out.str()).document();
}
std::size_t count_cat(const Json& j, const std::string& cat) {
  std::size_t n = 0;
  for (const Json& e : j["traceEvents"].array())
    if (e.has("cat") && e["cat"].str() == cat) ++n;
  return n;
}

struct CountedTraced : Traced<traits::Current> {
  using Stats = PlainStats;
};
struct CountedBalance : Traced<DefaultBalanceTraits> {
  using Stats = PlainStats;
};

}  // namespace

TEST_CASE("the strict reader refuses what is not JSON", "[kit][trace]") {
  // The reader must be able to fail, or the validity checks below say nothing.
  CHECK_THROWS(Reader(R"({"a":[1,2,]})").document());
  CHECK_THROWS(Reader("{\"a\":\"x\ny\"}").document());
  CHECK_THROWS(Reader(R"({"a":1} x)").document());
  CHECK_THROWS(Reader(R"({"a":01})").document());
  CHECK(Reader(R"({"a":[1.5,-2e3,"q\"\\\u0001"],"b":null})").document()["a"].array().size() == 3);
}

TEST_CASE("each wake decision becomes one event with the placement in its args", "[kit][trace]") {
  ChromeTrace trace{64};
  const auto topo = presets::westmere_12cpu_2013();
  ChromeTrace::Install on{trace};
  const WakePlacer<UniformTopology, CountedTraced> placer{topo};
  decltype(placer)::task_state waker, wakee;
  testing::ScriptedMachine<> m{12};
  m.all_busy().idle(3);
  // Kernel semantics: wake_affine_idle() pulls a sync wake-up whose waker
  // is all the waking CPU runs (target 0, reason sync); select_idle_sibling()
  // then finds the target busy and prev 3 idle in its LLC: idle_prev.
  const auto p = placer.place({.waker = &waker, .waker_key = 7, .wakee = &wakee, .wakee_key = 8,
                               .waking_cpu = 0, .prev_cpu = 3, .sync = true},
                              m, Nanoseconds{1'234'567});
  REQUIRE(p.cpu == 3);
  for (int i = 0; i < 9; ++i)
    placer.place({.waker = &waker, .waker_key = 7, .wakee = &wakee, .wakee_key = 8, .waking_cpu = 0,
                  .prev_cpu = p.cpu},
                 m, Nanoseconds{2'000'000 + i});
  const Json j = parse(trace);
  CHECK(count_cat(j, "wake") == placer.stats().get(WakeCounter::wakeups));
  CHECK(count_cat(j, "wake") == 10);
  const Json& e = j["traceEvents"].array().front();
  CHECK(e["name"].str() == "idle_prev");
  CHECK(e["ph"].str() == "i");
  CHECK(e["ts"].num() == Approx(1234.567));  // microseconds from the event's own clock
  CHECK(e["tid"].num() == 0);                 // the waking CPU
  CHECK(e["args"]["waker"].num() == 7);
  CHECK(e["args"]["wakee"].num() == 8);
  CHECK(e["args"]["prev_cpu"].num() == 3);
  CHECK(e["args"]["cpu"].num() == 3);
  CHECK(e["args"]["affine"].str() == "sync");
  CHECK(e["args"]["target"].num() == 0);
  CHECK(std::get<bool>(e["args"]["wide"].v) == false);
  CHECK(std::get<bool>(e["args"]["sync"].v) == true);
  CHECK(j["otherData"]["recorded"].num() == 10);
  CHECK(j["otherData"]["dropped"].num() == 0);
}

TEST_CASE("each newidle balance becomes one event", "[kit][trace]") {
  ChromeTrace trace{64};
  const auto topo = presets::westmere_12cpu_2013();
  IdleBalancer<UniformTopology, CountedBalance> balancer{topo};
  balancer.hook().attach(&trace);  // attached after construction, no Install
  ManualClock clock{std::chrono::seconds{1}};
  auto st = balancer.make_state(2, clock.now());
  for (int i = 0; i < 5; ++i) {
    balancer.balance(2, st, [&](std::uint32_t, LevelKind, const auto&) {
      clock.advance(10us);
      return i % 2 == 0;
    }, clock);
    clock.advance(1ms);
    balancer.idle_end(st, clock.now());
  }
  const Json j = parse(trace);
  CHECK(count_cat(j, "balance") == balancer.stats().get(BalanceCounter::runs));
  CHECK(count_cat(j, "balance") == 5);
  const Json& e = j["traceEvents"].array().front();
  CHECK(e["tid"].num() == 2);
  CHECK(e["name"].str() == "pulled");
  CHECK(e["ts"].num() == Approx(1'000'010.0));  // the clock once the balance ended
}

TEST_CASE("a hook with no sink records nothing, and names are escaped", "[kit][trace]") {
  ChromeTraceHook none;  // nothing installed
  CHECK(none.sink == nullptr);
  none(WakeEvent{});
  ChromeTrace trace{4, "pool \"a\"\\\n\x01"};
  {
    ChromeTrace::Install on{trace};
    CHECK(ChromeTraceHook{}.sink == &trace);
  }
  CHECK(ChromeTraceHook{}.sink == nullptr);  // the guard restored the one before
  const Json j = parse(trace);
  const auto& events = j["traceEvents"].array();
  REQUIRE(events.size() == 1);  // the process name only
  CHECK(events[0]["args"]["name"].str() == "pool \"a\"\\\n?");
}

TEST_CASE("past the cap events are counted as dropped and the JSON stays whole", "[kit][trace]") {
  ChromeTrace trace{8};
  ChromeTraceHook h;
  h.attach(&trace);
  for (int i = 0; i < 20; ++i) {
    WakeEvent e{};
    e.now = Nanoseconds{-1500 + i};  // a clock before its epoch still writes a number
    h(e);
  }
  CHECK(trace.recorded() == 8);
  CHECK(trace.dropped() == 12);
  const Json j = parse(trace);
  CHECK(count_cat(j, "wake") == 8);
  CHECK(j["otherData"]["dropped"].num() == 12);
  CHECK(j["otherData"]["capacity"].num() == 8);
  CHECK(j["traceEvents"].array().front()["ts"].num() == Approx(-1.5));
}

TEST_CASE("placers on several threads record into one trace, none lost below the cap",
          "[kit][trace][concurrency]") {
  constexpr int threads = 4, per_thread = 5000;
  ChromeTrace trace{threads * per_thread - 1000};  // 1000 over the cap in all
  const auto topo = presets::westmere_12cpu_2013();
  ChromeTrace::Install on{trace};
  struct Shared : Traced<traits::Current> {
    using Stats = AtomicStats;
  };
  const WakePlacer<UniformTopology, Shared> shared{topo};  // one placer, every thread
  std::vector<std::thread> ts;
  std::atomic<bool> writing{true};
  std::thread writer([&] {  // write() while the recorders run: valid JSON each time
    while (writing.load()) {
      std::ostringstream out;
      trace.write(out);
      Reader(out.str()).document();
    }
  });
  for (int t = 0; t < threads; ++t)
    ts.emplace_back([&, t] {
      testing::ScriptedMachine<> m{12};
      std::vector<decltype(shared)::task_state> tasks(8);
      for (int i = 0; i < per_thread; ++i) {
        const auto a = static_cast<std::size_t>(i % 8), b = static_cast<std::size_t>((i + 3) % 8);
        const TaskKey base = static_cast<TaskKey>(t) * 100;
        shared.place({.waker = &tasks[a], .waker_key = base + a + 1, .wakee = &tasks[b], .wakee_key = base + b + 1,
                      .waking_cpu = static_cast<CpuId>(t), .prev_cpu = static_cast<CpuId>((i + t) % 12)},
                     m, Nanoseconds{i});
      }
    });
  for (auto& t : ts) t.join();
  writing = false;
  writer.join();
  const Json j = parse(trace);
  CHECK(count_cat(j, "wake") == threads * per_thread - 1000);
  CHECK(trace.dropped() == 1000);
  CHECK(count_cat(j, "wake") + trace.dropped() == shared.stats().get(WakeCounter::wakeups));
  std::map<double, int> per_tid;
  for (const Json& e : j["traceEvents"].array())
    if (e.has("cat")) ++per_tid[e["tid"].num()];
  CHECK(per_tid.size() == threads);  // every thread's CPU has its events
}
