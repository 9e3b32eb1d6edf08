// bench/fiber/main.cpp: one workload on one Boost.Fiber scheduling
// algorithm, one line of results. Boost's work_stealing keeps its workers in
// process-wide statics (one pool per process), so scripts/bench runs every
// (runtime, workload, repetition) as its own process, interleaved.
//
//   taskplace_bench_fiber <work_stealing|shared_work|Current|AlwaysAffine|"Current hot"|"AlwaysAffine hot"|
//                          "Current spin"|"AlwaysAffine spin">
//                         <pipe|pgbench|hackbench|udp_rr|forkjoin> [workers] [pgbench clients]
// "... hot" / "... cold": the taskplace algorithm with Group::cache_hot_steals
// on / off (unsuffixed: the policy set's default, on for Runtime).
// "... spin": with Group::idle_spin = 20 us, the pool's
// spin_before_park (an idle worker polls before it blocks on its futex).
// Prints one line of named fields (bench/results.hpp), e.g.
//   RESULT workload=pipe runtime="Current hot" workers=2 clients=8 seconds=0.0312
//          ops_per_s=1602564.1 p50_us=0.41 p99_us=0.93 migrations=3 steals=2 placed_remote=0
// (migrations, steals, placed_remote empty: the runtime does not say).
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <boost/fiber/all.hpp>

#include "fiber_workloads.hpp"
#include "results.hpp"
#include "taskplace_fiber/algorithm.hpp"
#include "taskplace_fiber/run.hpp"

namespace {

struct Counters {
  std::int64_t migrations = -1, steals = -1, placed_remote = -1;
};

// The taskplace algorithm's settings a runtime name's suffix turns on.
struct Variant {
  std::optional<bool> cache_hot_steals;  // unset: the policy set's default
  taskplace::Nanoseconds idle_spin{0};
};
Variant variant(const std::string& runtime, const std::string& base) {
  Variant v;
  if (runtime == base + " hot") v.cache_hot_steals = true;
  if (runtime == base + " cold") v.cache_hot_steals = false;
  if (runtime == base + " spin") v.idle_spin = std::chrono::microseconds{20};
  return v;
}
bool names(const std::string& runtime, const std::string& base) {
  return runtime == base || runtime == base + " hot" || runtime == base + " cold" || runtime == base + " spin";
}

template <class WakeTraits>
Counters run_taskplace(std::uint32_t n, const std::function<void()>& body, Variant v) {
  using G = taskplace_fiber::Group<WakeTraits>;
  G group{n};
  if (v.cache_hot_steals) group.cache_hot_steals = *v.cache_hot_steals;
  group.idle_spin = v.idle_spin;
  taskplace_fiber::run(group, [&] {
    group.reset_stats();
    body();
  });
  const auto st = group.stats();
  return {static_cast<std::int64_t>(st.migrations), static_cast<std::int64_t>(st.steals),
          static_cast<std::int64_t>(st.placed_remote)};
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s runtime workload [workers] [pgbench clients]\n", argv[0]);
    return 2;
  }
  const std::string runtime = argv[1], workload = argv[2];
  const auto workers = static_cast<std::uint32_t>(
      argc > 3 ? std::strtoul(argv[3], nullptr, 10) : std::max(2u, std::thread::hardware_concurrency()));
  workloads::Sizes sizes;
  // Boost.Fiber switches in about 100 ns: at the shared sizes its pipe ran
  // some 12 ms and its hackbench some 7 ms, short enough that a run's
  // start (threads parking, the first steals) moved Runtime's ratio to
  // the best set by 0.6-0.8 (pipe) and 0.78-0.92 (hackbench) between
  // recorded runs. Five times as many: runs of 40-100 ms.
  sizes.pipe_rounds *= 5;
  sizes.hackbench_loops *= 5;
  if (argc > 4) sizes.pgbench_clients = static_cast<std::uint32_t>(std::strtoul(argv[4], nullptr, 10));
  if (workers == 0 || sizes.pgbench_clients == 0) {
    std::fprintf(stderr, "workers and clients must be >= 1\n");
    return 2;
  }

  // A lost wake-up hangs a run: give up after a minute.
  std::thread([] {
    std::this_thread::sleep_for(std::chrono::seconds{60});
    std::fprintf(stderr, "timeout: the run did not finish within 60 s (lost wake-up?)\n");
    std::_Exit(3);
  }).detach();

  workloads::LatencyLog log;
  workloads::fiber::TimedRun result;
  auto body = [&] { result = workloads::fiber::timed_run(workload, sizes, log); };
  Counters c;
  if (runtime == "work_stealing") {
    taskplace_fiber::run_threads(workers, [&](std::uint32_t) {
      boost::fibers::use_scheduling_algorithm<boost::fibers::algo::work_stealing>(workers, true);
    }, body);
  } else if (runtime == "shared_work") {
    taskplace_fiber::run_threads(workers, [&](std::uint32_t) {
      boost::fibers::use_scheduling_algorithm<boost::fibers::algo::shared_work>(true);
    }, body);
  } else if (names(runtime, "Current")) {
    c = run_taskplace<taskplace::traits::Current>(workers, body, variant(runtime, "Current"));
  } else if (names(runtime, "Runtime")) {
    c = run_taskplace<taskplace::traits::Runtime>(workers, body, variant(runtime, "Runtime"));
  } else if (names(runtime, "Linux2008")) {
    c = run_taskplace<taskplace::traits::Linux2008<>>(workers, body, variant(runtime, "Linux2008"));
  } else if (names(runtime, "AlwaysAffine")) {
    c = run_taskplace<taskplace::traits::AlwaysAffine>(workers, body, variant(runtime, "AlwaysAffine"));
  } else {
    std::fprintf(stderr, "unknown runtime: %s\n", runtime.c_str());
    return 2;
  }
  if (!result.error.empty()) {
    std::fprintf(stderr, "%s on %s: %s\n", workload.c_str(), runtime.c_str(), result.error.c_str());
    return 1;
  }
  auto r = workloads::finish(workload, runtime, result.elapsed_ns, result.ops, log);
  bench_results::Record out;
  out.set("workload", workload).set("runtime", runtime).set("workers", workers);
  out.set("clients", sizes.pgbench_clients).set("seconds", r.seconds, 4).set("ops_per_s", r.throughput, 1);
  out.set("p50_us", r.p50_us, 2).set("p99_us", r.p99_us, 2);
  auto count = [&](const char* key, std::int64_t v) { v >= 0 ? out.set(key, v) : out.set_missing(key); };
  count("migrations", c.migrations);
  count("steals", c.steals);
  count("placed_remote", c.placed_remote);
  std::printf("%s\n", out.line("RESULT").c_str());
  std::fflush(stdout);
  std::_Exit(0);  // work_stealing's static schedulers are never torn down cleanly
}
