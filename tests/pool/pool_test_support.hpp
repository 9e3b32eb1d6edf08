// tests/pool/pool_test_support.hpp: policy lists and sizes shared by the
// pool's tests. Sizes shrink under ThreadSanitizer, which runs every
// memory access through its shadow state (5-15x slower).
#pragma once

#include <chrono>
#include <cstdint>
#include <thread>
#include <tuple>

#include "taskplace/topology/uniform.hpp"
#include "taskplace/wake_placer.hpp"
#include "taskplace_pool/pool.hpp"

#if defined(__SANITIZE_THREAD__)
#define TASKPLACE_POOL_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define TASKPLACE_POOL_TSAN 1
#endif
#endif
#ifndef TASKPLACE_POOL_TSAN
#define TASKPLACE_POOL_TSAN 0
#endif

namespace pool_test {

// Divides every size under ThreadSanitizer.
inline constexpr std::uint32_t scale = TASKPLACE_POOL_TSAN ? 10 : 1;
constexpr std::uint32_t sized(std::uint32_t n) { return n / scale > 0 ? n / scale : 1; }

// One worker: tasks run one at a time, in the order queued, so a task
// that blocks in its first run is queued as a waiter before the next
// task starts.
inline taskplace::UniformTopology one_cpu() { return taskplace::UniformTopology{1, 1, 1, 1}; }
// Two workers sharing one LLC: the machine these tests run on, at least.
inline taskplace::UniformTopology two_cpus() { return taskplace::UniformTopology{1, 1, 2, 1}; }
// Four workers: oversubscribed on a two-CPU machine.
inline taskplace::UniformTopology four_cpus() { return taskplace::UniformTopology{1, 1, 4, 1}; }

// Options under which Current spreads a ping-pong pair over two idle
// workers, as the kernel's search does on an idle machine: a worker whose
// thread lost its CPU lately stays idle to the placer (preempted_for = 0),
// and the LLC's busy share (SIS_UTIL's input, sampled once a tick) is at
// most 100 us old. With the default 4 ms tick a sample taken while both
// workers ran (100% busy: a scan budget of 0, so every wake-up stays on
// its target) can stand for a whole short run and keep the pair on one
// worker: under ThreadSanitizer 500 round trips fit in one tick.
inline taskplace_pool::PoolOptions spreading() {
  taskplace_pool::PoolOptions o;
  o.preempted_for = std::chrono::nanoseconds{0};
  o.tick = std::chrono::microseconds{100};
  return o;
}

template <class Traits>
using UniformPool = taskplace_pool::Pool<taskplace::UniformTopology, Traits>;
using CurrentPool = UniformPool<taskplace::traits::Current>;

// Every wake policy set the pool is built with.
using Policies = std::tuple<taskplace::traits::Current, taskplace::traits::AlwaysAffine,
                            taskplace::traits::PrevCpu, taskplace::traits::Linux2013,
                            taskplace::traits::CacheHot<>,
                            taskplace::traits::Linux2008<taskplace::sync_affine::Unchecked2008>,
                            taskplace::traits::SisCurrent<>>;

// Waits (yielding, on this thread) until `f` holds, for at most `limit`.
// Returns: whether it held.
template <class F>
bool eventually(F&& f, std::chrono::nanoseconds limit = std::chrono::seconds{10}) {
  const auto until = std::chrono::steady_clock::now() + limit;
  while (!f()) {
    if (std::chrono::steady_clock::now() > until) return false;
    std::this_thread::yield();
  }
  return true;
}

}  // namespace pool_test
