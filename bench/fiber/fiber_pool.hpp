// bench/fiber/fiber_pool.hpp: a pool of Boost.Fiber worker threads that
// runs one body as the main fiber of worker 0, shared by the Boost.Fiber
// benchmark (bench/fiber/main.cpp) and the pool benchmark's Boost.Fiber
// peer (bench/pool/pool_bench.cpp).
//
//   workloads::fiber::run_pool(n, [&](std::uint32_t w) { use_scheduling_algorithm<...>(...); },
//                              [&] { workloads::fiber::run("pipe", sizes, log); });
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

#include <boost/fiber/all.hpp>

namespace workloads::fiber {

// Effects: runs `body` as the main fiber of worker 0, with workers 1..n-1
// serving fibers until it returns; `install(w)` installs the algorithm on
// worker w's thread. Boost's work_stealing keeps its workers in
// process-wide statics: one such pool per process.
template <class Install, class Body>
void run_pool(std::uint32_t n, Install install, Body body) {
  boost::fibers::mutex m;
  boost::fibers::condition_variable cv;
  bool done = false;
  std::atomic<std::uint32_t> ready{0};
  std::vector<std::thread> threads;
  for (std::uint32_t w = 1; w < n; ++w)
    threads.emplace_back([&, w] {
      install(w);
      ready.fetch_add(1);
      std::unique_lock lk(m);
      cv.wait(lk, [&] { return done; });
    });
  std::thread lead([&] {
    install(0);
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

}  // namespace workloads::fiber
