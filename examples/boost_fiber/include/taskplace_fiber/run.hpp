// taskplace_fiber/run.hpp: run() and run_threads(), the thread set-up of a
// Boost.Fiber pool: start one thread per worker, install the scheduling
// algorithm on each, run one body as the main fiber of worker 0 while the
// others serve fibers, and join every thread once the body has returned.
//
//   taskplace_fiber::Group<> group{4};
//   taskplace_fiber::run(group, [] { /* launch fibers, join them */ });
#pragma once

#include <atomic>
#include <cstdint>
#include <exception>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <utility>
#include <vector>

#include <boost/fiber/condition_variable.hpp>
#include <boost/fiber/mutex.hpp>
#include <boost/fiber/operations.hpp>

#include "taskplace_fiber/algorithm.hpp"

namespace taskplace_fiber {

// Effects: starts n threads. Thread w calls install(w), which installs its
//   Boost.Fiber scheduling algorithm (Boost's own, or Algorithm through
//   taskplace_fiber::install). Once every thread has, thread 0 runs body()
//   as its main fiber while threads 1..n-1 serve fibers; when body returns,
//   every thread leaves and is joined. The threads are fresh: the calling
//   thread installs nothing, so what install refers to (a Group) has to
//   outlive this call only.
// Precondition: body joins every fiber it launched (Boost.Fiber requires a
//   thread's fibers to have ended before its scheduler goes).
// Throws: std::invalid_argument when n is 0; else, after every thread it
//   started is joined, the first exception an install or the body threw
//   (body does not run when an install threw), or std::system_error when
//   a thread cannot start.
template <class Install, class Body>
void run_threads(std::uint32_t n, Install install, Body body) {
  if (n == 0) throw std::invalid_argument("taskplace_fiber::run_threads: no workers");
  boost::fibers::mutex m;
  boost::fibers::condition_variable cv;
  bool done = false;
  std::atomic<std::uint32_t> settled{0};  // threads 1..n-1 that installed, or failed to
  std::mutex error_m;
  std::exception_ptr error;
  auto fail = [&](std::exception_ptr e) {
    std::lock_guard lk(error_m);
    if (!error) error = std::move(e);
  };
  auto failed = [&] {
    std::lock_guard lk(error_m);
    return error != nullptr;
  };
  auto release = [&] {
    {
      std::unique_lock lk(m);
      done = true;
    }
    cv.notify_all();
  };
  auto serve = [&](std::uint32_t w) {
    try {
      install(w);
    } catch (...) {
      fail(std::current_exception());
      settled.fetch_add(1);
      return;
    }
    settled.fetch_add(1);
    std::unique_lock lk(m);
    cv.wait(lk, [&] { return done; });  // serving fibers meanwhile
  };
  auto lead = [&] {
    try {
      install(0);
      while (settled.load() != n - 1) boost::this_fiber::yield();
      if (!failed()) body();
    } catch (...) {
      fail(std::current_exception());
    }
    release();
  };
  std::vector<std::thread> threads;
  try {
    threads.reserve(n);
    for (std::uint32_t w = 1; w < n; ++w) threads.emplace_back(serve, w);
    threads.emplace_back(lead);
  } catch (...) {
    release();
    for (auto& t : threads) t.join();
    throw;
  }
  for (auto& t : threads) t.join();
  if (error) std::rethrow_exception(error);
}

// Effects: run_threads over the group's workers, thread w installing
//   Algorithm<G> as worker w (taskplace_fiber::install).
// Throws: as run_threads; std::invalid_argument when a worker is taken.
template <class G, class Body>
void run(G& group, Body body) {
  run_threads(
      group.worker_count(), [&group](std::uint32_t w) { install(group, CpuId{w}); },
      std::move(body));
}

}  // namespace taskplace_fiber
