// Fault class: concurrent callers on shared state. Run under
// ThreadSanitizer by the `concurrency` CTest label: any data race is a
// finding. The counts only have to stay within their bounds.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>
#include <vector>

#include "taskplace/stats.hpp"
#include "taskplace/testing/machine.hpp"
#include "taskplace/topology/uniform.hpp"
#include "taskplace/wake_placer.hpp"

using namespace taskplace;
using namespace std::chrono_literals;

namespace {
constexpr int threads = 4;
constexpr int rounds = 20000;

// Today's policy set with the stats type under test.
template <class S>
struct CountedWith : DefaultWakeTraits {
  using Stats = S;
};
const UniformTopology eight{1, 1, 4, 2};
// eight's CPUs, all busy but cpu 3.
testing::ScriptedMachine<> busy_but_cpu3() {
  testing::ScriptedMachine<> x(8);
  x.all_busy().idle(3);
  return x;
}
}  // namespace

TEST_CASE("four threads recording into one relaxed-atomic flip state never exceed the calls made",
          "[faults][concurrency][flip_counter]") {
  const FlipCounter<flip_decay::Halve2014, flip_storage::RelaxedAtomic> f;
  FlipCounter<flip_decay::Halve2014, flip_storage::RelaxedAtomic>::state s;
  std::atomic<bool> go{false};
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      while (!go.load()) std::this_thread::yield();
      for (int i = 0; i < rounds; ++i)
        f.record(s, static_cast<TaskKey>(t * rounds + i + 1), Nanoseconds{i});  // every call a new partner
    });
  go = true;
  for (auto& th : pool) th.join();
  // No decay (the clock stays under one period): at most one flip a call;
  // lost updates may make it fewer, never more.
  CHECK(f.flips(s) <= static_cast<std::uint32_t>(threads * rounds));
  CHECK(f.flips(s) >= static_cast<std::uint32_t>(rounds));  // one thread's worth at least survives
}

TEST_CASE("a placer with AtomicStats shared by four threads counts every wake-up",
          "[faults][concurrency][stats]") {
  using Traced = CountedWith<AtomicStats>;
  const WakePlacer<UniformTopology, Traced> placer(eight);
  const testing::ScriptedMachine<> m = busy_but_cpu3();
  std::vector<std::thread> pool;
  std::atomic<int> bad{0};
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      WakePlacer<UniformTopology, Traced>::task_state waker, wakee;  // per-thread tasks
      for (int i = 0; i < rounds / 4; ++i) {
        const auto p = placer.place({.waker = &waker, .waker_key = 1, .wakee = &wakee, .wakee_key = 2,
                                     .waking_cpu = static_cast<CpuId>(t), .prev_cpu = static_cast<CpuId>(7 - t)},
                                    m, Nanoseconds{i});
        if (p.cpu >= 8) bad.fetch_add(1);
      }
    });
  for (auto& th : pool) th.join();
  CHECK(bad.load() == 0);
  CHECK(placer.stats().get(WakeCounter::wakeups) == static_cast<std::uint64_t>(threads * (rounds / 4)));
}

TEST_CASE("a placer with SingleWriterStats is read by other threads while its owner places",
          "[faults][concurrency][stats]") {
  // One writer (the owning worker), three readers polling the counters as
  // it runs: no data race, every read a count the writer had reached (so
  // never decreasing), and the final count exact.
  using Owned = CountedWith<SingleWriterStats>;
  const WakePlacer<UniformTopology, Owned> placer(eight);
  const testing::ScriptedMachine<> m = busy_but_cpu3();
  std::atomic<bool> done{false};
  std::atomic<int> went_back{0};
  std::vector<std::thread> readers;
  for (int t = 1; t < threads; ++t)
    readers.emplace_back([&] {
      std::uint64_t last = 0;
      while (!done.load()) {
        const std::uint64_t now = placer.stats().get(WakeCounter::wakeups);
        if (now < last) went_back.fetch_add(1);
        last = now;
      }
    });
  WakePlacer<UniformTopology, Owned>::task_state waker, wakee;
  for (int i = 0; i < rounds; ++i)
    (void)placer.place({.waker = &waker, .waker_key = 1, .wakee = &wakee, .wakee_key = 2, .waking_cpu = 0,
                        .prev_cpu = 5},
                       m, Nanoseconds{i});
  done = true;
  for (auto& th : readers) th.join();
  CHECK(went_back.load() == 0);
  CHECK(placer.stats().get(WakeCounter::wakeups) == static_cast<std::uint64_t>(rounds));
}
