// The pool with an overlap policy (traits::Linux2008): every sleep
// of a task, blocked or timed, closes the overlap begun at its last wake-up
// of another task, and the wake-up is stamped when it happens, not at the
// start of the task's run (the worker's cached time), which would count the
// work done before the wake-up as overlap.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <mutex>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "pool_test_support.hpp"
#include "taskplace_pool/pool.hpp"

using namespace std::chrono_literals;
using taskplace::Nanoseconds;
using taskplace_pool::Channel;
using taskplace_pool::task;

namespace {

// OverlapTracker that also records every sample it folds in.
struct RecordingOverlap {
  static constexpr bool enabled = true;
  using state = taskplace::OverlapTracker::state;
  static void on_wake_other(state& s, Nanoseconds now) noexcept { taskplace::OverlapTracker::on_wake_other(s, now); }
  static void on_sleep(state& s, Nanoseconds now) noexcept {
    if (s.woke) {
      std::lock_guard lk(m);
      if (samples.size() < samples.capacity()) samples.push_back(now - s.woke_at);
    }
    taskplace::OverlapTracker::on_sleep(s, now);
  }
  static Nanoseconds average(const state& s) noexcept { return taskplace::OverlapTracker::average(s); }

  static inline std::mutex m;
  static inline std::vector<Nanoseconds> samples;
  static std::vector<Nanoseconds> take() {
    std::lock_guard lk(m);
    auto out = samples;
    samples.clear();
    return out;
  }
};
static_assert(taskplace::OverlapPolicy<RecordingOverlap>);

struct Recording : taskplace::traits::Linux2008<taskplace::sync_affine::Unchecked2008> {
  using Overlap = RecordingOverlap;
};
using Pool = pool_test::UniformPool<Recording>;

void busy(std::chrono::microseconds d) {
  const auto until = std::chrono::steady_clock::now() + d;
  while (std::chrono::steady_clock::now() < until) {
  }
}

// Receives until the channel closes, waking nobody.
task<void> receiver(Channel<int>& in) {
  while (auto v = co_await in.recv()) {
  }
}

constexpr int rounds = 20;

// Samples of at least 2 ms would mean the wake-up was stamped at the start
// of the run: every round busies 2 ms before it wakes.
std::size_t shorter_than_busy(const std::vector<Nanoseconds>& s) {
  return static_cast<std::size_t>(std::count_if(s.begin(), s.end(), [](Nanoseconds d) { return d < 2ms; }));
}

}  // namespace

TEST_CASE("a blocked task closes its overlap from the wake-up, not the run's start", "[pool][overlap]") {
  // Each round the sender busies 2 ms, wakes the receiver (if it waits)
  // and blocks on that round's event, which a thread off the pool sets (a
  // wake-up with no waker task: it stamps nobody) 1 ms after the sender
  // has said it reached the wait, so that the sender blocks in every round
  // and no wake-up's stamp is carried into the next round's block. The
  // receiver wakes nobody, so every sample is the sender's: from its
  // wake-up to its block in the same round.
  RecordingOverlap::samples.reserve(1024);
  (void)RecordingOverlap::take();
  std::vector<taskplace_pool::Event> events(rounds);
  std::atomic<int> reached{-1};
  {
    Pool pool{pool_test::two_cpus()};
    std::thread setter{[&] {
      for (int i = 0; i < rounds; ++i) {
        while (reached.load() < i) std::this_thread::sleep_for(100us);
        std::this_thread::sleep_for(1ms);
        events[static_cast<std::size_t>(i)].set();
      }
    }};
    pool.block_on([](Pool& p, std::vector<taskplace_pool::Event>& ev, std::atomic<int>& at) -> task<void> {
      Channel<int> to{};  // unbounded: the send never blocks
      auto r = p.spawn(receiver(to));
      for (int i = 0; i < rounds; ++i) {
        busy(2ms);
        co_await to.send(1);  // wakes the receiver when it waits
        at.store(i);
        co_await ev[static_cast<std::size_t>(i)].wait();
      }
      to.close();
      co_await r;
    }(pool, events, reached));
    setter.join();
  }
  const auto s = RecordingOverlap::take();
  INFO("samples " << s.size() << ", under 2 ms " << shorter_than_busy(s));
  // At most one per round, plus the wait for the receiver after close().
  CHECK(s.size() >= static_cast<std::size_t>(rounds / 2));
  CHECK(s.size() <= static_cast<std::size_t>(rounds) + 1);
  // The stamp is fresh: the 2 ms before each wake-up are not overlap. A
  // sample may be long if a worker thread lost its CPU in between; stamped
  // at the start of the run, every sample would be.
  CHECK((s.size() - shorter_than_busy(s)) * 4 < s.size());
}

TEST_CASE("a timed sleep closes the overlap too", "[pool][overlap]") {
  RecordingOverlap::samples.reserve(1024);
  (void)RecordingOverlap::take();
  {
    Pool pool{pool_test::two_cpus()};
    pool.block_on([](Pool& p) -> task<void> {
      Channel<int> to{1};  // buffered: the send never blocks
      auto r = p.spawn(receiver(to));
      for (int i = 0; i < rounds; ++i) {
        busy(2ms);
        co_await to.send(i);  // wakes the waiting receiver, or fills the buffer
        co_await taskplace_pool::sleep_for{1ms};
      }
      to.close();
      co_await r;
    }(pool));
  }
  const auto s = RecordingOverlap::take();
  INFO("samples " << s.size() << ", under 2 ms " << shorter_than_busy(s));
  // The receiver wakes nobody, so every sample is the sender's, one per
  // sleep after a wake-up: at most one per round, plus the wait for the
  // receiver after close() woke it.
  CHECK(s.size() <= static_cast<std::size_t>(rounds) + 1);
  CHECK(s.size() >= static_cast<std::size_t>(rounds / 2));
  CHECK((s.size() - shorter_than_busy(s)) * 4 < s.size());
}
