// Counters and hooks (stats.hpp): counters count, NoStats compiles away,
// AtomicStats survives several threads, hooks see every decision.
#include <catch2/catch.hpp>

#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "taskplace/stats.hpp"
#include "taskplace/testing/machine.hpp"
#include "taskplace/topology/uniform.hpp"
#include "taskplace/wake_placer.hpp"

using namespace taskplace;
using namespace std::chrono_literals;

TEST_CASE("plain counters count and reset", "[stats]") {
  PlainStats::counters<WakeCounter> s;
  CHECK(s.get(WakeCounter::wide) == 0);
  s.add(WakeCounter::wide);
  s.add(WakeCounter::wide);
  s.add(WakeCounter::scanned_cpus, 40);
  CHECK(s.get(WakeCounter::wide) == 2);
  CHECK(s.get(WakeCounter::scanned_cpus) == 40);
  CHECK(s.get(WakeCounter::wakeups) == 0);
  s.reset();
  CHECK(s.get(WakeCounter::wide) == 0);
  CHECK(s.get(WakeCounter::scanned_cpus) == 0);
}

TEST_CASE("single-writer counters add, read and reset like plain ones", "[stats]") {
  SingleWriterStats::counters<WakeCounter> s;
  static_assert(SingleWriterStats::counters<WakeCounter>::enabled);
  s.add(WakeCounter::wakeups);
  s.add(WakeCounter::scanned_cpus, 40);
  s.add(WakeCounter::scanned_cpus, 2);
  CHECK(s.get(WakeCounter::wakeups) == 1);
  CHECK(s.get(WakeCounter::scanned_cpus) == 42);
  CHECK(s.get(WakeCounter::wide) == 0);
  s.reset();
  CHECK(s.get(WakeCounter::scanned_cpus) == 0);
}

TEST_CASE("add_counters sums every counter of several policies' counters", "[stats]") {
  // Two workers' single-writer counters and a plain one, summed as the
  // pool and the Boost.Fiber group sum their per-worker placers'.
  SingleWriterStats::counters<WakeCounter> a, b;
  PlainStats::counters<WakeCounter> c;
  a.add(WakeCounter::wakeups, 3);
  a.add(WakeCounter::settled, 2);
  b.add(WakeCounter::wakeups, 4);
  c.add(WakeCounter::wide, 5);
  PlainStats::counters<WakeCounter> sum;
  add_counters(sum, a);
  add_counters(sum, b);
  add_counters(sum, c);
  CHECK(sum.get(WakeCounter::wakeups) == 7);
  CHECK(sum.get(WakeCounter::settled) == 2);
  CHECK(sum.get(WakeCounter::wide) == 5);
  std::uint64_t total = 0;
  for (std::size_t i = 0; i < static_cast<std::size_t>(WakeCounter::count_); ++i)
    total += sum.get(static_cast<WakeCounter>(i));
  CHECK(total == 14);  // nothing else counted
  CHECK(a.get(WakeCounter::wakeups) == 3);  // the sources are left as they were
}

TEST_CASE("atomic counters lose no add from several threads", "[stats]") {
  AtomicStats::counters<BalanceCounter> s;
  constexpr int threads = 4, per_thread = 20000;
  std::vector<std::thread> ts;
  for (int i = 0; i < threads; ++i)
    ts.emplace_back([&] {
      for (int k = 0; k < per_thread; ++k) {
        s.add(BalanceCounter::runs);
        s.add(BalanceCounter::levels_visited, 3);
      }
    });
  for (auto& t : ts) t.join();
  CHECK(s.get(BalanceCounter::runs) == std::uint64_t{threads} * per_thread);
  CHECK(s.get(BalanceCounter::levels_visited) == 3ull * threads * per_thread);
  s.reset();
  CHECK(s.get(BalanceCounter::runs) == 0);
}

TEST_CASE("NoStats compiles away", "[stats]") {
  using none = NoStats::counters<WakeCounter>;
  static_assert(std::is_empty_v<none>);
  static_assert(!none::enabled && PlainStats::counters<WakeCounter>::enabled);
  none s;
  s.add(WakeCounter::wide, 5);
  CHECK(s.get(WakeCounter::wide) == 0);
  // The counters take no room in the placer: a PlainStats placer is bigger
  // than the default (NoStats) one by at least the whole counter array.
  struct with_plain : DefaultWakeTraits { using Stats = PlainStats; };
  static_assert(sizeof(WakePlacer<UniformTopology, with_plain>) >=
                sizeof(WakePlacer<UniformTopology>) +
                    sizeof(std::uint64_t) * static_cast<std::size_t>(WakeCounter::count_));
  static_assert(std::is_empty_v<NoHook> && !detail::hook_enabled<NoHook>());
}

TEST_CASE("every counter has a name", "[stats]") {
  for (int c = 0; c < static_cast<int>(WakeCounter::count_); ++c)
    CHECK(std::string(to_string(static_cast<WakeCounter>(c))).size() > 0);
  CHECK(std::string(to_string(WakeCounter::affinity_fallback)) == "affinity_fallback");
  CHECK(std::string(to_string(WakeCounter::current_cpu)) == "current_cpu");
  CHECK(std::string(to_string(BalanceCounter::decays)) == "decays");
}

namespace {
struct Recorder {
  static inline std::vector<WakeEvent>* sink = nullptr;
  void operator()(const WakeEvent& e) const { sink->push_back(e); }
};
struct Hooked : DefaultWakeTraits {
  using Hook = Recorder;
};
}  // namespace

TEST_CASE("a hook receives each wake decision with its reason", "[stats][wake_placer]") {
  std::vector<WakeEvent> events;
  Recorder::sink = &events;
  static_assert(detail::hook_enabled<Recorder>());
  const auto topo = presets::westmere_12cpu_2013();
  WakePlacer<UniformTopology, Hooked> placer{topo};
  decltype(placer)::task_state waker, wakee;
  testing::ScriptedMachine<> m{12};
  m.all_busy().idle(3);
  const auto p1 = placer.place({.waker = &waker, .waker_key = 7, .wakee = &wakee, .wakee_key = 8,
                                .waking_cpu = 0, .prev_cpu = 3},
                               m, 0ns);
  m.idle(0).busy(3);
  const auto p2 = placer.place({.wakee = &wakee, .wakee_key = 8, .waking_cpu = 5, .prev_cpu = 99},
                               m, 0ns);
  REQUIRE(events.size() == 2);
  CHECK(events[0].waker == 7);
  CHECK(events[0].wakee == 8);
  CHECK(events[0].waking_cpu == 0);
  CHECK(events[0].prev_cpu == 3);
  CHECK(events[0].placement.cpu == p1.cpu);
  CHECK(events[0].placement.reason == WakeReason::idle_target);  // prev 3 idle: prev_idle -> target
  CHECK(events[0].placement.affine == AffineReason::prev_idle);
  CHECK(events[1].waker == no_task);
  CHECK(events[1].prev_cpu == 5);  // invalid prev reported as the waking CPU it became
  CHECK(events[1].placement.reason == p2.reason);
  CHECK(events[1].placement.cpu == 0);
  Recorder::sink = nullptr;
}
