// The Asio embedding (examples/asio): every handler runs once, no wake-up
// is lost, shutdown with pending work ends as documented, a handler's
// exception reaches join(), and Asio's own post and completions go
// through the placement.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <vector>

#include <boost/asio/bind_executor.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <catch2/catch.hpp>

#include "../kit/strict_json.hpp"
#include "taskplace/kit/trace.hpp"
#include "taskplace_asio/channel.hpp"
#include "taskplace_asio/executor.hpp"
#include "taskplace_asio/runtime.hpp"

using namespace std::chrono_literals;
using Rt = taskplace_asio::Runtime<>;

// The ping-pong's handler count: 10^6, a tenth under ThreadSanitizer
// (which runs the tests labelled concurrency some ten times slower).
#if defined(__SANITIZE_THREAD__)
#define TP_ASIO_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define TP_ASIO_TSAN 1
#endif
#endif
#ifdef TP_ASIO_TSAN
constexpr std::uint32_t ping_pong_handlers = 100'000;
#else
constexpr std::uint32_t ping_pong_handlers = 1'000'000;
#endif

namespace {

// A hung runtime (a lost wake-up) fails the test instead of the suite's
// timeout: the process exits with a message after `limit`.
class Watchdog {
 public:
  explicit Watchdog(std::chrono::seconds limit, const char* what) {
    t_ = std::thread([this, limit, what] {
      std::unique_lock lk(m_);
      if (!cv_.wait_for(lk, limit, [this] { return done_; })) {
        std::fprintf(stderr, "watchdog: %s did not finish in %lld s (lost wake-up?)\n", what,
                     static_cast<long long>(limit.count()));
        std::_Exit(3);
      }
    });
  }
  ~Watchdog() {
    {
      std::lock_guard lk(m_);
      done_ = true;
    }
    cv_.notify_all();
    t_.join();
  }

 private:
  std::mutex m_;
  std::condition_variable cv_;
  bool done_ = false;
  std::thread t_;
};

// Counts its destructions: a handler's captures are freed once, run or not.
struct Token {
  std::atomic<int>* destroyed;
  explicit Token(std::atomic<int>* d) : destroyed(d) {}
  ~Token() { destroyed->fetch_add(1); }
};

}  // namespace

TEST_CASE("every handler runs exactly once, posted from off the pool and from handlers") {
  Watchdog dog{30s, "exactly once"};
  constexpr std::uint32_t outer = 2'000, inner = 50;  // 102,000 handlers
  std::vector<std::atomic<std::uint32_t>> runs(outer * (inner + 1));
  std::atomic<std::uint32_t> off_worker{0};  // Catch's macros on the test's thread only
  {
    Rt rt{4};
    for (std::uint32_t i = 0; i < outer; ++i)
      REQUIRE(rt.post([&rt, &runs, &off_worker, i] {
        runs[i].fetch_add(1);
        if (!rt.current_worker().has_value()) off_worker.fetch_add(1);
        for (std::uint32_t j = 0; j < inner; ++j) {
          const std::uint32_t k = outer + i * inner + j;
          rt.post([&runs, k] { runs[k].fetch_add(1); });  // from a worker
        }
      }));
    rt.join();
    CHECK(rt.stats().handlers == runs.size());
  }
  std::size_t wrong = 0;
  for (auto& r : runs) wrong += r.load() != 1;
  CHECK(wrong == 0);
  CHECK(off_worker.load() == 0);
}

TEST_CASE("no lost wake-up: 10^6 handlers in ping-pong chains across the io_contexts") {
  // Workers block at once and are woken only by a post (the periodic
  // wake-up is an hour away): a lost wake-up hangs the run. With 16 chains
  // on 4 workers and sync wake-ups most hops stay on their worker; with 2
  // chains and plain wake-ups many go to an idle (parked) worker.
  Watchdog dog{60s, "ping-pong"};
  std::uint32_t chains = 16;
  bool sync = true;
  SECTION("16 chains, sync") {}
  SECTION("2 chains, not sync: hops wake parked workers") {
    chains = 2;
    sync = false;
  }
  const std::uint32_t hops = ping_pong_handlers / chains;
  struct Side {
    std::uint32_t runs = 0;  // one handler of a side at a time
  };
  struct Chain {
    Side a, b;
    std::atomic<std::uint32_t> left{0};
  };
  std::vector<Chain> cs(chains);
  for (auto& c : cs) c.left = hops;
  taskplace_asio::Options o;
  o.idle_spin = 0ns;
  o.idle_poll = std::chrono::hours{1};
  Rt rt{4, o};
  struct Hop {
    Rt* rt;
    Chain* c;
    bool to_a, sync;
    void operator()() const {
      Side& s = to_a ? c->a : c->b;
      ++s.runs;
      if (c->left.fetch_sub(1) == 1) return;
      rt->post(to_a ? static_cast<const void*>(&c->b) : &c->a, Hop{rt, c, !to_a, sync}, sync);
    }
  };
  const auto t0 = std::chrono::steady_clock::now();
  for (auto& c : cs) rt.post(&c.a, Hop{&rt, &c, true, sync});
  rt.join();
  const auto s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::uint64_t total = 0;
  for (auto& c : cs) {
    CHECK(c.a.runs == hops / 2);
    CHECK(c.b.runs == hops / 2);
    total += c.a.runs + c.b.runs;
  }
  CHECK(total == ping_pong_handlers);
  const auto st = rt.stats();
  CHECK(st.handlers == ping_pong_handlers);
  // The chains do cross the io_contexts, and wake sleeping workers.
  if (!sync) CHECK(st.remote > ping_pong_handlers / 100);
  if (!sync) CHECK(st.unparks > ping_pong_handlers / 100);
  std::printf("ping-pong, %u chains%s: %u handlers in %.2f s, %llu migrations, %llu steals, %llu placed remote, "
              "%llu unparks\n",
              chains, sync ? ", sync" : "", ping_pong_handlers, s, static_cast<unsigned long long>(st.migrations),
              static_cast<unsigned long long>(st.steals), static_cast<unsigned long long>(st.remote),
              static_cast<unsigned long long>(st.unparks));
}

TEST_CASE("join runs every pending handler; stop destroys the queued ones unrun") {
  Watchdog dog{30s, "shutdown"};
  std::atomic<int> ran{0}, destroyed{0};
  SECTION("join: every handler pending at the call runs") {
    {
      Rt rt{2};
      for (int i = 0; i < 1'000; ++i)
        rt.post([&ran, t = std::make_shared<Token>(&destroyed)] { ran.fetch_add(1); });
      rt.join();
      CHECK(ran.load() == 1'000);
      // After join the runtime is stopped: a post destroys its handler.
      CHECK_FALSE(rt.post([&ran, t = std::make_shared<Token>(&destroyed)] { ran.fetch_add(1); }));
    }
    CHECK(ran.load() == 1'000);
    CHECK(destroyed.load() == 1'001);
  }
  SECTION("stop: both workers busy, 1,000 queued handlers destroyed unrun") {
    std::atomic<int> started{0};
    std::size_t discarded = 0;
    {
      Rt rt{2};
      // One blocker per worker: each holds its worker until stop() is under way.
      for (int i = 0; i < 2; ++i)
        rt.post([&] {
          started.fetch_add(1);
          while (started.load() < 2) std::this_thread::yield();  // both workers busy
          std::this_thread::sleep_for(100ms);
        });
      while (started.load() < 2) std::this_thread::yield();
      for (int i = 0; i < 1'000; ++i)
        REQUIRE(rt.post([&ran, t = std::make_shared<Token>(&destroyed)] { ran.fetch_add(1); }));
      discarded = rt.stop();
      CHECK_FALSE(rt.post([&ran, t = std::make_shared<Token>(&destroyed)] { ran.fetch_add(1); }));
    }
    CHECK(ran.load() == 0);
    CHECK(discarded == 1'000);
    CHECK(destroyed.load() == 1'001);
  }
}

TEST_CASE("an exception a handler throws reaches join(), and stops the runtime") {
  Watchdog dog{30s, "exception"};
  SECTION("from a handler deep in a chain") {
    Rt rt{2};
    std::atomic<int> depth{0};
    struct Step {
      Rt* rt;
      std::atomic<int>* depth;
      void operator()() const {
        if (depth->fetch_add(1) == 100) throw std::runtime_error("boom at 100");
        rt->post(depth, Step{rt, depth});
      }
    };
    rt.post(&depth, Step{&rt, &depth});
    CHECK_THROWS_WITH(rt.join(), "boom at 100");
    CHECK(depth.load() == 101);  // the chain ended at the throw
    CHECK_FALSE(rt.post([] {}));
  }
  SECTION("through a future: a packaged_task keeps it, the runtime goes on") {
    Rt rt{2};
    auto task = std::make_shared<std::packaged_task<int()>>([]() -> int { throw std::logic_error("in task"); });
    auto fut = task->get_future();
    rt.post([task] { (*task)(); });
    CHECK_THROWS_AS(fut.get(), std::logic_error);
    std::atomic<bool> after{false};
    CHECK(rt.post([&] { after = true; }));
    rt.join();
    CHECK(after.load());
  }
}

TEST_CASE("Asio's post and a timer's completion, through a task's executor, run on a worker as that task") {
  Watchdog dog{30s, "executor"};
  Rt rt{2};
  int session = 0;
  taskplace_asio::TaskExecutor ex{rt, &session};
  std::promise<const void*> posted, fired, after;
  boost::asio::post(ex, [&] { posted.set_value(rt.current_task()); });
  boost::asio::steady_timer timer{rt.context(1), 2ms};
  timer.async_wait(boost::asio::bind_executor(ex, [&](const boost::system::error_code& ec) {
    fired.set_value(ec ? nullptr : rt.current_task());
  }));
  CHECK(posted.get_future().get() == &session);
  CHECK(fired.get_future().get() == &session);
  // post_after: join waits for the timer.
  REQUIRE(rt.post_after(&session, 5ms, [&] { after.set_value(rt.current_task()); }));
  rt.join();
  CHECK(after.get_future().get() == &session);
  CHECK(rt.stats().handlers == 3);
}

TEST_CASE("a channel: every value received once, in order, each receive a wake-up of the receiver") {
  Watchdog dog{30s, "channel"};
  constexpr int values = 20'000;
  Rt rt{4};
  taskplace_asio::Channel<int, Rt> ch{rt};
  int consumer = 0, producer = 0;
  std::vector<int> got;  // the consumer's: one receive in flight at a time
  got.reserve(values);
  std::promise<void> done;
  std::atomic<int> elsewhere{0};  // handlers that ran as another task than the consumer
  std::function<void(int)> on_value = [&](int v) {
    if (rt.current_task() != &consumer) elsewhere.fetch_add(1);
    got.push_back(v);
    if (got.size() == values) done.set_value();
    else ch.async_receive(&consumer, on_value);
  };
  ch.async_receive(&consumer, on_value);
  // The producer sends in bursts, from a handler of its own task.
  struct Burst {
    Rt* rt;
    taskplace_asio::Channel<int, Rt>* ch;
    int* producer;
    int from;
    void operator()() const {
      for (int i = from; i < from + 100; ++i) ch->send(i);
      if (from + 100 < values) rt->post(producer, Burst{rt, ch, producer, from + 100});
    }
  };
  rt.post(&producer, Burst{&rt, &ch, &producer, 0});
  done.get_future().get();
  rt.join();
  REQUIRE(got.size() == values);
  bool in_order = true;
  for (int i = 0; i < values; ++i) in_order = in_order && got[static_cast<std::size_t>(i)] == i;
  CHECK(in_order);
  CHECK(ch.queued() == 0);
  CHECK(elsewhere.load() == 0);
}

TEST_CASE("a traced runtime records each placement once, as valid Chrome trace JSON") {
  // The kit's trace hook in the Asio runtime: traits wrapped in
  // kit::Traced, the sink installed while the runtime is built. Two tasks
  // post to each other 2,000 times; every placement of the shared placer
  // is one "wake" event.
  Watchdog dog{30s, "traced"};
  taskplace::kit::ChromeTrace trace{1 << 16};
  std::uint64_t wakeups = 0;
  {
    taskplace::kit::ChromeTrace::Install on{trace};
    taskplace_asio::Runtime<taskplace::kit::Traced<taskplace::traits::Current>> rt{2};
    int a = 0, b = 0;  // the two tasks' names
    std::atomic<std::uint32_t> left{2'000};
    std::function<void(bool)> hop = [&](bool to_a) {
      if (left.fetch_sub(1) > 1) rt.post(to_a ? static_cast<const void*>(&a) : &b, [&hop, to_a] { hop(!to_a); });
    };
    REQUIRE(rt.post(&a, [&hop] { hop(false); }));
    rt.join();
    wakeups = rt.placer().stats().get(taskplace::WakeCounter::wakeups);
  }
  REQUIRE(trace.dropped() == 0);
  std::ostringstream out;
  trace.write(out);
  const auto j = strict_json::Reader(out.str()).document();
  std::uint64_t wakes = 0;
  for (const auto& e : j["traceEvents"].array()) {
    if (!e.has("cat") || e["cat"].str() != "wake") continue;
    ++wakes;
    CHECK(e["args"]["cpu"].num() < 2);
  }
  CHECK(wakeups >= 2'000);  // every post of a task is placed
  CHECK(wakes == wakeups);
}

TEST_CASE("a traced runtime records each newidle balance of its balancer once") {
  // TracedRuntime: the balancer's traits carry the trace hook too, as the
  // pool's and the Boost.Fiber group's do. Two tasks on four workers: the
  // two workers without a handler run dry again and again, and each
  // newidle balance (kit::Stealer through IdleBalancer) is one "balance"
  // event, as many as the balancer counted.
  Watchdog dog{30s, "traced balancer"};
  taskplace::kit::ChromeTrace trace{1 << 18};
  std::uint64_t balances = 0, wakeups = 0;
  {
    taskplace::kit::ChromeTrace::Install on{trace};
    taskplace_asio::TracedRuntime<> rt{4};
    int a = 0, b = 0;
    std::atomic<std::uint32_t> left{2'000};
    std::function<void(bool)> hop = [&](bool to_a) {
      if (left.fetch_sub(1) > 1) rt.post(to_a ? static_cast<const void*>(&a) : &b, [&hop, to_a] { hop(!to_a); });
    };
    REQUIRE(rt.post(&a, [&hop] { hop(false); }));
    rt.join();
    balances = rt.balancer().stats().get(taskplace::BalanceCounter::runs);
    wakeups = rt.placer().stats().get(taskplace::WakeCounter::wakeups);
  }
  REQUIRE(trace.dropped() == 0);
  std::ostringstream out;
  trace.write(out);
  const auto j = strict_json::Reader(out.str()).document();
  std::uint64_t events = 0, wakes = 0;
  for (const auto& e : j["traceEvents"].array()) {
    if (!e.has("cat")) continue;
    if (e["cat"].str() == "wake") {
      ++wakes;
      CHECK(e["args"]["machine"]["cpus"].num() == 4);  // the machine its placer read (kit::observed)
    }
    if (e["cat"].str() != "balance") continue;
    ++events;
    CHECK(e["args"]["cpu"].num() < 4);
    CHECK(e["tid"].num() == e["args"]["cpu"].num());
  }
  CHECK(balances > 0);
  CHECK(events == balances);
  CHECK(wakes == wakeups);  // the placements still, beside them
}
