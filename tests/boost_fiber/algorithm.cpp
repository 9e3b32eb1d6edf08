// The Boost.Fiber algorithm: every fiber runs, channels deliver every
// message, threads shut down cleanly, and the placer's decisions show up in
// its counters. Each pool runs on fresh threads (worker 0 included), so the
// test runner's own thread never installs an algorithm.
#define BOOST_TEST_MODULE taskplace_fiber
#include <boost/fiber/all.hpp>
#include <boost/mpl/list.hpp>
#include <boost/test/unit_test.hpp>

#include <atomic>
#include <cstdint>
#include <functional>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

#include "taskplace_fiber/algorithm.hpp"

namespace {

using CurrentGroup = taskplace_fiber::Group<taskplace::traits::Current>;
using AffineGroup = taskplace_fiber::Group<taskplace::traits::AlwaysAffine>;
using Groups = boost::mpl::list<CurrentGroup, AffineGroup>;

// Effects: runs `body` as the main fiber of worker 0; workers 1..n-1 are
// threads that only serve fibers until body returned. Joins every thread.
template <class G>
void run_pool(G& group, const std::function<void()>& body) {
  using Algo = taskplace_fiber::Algorithm<G>;
  const std::uint32_t n = group.worker_count();
  boost::fibers::mutex m;
  boost::fibers::condition_variable cv;
  bool done = false;
  std::atomic<std::uint32_t> ready{0};
  std::vector<std::thread> threads;
  for (std::uint32_t w = 1; w < n; ++w) {
    threads.emplace_back([&, w] {
      boost::fibers::use_scheduling_algorithm<Algo>(group, taskplace::CpuId{w});
      ready.fetch_add(1);
      std::unique_lock lk(m);
      cv.wait(lk, [&] { return done; });
    });
  }
  std::thread lead([&] {
    boost::fibers::use_scheduling_algorithm<Algo>(group, taskplace::CpuId{0});
    while (ready.load() != n - 1) boost::this_fiber::yield();
    body();
    {
      std::unique_lock lk(m);
      done = true;
    }
    cv.notify_all();
  });
  lead.join();
  for (auto& t : threads) t.join();
}

void spin_us(int us) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds{us};
  while (std::chrono::steady_clock::now() < until) {
  }
}

}  // namespace

BOOST_AUTO_TEST_SUITE(boost_fiber_algorithm)

BOOST_AUTO_TEST_CASE_TEMPLATE(every_fiber_runs_to_completion, G, Groups) {
  G group{4};
  constexpr int fibers = 400, yields = 5;
  std::atomic<int> finished{0}, steps{0};
  run_pool(group, [&] {
    std::vector<boost::fibers::fiber> fs;
    for (int i = 0; i < fibers; ++i)
      fs.emplace_back([&] {
        for (int k = 0; k < yields; ++k) {
          steps.fetch_add(1);
          boost::this_fiber::yield();
        }
        finished.fetch_add(1);
      });
    for (auto& f : fs) f.join();
  });
  // Every fiber ran each of its steps exactly once.
  BOOST_TEST(finished.load() == fibers);
  BOOST_TEST(steps.load() == fibers * yields);
  BOOST_TEST(group.registered() == 0u);
}

BOOST_AUTO_TEST_CASE_TEMPLATE(a_buffered_channel_delivers_every_message, G, Groups) {
  G group{3};
  constexpr std::uint64_t producers = 4, consumers = 3, per_producer = 2000;
  std::atomic<std::uint64_t> sum{0}, count{0};
  run_pool(group, [&] {
    boost::fibers::buffered_channel<std::uint64_t> ch{16};
    std::vector<boost::fibers::fiber> ps, cs;
    for (std::uint64_t c = 0; c < consumers; ++c)
      cs.emplace_back([&] {
        std::uint64_t v = 0;
        while (ch.pop(v) == boost::fibers::channel_op_status::success) {
          sum.fetch_add(v);
          count.fetch_add(1);
        }
      });
    for (std::uint64_t p = 0; p < producers; ++p)
      ps.emplace_back([&, p] {
        for (std::uint64_t i = 1; i <= per_producer; ++i)
          if (ch.push(p * per_producer + i) != boost::fibers::channel_op_status::success)
            throw std::runtime_error("push failed");
      });
    for (auto& f : ps) f.join();
    ch.close();
    for (auto& f : cs) f.join();
  });
  // Messages 1..P*N each once: the sum of 1..P*N, P*N(P*N+1)/2.
  const std::uint64_t total = producers * per_producer;
  BOOST_TEST(count.load() == total);
  BOOST_TEST(sum.load() == total * (total + 1) / 2);
}

BOOST_AUTO_TEST_CASE_TEMPLATE(a_ping_pong_over_unbuffered_channels_completes, G, Groups) {
  G group{2};
  constexpr int rounds = 3000;
  int got = 0;
  run_pool(group, [&] {
    boost::fibers::unbuffered_channel<int> ab, ba;
    boost::fibers::fiber echo([&] {
      int v = 0;
      while (ab.pop(v) == boost::fibers::channel_op_status::success) ba.push(v + 1);
      ba.close();
    });
    for (int i = 0; i < rounds; ++i) {
      ab.push(i);
      int r = -1;
      if (ba.pop(r) == boost::fibers::channel_op_status::success && r == i + 1) ++got;
    }
    ab.close();
    echo.join();
  });
  BOOST_TEST(got == rounds);
}

BOOST_AUTO_TEST_CASE_TEMPLATE(shutdown_releases_every_worker_and_the_group_is_reusable, G, Groups) {
  G group{3};
  for (int run = 0; run < 3; ++run) {
    std::atomic<int> n{0};
    run_pool(group, [&] {
      boost::fibers::fiber f([&] { n.fetch_add(1); });
      f.join();
    });
    BOOST_TEST(n.load() == 1);
    // Every thread's algorithm was destroyed at its exit and gave its slot back.
    BOOST_TEST(group.registered() == 0u);
  }
}

BOOST_AUTO_TEST_CASE_TEMPLATE(main_contexts_stay_on_their_thread, G, Groups) {
  G group{2};
  bool same = true;
  run_pool(group, [&] {
    const auto me = std::this_thread::get_id();
    std::vector<boost::fibers::fiber> fs;
    for (int i = 0; i < 50; ++i) fs.emplace_back([] { spin_us(20); boost::this_fiber::yield(); });
    for (int i = 0; i < 50; ++i) {
      boost::this_fiber::yield();
      same = same && std::this_thread::get_id() == me;
    }
    for (auto& f : fs) f.join();
    same = same && std::this_thread::get_id() == me;
  });
  BOOST_TEST(same);
}

BOOST_AUTO_TEST_CASE(current_places_wakeups_on_idle_workers) {
  CurrentGroup group{4};
  std::mutex m;
  std::set<std::thread::id> seen;
  constexpr int fibers = 64;
  run_pool(group, [&] {
    group.reset_stats();
    std::vector<boost::fibers::fiber> fs;
    for (int i = 0; i < fibers; ++i)
      fs.emplace_back([&] {
        spin_us(200);
        std::lock_guard lk(m);
        seen.insert(std::this_thread::get_id());
      });
    for (auto& f : fs) f.join();
  });
  const auto& st = group.placer().stats();
  using taskplace::WakeCounter;
  // Each new fiber is awakened at least once, each through place().
  BOOST_TEST(st.get(WakeCounter::wakeups) >= std::uint64_t{fibers});
  // The idle search found other workers idle while worker 0 spawned: some
  // fibers were queued elsewhere, and ran on more than one thread.
  BOOST_TEST(st.get(WakeCounter::idle_scan) + st.get(WakeCounter::idle_core) > 0u);
  BOOST_TEST(group.stats().placed_remote > 0u);
  BOOST_TEST(seen.size() > 1u);
}

BOOST_AUTO_TEST_CASE(always_affine_keeps_every_wakeup_on_the_waking_worker) {
  AffineGroup group{4};
  constexpr int fibers = 64;
  std::atomic<int> ran{0};
  run_pool(group, [&] {
    group.reset_stats();
    std::vector<boost::fibers::fiber> fs;
    for (int i = 0; i < fibers; ++i) fs.emplace_back([&] { spin_us(100); ran.fetch_add(1); });
    for (auto& f : fs) f.join();
  });
  const auto& st = group.placer().stats();
  using taskplace::WakeCounter;
  BOOST_TEST(ran.load() == fibers);
  BOOST_TEST(st.get(WakeCounter::wakeups) >= std::uint64_t{fibers});
  // NoSearch and waking == prev or a pull: nothing is placed elsewhere; the
  // other workers get work only by stealing it.
  BOOST_TEST(st.get(WakeCounter::idle_scan) == 0u);
  BOOST_TEST(group.stats().placed_remote == 0u);
  // A fiber migrates only when stolen after it ran somewhere.
  BOOST_TEST(group.stats().migrations <= group.stats().steals);
}

BOOST_AUTO_TEST_CASE(idle_workers_run_the_balancer) {
  AffineGroup group{3};
  run_pool(group, [&] {
    group.reset_stats();
    std::vector<boost::fibers::fiber> fs;
    for (int i = 0; i < 30; ++i) fs.emplace_back([] { spin_us(300); });
    for (auto& f : fs) f.join();
  });
  // Workers 1 and 2 had nothing of their own: every pull they made went
  // through IdleBalancer::balance.
  BOOST_TEST(group.balancer().stats().get(taskplace::BalanceCounter::runs) > 0u);
}

BOOST_AUTO_TEST_CASE(bad_registrations_are_refused) {
  BOOST_CHECK_THROW(CurrentGroup{0u}, taskplace::TopologyError);
  CurrentGroup group{2};
  std::string e1, e2, e3;
  std::thread t([&] {
    using Algo = taskplace_fiber::Algorithm<CurrentGroup>;
    try { Algo a(group, taskplace::CpuId{2}); } catch (const std::invalid_argument& e) { e1 = e.what(); }
    Algo a0(group, taskplace::CpuId{0});
    try { Algo b(group, taskplace::CpuId{0}); } catch (const std::invalid_argument& e) { e2 = e.what(); }
    Algo a1(group);
    try { Algo c(group); } catch (const std::invalid_argument& e) { e3 = e.what(); }
    BOOST_TEST(a1.worker() == 1u);
  });
  t.join();
  BOOST_TEST(e1.find("out of range") != std::string::npos);
  BOOST_TEST(e2.find("already registered") != std::string::npos);
  BOOST_TEST(e3.find("all 2 workers") != std::string::npos);
  BOOST_TEST(group.registered() == 0u);
}

BOOST_AUTO_TEST_SUITE_END()
