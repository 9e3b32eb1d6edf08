// The pool loses no wake-up: every workload, at reduced size, on
// every policy set, delivers every message within a timeout that fails
// loudly; and a million short tasks each run once.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "pool_test_support.hpp"
#include "workloads/pool_workloads.hpp"

using namespace std::chrono_literals;
using pool_test::sized;
using pool_test::UniformPool;

namespace {
// About 200,000 messages per policy set, 1,000,000 over the five (the
// sizes of bench/workloads/common.hpp, reduced; a tenth under TSAN).
workloads::Sizes reduced() {
  workloads::Sizes s;
  s.pipe_rounds = sized(40'000);
  s.pgbench_clients = 8;
  s.pgbench_requests = sized(60'000);
  s.pgbench_work_ns = 0;
  s.hackbench_groups = 2;
  s.hackbench_loops = sized(100);  // 2 groups x 20 x 20 x 100 = 80,000 messages
  s.udp_pairs = 4;
  s.udp_transactions = sized(2'000);
  s.udp_sleep_ns = 5'000;
  return s;
}
const char* const all_workloads[] = {"pipe", "pgbench", "hackbench", "udp_rr"};
}  // namespace

TEMPLATE_LIST_TEST_CASE("no wake-up is lost in any workload", "[pool][wakeup]", pool_test::Policies) {
  UniformPool<TestType> pool{pool_test::two_cpus()};
  const auto s = reduced();
  std::uint64_t messages = 0;
  for (const char* w : all_workloads) {
    INFO("workload " << w);
    // run() throws when a run does not finish in time or miscounts.
    const workloads::Result r = workloads::pool::run(pool, w, s, "test", 60s);
    CHECK(r.ops == workloads::expected_ops(w, s));
    messages += r.ops;
  }
  pool.shutdown();
  CHECK(pool.shutdown().abandoned == 0);
  CHECK(messages == workloads::expected_ops("pipe", s) + workloads::expected_ops("pgbench", s) +
                        workloads::expected_ops("hackbench", s) + workloads::expected_ops("udp_rr", s));
}

TEST_CASE("no wake-up is lost with more workers than CPUs", "[pool][wakeup]") {
  UniformPool<taskplace::traits::Current> pool{pool_test::four_cpus()};
  auto s = reduced();
  s.pipe_rounds /= 4;
  s.pgbench_requests /= 4;
  s.hackbench_groups = 1;
  s.udp_transactions /= 4;
  for (const char* w : all_workloads) {
    INFO("workload " << w);
    CHECK(workloads::pool::run(pool, w, s, "test", 60s).ops == workloads::expected_ops(w, s));
  }
}

namespace {
taskplace_pool::task<void> one(std::atomic<std::uint64_t>& n) {
  n.fetch_add(1, std::memory_order_relaxed);
  co_return;
}
}  // namespace

TEST_CASE("a million short tasks each run exactly once", "[pool][wakeup]") {
  const std::uint64_t n = sized(1'000'000);
  std::atomic<std::uint64_t> ran{0};
  UniformPool<taskplace::traits::Current> pool{pool_test::two_cpus()};
  for (std::uint64_t i = 0; i < n; ++i) (void)pool.spawn(one(ran));
  const auto rep = pool.shutdown();
  CHECK(ran.load() == n);
  CHECK(rep.completed == n);
  CHECK(rep.abandoned == 0);
  CHECK(pool.stats().tasks_run == n);
}
