// taskplace/kit/calibration.hpp: what moving work between workers costs on
// the running machine, measured at start-up in well under a second.
//
// Three figures, each the median of several short runs:
//   line_round_trip  a cache line's round trip between two CPUs: two
//                    threads pinned to the first two CPUs this process may
//                    use pass a counter back and forth through two lines,
//                    spinning; a run's figure is its fastest batch of 256
//                    round trips (a preempted batch measures the OS). A runtime whose pair of tasks sits on two
//                    workers pays at least this per message round trip,
//                    and a spinning idle worker sees new work about half
//                    of it after it was queued.
//   unpark           the unpark-to-running latency of a parked worker:
//                    from the waker's futex wake-up (std::atomic::notify_one
//                    off Linux) to the moment the woken thread runs, the
//                    thread having slept in the OS.
//   resume           the resume cost of a task: a coroutine resumed and
//                    suspended again, on one thread.
// kit::costs_of() turns them into the WakeCosts of kit::Machine.
//
// Kernel analogue: none at run time; the kernel's equivalents are tunables
// (sysctl_sched_migration_cost) and cpuidle's per-state exit latency.
//
//   const auto cal = taskplace::kit::calibrate();
//   std::printf("%s\n", cal.describe().c_str());
//   taskplace::kit::Machine m{workers, taskplace::kit::costs_of(cal)};
#pragma once

#include "taskplace/detail/config.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <coroutine>
#include <cstdint>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#if defined(__linux__)
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

#include "taskplace/kit/machine.hpp"
#include "taskplace/types.hpp"

namespace taskplace::kit {

// How long each measurement runs (the defaults take about 60 ms in all on
// a machine whose line round trip is 200 ns).
struct CalibrationOptions {
  std::uint32_t runs = 5;                  // medians of this many runs, >= 1
  std::uint32_t round_trips = 20'000;      // per run of line_round_trip
  std::uint32_t unparks = 40;              // per run of unpark
  std::uint32_t resumes = 100'000;         // per run of resume
  // A run of line_round_trip or unpark stops early after this long (a preempted
  // spinner, a shared host), and measures the round trips it made.
  Nanoseconds max_run{std::chrono::milliseconds{15}};
};

// The figures, in ns; a figure not measured is 0 and `error` says why
// (fewer than two CPUs, a thread that could not be pinned).
struct Calibration {
  double line_round_trip_ns = 0;
  double unpark_ns = 0;
  double resume_ns = 0;
  // The spread of each figure's runs: (max - min) / median.
  double line_round_trip_spread = 0, unpark_spread = 0, resume_spread = 0;
  int cpus[2] = {-1, -1};  // the OS CPUs the two threads were pinned to
  std::string error;       // empty when every figure was measured

  bool ok() const noexcept { return error.empty(); }
  // Returns: one line, "line round trip 180 ns (cpus 0-1), unpark 42000 ns, resume 3 ns".
  std::string describe() const {
    char b[256];
    std::snprintf(b, sizeof b, "line round trip %.0f ns (cpus %d-%d), unpark %.0f ns, resume %.1f ns%s%s",
                  line_round_trip_ns, cpus[0], cpus[1], unpark_ns, resume_ns, ok() ? "" : "; ",
                  error.c_str());
    return b;
  }
};

// Returns: the wake-up costs of kit::Machine: a spinning worker sees new
//   work after half a line round trip (the line comes over once), a
//   parked one runs it after the unpark latency, and a move crosses at
//   least one line's round trip.
inline WakeCosts costs_of(const Calibration& c) noexcept {
  return WakeCosts{.spinning = Nanoseconds{static_cast<std::int64_t>(c.line_round_trip_ns / 2)},
                   .parked = Nanoseconds{static_cast<std::int64_t>(c.unpark_ns)},
                   .crossing = Nanoseconds{static_cast<std::int64_t>(c.line_round_trip_ns)}};
}

namespace detail {
inline std::int64_t mono_ns() noexcept {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}
// Returns: the median of `v` (not empty), and its spread.
inline double median_of(std::vector<double> v, double* spread) {
  std::sort(v.begin(), v.end());
  const double m = v[v.size() / 2];
  *spread = m > 0 ? (v.back() - v.front()) / m : 0;
  return m;
}
// Returns: whether the calling thread now runs on OS CPU `c` only; true
//   off Linux (nothing to pin, nothing refused).
inline bool pin_to(int c) noexcept {
#if defined(__linux__)
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(c, &one);
  return ::pthread_setaffinity_np(::pthread_self(), sizeof one, &one) == 0;
#else
  (void)c;
  return true;
#endif
}
// How a spin_for() ended.
enum class Spun { arrived, cancelled, stalled };
// Effects: spins until `v` reads `want` (arrived), `go` reads false
//   (cancelled) or the monotonic clock passes `stop_ns` (stalled). The
//   clock is read every 4096 spins only: a peer that lost its CPU, or a
//   host that runs one thread at a time (valgrind), would otherwise hold
//   a run past CalibrationOptions::max_run for as long as it stalls.
inline Spun spin_for(const std::atomic<std::uint32_t>& v, std::uint32_t want, const std::atomic<bool>& go,
                     std::int64_t stop_ns) noexcept {
  for (std::uint32_t spins = 1;; ++spins) {
    if (v.load(std::memory_order_acquire) == want) return Spun::arrived;
    if (!go.load(std::memory_order_relaxed)) return Spun::cancelled;
    if ((spins & 4095) == 0 && mono_ns() > stop_ns) return Spun::stalled;
  }
}
inline void park_on(std::atomic<std::uint32_t>& w, std::uint32_t v) noexcept {
#if defined(__linux__)
  ::syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&w), FUTEX_WAIT_PRIVATE, v, nullptr, nullptr, 0);
#else
  w.wait(v, std::memory_order_acquire);
#endif
}
inline void unpark(std::atomic<std::uint32_t>& w) noexcept {
#if defined(__linux__)
  ::syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&w), FUTEX_WAKE_PRIVATE, 1, nullptr, nullptr, 0);
#else
  w.notify_one();
#endif
}

// A coroutine that suspends at every resume, forever: the resume cost.
struct Bouncer {
  struct promise_type {
    Bouncer get_return_object() { return {std::coroutine_handle<promise_type>::from_promise(*this)}; }
    std::suspend_always initial_suspend() noexcept { return {}; }
    std::suspend_always final_suspend() noexcept { return {}; }
    void return_void() noexcept {}
    void unhandled_exception() noexcept {}
  };
  std::coroutine_handle<promise_type> h;
};
inline Bouncer bounce(std::uint64_t* n) {
  for (;;) {
    ++*n;
    co_await std::suspend_always{};
  }
}

struct alignas(64) Line {
  std::atomic<std::uint32_t> v{0};
};
}  // namespace detail

// Effects: measures the three figures (see the file's comment), pinning two
//   helper threads to the first two CPUs this process may use.
// Returns: the figures; those that could not be measured are 0, with the
//   reason in `error`. Never throws but std::bad_alloc and std::system_error
//   (a thread that cannot start).
// Complexity: about runs * (round_trips * line + unparks * 60 us + resumes
//   * resume): some 50-150 ms with the defaults.
inline Calibration calibrate(const CalibrationOptions& o = {}) {
  Calibration out;
  const std::uint32_t runs = std::max<std::uint32_t>(o.runs, 1);
#if defined(__linux__)
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  int found = 0;
  if (::sched_getaffinity(0, sizeof allowed, &allowed) == 0)
    for (int c = 0; c < CPU_SETSIZE && found < 2; ++c)
      if (CPU_ISSET(c, &allowed)) out.cpus[found++] = c;
#else
  const int found = std::thread::hardware_concurrency() >= 2 ? 2 : 1;
  out.cpus[0] = 0, out.cpus[1] = found > 1 ? 1 : -1;
#endif

  // Resume: one thread, no second CPU needed.
  {
    std::uint64_t n = 0;
    detail::Bouncer b = detail::bounce(&n);
    std::vector<double> v;
    for (std::uint32_t r = 0; r < runs; ++r) {
      const std::int64_t t0 = detail::mono_ns();
      for (std::uint32_t i = 0; i < o.resumes; ++i) b.h.resume();
      v.push_back(static_cast<double>(detail::mono_ns() - t0) / std::max<std::uint32_t>(o.resumes, 1));
    }
    b.h.destroy();
    out.resume_ns = o.resumes > 0 && n == std::uint64_t{runs} * o.resumes ? detail::median_of(v, &out.resume_spread) : 0;
  }

  if (found < 2) {
    out.error = "line round trip and unpark not measured: this process may use fewer than two CPUs";
    return out;
  }

  // Line round trip.
  {
    std::vector<double> v;
    for (std::uint32_t r = 0; r < runs; ++r) {
      detail::Line ping, pong;
      std::atomic<bool> ok{true};
      std::atomic<bool> unpinned{false};  // a thread could not be pinned
      double ns = 0;
      const std::uint32_t n = std::max<std::uint32_t>(o.round_trips, 1);
      std::thread echo([&] {
        if (!detail::pin_to(out.cpus[1])) {
          unpinned = true;
          ok = false;
          return;
        }
        for (std::uint32_t i = 1; i <= n; ++i) {
          while (ping.v.load(std::memory_order_acquire) != i)
            if (!ok.load(std::memory_order_relaxed)) return;
          pong.v.store(i, std::memory_order_release);
        }
      });
      std::thread lead([&] {
        if (!detail::pin_to(out.cpus[0])) {
          unpinned = true;
          ok = false;
          return;
        }
        const std::int64_t t0 = detail::mono_ns();
        const std::int64_t stop = t0 + o.max_run.count();
        // The run's figure is its fastest batch of 256 round trips: a
        // batch in which either thread lost its CPU (a loaded or shared
        // host) measures the OS, not the line.
        std::int64_t batch_start = t0;
        double best = 0;
        std::uint32_t i = 1;
        for (; i <= n && ok.load(std::memory_order_relaxed); ++i) {
          ping.v.store(i, std::memory_order_release);
          const detail::Spun spun = detail::spin_for(pong.v, i, ok, stop);
          if (spun == detail::Spun::cancelled) return;
          if (spun == detail::Spun::stalled) {
            --i;  // the round trip in flight is not counted
            break;
          }
          if ((i & 255) == 0) {
            const std::int64_t now = detail::mono_ns();
            const double batch = static_cast<double>(now - batch_start) / 256;
            if (best == 0 || batch < best) best = batch;
            batch_start = now;
            if (now > stop) break;
          }
        }
        const std::uint32_t made = std::max<std::uint32_t>(std::min(i, n), 1);
        ns = best > 0 ? best : static_cast<double>(detail::mono_ns() - t0) / made;
        ok.store(false);  // the echo stops waiting (the run is over)
      });
      lead.join();
      echo.join();
      if (unpinned.load() || ns <= 0) {
        out.error = "line round trip and unpark not measured: a thread could not be pinned to CPU " +
                    std::to_string(out.cpus[0]) + " or " + std::to_string(out.cpus[1]);
        return out;
      }
      v.push_back(ns);
    }
    out.line_round_trip_ns = detail::median_of(v, &out.line_round_trip_spread);
  }

  // Unpark to running: the sleeper announces it parks (1), parks; the
  // waker waits for the announcement, lets 50 us pass so that the sleeper
  // is inside the OS, stamps, sets 0 and wakes it; the sleeper stamps as
  // it runs again.
  {
    std::vector<double> v;
    const std::uint32_t n = std::max<std::uint32_t>(o.unparks, 1);
    for (std::uint32_t r = 0; r < runs; ++r) {
      std::atomic<std::uint32_t> word{0};
      std::atomic<std::int64_t> sent{0};
      std::vector<std::int64_t> lat;
      lat.reserve(n);
      std::atomic<bool> done{false};  // the waker's last wake-up ends the run
      std::thread sleeper([&] {
        detail::pin_to(out.cpus[1]);
        for (;;) {
          word.store(1, std::memory_order_seq_cst);
          while (word.load(std::memory_order_acquire) == 1) detail::park_on(word, 1);
          if (done.load(std::memory_order_acquire)) return;
          lat.push_back(detail::mono_ns() - sent.load(std::memory_order_relaxed));
        }
      });
      detail::pin_to(out.cpus[0]);
      // Like a line round trip run, an unpark run stops after max_run (at
      // least one wake-up is measured): a loaded host cannot stretch it.
      const std::int64_t stop = detail::mono_ns() + o.max_run.count();
      for (std::uint32_t i = 0; i < n; ++i) {
        while (word.load(std::memory_order_acquire) != 1) std::this_thread::yield();
        if (i > 0 && detail::mono_ns() > stop) break;
        const std::int64_t until = detail::mono_ns() + 50'000;
        while (detail::mono_ns() < until) {
        }
        sent.store(detail::mono_ns(), std::memory_order_relaxed);
        word.store(0, std::memory_order_release);
        detail::unpark(word);
      }
      while (word.load(std::memory_order_acquire) != 1) std::this_thread::yield();
      done.store(true, std::memory_order_release);
      word.store(0, std::memory_order_release);
      detail::unpark(word);
      sleeper.join();
      std::sort(lat.begin(), lat.end());
      v.push_back(static_cast<double>(lat[lat.size() / 2]));
    }
#if defined(__linux__)
    // The calling thread's affinity, as it was.
    ::pthread_setaffinity_np(::pthread_self(), sizeof allowed, &allowed);
#endif
    out.unpark_ns = detail::median_of(v, &out.unpark_spread);
  }
  return out;
}

// Returns: this machine's costs, measured by calibrate() at the first
//   call in the process (about 60 ms) and kept: what the embeddings use
//   when their options give none. A figure that could not be measured is
//   0 (the placer's defaults then apply). Thread-safe (a function-local
//   static).
inline const WakeCosts& measured_costs() {
  static const WakeCosts costs = costs_of(calibrate());
  return costs;
}

// Returns: o, its costs measured (measured_costs()) when Placer's rules
//   read costs (reads_costs) and o.costs gives none; an embedding's
//   options pass through this at construction.
template <class Placer, class Options>
Options with_measured_costs(Options o) {
  if constexpr (reads_costs<Placer>)
    if (o.costs == WakeCosts{}) o.costs = measured_costs();
  return o;
}

}  // namespace taskplace::kit
