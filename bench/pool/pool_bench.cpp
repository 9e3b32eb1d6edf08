// The pool benchmark: every workload on the pool under each wake
// policy set and on the peers found here (oneTBB and Boost.Asio in
// continuation style, Boost.Fiber work_stealing and shared_work with its
// channels), interleaved: each repetition runs every configuration once, in
// turn, so that drift (other load on the machine, frequency changes) hits
// all alike. Prints medians over the repetitions and each configuration's
// throughput ratio against Current measured in the same repetition.
// Boost.Fiber's work_stealing keeps its workers in process-wide statics, so
// each Boost.Fiber run is a child process (this program, `--fiber-child`).
//
//   taskplace_pool_bench [--reps N] [--quick] [--only WORKLOAD] [--pipe-rounds N]
//                        [--hackbench-loops N] [--runtime NAME]... [--counters] [--csv FILE]
//                        [--trace FILE [--trace-runtime NAME] [--trace-cap N]]
//
// --trace FILE adds one untimed run, after the timed ones, of the first
// workload selected (--only picks it) on the pool with the trace hook
// (taskplace_pool::TracedPool): every placement and newidle balance, as
// Chrome trace JSON (taskplace/kit/trace.hpp), which Perfetto opens and
// taskplace-replay reads. The timed runs carry no hook. --trace-runtime
// names the policy set traced (Current, AlwaysAffine, PrevCpu, Linux2013;
// default Current); --trace-cap the events kept (default 1,048,576; the
// rest are counted as dropped).
//
// --csv FILE writes one row per run (bench/results.hpp; the columns are
// listed at `csv_columns` and in docs/benchmarks.md), which scripts/bench
// keeps and scripts/plots turns into the docs' table and plots.
//
// --runtime runs Current (the baseline of every ratio) and the named
// configurations or peers only, e.g. `--runtime AlwaysAffine` for an A/B
// of two policy sets or a profile of one; repeat it for more.
//
// --counters adds a second table: for each taskplace configuration, the
// medians of its placer's counters (which step placed the wake-ups) and
// of the pool's steals, parks and kicks, per run: what a ratio alone does
// not say about why a configuration won or lost.
//
// --pipe-rounds sets pipe's round trips (default 100,000); a rule that
// needs a pair to settle for a flip period (traits::SisCurrent: one second)
// shows its steady state only in runs of some seconds. --hackbench-loops
// sets the messages each sender sends each receiver (default 1,000, runs of
// some 25 ms: at 200, runs of 5 ms, a set's ratio to another swung by 0.25
// between runs of the bench).
#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "results.hpp"
#include "taskplace/kit/calibration.hpp"
#include "taskplace/kit/trace.hpp"
#include "taskplace/topology/uniform.hpp"
#include "taskplace_pool/pool.hpp"
#include "workloads/continuation_workloads.hpp"
#include "workloads/pool_workloads.hpp"

#if TASKPLACE_BENCH_TBB
#include <oneapi/tbb/task_arena.h>
#endif
#if TASKPLACE_BENCH_ASIO
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/thread_pool.hpp>
#endif
#if TASKPLACE_BENCH_FIBER
#include "fiber_workloads.hpp"
#include "taskplace_fiber/run.hpp"
#endif

namespace {

using Run = std::function<workloads::Result(const std::string& workload, const workloads::Sizes&)>;

// A run of the pool `Pool`, constructed from `args` afresh for each run.
template <class Pool, class... Args>
Run runner_of(const std::string& name, Args... args) {
  return [name, args...](const std::string& w, const workloads::Sizes& s) {
    Pool pool{args...};
    return workloads::pool::run(pool, w, s, name, std::chrono::seconds{120});
  };
}

// The pool over the running machine under the policy set Traits.
template <class Traits>
Run pool_runner(const std::string& name, taskplace_pool::PoolOptions options = {}) {
  return runner_of<taskplace_pool::SystemPool<Traits>>(name, options);
}

// One untimed run of workload `w` on the traced pool under Traits, its
// decisions into `trace`.
template <class Traits>
workloads::Result traced_run(taskplace::kit::ChromeTrace& trace, const std::string& w, const workloads::Sizes& s,
                             const std::string& name) {
  taskplace_pool::PoolOptions o;
  o.trace = &trace;
  taskplace_pool::TracedPool<taskplace::SysfsTopology, Traits> pool{o};
  return workloads::pool::run(pool, w, s, name, std::chrono::seconds{120});
}

// Current on a pool of one worker: no placement and no stealing, every
// task on one CPU. Not a policy set: the reference that says how much the
// second CPU is worth to a workload at all.
Run one_worker_runner(const std::string& name) {
  return runner_of<taskplace_pool::Pool<taskplace::UniformTopology, taskplace::traits::Current>>(
      name, taskplace::UniformTopology{1, 1, 1, 1});
}

// The machine's floor for a hand-off between two CPUs, and what waking a
// parked worker costs: kit::calibrate() (taskplace/kit/calibration.hpp),
// on the idle machine before the runs. A runtime whose pair of tasks sits
// on two CPUs pays at least the line round trip per message round trip,
// whatever it does (the pool's hand-off moves several lines a hop: the
// channel's, the wakee's frame, the worker's inbox).

// The measured costs scaled by `num / den`: a calibration that is wrong
// by that factor (traits::Runtime's sensitivity, docs/runtime.md).
taskplace_pool::PoolOptions scaled_costs(std::int64_t num, std::int64_t den) {
  taskplace_pool::PoolOptions o;
  const taskplace::kit::WakeCosts& c = taskplace::kit::measured_costs();
  auto scale = [&](taskplace::Nanoseconds x) { return taskplace::Nanoseconds{x.count() * num / den}; };
  o.costs = {.spinning = scale(c.spinning), .parked = scale(c.parked), .crossing = scale(c.crossing)};
  return o;
}

// The cache-hot test on (or off) every steal, whatever the set's default.
taskplace_pool::PoolOptions hot_steals(bool on = true) {
  taskplace_pool::PoolOptions o;
  o.cache_hot_steals = on;
  return o;
}

constexpr std::uint64_t no_count = std::numeric_limits<std::uint64_t>::max();

#if TASKPLACE_BENCH_TBB
// oneTBB has no timers: udp_rr's pause is a timer thread that enqueues.
struct TbbExec {
  tbb::task_arena* arena;
  workloads::TimerThread* timers;
  void post(std::function<void()> f) { arena->enqueue(std::move(f)); }
  void after(std::int64_t ns, std::function<void()> f) {
    timers->after(ns, [a = arena, f = std::move(f)]() mutable { a->enqueue(std::move(f)); });
  }
};
#endif
#if TASKPLACE_BENCH_ASIO
struct AsioExec {
  boost::asio::thread_pool* pool;
  void post(std::function<void()> f) { boost::asio::post(*pool, std::move(f)); }
  void after(std::int64_t ns, std::function<void()> f) {
    auto t = std::make_shared<boost::asio::steady_timer>(*pool, std::chrono::nanoseconds{ns});
    t->async_wait([t, f = std::move(f)](const boost::system::error_code&) { f(); });
  }
};
#endif

// The sizes travel to a child process as ten numbers.
std::string sizes_args(const workloads::Sizes& s) {
  char b[256];
  std::snprintf(b, sizeof b, "%u %u %u %u %u %u %u %u %u %u", s.pipe_rounds, s.pgbench_clients,
                s.pgbench_requests, s.pgbench_work_ns, s.hackbench_groups, s.hackbench_loops,
                s.hackbench_fanout, s.udp_pairs, s.udp_transactions, s.udp_sleep_ns);
  return b;
}

#if TASKPLACE_BENCH_FIBER
// The child: one Boost.Fiber run, one line "FIBER seconds=... ops=...
// p50_us=... p99_us=..." (bench_results::Record::line), read back by key.
int fiber_child(int argc, char** argv) {
  if (argc < 14) return 2;
  const std::string algo = argv[2], w = argv[3];
  workloads::Sizes s;
  std::uint32_t* f[] = {&s.pipe_rounds, &s.pgbench_clients, &s.pgbench_requests, &s.pgbench_work_ns,
                        &s.hackbench_groups, &s.hackbench_loops, &s.hackbench_fanout, &s.udp_pairs,
                        &s.udp_transactions, &s.udp_sleep_ns};
  for (int i = 0; i < 10; ++i) *f[i] = static_cast<std::uint32_t>(std::strtoul(argv[4 + i], nullptr, 10));
  const auto n = std::max(1u, std::thread::hardware_concurrency());
  workloads::LatencyLog log;
  workloads::fiber::TimedRun result;
  auto body = [&] { result = workloads::fiber::timed_run(w, s, log); };
  if (algo == "work_stealing")
    taskplace_fiber::run_threads(n, [&](std::uint32_t) {
      boost::fibers::use_scheduling_algorithm<boost::fibers::algo::work_stealing>(n, true);
    }, body);
  else
    taskplace_fiber::run_threads(n, [&](std::uint32_t) {
      boost::fibers::use_scheduling_algorithm<boost::fibers::algo::shared_work>(true);
    }, body);
  if (!result.error.empty()) {
    std::fprintf(stderr, "%s on Fiber %s: %s\n", w.c_str(), algo.c_str(), result.error.c_str());
    std::fflush(stderr);
    std::_Exit(1);
  }
  auto r = workloads::finish(w, algo, result.elapsed_ns, result.ops, log);
  bench_results::Record out;
  out.set("seconds", r.seconds, 6).set("ops", r.ops).set("p50_us", r.p50_us, 3).set("p99_us", r.p99_us, 3);
  std::printf("%s\n", out.line("FIBER").c_str());
  std::fflush(stdout);
  std::_Exit(0);  // work_stealing's static schedulers are never torn down cleanly
}

Run fiber_runner(const std::string& self, const std::string& algo, const std::string& name) {
  return [self, algo, name](const std::string& w, const workloads::Sizes& s) -> workloads::Result {
    const std::string cmd = "'" + self + "' --fiber-child " + algo + " " + w + " " + sizes_args(s);
    FILE* p = ::popen(cmd.c_str(), "r");
    if (p == nullptr) throw std::runtime_error("popen failed");
    char line[512] = {};
    std::optional<bench_results::Record> got;
    while (std::fgets(line, sizeof line, p) != nullptr)
      if (auto rec = bench_results::parse_line(line, "FIBER")) got = std::move(rec);
    if (::pclose(p) != 0 || !got) throw std::runtime_error(w + " on " + name + ": the child run failed");
    // Every field the child must report, by name.
    auto field = [&](const char* key) -> const std::string& {
      const std::string* v = got->get(key);
      if (v == nullptr || v->empty())
        throw std::runtime_error(w + " on " + name + ": the child reported no " + key);
      return *v;
    };
    workloads::Result r;
    r.workload = w;
    r.runtime = name;
    r.seconds = std::stod(field("seconds"));
    r.ops = std::stoull(field("ops"));
    r.throughput = r.seconds > 0 ? static_cast<double>(r.ops) / r.seconds : 0;
    r.p50_us = std::stod(field("p50_us"));
    r.p99_us = std::stod(field("p99_us"));
    r.migrations = no_count;
    return r;
  };
}
#endif

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Effects: prints, for each workload and configuration that reports
// counters, the median of each counter over the repetitions; a counter
// whose medians are all 0 gets no column.
template <class Cases, class Configs, class Results>
void print_counters(const Cases& cases, const Configs& configs, const Results& results) {
  // The names: the first configuration's counters, in its order.
  std::vector<std::string> names;
  for (const auto& [key, runs] : results)
    if (!runs.empty() && !runs.front().counters.empty()) {
      for (const auto& [n, v] : runs.front().counters) names.push_back(n);
      break;
    }
  struct Row {
    std::string label, name;
    std::vector<double> medians;
  };
  std::vector<Row> rows;
  std::vector<bool> shown(names.size(), false);
  for (const auto& [label, sizes] : cases)
    for (const auto& [name, run] : configs) {
      const auto it = results.find({label, name});
      if (it == results.end() || it->second.front().counters.size() != names.size()) continue;
      Row row{label, name, {}};
      for (std::size_t i = 0; i < names.size(); ++i) {
        std::vector<double> v;
        for (const auto& r : it->second) v.push_back(static_cast<double>(r.counters[i].second));
        row.medians.push_back(median(v));
        if (row.medians.back() != 0) shown[i] = true;
      }
      rows.push_back(std::move(row));
    }
  if (rows.empty()) return;
  std::printf("\nCounters, medians per run (columns all 0 left out):\n\n| workload | runtime |");
  for (std::size_t i = 0; i < names.size(); ++i)
    if (shown[i]) std::printf(" %s |", names[i].c_str());
  std::printf("\n|---|---|");
  for (std::size_t i = 0; i < names.size(); ++i)
    if (shown[i]) std::printf("---:|");
  std::printf("\n");
  for (const auto& row : rows) {
    std::printf("| %s | %s |", row.label.c_str(), row.name.c_str());
    for (std::size_t i = 0; i < names.size(); ++i)
      if (shown[i]) std::printf(" %.0f |", row.medians[i]);
    std::printf("\n");
  }
}

}  // namespace

int main(int argc, char** argv) {
#if TASKPLACE_BENCH_FIBER
  if (argc > 1 && !std::strcmp(argv[1], "--fiber-child")) return fiber_child(argc, argv);
#endif
  int reps = 3;
  bool quick = false, counters = false;
  std::string only, csv_path, trace_path, trace_runtime = "Current";
  std::uint32_t trace_cap = 1u << 20;
  std::vector<std::string> runtimes;
  std::uint32_t pipe_rounds = 100'000, hackbench_loops = 1'000;  // hackbench: 2 groups, runs of some 25 ms
  // A mistyped option or value is an error (exit 2), not a run of
  // something else than asked.
  auto usage = [](const std::string& why) {
    std::fprintf(stderr,
                 "taskplace_pool_bench: %s\n"
                 "usage: taskplace_pool_bench [--reps N] [--quick] [--only WORKLOAD] [--pipe-rounds N]\n"
                 "                            [--hackbench-loops N] [--runtime NAME]... [--counters] [--csv FILE]\n"
                 "                            [--trace FILE [--trace-runtime NAME] [--trace-cap N]]\n"
                 "  WORKLOAD: pipe, pgbench, pgbench/C (C in 1 2 4 8 16 32), hackbench, udp_rr\n"
                 "  NAME: a row's runtime column, e.g. AlwaysAffine, \"Current hand-off\", oneTBB\n",
                 why.c_str());
    std::exit(2);
  };
  auto count = [&](int& i, const char* opt) -> std::uint32_t {
    if (i + 1 >= argc) usage(std::string(opt) + " needs a value");
    const char* v = argv[++i];
    char* end = nullptr;
    errno = 0;
    const unsigned long n = std::strtoul(v, &end, 10);
    if (*v < '1' || *v > '9' || *end != '\0' || errno != 0 || n > 1'000'000'000ul)
      usage(std::string(opt) + " takes a whole number from 1 to 10^9, not '" + v + "'");
    return static_cast<std::uint32_t>(n);
  };
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--reps")) reps = static_cast<int>(count(i, "--reps"));
    else if (!std::strcmp(argv[i], "--quick")) quick = true;
    else if (!std::strcmp(argv[i], "--counters")) counters = true;
    else if (!std::strcmp(argv[i], "--only")) {
      if (i + 1 >= argc) usage("--only needs a workload");
      only = argv[++i];
    } else if (!std::strcmp(argv[i], "--runtime")) {
      if (i + 1 >= argc) usage("--runtime needs a name");
      runtimes.emplace_back(argv[++i]);
    } else if (!std::strcmp(argv[i], "--csv")) {
      if (i + 1 >= argc) usage("--csv needs a file name");
      csv_path = argv[++i];
    } else if (!std::strcmp(argv[i], "--pipe-rounds")) pipe_rounds = count(i, "--pipe-rounds");
    else if (!std::strcmp(argv[i], "--hackbench-loops")) hackbench_loops = count(i, "--hackbench-loops");
    else if (!std::strcmp(argv[i], "--trace")) {
      if (i + 1 >= argc) usage("--trace needs a file name");
      trace_path = argv[++i];
    } else if (!std::strcmp(argv[i], "--trace-runtime")) {
      if (i + 1 >= argc) usage("--trace-runtime needs a name");
      trace_runtime = argv[++i];
    } else if (!std::strcmp(argv[i], "--trace-cap")) trace_cap = count(i, "--trace-cap");
    else usage(std::string("unknown argument '") + argv[i] + "'");
  }
  const unsigned threads = std::max(1u, std::thread::hardware_concurrency());

  std::vector<std::pair<std::string, Run>> configs = {
      {"Current", pool_runner<taskplace::traits::Current>("Current")},
      // For user-space runtimes (docs/runtime.md): CostGate on the
      // calibrated costs, then today's kernel.
      {"Runtime", pool_runner<taskplace::traits::Runtime>("Runtime")},
      {"Runtime costs x10", pool_runner<taskplace::traits::Runtime>("Runtime costs x10", scaled_costs(10, 1))},
      {"Runtime costs /10", pool_runner<taskplace::traits::Runtime>("Runtime costs /10", scaled_costs(1, 10))},
      // Runtime with every queued task fair game for a steal (its default
      // is the cache-hot test at the runtime's migration cost).
      {"Runtime any-steals", pool_runner<taskplace::traits::Runtime>("Runtime any-steals", hot_steals(false))},
      {"AlwaysAffine", pool_runner<taskplace::traits::AlwaysAffine>("AlwaysAffine")},
      {"PrevCpu", pool_runner<taskplace::traits::PrevCpu>("PrevCpu")},
      {"Linux2013", pool_runner<taskplace::traits::Linux2013>("Linux2013")},
      {"CacheHot", pool_runner<taskplace::traits::CacheHot<>>("CacheHot")},
      // The 2008 kernels' sync rule (Smith 2008): avg_overlap-gated pulls,
      // unchecked as in 2.6.25, balanced as in 2.6.26; no search.
      {"Linux2008 unchecked",
       pool_runner<taskplace::traits::Linux2008<taskplace::sync_affine::Unchecked2008>>("Linux2008 unchecked")},
      {"Linux2008", pool_runner<taskplace::traits::Linux2008<>>("Linux2008")},
      // Current plus SIS_CURRENT (2023, never merged): a pair of short
      // tasks that wake each other stays on the waking worker.
      {"SisCurrent", pool_runner<taskplace::traits::SisCurrent<>>("SisCurrent")},
      // Current with the kernel's cache-hot test on every steal
      // (PoolOptions::cache_hot_steals, taskplace::TaskHot).
      {"Current hot-steals", pool_runner<taskplace::traits::Current>("Current hot-steals", hot_steals())},
      // Not a policy set: Current with pipe's channels passing the hand-off
      // hint (WakeHint::handoff), which only the embedder can give; pipe
      // only, and outside the configurations Current is compared with.
      {"Current hand-off",
       [](const std::string& w, const workloads::Sizes& s) {
         if (w != "pipe") return workloads::Result{};
         workloads::Sizes h = s;
         h.pipe_handoff = true;
         return pool_runner<taskplace::traits::Current>("Current hand-off")(w, h);
       }},
      // Not a policy set: every task on one worker (one_worker_runner).
      {"Current 1 worker", one_worker_runner("Current 1 worker")},
  };
#if TASKPLACE_BENCH_TBB
  configs.emplace_back("oneTBB", [threads](const std::string& w, const workloads::Sizes& s) {
    workloads::TimerThread timers;
    tbb::task_arena arena(static_cast<int>(threads));
    TbbExec ex{&arena, &timers};
    return workloads::cont::run(ex, w, s, "oneTBB");
  });
#endif
#if TASKPLACE_BENCH_ASIO
  configs.emplace_back("Asio", [threads](const std::string& w, const workloads::Sizes& s) {
    boost::asio::thread_pool tp(threads);
    AsioExec ex{&tp};
    auto r = workloads::cont::run(ex, w, s, "Asio");
    tp.join();
    return r;
  });
#endif
#if TASKPLACE_BENCH_FIBER
  const std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
  configs.emplace_back("Fiber work_stealing", fiber_runner(self, "work_stealing", "Fiber work_stealing"));
  configs.emplace_back("Fiber shared_work", fiber_runner(self, "shared_work", "Fiber shared_work"));
#endif

  for (const auto& n : runtimes)
    if (std::none_of(configs.begin(), configs.end(), [&](const auto& c) { return c.first == n; }))
      usage("no runtime '" + n + "' in this build");
  if (!runtimes.empty())
    std::erase_if(configs, [&](const auto& c) {
      return c.first != "Current" && std::find(runtimes.begin(), runtimes.end(), c.first) == runtimes.end();
    });

  // (workload label, sizes) in the order they run.
  std::vector<std::pair<std::string, workloads::Sizes>> cases;
  const std::uint32_t div = quick ? 10 : 1;
  {
    workloads::Sizes s;
    s.pipe_rounds = std::max<std::uint32_t>(1, pipe_rounds / div);
    cases.emplace_back("pipe", s);
  }
  for (std::uint32_t clients : {1u, 2u, 4u, 8u, 16u, 32u}) {
    workloads::Sizes s;
    s.pgbench_clients = clients;
    s.pgbench_requests = 40'000 / div;
    cases.emplace_back("pgbench/" + std::to_string(clients), s);
  }
  {
    workloads::Sizes s;
    s.hackbench_groups = 2;
    s.hackbench_loops = std::max<std::uint32_t>(1, hackbench_loops / div);
    cases.emplace_back("hackbench", s);
  }
  {
    workloads::Sizes s;
    s.udp_pairs = 8;
    s.udp_transactions = 2'000 / div;
    cases.emplace_back("udp_rr", s);
  }

  if (!only.empty()) {
    std::erase_if(cases, [&](const auto& c) { return c.first != only && c.first.substr(0, c.first.find('/')) != only; });
    if (cases.empty()) usage("no workload '" + only + "'");
  }
  using TracedRun = workloads::Result (*)(taskplace::kit::ChromeTrace&, const std::string&, const workloads::Sizes&,
                                          const std::string&);
  const std::map<std::string, TracedRun> traced = {
      {"Current", &traced_run<taskplace::traits::Current>},
      {"AlwaysAffine", &traced_run<taskplace::traits::AlwaysAffine>},
      {"PrevCpu", &traced_run<taskplace::traits::PrevCpu>},
      {"Linux2013", &traced_run<taskplace::traits::Linux2013>}};
  if (!trace_path.empty() && traced.count(trace_runtime) == 0)
    usage("--trace-runtime takes Current, AlwaysAffine, PrevCpu or Linux2013, not '" + trace_runtime + "'");

  const auto cal_start = std::chrono::steady_clock::now();
  const taskplace::kit::Calibration cal = taskplace::kit::calibrate();  // before the runs, on the idle machine
  const double cal_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - cal_start).count();
  const double line = cal.line_round_trip_ns;
  // One row per run; an empty cell where a runtime does not count
  // something. vs_current: this run's ops/s over Current's in the same
  // repetition (the table's "vs Current" is their median). crossing_ns: the
  // line round trip above, the same on every row.
  static const std::vector<std::string> csv_columns = {
      "workload", "runtime", "rep", "seconds", "ops", "ops_per_s", "vs_current", "p50_us", "p99_us",
      "migrations", "affine_pct", "steal_attempts", "skips", "crossing_ns", "unpark_ns", "resume_ns"};
  bench_results::Csv csv{csv_path, csv_columns};
  std::map<std::pair<std::string, std::string>, std::vector<workloads::Result>> results;
  std::map<std::pair<std::string, std::string>, std::vector<double>> ratios;
  for (int rep = 0; rep < reps; ++rep) {
    for (auto& [label, sizes] : cases) {
      const std::string w = label.substr(0, label.find('/'));
      double current = 0;
      for (auto& [name, run] : configs) {
        workloads::Result r = run(w, sizes);
        if (r.ops == 0) continue;
        if (name == "Current") current = r.throughput;
        bench_results::Record row;
        row.set("workload", label).set("runtime", name).set("rep", rep + 1).set("seconds", r.seconds, 6);
        row.set("ops", r.ops).set("ops_per_s", r.throughput, 1);
        if (current > 0) row.set("vs_current", r.throughput / current, 4);
        row.set("p50_us", r.p50_us, 3).set("p99_us", r.p99_us, 3);
        if (r.migrations != no_count) row.set("migrations", r.migrations);
        if (r.affine_pct >= 0) row.set("affine_pct", r.affine_pct, 2);
        if (r.steal_attempts >= 0) row.set("steal_attempts", r.steal_attempts);
        if (r.skips >= 0) row.set("skips", r.skips);
        if (line > 0) row.set("crossing_ns", line, 0);
        if (cal.unpark_ns > 0) row.set("unpark_ns", cal.unpark_ns, 0);
        if (cal.resume_ns > 0) row.set("resume_ns", cal.resume_ns, 1);
        csv.write(row);
        results[{label, name}].push_back(r);
        if (current > 0) ratios[{label, name}].push_back(r.throughput / current);
      }
    }
    std::fprintf(stderr, "repetition %d of %d done\n", rep + 1, reps);
  }
  if (!trace_path.empty()) {
    // One more run, untimed, with every decision recorded.
    taskplace::kit::ChromeTrace trace{trace_cap, "taskplace_pool_bench " + cases.front().first + " " + trace_runtime};
    const auto& [label, sizes] = cases.front();
    traced.at(trace_runtime)(trace, label.substr(0, label.find('/')), sizes, trace_runtime + " traced");
    if (!trace.write_file(trace_path)) {
      std::fprintf(stderr, "taskplace_pool_bench: cannot write %s\n", trace_path.c_str());
      return 1;
    }
    std::fprintf(stderr, "trace: %zu events of %s on %s into %s (%llu dropped)\n", trace.recorded(),
                 trace_runtime.c_str(), label.c_str(), trace_path.c_str(),
                 static_cast<unsigned long long>(trace.dropped()));
  }

  std::printf("Calibration (taskplace::kit::calibrate, %.0f ms): %s\n\n", cal_ms, cal.describe().c_str());
  std::printf("| workload | runtime | ops/s | vs Current | p50 us | p99 us | migrations | affine %% | steal attempts | skips |\n");
  std::printf("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  for (auto& [label, sizes] : cases) {
    for (auto& [name, run] : configs) {
      auto it = results.find({label, name});
      if (it == results.end()) continue;
      std::vector<double> tp, p50, p99, mig, affine, steal_attempts, skips;
      for (auto& r : it->second) {
        tp.push_back(r.throughput);
        p50.push_back(r.p50_us);
        p99.push_back(r.p99_us);
        mig.push_back(static_cast<double>(r.migrations));
        affine.push_back(r.affine_pct);
        steal_attempts.push_back(static_cast<double>(r.steal_attempts));
        skips.push_back(static_cast<double>(r.skips));
      }
      // Every column is a median over the repetitions (a runtime that
      // does not report a column reports it in none of its runs).
      const auto& last = it->second.back();
      char aff[32] = "n/a", st[32] = "n/a", sk[32] = "n/a", mg[32] = "n/a";
      if (last.migrations != no_count) std::snprintf(mg, sizeof mg, "%.0f", median(mig));
      if (last.affine_pct >= 0) std::snprintf(aff, sizeof aff, "%.1f", median(affine));
      if (last.steal_attempts >= 0) std::snprintf(st, sizeof st, "%.0f", median(steal_attempts));
      if (last.skips >= 0) std::snprintf(sk, sizeof sk, "%.0f", median(skips));
      std::printf("| %s | %s | %.0f | %.2f | %.1f | %.1f | %s | %s | %s | %s |\n", label.c_str(), name.c_str(),
                  median(tp), median(ratios[{label, name}]), median(p50), median(p99), mg, aff, st, sk);
    }
  }
  if (counters) print_counters(cases, configs, results);
  return 0;
}
