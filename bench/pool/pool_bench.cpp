// The pool benchmark: every workload on the example pool under each wake
// policy set, and pipe / pgbench on the post-based peers, interleaved:
// each repetition runs every configuration once, in turn, so that drift
// (other load on the machine, frequency changes) hits all alike. Prints
// medians over the repetitions and each configuration's throughput ratio
// against Current measured in the same run.
//
//   taskplace_pool_bench [--reps N] [--quick]
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "taskplace_pool/pool.hpp"
#include "workloads/continuation_workloads.hpp"
#include "workloads/pool_workloads.hpp"

#if TASKPLACE_BENCH_TBB
#include <oneapi/tbb/task_arena.h>
#endif
#if TASKPLACE_BENCH_ASIO
#include <boost/asio/post.hpp>
#include <boost/asio/thread_pool.hpp>
#endif

namespace {

using Run = std::function<workloads::Result(const std::string& workload, const workloads::Sizes&)>;

template <class Traits>
Run pool_runner(const std::string& name) {
  return [name](const std::string& w, const workloads::Sizes& s) {
    taskplace_pool::SystemPool<Traits> pool;
    return workloads::pool::run(pool, w, s, name, std::chrono::seconds{120});
  };
}

#if TASKPLACE_BENCH_TBB
struct TbbExec {
  tbb::task_arena* arena;
  void post(std::function<void()> f) { arena->enqueue(std::move(f)); }
};
#endif
#if TASKPLACE_BENCH_ASIO
struct AsioExec {
  boost::asio::thread_pool* pool;
  void post(std::function<void()> f) { boost::asio::post(*pool, std::move(f)); }
};
#endif

template <class F>
Run peer_runner(F run_one) {
  return [run_one](const std::string& w, const workloads::Sizes& s) -> workloads::Result {
    if (w != "pipe" && w != "pgbench") return workloads::Result{};  // not implemented: skipped
    return run_one(w, s);
  };
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  int reps = 3;
  bool quick = false;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--reps") && i + 1 < argc) reps = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--quick")) quick = true;
  }
  const unsigned threads = std::max(1u, std::thread::hardware_concurrency());

  std::vector<std::pair<std::string, Run>> configs = {
      {"Current", pool_runner<taskplace::traits::Current>("Current")},
      {"AlwaysAffine", pool_runner<taskplace::traits::AlwaysAffine>("AlwaysAffine")},
      {"PrevCpu", pool_runner<taskplace::traits::PrevCpu>("PrevCpu")},
      {"Wang2013", pool_runner<taskplace::traits::Wang2013>("Wang2013")},
      {"CacheHot", pool_runner<taskplace::traits::CacheHot<>>("CacheHot")},
  };
#if TASKPLACE_BENCH_TBB
  configs.emplace_back("oneTBB", peer_runner([threads](const std::string& w, const workloads::Sizes& s) {
    tbb::task_arena arena(static_cast<int>(threads));
    TbbExec ex{&arena};
    return w == "pipe" ? workloads::cont::pipe(ex, s, "oneTBB") : workloads::cont::pgbench(ex, s, "oneTBB");
  }));
#endif
#if TASKPLACE_BENCH_ASIO
  configs.emplace_back("Asio", peer_runner([threads](const std::string& w, const workloads::Sizes& s) {
    boost::asio::thread_pool tp(threads);
    AsioExec ex{&tp};
    auto r = w == "pipe" ? workloads::cont::pipe(ex, s, "Asio") : workloads::cont::pgbench(ex, s, "Asio");
    tp.join();
    return r;
  }));
#endif

  // (workload label, sizes) in the order they run.
  std::vector<std::pair<std::string, workloads::Sizes>> cases;
  const std::uint32_t div = quick ? 10 : 1;
  {
    workloads::Sizes s;
    s.pipe_rounds = 100'000 / div;
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
    s.hackbench_loops = 200 / div;
    cases.emplace_back("hackbench", s);
  }
  {
    workloads::Sizes s;
    s.udp_pairs = 8;
    s.udp_transactions = 2'000 / div;
    cases.emplace_back("udp_rr", s);
  }

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
        results[{label, name}].push_back(r);
        if (current > 0) ratios[{label, name}].push_back(r.throughput / current);
      }
    }
    std::fprintf(stderr, "repetition %d of %d done\n", rep + 1, reps);
  }

  std::printf("| workload | runtime | ops/s | vs Current | p50 us | p99 us | migrations | affine %% | steal attempts | skips |\n");
  std::printf("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  for (auto& [label, sizes] : cases) {
    for (auto& [name, run] : configs) {
      auto it = results.find({label, name});
      if (it == results.end()) continue;
      std::vector<double> tp, p50, p99, mig;
      for (auto& r : it->second) {
        tp.push_back(r.throughput);
        p50.push_back(r.p50_us);
        p99.push_back(r.p99_us);
        mig.push_back(static_cast<double>(r.migrations));
      }
      const auto& last = it->second.back();
      char aff[32] = "n/a", st[32] = "n/a", sk[32] = "n/a";
      if (last.affine_pct >= 0) std::snprintf(aff, sizeof aff, "%.1f", last.affine_pct);
      if (last.steal_attempts >= 0) std::snprintf(st, sizeof st, "%lld", static_cast<long long>(last.steal_attempts));
      if (last.skips >= 0) std::snprintf(sk, sizeof sk, "%lld", static_cast<long long>(last.skips));
      std::printf("| %s | %s | %.0f | %.2f | %.1f | %.1f | %.0f | %s | %s | %s |\n", label.c_str(), name.c_str(),
                  median(tp), median(ratios[{label, name}]), median(p50), median(p99), median(mig), aff, st, sk);
    }
  }
  return 0;
}
