// The pool with the trace hook (TracedPool, PoolOptions::trace): every
// placement and newidle balance of every worker lands in one Chrome trace,
// valid JSON, as many events as the placers and balancers counted.
#include <atomic>
#include <sstream>
#include <string>

#include <catch2/catch.hpp>

#include "../kit/strict_json.hpp"
#include "pool_test_support.hpp"
#include "taskplace/kit/trace.hpp"
#include "taskplace_pool/pool.hpp"

using taskplace_pool::Channel;
using taskplace_pool::task;

namespace {
using Traced = taskplace_pool::TracedPool<taskplace::UniformTopology>;

task<void> ping(Channel<int>& out, Channel<int>& in, int n) {
  for (int i = 0; i < n; ++i) {
    co_await out.send(i);
    (void)co_await in.recv();
  }
  out.close();
}
task<void> pong(Channel<int>& in, Channel<int>& out) {
  while (auto v = co_await in.recv()) co_await out.send(*v);
}
task<void> ping_pong(Traced& p, int n) {
  Channel<int> a{0}, b{0};
  auto x = p.spawn(pong(a, b));
  auto y = p.spawn(ping(a, b, n));
  co_await y;
  co_await x;
}

std::size_t count_cat(const strict_json::Json& j, const std::string& cat) {
  std::size_t n = 0;
  for (const auto& e : j["traceEvents"].array())
    if (e.has("cat") && e["cat"].str() == cat) ++n;
  return n;
}
}  // namespace

TEST_CASE("a traced pool records each of its workers' decisions once", "[pool][trace]") {
  const int n = static_cast<int>(pool_test::sized(2000));
  taskplace::kit::ChromeTrace trace{1 << 16};
  taskplace_pool::PoolOptions o = pool_test::spreading();
  o.trace = &trace;
  std::uint64_t wakeups = 0, balances = 0;
  {
    Traced pool{pool_test::four_cpus(), o};
    pool.block_on(ping_pong(pool, n));
    pool.shutdown();
    wakeups = pool.placer_stats().get(taskplace::WakeCounter::wakeups);
    balances = pool.balancer_stats().get(taskplace::BalanceCounter::runs);
  }
  REQUIRE(trace.dropped() == 0);
  std::ostringstream out;
  trace.write(out);
  const auto j = strict_json::Reader(out.str()).document();
  CHECK(wakeups >= static_cast<std::uint64_t>(2 * n));  // one per message at least
  CHECK(count_cat(j, "wake") == wakeups);
  CHECK(count_cat(j, "balance") == balances);
  for (const auto& e : j["traceEvents"].array()) {
    if (!e.has("cat") || e["cat"].str() != "wake") continue;
    CHECK(e["args"]["cpu"].num() < 4);
    CHECK(e["ts"].num() > 0);  // the pool's clock
  }
}

TEST_CASE("a traced pool with no sink records nothing", "[pool][trace]") {
  Traced pool{pool_test::two_cpus()};
  pool.block_on(ping_pong(pool, 10));
  CHECK(pool.placer_stats().get(taskplace::WakeCounter::wakeups) >= 20);
}
