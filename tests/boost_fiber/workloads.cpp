// Boost.Fiber's bench workloads (bench/fiber/fiber_workloads.hpp) at small
// sizes on a 2-worker group: each delivers every message, under the
// runtime set and under AlwaysAffine, so that a recorded table never times
// a workload that lost or invented one. run() counts what arrived and
// throws when the count is not the workload's expected_ops.
#define BOOST_TEST_MODULE taskplace_fiber_workloads
#include <boost/fiber/all.hpp>
#include <boost/mpl/list.hpp>
#include <boost/test/unit_test.hpp>

#include <cstdint>
#include <stdexcept>
#include <string>

#include "fiber_workloads.hpp"
#include "taskplace_fiber/algorithm.hpp"
#include "taskplace_fiber/run.hpp"

namespace {

using RuntimeGroup = taskplace_fiber::Group<taskplace::traits::Runtime>;
using AffineGroup = taskplace_fiber::Group<taskplace::traits::AlwaysAffine>;
using Groups = boost::mpl::list<RuntimeGroup, AffineGroup>;

workloads::Sizes small() {
  workloads::Sizes s;
  s.pipe_rounds = 500;
  s.pgbench_requests = 400;
  s.pgbench_work_ns = 500;
  s.hackbench_fanout = 4;
  s.hackbench_loops = 20;
  s.udp_pairs = 2;
  s.udp_transactions = 50;
  s.udp_sleep_ns = 2'000;
  s.forkjoin_tasks = 3;
  s.forkjoin_rounds = 300;
  s.forkjoin_work_ns = 500;
  return s;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(boost_fiber_workloads)

BOOST_AUTO_TEST_CASE_TEMPLATE(every_workload_delivers_every_message, G, Groups) {
  const workloads::Sizes s = small();
  for (const char* w : {"pipe", "pgbench", "hackbench", "udp_rr", "forkjoin"}) {
    G group{2};
    workloads::LatencyLog log;
    std::uint64_t ops = 0;
    taskplace_fiber::run(group, [&] { ops = workloads::fiber::run(w, s, log); });
    BOOST_TEST_CONTEXT(w) {
      BOOST_TEST(ops == workloads::expected_ops(w, s));
      BOOST_TEST(ops > 0u);
    }
  }
}

BOOST_AUTO_TEST_CASE(a_fork_join_round_waits_for_every_task) {
  // forkjoin's ops are rounds, each logged once the master has every
  // answer: 300 rounds of 3 tasks at 500 ns each take at least 500 ns a
  // round even when all three run at once.
  workloads::Sizes s = small();
  RuntimeGroup group{2};
  workloads::LatencyLog log;
  std::uint64_t ops = 0;
  taskplace_fiber::run(group, [&] { ops = workloads::fiber::run("forkjoin", s, log); });
  BOOST_TEST(ops == std::uint64_t{s.forkjoin_rounds});
  BOOST_TEST(log.v.size() == std::size_t{s.forkjoin_rounds});
  for (const std::int64_t d : log.v) BOOST_TEST_REQUIRE(d >= std::int64_t{s.forkjoin_work_ns});
}

BOOST_AUTO_TEST_CASE(an_unknown_workload_is_refused) {
  workloads::LatencyLog log;
  BOOST_CHECK_THROW(workloads::fiber::run("fork-join", workloads::Sizes{}, log), std::invalid_argument);
}

BOOST_AUTO_TEST_SUITE_END()
