// The replay of a runtime's own trace (the Chrome trace JSON of
// taskplace::kit::ChromeTrace) under several policy sets (tools/replay,
// chrome_trace.cpp and runtime.cpp).
#include <catch2/catch.hpp>

#include <chrono>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "replay.hpp"
#include "taskplace/kit/machine.hpp"
#include "taskplace/kit/trace.hpp"
#include "taskplace/testing.hpp"

#if TASKPLACE_REPLAY_POOL
#include "taskplace_pool/pool.hpp"
#include "taskplace_pool/sleep.hpp"
#endif

using namespace taskplace;
using namespace taskplace::replay;

namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE(in);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

const SetResult& set(const RuntimeResult& r, const std::string& name) {
  for (const SetResult& s : r.sets)
    if (s.name == name) return s;
  FAIL("no policy set " << name);
  return r.sets.front();
}

// What follows from the rules alone, whatever the machine: AlwaysAffine
// (affine::Always, no search) puts every wakee on the waking CPU, PrevCpu
// (affine::Never, no search) on its previous CPU, and neither searches.
void check_rule_identities(const ChromeTraceInput& in, const RuntimeResult& r) {
  std::size_t on_waking = 0, on_prev = 0, pulls = 0;
  for (const RecordedWake& w : in.wakes) {
    on_waking += w.cpu == w.waking_cpu;
    on_prev += w.cpu == w.prev_cpu;
    pulls += w.waking_cpu != w.prev_cpu;
  }
  // SisCurrent, CacheHot and Runtime need the runtime's runs and sleeps.
  REQUIRE(r.sets.size() == policy_sets().size() - (in.tasks.empty() ? 3 : 0));
  CHECK(r.not_replayed.empty() == !in.tasks.empty());
  for (const SetResult& s : r.sets) CHECK(s.wakeups == in.wakes.size());
  CHECK(r.recorded.wakeups == in.wakes.size());
  CHECK(r.recorded.same_cpu == in.wakes.size());
  const SetResult& always = set(r, "traits::AlwaysAffine");
  const SetResult& prev = set(r, "traits::PrevCpu");
  CHECK(always.same_cpu == on_waking);
  CHECK(always.affine == pulls);  // every wake-up with waking != prev is pulled
  CHECK(always.idle == 0);
  CHECK(always.wide == 0);  // wide::Never
  CHECK(prev.same_cpu == on_prev);
  CHECK(prev.affine == 0);
  CHECK(prev.idle == 0);
}

}  // namespace

TEST_CASE("a runtime's trace is told from a perf trace by its first character", "[replay][runtime]") {
  CHECK(starts_as_json(" \n\t{\"traceEvents\":[]}"));
  CHECK_FALSE(starts_as_json("# ========\n# captured on: ...\n"));
  CHECK_FALSE(starts_as_json("   perf  1234 [000] 1.000: sched:sched_waking: ..."));
  CHECK_FALSE(starts_as_json("  \n"));
}

TEST_CASE("the reader takes a wake event's fields and ts in microseconds as nanoseconds", "[replay][runtime]") {
  const std::string doc = R"({"traceEvents":[
    {"name":"idle_prev","cat":"wake","ph":"i","s":"t","ts":1234.567,"pid":1,"tid":0,
     "args":{"waker":7,"wakee":18446744073709551615,"waking_cpu":0,"prev_cpu":3,"target":0,"cpu":3,
             "affine":"sync","wide":false,"sync":true,"scanned":0,"reservation_skips":0}},
    {"name":"pulled","cat":"balance","ph":"i","ts":2000,"pid":1,"tid":2,"args":{}},
    {"name":"process_name","ph":"M","pid":1,"tid":0,"args":{"name":"a \"pool\"\u0021"}}],
    "otherData":{"dropped":5}})";
  const ChromeTraceInput in = read_chrome_trace(doc);
  REQUIRE(in.wakes.size() == 1);
  const RecordedWake& w = in.wakes[0];
  CHECK(w.time_ns == 1'234'567);
  CHECK(w.waker == 7);
  CHECK(w.wakee == 18446744073709551615ull);  // keys are read exactly, not as doubles
  CHECK(w.prev_cpu == 3);
  CHECK(w.cpu == 3);
  CHECK(w.reason == "idle_prev");
  CHECK(w.affine == "sync");
  CHECK(w.sync);
  CHECK_FALSE(w.wide);
  CHECK(in.balances == 1);
  CHECK(in.other_events == 1);
  CHECK(in.process == "a \"pool\"!");
  CHECK(in.dropped == 5);
  CHECK(in.max_cpu_seen == 3);
  CHECK_FALSE(w.waker_by_key);
  CHECK(w.waker_flips == 0);
  // A waker given by its key, with the flips its runtime read for it.
  const ChromeTraceInput by_key = read_chrome_trace(
      R"({"traceEvents":[{"cat":"wake","name":"idle_prev","ts":1,"args":{"waker":1,"wakee":2,"waking_cpu":0,)"
      R"("prev_cpu":3,"target":0,"cpu":3,"waker_by_key":true,"waker_flips":9}}]})");
  CHECK(by_key.wakes.at(0).waker_by_key);
  CHECK(by_key.wakes.at(0).waker_flips == 9);
}

TEST_CASE("the reader takes the machine a wake event's placer read, and refuses a malformed one",
          "[replay][runtime]") {
  const std::string head = R"({"traceEvents":[{"cat":"wake","name":"idle_prev","ts":1,"args":{"waker":1,"wakee":2,)"
                           R"("waking_cpu":0,"prev_cpu":3,"target":0,"cpu":3,"machine":)";
  const std::string tail = "}}]}";
  const ChromeTraceInput in = read_chrome_trace(
      head +
      R"({"cpus":4,"idle":8,"known":15,"read":9,"torn":0,"counts":[{"cpu":0,"nr_running":1,"load":1024},)"
      R"({"cpu":3,"nr_running":0,"load":0}],"llc":{"cpu":0,"pct":75},"beyond":false,"has_llc":true,)"
      R"("has_idle_core":false})" + tail);
  REQUIRE(in.views == 1);
  const kit::MachineView& v = in.wakes[0].view;
  CHECK(v.cpus == 4);
  CHECK(v.has_idle(3));
  CHECK_FALSE(v.has_idle(4));
  CHECK(v.idle == 8);
  CHECK(v.read == 9);
  REQUIRE(v.find_count(0) != nullptr);
  CHECK(v.find_count(0)->load == 1024);
  CHECK(v.find_count(3)->nr_running == 0);
  CHECK(v.find_count(1) == nullptr);
  CHECK(v.llc_cpu == 0);
  CHECK(v.llc_pct == 75);
  CHECK(v.core_cpu == no_cpu);  // not read
  CHECK(v.has_llc);
  CHECK_FALSE(v.has_core_hint);
  CHECK(v.wake_costs[0].cpu == no_cpu);  // a view without the move costs (written before they were recorded)
  CHECK_FALSE(v.has_crossing);
  // The move costs, where the runtime's machine has them.
  const std::string whole = R"({"cpus":4,"idle":0,"known":0,"read":0,"torn":0,"counts":[],)";
  const std::string flags = R"("beyond":false,"has_llc":false,"has_idle_core":false})";
  const ChromeTraceInput costs =
      read_chrome_trace(head + whole + R"("wake_cost":[{"cpu":3,"ns":41000},{"cpu":1,"ns":0}],"crossing_ns":180,)" +
                        flags + tail);
  REQUIRE(costs.wakes[0].view.find_wake_cost(3) != nullptr);
  CHECK(costs.wakes[0].view.find_wake_cost(3)->ns == 41'000);
  CHECK(costs.wakes[0].view.find_wake_cost(1)->ns == 0);
  CHECK(costs.wakes[0].view.find_wake_cost(2) == nullptr);
  CHECK(costs.wakes[0].view.has_crossing);
  CHECK(costs.wakes[0].view.crossing == Nanoseconds{180});
  CHECK_THROWS_WITH(read_chrome_trace(head + whole + R"("wake_cost":[{"cpu":3}],)" + flags + tail),
                    Catch::Contains("machine.wake_cost.ns is missing or out of range"));
  CHECK_THROWS_WITH(read_chrome_trace(head + whole + R"("wake_cost":{"cpu":3,"ns":1},)" + flags + tail),
                    Catch::Contains("machine.wake_cost is not an array of at most 2"));
  CHECK_THROWS_WITH(read_chrome_trace(head + whole + R"("crossing_ns":1.5,)" + flags + tail),
                    Catch::Contains("machine.crossing_ns is missing or out of range"));
  // A view must be whole: each field present and in range.
  CHECK_THROWS_WITH(read_chrome_trace(head + R"({"cpus":4,"idle":8,"known":15,"read":9,"counts":[]})" + tail),
                    Catch::Contains("machine.torn is missing"));
  CHECK_THROWS_WITH(read_chrome_trace(head + R"({"cpus":0,"idle":0,"known":0,"read":0,"torn":0,"counts":[]})" + tail),
                    Catch::Contains("machine.cpus is 0"));
  CHECK_THROWS_WITH(
      read_chrome_trace(head + R"({"cpus":4,"idle":0,"known":0,"read":0,"torn":0,"counts":[],"llc":{"cpu":0,"pct":101}})" + tail),
      Catch::Contains("machine.llc.pct is missing or out of range"));
  CHECK_THROWS_WITH(read_chrome_trace(head + R"({"cpus":4,"idle":0,"known":0,"read":0,"torn":0,"counts":[1]})" + tail),
                    Catch::Contains("machine.counts holds a non-object"));
  CHECK_THROWS_WITH(read_chrome_trace(head + "7" + tail), Catch::Contains("machine is not an object"));
  CHECK_THROWS_WITH(read_chrome_trace(head + R"({"cpus":4,"idle":0,"known":0,"read":0,"torn":0,"counts":[],)"
                                             R"("beyond":false,"has_llc":1,"has_idle_core":false})" + tail),
                    Catch::Contains("machine.has_llc is missing or not true or false"));
  // A view of another machine than the replay's is refused.
  Options o;
  o.cpus = 8;
  CHECK_THROWS_WITH(run_runtime(in, o), Catch::Contains("machine has 4 CPUs but the replay's has 8"));
}

TEST_CASE("the reader refuses what is not JSON, naming the line and column", "[replay][runtime]") {
  const std::string head = R"({"traceEvents":[{"cat":"wake","ts":1,"args":{"waker":1,"wakee":2,"waking_cpu":0,)";
  CHECK_THROWS_WITH(read_chrome_trace(head + R"("prev_cpu":0,"target":0,"cpu":0},}]})"),
                    Catch::Contains("line 1 column") && Catch::Contains("expected '\"'"));
  CHECK_THROWS_WITH(read_chrome_trace(head + R"("prev_cpu":0,"target":0}}]})"), Catch::Contains("cpu is missing"));
  CHECK_THROWS_WITH(read_chrome_trace(head + R"("prev_cpu":0,"target":0,"cpu":-1}}]})"),
                    Catch::Contains("cpu is missing or not a whole number"));
  CHECK_THROWS_WITH(read_chrome_trace(head + R"("prev_cpu":0,"target":0,"cpu":0}}]} x)"),
                    Catch::Contains("text after the JSON document"));
  CHECK_THROWS_WITH(read_chrome_trace("{\"traceEvents\":[\n{\"cat\":\"wake\",\"name\":\"a\nb\"}]}"),
                    Catch::Contains("line 2 column") && Catch::Contains("control character"));
  CHECK_THROWS_WITH(read_chrome_trace(R"({"otherData":{}})"), Catch::Contains("no \"traceEvents\""));
  CHECK_THROWS_WITH(read_chrome_trace("{\"a\":" + std::string(100, '[') + std::string(100, ']') + "}"),
                    Catch::Contains("nested more than 64 deep"));  // refused, not a stack overflow
  CHECK_THROWS_WITH(read_chrome_trace(R"({"traceEvents":[{"cat":"wake","ts":99999999999999999999,"args":{}}]})"),
                    Catch::Contains("ts is out of range"));
  CHECK_THROWS_WITH(read_chrome_trace(R"({"traceEvents":[]})"), Catch::Contains("no wake event"));
}

TEST_CASE("a Current trace replayed under Current agrees on the machine the replay models", "[replay][runtime]") {
  // The recorder's machine is the replay's model (runtime.cpp): a CPU runs
  // the task last seen there until it sleeps (a sync waker) or moves. Two
  // pairs of tasks ping-pong on 4 CPUs of one LLC, every fifth wake-up
  // without the sync hint (its waker keeps its CPU). Then the replay's
  // Current sees what the recording Current saw, and decides alike. The
  // placer reads the machine directly (no kit::observed): the events carry
  // no view, as a trace written before the kit recorded one, and the
  // replay falls back to its model.
  Options o;
  o.cpus = 4;
  std::string words;
  const TableTopology topo = replay::detail::make_topology(o, 4, words);
  kit::ChromeTrace trace{256};
  kit::ChromeTrace::Install on{trace};
  using Placer = WakePlacer<TableTopology, kit::Traced<traits::Current>>;
  const Placer placer{topo};
  std::vector<decltype(placer)::task_state> tasks(5);
  std::vector<CpuId> cpu_of = {0, 0, 1, 2, 3};
  std::vector<TaskKey> occupant(4, no_task);  // by CPU; no_task: idle (every task asleep at first)
  testing::ScriptedMachine<true> m{4};
  auto runs = [&](TaskKey k, CpuId c) {
    if (occupant[cpu_of[k]] == k) occupant[cpu_of[k]] = no_task;
    cpu_of[k] = c;
    occupant[c] = k;
  };
  std::size_t pulled_or_moved = 0;
  for (int i = 0; i < 40; ++i) {
    const TaskKey a = i % 2 == 0 ? 1 : 3, b = a + 1;
    const TaskKey waker = (i / 2) % 2 == 0 ? a : b, wakee = waker == a ? b : a;
    const bool sync = i % 5 != 0;
    runs(waker, cpu_of[waker]);
    std::uint32_t busy = 0;
    for (CpuId c = 0; c < 4; ++c) {
      if (occupant[c] != no_task) m.busy(c), ++busy;
      else m.idle(c);
    }
    m.utilization(25 * busy);
    const Placement p = placer.place({.waker = &tasks[waker], .waker_key = waker, .wakee = &tasks[wakee],
                                      .wakee_key = wakee, .waking_cpu = cpu_of[waker], .prev_cpu = cpu_of[wakee],
                                      .sync = sync, .wakee_load = kit::wakee_load<Placer>},  // the kit's loads
                                     m, Nanoseconds{1'000'000 + 1000 * i});
    pulled_or_moved += p.cpu != cpu_of[wakee];
    if (sync && occupant[cpu_of[waker]] == waker) occupant[cpu_of[waker]] = no_task;
    runs(wakee, p.cpu);
  }
  REQUIRE(pulled_or_moved > 0);  // not a run where every wakee stays put
  std::ostringstream out;
  trace.write(out);
  const ChromeTraceInput in = read_chrome_trace(out.str());
  REQUIRE(in.wakes.size() == 40);
  CHECK(in.views == 0);
  const RuntimeResult r = run_runtime(in, o);
  CHECK(set(r, "traits::Current").same_cpu == 40);
  CHECK(set(r, "traits::Current").idle == r.recorded.idle);
  CHECK(set(r, "traits::Current").affine == r.recorded.affine);
  check_rule_identities(in, r);
  // The report names every set and says where each stands.
  std::ostringstream table;
  print_runtime_table(table, r);
  for (const std::string& s : policy_sets()) CHECK_THAT(table.str(), Catch::Contains(s));
  CHECK_THAT(table.str(), Catch::Contains("traits::CacheHot<> and traits::Runtime not replayed: the trace has no task events"));
  CHECK_THAT(table.str(), Catch::Contains("what each policy set would have decided"));
}

TEST_CASE("the stored pool trace replays under every policy set by its rules", "[replay][runtime]") {
  // tests/data/traces/pool-pipe.json: taskplace_pool_bench --quick --only
  // pipe --pipe-rounds 400 --trace, the pool's Current on a 2-CPU machine.
  const ChromeTraceInput in = read_chrome_trace(read_file(std::string(TASKPLACE_TEST_DATA) + "/traces/pool-pipe.json"));
  CHECK(in.wakes.size() == 80);  // 40 round trips, two wake-ups each
  CHECK(in.dropped == 0);
  const RuntimeResult r = run_runtime(in, {});
  CHECK(r.cpus == 2);
  check_rule_identities(in, r);
  // Each event carries the machine the pool's placer read (kit::observed),
  // none torn: Current, the set the pool ran, decides every wake-up as the
  // pool did, to the reason.
  CHECK(in.views == 80);
  CHECK(r.views == 80);
  CHECK(r.torn == 0);
  CHECK(set(r, "traits::Current").same_cpu == 80);
  CHECK(set(r, "traits::Current").same_decision == 80);
  CHECK(set(r, "traits::Current").idle == r.recorded.idle);
  CHECK(set(r, "traits::Current").affine == r.recorded.affine);
  // The pool's runs and sleeps too: the sets that read them replay, and
  // on this pipe decide as Current did.
  CHECK(in.tasks.size() == 163);
  CHECK(set(r, "traits::SisCurrent<>").same_decision == 80);
  CHECK(set(r, "traits::CacheHot<>").same_decision == 80);
  Options one;
  one.cpus = 1;
  CHECK_THROWS_AS(run_runtime(in, one), std::invalid_argument);  // the trace uses CPU 1
}

#if TASKPLACE_REPLAY_POOL
namespace {
// The pool under Current, the set the replay's first row runs.
using TracedPool = taskplace_pool::TracedPool<taskplace::UniformTopology, traits::Current>;
taskplace_pool::task<void> echo(taskplace_pool::Channel<int>& in, taskplace_pool::Channel<int>& out) {
  while (auto v = co_await in.recv()) co_await out.send(*v);
}
taskplace_pool::task<void> lead(taskplace_pool::Channel<int>& out, taskplace_pool::Channel<int>& in, int n) {
  for (int i = 0; i < n; ++i) {
    co_await out.send(i);
    (void)co_await in.recv();
  }
  out.close();
}
taskplace_pool::task<void> pairs(TracedPool& p, int n) {
  taskplace_pool::Channel<int> a{0}, b{0}, c{0}, d{0};
  auto x = p.spawn(echo(a, b));
  auto y = p.spawn(lead(a, b, n));
  auto z = p.spawn(echo(c, d));
  auto v = p.spawn(lead(c, d, n));
  co_await y;
  co_await v;
  co_await x;
  co_await z;
}
}  // namespace

TEST_CASE("a trace the pool records replays with as many wake-ups as it placed", "[replay][runtime][pool]") {
  kit::ChromeTrace trace{1 << 16};
  taskplace_pool::PoolOptions po;
  po.trace = &trace;
  std::uint64_t placed = 0;
  {
    TracedPool pool{taskplace::UniformTopology{1, 1, 4, 1}, po};
    pool.block_on(pairs(pool, 300));
    pool.shutdown();
    placed = pool.placer_stats().get(WakeCounter::wakeups);
  }
  std::ostringstream out;
  trace.write(out);
  const ChromeTraceInput in = read_chrome_trace(out.str());
  CHECK(in.wakes.size() == placed);
  CHECK(in.wakes.size() >= 1200);  // two pairs, 300 round trips each
  Options o;
  o.cpus = 4;
  const RuntimeResult r = run_runtime(in, o);
  check_rule_identities(in, r);
  CHECK(r.views == in.wakes.size());
  CHECK(in.tasks.size() >= in.wakes.size());  // each woken task runs, and sleeps
  const SetResult& current = set(r, "traits::Current");
  // Current, the set the pool ran, over the machine each placer read,
  // decides as the pool did: only a torn view (two answers for one CPU
  // within one decision, the replay takes the first) may differ.
  INFO("torn views: " << r.torn);
  CHECK(current.wakeups - current.same_decision <= r.torn);
}

namespace {
// `n` round trips, a pause of `pause`, `n` more (with sync hints).
taskplace_pool::task<void> lead_pausing(taskplace_pool::Channel<int>& out, taskplace_pool::Channel<int>& in, int n,
                                        std::chrono::milliseconds pause) {
  for (int i = 0; i < 2 * n; ++i) {
    if (i == n && pause.count() > 0) co_await taskplace_pool::sleep_for(pause);
    co_await out.send(i);
    (void)co_await in.recv();
  }
  out.close();
}

// The pool under `Traits`, traced, runs two pairs for 2 * `rounds` round
// trips each, pausing `pause` halfway (SisCurrent keeps a pair only once
// its flips decayed, a flip period after it formed); the replay of its
// trace under the set named `name`. Returns: the replay.
template <class Traits>
RuntimeResult replays_its_own_set(const std::string& name, int rounds, std::chrono::milliseconds pause) {
  using Pool = taskplace_pool::TracedPool<taskplace::UniformTopology, Traits>;
  kit::ChromeTrace trace{1 << 18};
  taskplace_pool::PoolOptions po;
  po.trace = &trace;
  {
    Pool pool{taskplace::UniformTopology{1, 1, 4, 1}, po};
    pool.block_on([](Pool& p, int n, std::chrono::milliseconds ms) -> taskplace_pool::task<void> {
      using taskplace_pool::WakeHint;
      taskplace_pool::Channel<int> a{1, WakeHint::sync}, b{1, WakeHint::sync}, c{1, WakeHint::sync},
          d{1, WakeHint::sync};
      auto x = p.spawn(echo(a, b));
      auto y = p.spawn(lead_pausing(a, b, n, ms));
      auto z = p.spawn(echo(c, d));
      auto v = p.spawn(lead_pausing(c, d, n, ms));
      co_await y;
      co_await v;
      co_await x;
      co_await z;
    }(pool, rounds, pause));
    pool.shutdown();
  }
  REQUIRE(trace.dropped() == 0);
  std::ostringstream out;
  trace.write(out);
  const ChromeTraceInput in = read_chrome_trace(out.str());
  Options o;
  o.cpus = 4;
  const RuntimeResult r = run_runtime(in, o);
  REQUIRE_FALSE(in.tasks.empty());
  const SetResult& s = set(r, name);
  INFO(name << ": torn views " << r.torn << ", same decision " << s.same_decision << " of " << s.wakeups);
  // The set's durations or reservations come from the recorded runs and
  // sleeps, its machine from the views: it decides as the pool did, but
  // where a view is torn. Under a set that replays a settled pair's
  // verdict (SettledPair<every>), a torn view's decision also decides
  // whether its wakee's memo is armed, and so the wake-ups of that wakee
  // until its next judgement: at most `every` decisions a torn view.
  // A view also misses a worker that changed between two reads of
  // different kinds (its idle state, then its counts): no CPU is marked
  // torn, and the decision may differ; a few in a thousand wake-ups at
  // most (an ASan run: 1 of 2321 under CacheHot, none torn), as in
  // tests/replay/fiber.cpp.
  constexpr std::size_t every =
      taskplace::WakePlacer<taskplace::UniformTopology, Traits>::settle_policy::every;
  CHECK(s.wakeups - s.same_decision <= (r.torn + s.wakeups / 200) * every);
  return r;
}
std::size_t reason_count(const RuntimeResult& r, const std::string& reason) {
  for (const auto& [name, n] : r.reasons)
    if (name == reason) return n;
  return 0;
}
}  // namespace

TEST_CASE("a pool under SisCurrent or CacheHot is replayed by its own set from its runs and sleeps",
          "[replay][runtime][pool]") {
  using namespace std::chrono_literals;
  // After the pause the pairs' flips are 0 and their runs short: the pool
  // keeps wake-ups on the waking worker (wake_on_current), by durations
  // the replay takes from the recorded runs and sleeps.
  const RuntimeResult sis = replays_its_own_set<traits::SisCurrent<>>("traits::SisCurrent<>", 300, 1200ms);
  CHECK(reason_count(sis, "wake_on_current") > 0);
  replays_its_own_set<traits::CacheHot<>>("traits::CacheHot<>", 300, 0ms);
}

TEST_CASE("a pool under Runtime is replayed by Runtime from its runs, sleeps and recorded move costs",
          "[replay][runtime][pool]") {
  using namespace std::chrono_literals;
  // traits::Runtime's CostGate weighs the waker's overlap and the wakee's
  // run against the move cost, which the view records (the crossing cost,
  // the previous CPU's wake cost): the replay's Runtime reads the same
  // costs, overlaps and runs, and keeps the wake-ups the pool kept.
  const RuntimeResult r = replays_its_own_set<traits::Runtime>("traits::Runtime", 300, 0ms);
  CHECK(reason_count(r, "waker_blocks") + reason_count(r, "short_work") > 0);  // the gate kept some
}
#endif
