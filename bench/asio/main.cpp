// bench/asio/main.cpp: one workload on one Asio runtime, one line of
// results. scripts/bench asio runs every (runtime, workload, repetition) as
// its own process, interleaved.
//
//   taskplace_bench_asio <thread_pool|"per_core rr"|"per_core sticky"|Runtime|Current|"Current defer"|AlwaysAffine|
//                         "Linux2008 defer"|SisCurrent>
//                        <pipe|pgbench|hackbench|udp_rr> [workers] [pgbench clients] [--quick]
// thread_pool: boost::asio::thread_pool (one shared queue).
// per_core rr: one io_context per worker, one thread each; each post goes
//   to the next io_context in turn.
// per_core sticky: the same, each actor's posts to one io_context (its
//   address's hash): a session bound to its io_context for its life.
// Runtime (its default, traits::Runtime), Current, AlwaysAffine: the
// taskplace Asio runtime (examples/asio), each
//   post a wake-up of its actor placed by WakePlacer under that policy set;
//   "Current defer": every post a sync wake-up (Asio's defer: the poster's
//   handler ends next).
// "Linux2008 defer", SisCurrent: the runtime under the policy sets that
//   read sleeps (it reports each handler's run and its task's sleep):
//   traits::Linux2008<> with every post sync (its overlap-gated pull is
//   the sync wake-ups'), traits::SisCurrent<> (no sync needed).
// --quick: the sizes divided by 10.
// Prints one line of named fields (bench/results.hpp):
//   RESULT workload=pipe runtime=Current workers=2 clients=8 seconds=0.0312 ops_per_s=1602564.1
//          p50_us=0.41 p99_us=0.93 migrations=3 steals=2 placed_remote=0
// (steals, placed_remote empty: the runtime does not say).
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/thread_pool.hpp>

#include "results.hpp"
#include "taskplace_asio/runtime.hpp"
#include "workloads/continuation_workloads.hpp"

namespace {

template <class Ctx>
void after_on(Ctx& ctx, std::int64_t ns, std::function<void()> f) {
  auto t = std::make_shared<boost::asio::steady_timer>(ctx, std::chrono::nanoseconds{ns});
  t->async_wait([t, f = std::move(f)](const boost::system::error_code&) { f(); });
}

struct PoolExec {
  boost::asio::thread_pool* pool;
  void post(std::function<void()> f) { boost::asio::post(*pool, std::move(f)); }
  void after(std::int64_t ns, std::function<void()> f) { after_on(*pool, ns, std::move(f)); }
};

// N io_contexts, one thread each.
class PerCore {
 public:
  PerCore(std::uint32_t n, bool sticky) : ctx_(n), sticky_(sticky) {
    for (auto& c : ctx_) c = std::make_unique<boost::asio::io_context>(1);
    for (auto& c : ctx_) {
      guards_.emplace_back(boost::asio::make_work_guard(*c));
      threads_.emplace_back([&c] { c->run(); });
    }
  }
  ~PerCore() {
    guards_.clear();
    for (auto& c : ctx_) c->stop();
    for (auto& t : threads_) t.join();
  }
  void post(const void* actor, std::function<void()> f) { boost::asio::post(pick(actor), std::move(f)); }
  void after(const void* actor, std::int64_t ns, std::function<void()> f) { after_on(pick(actor), ns, std::move(f)); }

 private:
  boost::asio::io_context& pick(const void* actor) {
    const auto n = ctx_.size();
    if (!sticky_) return *ctx_[rr_.fetch_add(1, std::memory_order_relaxed) % n];
    auto x = reinterpret_cast<std::uintptr_t>(actor) * 0x9e3779b97f4a7c15ULL;
    return *ctx_[(x >> 32) % n];
  }
  std::vector<std::unique_ptr<boost::asio::io_context>> ctx_;
  std::vector<boost::asio::executor_work_guard<boost::asio::io_context::executor_type>> guards_;
  std::vector<std::thread> threads_;
  std::atomic<std::uint64_t> rr_{0};
  bool sticky_;
};

template <class Rt>
struct TaskplaceExec {
  Rt* rt;
  bool sync;
  void post(const void* actor, std::function<void()> f) { rt->post(actor, std::move(f), sync); }
  void after(const void* actor, std::int64_t ns, std::function<void()> f) {
    rt->post_after(actor, std::chrono::nanoseconds{ns}, std::move(f));
  }
};

struct Counts {
  std::int64_t steals = -1, placed_remote = -1;
};

template <class Traits>
workloads::Result run_taskplace(std::uint32_t n, const std::string& w, const workloads::Sizes& s,
                                const std::string& name, bool sync, Counts& c) {
  taskplace_asio::Runtime<Traits> rt{n};
  TaskplaceExec<taskplace_asio::Runtime<Traits>> ex{&rt, sync};
  auto r = workloads::cont::run(ex, w, s, name);
  const auto st = rt.stats();
  c.steals = static_cast<std::int64_t>(st.steals);
  c.placed_remote = static_cast<std::int64_t>(st.remote);
  rt.join();
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args;
  bool quick = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0) quick = true;
    else args.emplace_back(argv[i]);
  }
  if (args.size() < 2) {
    std::fprintf(stderr, "usage: %s runtime workload [workers] [pgbench clients] [--quick]\n", argv[0]);
    return 2;
  }
  const std::string runtime = args[0], workload = args[1];
  const auto workers = static_cast<std::uint32_t>(
      args.size() > 2 ? std::strtoul(args[2].c_str(), nullptr, 10) : std::max(2u, std::thread::hardware_concurrency()));
  workloads::Sizes sizes;
  if (args.size() > 3) sizes.pgbench_clients = static_cast<std::uint32_t>(std::strtoul(args[3].c_str(), nullptr, 10));
  if (workers == 0 || sizes.pgbench_clients == 0) {
    std::fprintf(stderr, "workers and clients must be >= 1\n");
    return 2;
  }
  if (quick) {
    sizes.pipe_rounds /= 10;
    sizes.pgbench_requests /= 10;
    sizes.hackbench_loops /= 10;
    sizes.udp_transactions /= 10;
  }

  // A lost wake-up hangs a run: give up after a minute.
  std::thread([] {
    std::this_thread::sleep_for(std::chrono::seconds{60});
    std::fprintf(stderr, "timeout: the run did not finish within 60 s (lost wake-up?)\n");
    std::_Exit(3);
  }).detach();

  workloads::Result r;
  Counts c;
  try {
    if (runtime == "thread_pool") {
      boost::asio::thread_pool tp(workers);
      PoolExec ex{&tp};
      r = workloads::cont::run(ex, workload, sizes, runtime);
      tp.join();
    } else if (runtime == "per_core rr" || runtime == "per_core sticky") {
      PerCore pc(workers, runtime == "per_core sticky");
      r = workloads::cont::run(pc, workload, sizes, runtime);
    } else if (runtime == "Current" || runtime == "Current defer") {
      r = run_taskplace<taskplace::traits::Current>(workers, workload, sizes, runtime, runtime == "Current defer", c);
    } else if (runtime == "Runtime") {
      r = run_taskplace<taskplace::traits::Runtime>(workers, workload, sizes, runtime, false, c);
    } else if (runtime == "AlwaysAffine") {
      r = run_taskplace<taskplace::traits::AlwaysAffine>(workers, workload, sizes, runtime, false, c);
    } else if (runtime == "Linux2008 defer") {
      r = run_taskplace<taskplace::traits::Linux2008<>>(workers, workload, sizes, runtime, true, c);
    } else if (runtime == "SisCurrent") {
      r = run_taskplace<taskplace::traits::SisCurrent<>>(workers, workload, sizes, runtime, false, c);
    } else {
      std::fprintf(stderr, "unknown runtime: %s\n", runtime.c_str());
      return 2;
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s on %s: %s\n", workload.c_str(), runtime.c_str(), e.what());
    return 1;
  }
  bench_results::Record out;
  out.set("workload", workload).set("runtime", runtime).set("workers", workers);
  out.set("clients", sizes.pgbench_clients).set("seconds", r.seconds, 4).set("ops_per_s", r.throughput, 1);
  out.set("p50_us", r.p50_us, 2).set("p99_us", r.p99_us, 2);
  out.set("migrations", static_cast<std::int64_t>(r.migrations));
  auto count = [&](const char* key, std::int64_t v) { v >= 0 ? out.set(key, v) : out.set_missing(key); };
  count("steals", c.steals);
  count("placed_remote", c.placed_remote);
  std::printf("%s\n", out.line("RESULT").c_str());
  std::fflush(stdout);
  return 0;
}
