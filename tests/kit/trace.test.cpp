// kit::ChromeTrace and ChromeTraceHook: the JSON is valid and complete (a
// strict parser below reads it back), one event per decision, safe from
// several threads at once, bounded with a dropped count.
#include "taskplace/kit/trace.hpp"
#include "taskplace/kit/machine.hpp"

#include <catch2/catch.hpp>

#include "strict_json.hpp"

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
using strict_json::Json;
using strict_json::Reader;

namespace {

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

namespace {
// A machine whose CPU 5 answers busy, then idle, then busy...: it changes
// under the placer (as a runtime's workers do), so two reads disagree.
struct Flickering {
  mutable int reads = 0;
  bool is_idle(CpuId c) const { return c == 5 ? (reads++ % 2) == 1 : c == 7; }
  std::uint32_t nr_running(CpuId c) const { return c == 7 ? 0u : 1u; }
  std::uint64_t load(CpuId c) const { return nr_running(c) * 1024u; }
};
}  // namespace

TEST_CASE("a wake event carries the machine its placer read", "[kit][trace]") {
  ChromeTrace trace{64};
  const auto topo = presets::westmere_12cpu_2013();  // two LLCs of 6 CPUs
  ChromeTrace::Install on{trace};
  using Placer = WakePlacer<UniformTopology, CountedTraced>;
  const Placer placer{topo};
  Placer::task_state waker, wakee;
  testing::ScriptedMachine<> m{12};
  m.all_busy().idle(3).busy(0, 1, 1000);
  // As the first test: wake_affine_idle() reads is_idle(0) (busy) and, for
  // a sync wake-up, nr_running(0) == 1 (target 0, reason sync);
  // select_idle_sibling() reads is_idle(0) again, then prev 3 (idle):
  // idle_prev. The hook adds the idle state of the CPUs not read and the
  // counts of prev.
  const auto p = placer.place({.waker = &waker, .waker_key = 7, .wakee = &wakee, .wakee_key = 8,
                               .waking_cpu = 0, .prev_cpu = 3, .sync = true},
                              kit::observed<Placer>(m, 12), Nanoseconds{1'000});
  REQUIRE(p.cpu == 3);
  REQUIRE(p.reason == WakeReason::idle_prev);
  // Without kit::observed: no view.
  placer.place({.waker = &waker, .waker_key = 7, .wakee = &wakee, .wakee_key = 8, .waking_cpu = 0, .prev_cpu = 3},
               m, Nanoseconds{2'000});
  const Json j = parse(trace);
  const auto& events = j["traceEvents"].array();
  const Json& v = events.at(0)["args"]["machine"];
  CHECK(v["cpus"].num() == 12);
  CHECK(v["known"].num() == 0xfff);        // every CPU of the 12
  CHECK(v["idle"].num() == 1 << 3);        // CPU 3 alone idle
  CHECK(v["read"].num() == (1 | 1 << 3));  // the placer asked about 0 and 3
  CHECK(v["torn"].num() == 0);
  const auto& counts = v["counts"].array();
  REQUIRE(counts.size() == 2);
  CHECK(counts[0]["cpu"].num() == 0);  // read first, by wake_affine_idle()
  CHECK(counts[0]["nr_running"].num() == 1);
  CHECK(counts[0]["load"].num() == 1000);  // read by the hook after the decision
  CHECK(counts[1]["cpu"].num() == 3);
  CHECK(counts[1]["nr_running"].num() == 0);
  CHECK(!v.has("llc"));  // ScriptedMachine<> has no llc_utilization_pct: not read
  CHECK(std::get<bool>(v["has_llc"].v) == false);  // ... and the view says so
  CHECK(std::get<bool>(v["has_idle_core"].v) == false);
  CHECK(std::get<bool>(v["beyond"].v) == false);
  CHECK(!events.at(1)["args"].has("machine"));
  // With no trace hook, observed() is the machine itself.
  static_assert(std::is_same_v<decltype(kit::observed<WakePlacer<UniformTopology>>(m, 12)), testing::ScriptedMachine<>>);
  static_assert(HasLlcUtilization<kit::ObservedMachine<testing::ScriptedMachine<true>>>);
  static_assert(!HasLlcUtilization<kit::ObservedMachine<testing::ScriptedMachine<>>>);
  // The move costs a CostGate reads pass through, where the machine has them.
  static_assert(HasWakeCost<kit::ObservedMachine<kit::Machine::At>>);
  static_assert(HasCrossingCost<kit::ObservedMachine<kit::Machine::At>>);
  static_assert(!HasWakeCost<kit::ObservedMachine<Flickering>> && !HasCrossingCost<kit::ObservedMachine<Flickering>>);
}

namespace {
// ScriptedMachine<> with the move costs (MachineState O5, O6): an idle
// CPU c wakes in (c + 1) us, a busy one in 0; a crossing costs 300 ns.
struct Costly : testing::ScriptedMachine<> {
  using ScriptedMachine::ScriptedMachine;
  Nanoseconds wake_cost(CpuId c) const { return is_idle(c) ? Nanoseconds{1000 * (c + 1)} : Nanoseconds{0}; }
  Nanoseconds crossing_cost() const { return Nanoseconds{300}; }
};
}  // namespace

TEST_CASE("a view records the move costs, read by the placer or after it", "[kit][trace]") {
  ChromeTrace trace{8};
  const UniformTopology topo{1, 1, 8, 1};
  ChromeTrace::Install on{trace};
  Costly m{8};
  m.all_busy().idle(3);
  // traits::Runtime's CostGate reads the crossing cost and, prev (3)
  // being idle and not the waking CPU (0), its wake cost (move_cost()),
  // before the search and after it (the search finds 3 again).
  // A wakee with no run measured and a waker that does not block keep
  // nothing: the kernel's pipeline places it (idle_prev).
  using RuntimePlacer = WakePlacer<UniformTopology, kit::Traced<traits::Runtime>>;
  const RuntimePlacer runtime{topo};
  RuntimePlacer::task_state a, b;
  runtime.place({.waker = &a, .waker_key = 1, .wakee = &b, .wakee_key = 2, .waking_cpu = 0, .prev_cpu = 3},
                kit::observed<RuntimePlacer>(m, 8), Nanoseconds{1'000});
  // Current reads no cost: the hook reads those of prev (5, busy) and of
  // the CPU chosen (3) and the crossing cost after the decision, for a
  // replay under a set that does.
  using CurrentPlacer = WakePlacer<UniformTopology, kit::Traced<traits::Current>>;
  const CurrentPlacer current{topo};
  CurrentPlacer::task_state c, d;
  current.place({.waker = &c, .waker_key = 1, .wakee = &d, .wakee_key = 2, .waking_cpu = 0, .prev_cpu = 5},
                kit::observed<CurrentPlacer>(m, 8), Nanoseconds{2'000});
  // A machine without them: no costs in the view.
  current.place({.waker = &c, .waker_key = 1, .wakee = &d, .wakee_key = 2, .waking_cpu = 0, .prev_cpu = 5},
                kit::observed<CurrentPlacer>(static_cast<const testing::ScriptedMachine<>&>(m), 8),
                Nanoseconds{3'000});
  const Json j = parse(trace);
  const auto& e = j["traceEvents"].array();
  const Json& r = e.at(0)["args"]["machine"];
  REQUIRE(r["wake_cost"].array().size() == 1);
  CHECK(r["wake_cost"].array().at(0)["cpu"].num() == 3);
  CHECK(r["wake_cost"].array().at(0)["ns"].num() == 4000);  // idle CPU 3: (3 + 1) us
  CHECK(r["crossing_ns"].num() == 300);
  const Json& k = e.at(1)["args"]["machine"];
  REQUIRE(k["wake_cost"].array().size() == 2);
  CHECK(k["wake_cost"].array().at(0)["cpu"].num() == 5);
  CHECK(k["wake_cost"].array().at(0)["ns"].num() == 0);  // busy CPU 5
  CHECK(k["wake_cost"].array().at(1)["cpu"].num() == 3);
  CHECK(k["wake_cost"].array().at(1)["ns"].num() == 4000);
  CHECK(k["crossing_ns"].num() == 300);
  CHECK(!e.at(2)["args"]["machine"].has("wake_cost"));
  CHECK(!e.at(2)["args"]["machine"].has("crossing_ns"));
}

TEST_CASE("a wake event says when the waker was given by its key alone", "[kit][trace]") {
  ChromeTrace trace{8};
  const UniformTopology topo{1, 1, 4, 1};
  ChromeTrace::Install on{trace};
  using Placer = WakePlacer<UniformTopology, CountedTraced>;
  const Placer placer{topo};
  Placer::task_state waker, wakee;
  testing::ScriptedMachine<> m{4};
  placer.place({.waker = nullptr, .waker_key = 7, .wakee = &wakee, .wakee_key = 8, .waking_cpu = 0, .prev_cpu = 1},
               m, Nanoseconds{1'000});
  placer.place({.waker = &waker, .waker_key = 7, .wakee = &wakee, .wakee_key = 8, .waking_cpu = 0, .prev_cpu = 1},
               m, Nanoseconds{2'000});
  // The flips a runtime read on the waker's thread go with the event.
  placer.place({.waker = nullptr, .waker_key = 7, .wakee = &wakee, .wakee_key = 8, .waking_cpu = 0,
                .prev_cpu = 1, .waker_flips = 12},
               m, Nanoseconds{3'000});
  const Json j = parse(trace);
  const auto& e = j["traceEvents"].array();
  CHECK(e.at(0)["args"]["waker"].num() == 7);
  CHECK(std::get<bool>(e.at(0)["args"]["waker_by_key"].v));
  CHECK(!e.at(0)["args"].has("waker_flips"));  // 0: none
  CHECK(!e.at(1)["args"].has("waker_by_key"));
  CHECK(e.at(2)["args"]["waker_flips"].num() == 12);
}

TEST_CASE("a view marks the CPUs whose answers changed under the placer", "[kit][trace]") {
  ChromeTrace trace{8};
  const UniformTopology topo{1, 1, 8, 1};
  ChromeTrace::Install on{trace};
  using Placer = WakePlacer<UniformTopology, CountedTraced>;
  const Placer placer{topo};
  Placer::task_state waker, wakee;
  // Waking 0 (busy), prev 5: wake_affine_idle() reads 5 busy (load test
  // follows); select_idle_sibling() reads 5 again, now idle (idle_prev or
  // the scan): two answers for CPU 5.
  const auto p = placer.place(
      {.waker = &waker, .waker_key = 1, .wakee = &wakee, .wakee_key = 2, .waking_cpu = 0, .prev_cpu = 5},
      kit::observed<Placer>(Flickering{}, 8), Nanoseconds{1'000});
  (void)p;
  const Json v = parse(trace)["traceEvents"].array().at(0)["args"]["machine"];
  CHECK(v["torn"].num() == 1 << 5);
  CHECK(v["idle"].num() == 1 << 7);  // the first answer for 5 (busy) stays
}

TEST_CASE("a runtime's task events are written with their kind, task, CPU and time", "[kit][trace]") {
  ChromeTrace trace{8};
  trace.record(kit::TaskEvent{42, 3, Nanoseconds{1'500}, kit::TaskEvent::Kind::runs});
  trace.record(kit::TaskEvent{42, 3, Nanoseconds{2'750}, kit::TaskEvent::Kind::sleeps, true});
  trace.record(kit::TaskEvent{43, 1, Nanoseconds{3'000}, kit::TaskEvent::Kind::stops});
  const Json j = parse(trace);
  CHECK(count_cat(j, "task") == 3);
  const auto& e = j["traceEvents"].array();
  CHECK(e.at(0)["name"].str() == "runs");
  CHECK(e.at(0)["ts"].num() == Approx(1.5));
  CHECK(e.at(0)["tid"].num() == 3);
  CHECK(e.at(0)["args"]["task"].num() == 42);
  CHECK(!e.at(0)["args"].has("cpu_idle"));
  CHECK(e.at(1)["name"].str() == "sleeps");
  CHECK(std::get<bool>(e.at(1)["args"]["cpu_idle"].v) == true);
  CHECK(e.at(2)["name"].str() == "stops");
  CHECK(e.at(2)["args"]["cpu"].num() == 1);
}
