// C++20 coroutines over the Asio runtime (examples/asio): co_spawn on a
// TaskExecutor, every resumption a handler of the coroutine's task placed
// by the runtime's WakePlacer: a coroutine woken by another's channel send,
// by a timer, by a post; join() waits for coroutines suspended on a timer;
// an exception a coroutine throws reaches the caller.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <future>
#include <memory>
#include <stdexcept>
#include <type_traits>
#include <utility>  // before Asio's awaitable.hpp, which uses std::exchange (Boost 1.74)
#include <vector>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/use_future.hpp>
#include <catch2/catch.hpp>

#include "taskplace_asio/channel.hpp"
#include "taskplace_asio/executor.hpp"
#include "taskplace_asio/runtime.hpp"

using namespace std::chrono_literals;
using Rt = taskplace_asio::Runtime<>;
using Ex = taskplace_asio::TaskExecutor<Rt>;
using boost::asio::awaitable;
using boost::asio::use_awaitable;

static_assert(boost::asio::execution::is_executor<Ex>::value);
static_assert(std::is_constructible_v<boost::asio::any_io_executor, Ex>);

namespace {

// A coroutine of task `self`: hops through its executor, waits on a timer
// every other time, and counts its end. Each step must run as its task.
awaitable<void> hopper(Rt& rt, const void* self, int i, std::atomic<int>& done, std::atomic<int>& elsewhere) {
  auto ex = co_await boost::asio::this_coro::executor;
  for (int k = 0; k < 3; ++k) {
    co_await boost::asio::post(ex, use_awaitable);
    if (rt.current_task() != self) elsewhere.fetch_add(1);
  }
  if (i % 2 == 0) {
    boost::asio::steady_timer t{ex, 200us};
    co_await t.async_wait(use_awaitable);
    if (rt.current_task() != self) elsewhere.fetch_add(1);
  }
  done.fetch_add(1);
}

}  // namespace

TEST_CASE("every coroutine co_spawned on a task's executor runs to completion, as that task") {
  constexpr int n = 2'000;
  Rt rt{4};
  std::vector<int> tasks(n);
  std::atomic<int> done{0}, elsewhere{0};
  for (int i = 0; i < n; ++i)
    boost::asio::co_spawn(Ex{rt, &tasks[static_cast<std::size_t>(i)]},
                          hopper(rt, &tasks[static_cast<std::size_t>(i)], i, done, elsewhere), boost::asio::detached);
  // join() waits for the coroutines suspended on a timer (the wait holds
  // the executor's tracked work): none is cut off.
  rt.join();
  CHECK(done.load() == n);
  CHECK(elsewhere.load() == 0);
  // Each coroutine: its start, three hops, its timer for one in two.
  CHECK(rt.stats().handlers >= static_cast<std::uint64_t>(n) * 4 + n / 2);
}

TEST_CASE("a ping-pong of coroutines over channels: each send wakes the other, placed and counted") {
  constexpr int rounds = 5'000;
  Rt rt{2};
  taskplace_asio::Channel<int, Rt> ping{rt}, pong{rt};
  int a = 0, b = 0;  // the two coroutines' tasks
  std::atomic<int> elsewhere{0}, wrong{0};
  const auto placed_before = rt.placer_stats().get(taskplace::WakeCounter::wakeups);
  auto player_a = [&]() -> awaitable<int> {
    int last = -1;
    for (int i = 0; i < rounds; ++i) {
      ping.send(i);  // a wake-up of b, from a's handler: the waker is a
      last = co_await pong.async_receive(use_awaitable);
      if (last != i) wrong.fetch_add(1);
      if (rt.current_task() != &a) elsewhere.fetch_add(1);
    }
    co_return last;
  };
  auto player_b = [&]() -> awaitable<void> {
    for (int i = 0; i < rounds; ++i) {
      const int v = co_await ping.async_receive(use_awaitable);
      if (rt.current_task() != &b) elsewhere.fetch_add(1);
      pong.send(v);
    }
  };
  boost::asio::co_spawn(Ex{rt, &b}, player_b(), boost::asio::detached);
  auto result = boost::asio::co_spawn(Ex{rt, &a}, player_a(), boost::asio::use_future);
  CHECK(result.get() == rounds - 1);
  rt.join();
  CHECK(wrong.load() == 0);
  CHECK(elsewhere.load() == 0);
  // Every receive is a wake-up of the receiver's task through the placer
  // (2 a round), besides the spawns' and completions' posts.
  const auto placed = rt.placer_stats().get(taskplace::WakeCounter::wakeups) - placed_before;
  CHECK(placed >= 2u * rounds);
  CHECK(rt.stats().handlers >= 2u * rounds);
  // Each task's state is in the runtime's store: both were placed as tasks.
  CHECK(rt.task_state(&a).has_value());
  CHECK(rt.task_state(&b).has_value());
}

TEST_CASE("a coroutine's exception reaches the caller: through use_future, and through join()") {
  SECTION("use_future") {
    Rt rt{2};
    int t = 0;
    auto f = boost::asio::co_spawn(
        Ex{rt, &t},
        []() -> awaitable<int> {
          co_await boost::asio::post(co_await boost::asio::this_coro::executor, use_awaitable);
          throw std::runtime_error("from the coroutine");
          co_return 0;
        }(),
        boost::asio::use_future);
    CHECK_THROWS_WITH(f.get(), "from the coroutine");
    rt.join();
  }
  SECTION("a completion handler that rethrows: the runtime stops, join() rethrows") {
    Rt rt{2};
    int t = 0;
    boost::asio::co_spawn(
        Ex{rt, &t},
        []() -> awaitable<void> {
          co_await boost::asio::post(co_await boost::asio::this_coro::executor, use_awaitable);
          throw std::logic_error("unhandled in the coroutine");
        }(),
        [](std::exception_ptr e) {
          if (e) std::rethrow_exception(e);
        });
    CHECK_THROWS_AS(rt.join(), std::logic_error);
  }
}
