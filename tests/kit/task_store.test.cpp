// kit::TaskStore: per-task state keyed by the runtime's handle, with reuse
// detection, erase-on-finish and lock-free lookups for concurrent wakers.
#include "taskplace/kit/task_store.hpp"

#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <thread>
#include <vector>

#include "taskplace/topology/uniform.hpp"
#include "taskplace/wake_placer.hpp"

using taskplace::CpuId;
using taskplace::no_cpu;
using Placer = taskplace::WakePlacer<taskplace::UniformTopology, taskplace::traits::Current>;
using Store = taskplace::kit::TaskStore<Placer::task_state>;
using IntStore = taskplace::kit::TaskStore<Placer::task_state, std::uint64_t>;

TEST_CASE("a task's entry is found by its handle and id, fresh at first", "[kit][task_store]") {
  Store s;
  int job = 0;
  CHECK(s.find(&job, 7) == nullptr);
  auto& e = s.get(&job, 7);
  CHECK(e.prev_cpu() == no_cpu);  // never ran: the placer's "unknown" prev
  CHECK(e.id() == 7);
  CHECK(e.state.recent_cpu == no_cpu);
  e.ran_on(3);
  e.state.recent_cpu = 5;
  CHECK(s.find(&job, 7) == &e);
  CHECK(&s.get(&job, 7) == &e);  // the same entry, state kept
  CHECK(s.get(&job, 7).prev_cpu() == 3);
  CHECK(s.size() == 1);
  CHECK(Store::key(&job) != taskplace::no_task);
}

TEST_CASE("a reused handle is not taken for its old task", "[kit][task_store]") {
  IntStore s;
  auto& old = s.get(42, 1);
  old.ran_on(9);
  old.state.recent_cpu = 9;
  // The old task finished without an erase; a new task got handle 42.
  CHECK(s.find(42, 2) == nullptr);
  auto& fresh = s.get(42, 2);
  CHECK(fresh.id() == 2);
  CHECK(fresh.prev_cpu() == no_cpu);
  CHECK(fresh.state.recent_cpu == no_cpu);
  CHECK(s.find(42, 1) == nullptr);  // the old id no longer answers
  CHECK(s.size() == 1);
  // Handle 0 is a valid integer handle.
  CHECK(s.get(0, 5).id() == 5);
  CHECK(s.size() == 2);
}

TEST_CASE("erase forgets a task, only under its own id", "[kit][task_store]") {
  IntStore s;
  s.get(1, 10).ran_on(2);
  CHECK_FALSE(s.erase(1, 11));  // another task's id: left alone
  CHECK(s.find(1, 10) != nullptr);
  CHECK(s.erase(1, 10));
  CHECK(s.find(1, 10) == nullptr);
  CHECK_FALSE(s.erase(1, 10));
  CHECK(s.size() == 0);
  // The handle comes back, fresh.
  CHECK(s.get(1, 10).prev_cpu() == no_cpu);
}

TEST_CASE("a million tasks come and go, each found under its own id", "[kit][task_store]") {
  IntStore s{16};
  constexpr std::uint64_t n = 1'000'000;
  for (std::uint64_t h = 0; h < n; ++h) s.get(h, h + 1).ran_on(static_cast<CpuId>(h % 64));
  CHECK(s.size() == n);
  std::uint64_t wrong = 0;
  for (std::uint64_t h = 0; h < n; ++h) {
    const auto* e = s.find(h, h + 1);
    wrong += e == nullptr || e->prev_cpu() != h % 64 || s.find(h, h) != nullptr;
  }
  CHECK(wrong == 0);
  for (std::uint64_t h = 0; h < n; h += 2) CHECK(s.erase(h, h + 1));
  CHECK(s.size() == n / 2);
  for (std::uint64_t h = 0; h < n; ++h) wrong += (s.find(h, h + 1) != nullptr) != (h % 2 == 1);
  CHECK(wrong == 0);
  // Churn: erased slots are reused, the size stays put.
  for (std::uint64_t r = 0; r < 4; ++r)
    for (std::uint64_t h = 0; h < n; h += 2) {
      s.get(h, r + 100);
      s.erase(h, r + 100);
    }
  CHECK(s.size() == n / 2);
}

TEST_CASE("concurrent wakers and finishers each see their own task's entry", "[kit][task_store][concurrency]") {
  IntStore s{8};
  constexpr int threads = 4;
#if defined(__SANITIZE_THREAD__)
  constexpr std::uint64_t per = 20'000;
#else
  constexpr std::uint64_t per = 200'000;
#endif
  std::atomic<std::uint64_t> wrong{0};
  std::vector<std::thread> ts;
  for (int t = 0; t < threads; ++t)
    ts.emplace_back([&, t] {
      std::uint64_t bad = 0;
      for (std::uint64_t i = 0; i < per; ++i) {
        // Handles shared by all threads (so that shards are contended),
        // each thread with its own id range: a handle lives in one
        // thread's hands at a time only for the "own" half.
        const std::uint64_t own = (i % 512) * threads + static_cast<std::uint64_t>(t);
        const std::uint64_t id = i / 512 + 1;
        auto& e = s.get(own, id);
        if (e.id() != id) ++bad;
        if (i % 512 != 0 && e.prev_cpu() != static_cast<CpuId>(t) && e.prev_cpu() != no_cpu) ++bad;
        e.ran_on(static_cast<CpuId>(t));
        if (s.find(own, id) != &e) ++bad;
        if (i % 3 == 0) {
          if (!s.erase(own, id)) ++bad;
        }
      }
      wrong.fetch_add(bad);
    });
  for (auto& t : ts) t.join();
  CHECK(wrong.load() == 0);
}

TEST_CASE("a lookup of a known task costs a few loads: measured", "[kit][task_store][cost]") {
  // Not a timed assertion: prints the cost per find() and per get() of a
  // known task, the wake-up's hot path, for docs/embedding.md.
  IntStore s;
  constexpr std::uint64_t n = 4096, rounds = 500;
  for (std::uint64_t h = 0; h < n; ++h) s.get(h * 64, 1);
  std::uint64_t hits = 0;
  const auto t0 = std::chrono::steady_clock::now();
  for (std::uint64_t r = 0; r < rounds; ++r)
    for (std::uint64_t h = 0; h < n; ++h) hits += s.find(h * 64, 1) != nullptr;
  const auto t1 = std::chrono::steady_clock::now();
  for (std::uint64_t r = 0; r < rounds; ++r)
    for (std::uint64_t h = 0; h < n; ++h) hits += s.get(h * 64, 1).id();
  const auto t2 = std::chrono::steady_clock::now();
  const double per_find = std::chrono::duration<double, std::nano>(t1 - t0).count() / (n * rounds);
  const double per_get = std::chrono::duration<double, std::nano>(t2 - t1).count() / (n * rounds);
  std::printf("TaskStore: find %.1f ns, get (known) %.1f ns, %llu tasks\n", per_find, per_get,
              static_cast<unsigned long long>(n));
  CHECK(hits == 2 * n * rounds);
}
