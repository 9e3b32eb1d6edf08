// The pool at its edges: spawning against shutdown, a constructor
// whose threads cannot start, kicked workers and the preemption rule,
// sleeps too long for the clock, channels and results whose moves throw,
// join handles taken twice, and counters read right after a join.
#include <pthread.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <new>
#include <optional>
#include <ratio>
#include <stdexcept>
#include <string>
#include <system_error>
#include <thread>
#include <type_traits>
#include <vector>

#include <catch2/catch.hpp>

#include "pool_test_support.hpp"
#include "taskplace_pool/pool.hpp"

using namespace std::chrono_literals;
using pool_test::eventually;
using pool_test::UniformPool;
using taskplace_pool::Channel;
using taskplace_pool::Event;
using taskplace_pool::JoinHandle;
using taskplace_pool::Nanoseconds;
using taskplace_pool::PoolOptions;
using taskplace_pool::task;
using taskplace_pool::WakeHint;
using pool_test::CurrentPool;
using pool_test::one_cpu;

// The test's allocation hook: the next allocation on a thread that set
// `alloc_hook` calls it first (once). Lets a test stop a thread inside
// Pool::spawn at a known point, without sleeps. Not under
// ThreadSanitizer, whose runtime defines the replaceable operators itself
// (every form in one object: replacing a few makes the link fail).
#if !TASKPLACE_POOL_TSAN
namespace {
thread_local void (*alloc_hook)() = nullptr;
}  // namespace

void* operator new(std::size_t n) {
  if (auto* hook = alloc_hook) {
    alloc_hook = nullptr;
    hook();
  }
  if (void* p = std::malloc(n != 0 ? n : 1)) return p;
  throw std::bad_alloc{};
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
#endif

namespace {

task<void> count_n(std::atomic<int>& n) {
  n.fetch_add(1);
  co_return;
}
task<int> twice(int x) { co_return 2 * x; }
task<int> fails(std::string what) {
  throw std::runtime_error(what);
  co_return 0;
}

}  // namespace

// --- spawn against shutdown -------------------------------------------------

#if !TASKPLACE_POOL_TSAN
namespace {
std::atomic<bool> spawner_stalled{false}, spawner_released{false};
void stall_spawner() {
  spawner_stalled.store(true);
  (void)eventually([] { return spawner_released.load(); });
}
}  // namespace

TEST_CASE("a spawn that shutdown overtakes is refused and never queued on a stopped pool",
          "[pool][shutdown]") {
  // The spawner stops at its first allocation inside spawn() while
  // shutdown() finds the pool idle and stops it; then it goes on. The
  // task must either run or be refused: it cannot be left queued on
  // workers that are gone, with a handle that never completes.
  std::atomic<int> ran{0};
  CurrentPool pool{pool_test::two_cpus()};
  bool refused = false;
  std::optional<JoinHandle<void>> h;
  std::thread spawner([&] {
    auto t = count_n(ran);  // the task's own frame, allocated before spawn()
    alloc_hook = &stall_spawner;
    try {
      h.emplace(pool.spawn(std::move(t)));
    } catch (const std::logic_error&) {
      refused = true;
    }
    alloc_hook = nullptr;
  });
  REQUIRE(eventually([] { return spawner_stalled.load(); }));
  const auto rep = pool.shutdown();
  spawner_released.store(true);
  spawner.join();
  CHECK(refused);
  CHECK(ran.load() == 0);
  CHECK(rep.abandoned == 0);
  CHECK(pool.stats().spawned == 0);
}
#endif

TEST_CASE("spawns racing with shutdown each run or are refused", "[pool][shutdown]") {
  // The same race left to chance (and to ThreadSanitizer): a thread spawns
  // until refused while shutdown() runs. Every spawn accepted ran, before
  // shutdown() returned.
  for (std::uint32_t round = 0; round < pool_test::sized(100); ++round) {
    std::atomic<int> ran{0};
    std::vector<JoinHandle<void>> accepted;
    CurrentPool pool{pool_test::two_cpus()};
    std::atomic<bool> go{false};
    std::thread spawner([&] {
      while (!go.load()) std::this_thread::yield();
      for (;;) {
        try {
          accepted.push_back(pool.spawn(count_n(ran)));
        } catch (const std::logic_error&) {
          break;
        }
      }
    });
    go.store(true);
    const auto rep = pool.shutdown();
    spawner.join();
    std::size_t done = 0;
    for (auto& h : accepted) done += h.done() ? 1 : 0;
    INFO("round " << round << ": " << accepted.size() << " spawns accepted");
    CHECK(done == accepted.size());
    CHECK(static_cast<std::size_t>(ran.load()) == accepted.size());
    CHECK(rep.completed == accepted.size());
  }
}

namespace {
task<void> parent_while_draining(CurrentPool& pool, std::atomic<bool>& draining,
                                 std::atomic<int>& children, std::atomic<int>& refused) {
  while (!draining.load()) co_await taskplace_pool::yield{};
  try {
    co_await pool.spawn(count_n(children));
  } catch (const std::logic_error&) {
    refused.fetch_add(1);
  }
}
}  // namespace

TEST_CASE("a task still running while the pool shuts down may spawn and await a child",
          "[pool][shutdown]") {
  // shutdown() runs every runnable task to completion: one that spawns
  // meanwhile (a fan-out, one half of a pair) gets its child run. Spawns
  // from off the pool are refused from the start of shutdown on, which is
  // how the watcher tells that it began.
  std::atomic<bool> draining{false};
  std::atomic<int> children{0}, refused{0}, watched{0};
  CurrentPool pool{pool_test::two_cpus()};
  (void)pool.spawn(parent_while_draining(pool, draining, children, refused));
  std::thread watcher([&] {
    for (;;) {
      try {
        (void)pool.spawn(count_n(watched));
      } catch (const std::logic_error&) {
        break;
      }
      std::this_thread::yield();
    }
    draining.store(true);
  });
  const auto rep = pool.shutdown();
  watcher.join();
  CHECK(refused.load() == 0);
  CHECK(children.load() == 1);
  CHECK(rep.abandoned == 0);
  CHECK(rep.completed == static_cast<std::uint64_t>(2 + watched.load()));
}

namespace {
// A chain of steps that each hand the task's pending work to another
// unit: a timer (sleep_for), the run queue again (yield), a child spawned
// from the pool and awaited.
task<void> sleeps_yields_spawns(CurrentPool& pool, std::uint32_t seed, std::atomic<int>& steps,
                                std::atomic<int>& children) {
  for (std::uint32_t k = 0; k < 24; ++k) {
    switch ((seed + k) % 3) {
      case 0: co_await taskplace_pool::sleep_for(Nanoseconds{(seed * 7 + k * 13) % 40 * 1000}); break;
      case 1: co_await taskplace_pool::yield{}; break;
      default: co_await pool.spawn(count_n(children)); break;
    }
    steps.fetch_add(1);
  }
}
}  // namespace

TEST_CASE("work that moves between timers, run queues and children while the pool shuts down all runs",
          "[pool][shutdown]") {
  // Quiescence sums per-worker counts of pending and done work (no count
  // shared by the workers): a timer that fires, a yield and a spawn from a
  // task each count the new work before the old is counted done. A worker
  // that found the pool quiescent too early would leave tasks queued on a
  // stopped pool: abandoned, or steps missing. With 2 and 4 workers (the
  // latter oversubscribed, so workers lose their CPU mid-step).
  for (std::uint32_t round = 0; round < pool_test::sized(200); ++round) {
    for (const auto& topo : {pool_test::two_cpus(), pool_test::four_cpus()}) {
      std::atomic<int> steps{0}, children{0};
      CurrentPool pool{topo};
      constexpr std::uint32_t tasks = 12;
      for (std::uint32_t i = 0; i < tasks; ++i) (void)pool.spawn(sleeps_yields_spawns(pool, round + i, steps, children));
      const auto rep = pool.shutdown();
      INFO("round " << round << ", " << topo.cpu_count() << " workers");
      CHECK(steps.load() == static_cast<int>(tasks * 24));
      CHECK(children.load() == static_cast<int>(tasks * 8));  // 24 steps, every third a spawn
      CHECK(rep.abandoned == 0);
      CHECK(rep.completed == tasks + tasks * 8);
    }
  }
}

// --- the constructor -------------------------------------------------------------

namespace {
// Calls its own pool's shutdown(); says what it threw, or "" for nothing.
task<std::string> stops_own_pool(CurrentPool& pool, bool catch_it) {
  if (!catch_it) {
    (void)pool.shutdown();
    co_return "";
  }
  try {
    (void)pool.shutdown();
  } catch (const std::logic_error& e) {
    co_return e.what();
  }
  co_return "";
}
}  // namespace

TEST_CASE("a task that shuts its own pool down gets std::logic_error, and the pool stops later",
          "[pool][shutdown]") {
  // It used to end the program: the worker joined itself (std::system_error
  // "Resource deadlock avoided"), shutdown() was then marked done without
  // the workers joined, and ~Pool destroyed joinable threads.
  SECTION("the task catches it") {
    CurrentPool pool{pool_test::two_cpus()};
    const std::string what = pool.block_on(stops_own_pool(pool, true));
    CHECK_THAT(what, Catch::Contains("Pool::shutdown") && Catch::Contains("own tasks"));
    CHECK(pool.block_on(twice(21)) == 42);  // nothing changed: the pool runs on
    const auto rep = pool.shutdown();
    CHECK(rep.completed == 2);
    CHECK(rep.abandoned == 0);
  }
  SECTION("the task does not catch it: it fails, and ~Pool stops the pool") {
    std::optional<CurrentPool> pool;
    pool.emplace(pool_test::two_cpus());
    CHECK_THROWS_AS(pool->block_on(stops_own_pool(*pool, false)), std::logic_error);
    CHECK(pool->stats().failed == 1);
    pool.reset();  // joins every worker: no std::terminate
  }
}

TEST_CASE("pool options and waits set from durations past nanoseconds' range saturate", "[pool][options]") {
  using std::chrono::hours;
  PoolOptions o{.tick = hours::max(), .spin_before_park = hours::max(), .timer_slack = hours::max(),
                .preempt_gap = hours::min(), .preempted_for = hours::max()};
  CHECK(o.tick == Nanoseconds::max());
  CHECK(o.spin_before_park == Nanoseconds::max());
  CHECK(o.timer_slack == Nanoseconds::max());
  CHECK(o.preempt_gap == Nanoseconds::min());
  CHECK(o.preempted_for == Nanoseconds::max());
  o.tick = hours::max();
  CHECK(o.tick == Nanoseconds::max());

  // A wait_for of hours::max() waits for the task (no overflow of the
  // deadline); one of hours::min() does not wait.
  CurrentPool pool{pool_test::two_cpus()};
  auto h = pool.spawn(twice(4));
  CHECK(h.wait_for(hours::max()));
  CHECK(h.wait_for(hours::min()));
  CHECK(h.get() == 8);
  (void)pool.shutdown();
}

TEST_CASE("a pool whose worker thread cannot start throws from its constructor",
          "[pool][shutdown]") {
  // In a child process: every new thread asks for a 256 MiB stack and the
  // address space may grow by 384 MiB, so the first worker starts and the
  // second cannot (pthread_create: EAGAIN, std::system_error). The
  // constructor must stop and join the first before it throws; a thread
  // destroyed joinable would end the child with std::terminate (SIGABRT).
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::alarm(30);  // a hang ends the child by SIGALRM
    constexpr long stack = 256L << 20;
    pthread_attr_t attr;
    ::pthread_attr_init(&attr);
    ::pthread_attr_setstacksize(&attr, static_cast<std::size_t>(stack));
    if (::pthread_setattr_default_np(&attr) != 0) ::_exit(3);
    long pages = 0;
    std::ifstream("/proc/self/statm") >> pages;
    rlimit rl{};
    rl.rlim_cur = rl.rlim_max =
        static_cast<rlim_t>(pages * ::sysconf(_SC_PAGESIZE) + stack + stack / 2);
    if (pages <= 0 || ::setrlimit(RLIMIT_AS, &rl) != 0) ::_exit(3);
    // First prove the limit bites on plain threads: with one thread alive,
    // a second must fail to start. If it does not, this machine cannot run
    // the test (exit 3); if it does, a pool that starts all its workers
    // (exit 4) swallowed the failure.
    {
      std::atomic<bool> go{false};
      std::thread first([&] {
        while (!go.load()) std::this_thread::sleep_for(std::chrono::milliseconds{1});
      });
      bool second_failed = false;
      try {
        std::thread second([] {});
        second.join();
      } catch (const std::system_error&) {
        second_failed = true;
      }
      go.store(true);
      first.join();
      if (!second_failed) ::_exit(3);
    }
    try {
      CurrentPool pool{pool_test::four_cpus()};
      ::_exit(4);  // every thread started: the pool hid a failed thread start
    } catch (const std::system_error&) {
      ::_exit(0);
    } catch (...) {
      ::_exit(5);
    }
  }
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  INFO("child status " << status << (WIFSIGNALED(status) ? " (signal " : " (exit ")
                       << (WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status)) << ")");
  if (WIFEXITED(status) && WEXITSTATUS(status) == 3) {
    WARN("the address-space limit could not make a thread fail here");
    return;
  }
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
}

// --- kicks and the preemption rule ---------------------------------------------------

namespace {
task<void> yield_until_kicked(CurrentPool& pool) {
  // One task requeueing itself: at each tick its worker holds a queued
  // task and kicks the other, parked, worker (which finds nothing to
  // steal: a worker holding one task is not busy).
  const auto until = std::chrono::steady_clock::now() + 10s;
  while (pool.stats().kicks == 0 && std::chrono::steady_clock::now() < until)
    co_await taskplace_pool::yield{};
}
}  // namespace

TEST_CASE("a worker woken by a tick's kick does not count itself preempted", "[pool][placement]") {
  // Only a gap of a second counts as a preemption here, and one would last
  // an hour: no real descheduling explains a mark, so a worker marked
  // after its kick measured its wake-up from a stale stamp.
  PoolOptions o;
  o.tick = 100us;
  o.preempt_gap = 1s;
  o.preempted_for = 1h;
  CurrentPool pool{pool_test::two_cpus(), o};
  pool.block_on(yield_until_kicked(pool));
  REQUIRE(pool.stats().kicks > 0);
  // Nothing running, nothing queued (preemptions ignored) ...
  REQUIRE(eventually([&] {
    const CurrentPool::Machine m{pool};
    return m.is_idle(0) && m.is_idle(1);
  }));
  // ... so idle now unless marked preempted.
  const CurrentPool::Machine now{pool, taskplace::SteadyClock{}.now()};
  CHECK(now.is_idle(0));
  CHECK(now.is_idle(1));
}

namespace {
using AffinePool = UniformPool<taskplace::traits::AlwaysAffine>;
using Clock = std::chrono::steady_clock;

task<void> waits_then_notes(Event& e, std::atomic<int>& ready, std::atomic<bool>& hog_done,
                            std::atomic<int>& ran_during_hog) {
  ready.fetch_add(1);
  co_await e.wait();
  if (!hog_done.load()) ran_during_hog.fetch_add(1);
}
// Wakes the waiters onto its own worker (AlwaysAffine), then runs 300 ms
// without suspending: its worker neither ticks nor runs them meanwhile.
task<void> wakes_then_hogs(Event& e, std::atomic<bool>& hog_done, WakeHint hint) {
  e.set(hint);
  const auto start = Clock::now();
  while (Clock::now() - start < 300ms) {
  }
  hog_done.store(true);
  co_return;
}

struct BehindAHog {
  int ran_during_hog = 0;   // of the 3 waiters
  std::uint64_t kicks = 0;  // the pool's, over the whole run
};
// Returns: how many of 3 waiters ran while the task that woke them hogged
// its worker, the other worker parked, and the pool's kicks.
BehindAHog ran_behind_a_hog(PoolOptions o, WakeHint hint = WakeHint::async) {
  AffinePool pool{pool_test::two_cpus(), o};
  Event e;
  std::atomic<int> ready{0}, ran_during_hog{0};
  std::atomic<bool> hog_done{false};
  std::vector<JoinHandle<void>> hs;
  for (int i = 0; i < 3; ++i) hs.push_back(pool.spawn(waits_then_notes(e, ready, hog_done, ran_during_hog)));
  while (ready.load() < 3) std::this_thread::yield();
  std::this_thread::sleep_for(20ms);  // both workers run dry and park
  pool.block_on(wakes_then_hogs(e, hog_done, hint));
  for (auto& h : hs) h.get();
  return {ran_during_hog.load(), pool.stats().kicks};
}
}  // namespace

TEST_CASE("tasks queued behind a task that runs long are stolen by a parked worker",
          "[pool][placement]") {
  // A worker running one task for 300 ms has no tick in between (tasks
  // are not interrupted), so the kick its tick would give (kernel
  // nohz_balancer_kick) never comes. The queueing that makes it hold two
  // tasks kicks a parked worker instead, and a worker about to park while
  // one is overloaded steals first: the three wakees run on the other
  // worker while the hog runs.
  PoolOptions o;
  CHECK(ran_behind_a_hog(o).ran_during_hog == 3);
  // Woken with the sync hint, the last wakee takes the hand-off slot,
  // which thieves never take (the waker promised to block next), and the
  // others go to the queue as the slot is refilled: those two are stolen.
  // The slot's first task makes the worker hold two but is no thief's, so
  // the kick waits for the first task moved to the queue. Once the two are
  // stolen the hog and the slot's task are all the worker holds, nothing a
  // thief can take: no overload, and the other worker parks until the end
  // (it used to count the slot as an overload and wake every tick, about
  // 70 times in the 300 ms, to find nothing to steal).
  const BehindAHog sync = ran_behind_a_hog(o, WakeHint::sync);
  CHECK(sync.ran_during_hog == 2);
  CHECK(sync.kicks <= 1);
  // Without kicks (kick_idle_on_tick = false) the parked worker sleeps on
  // and all three wait for the hog to end.
  o.kick_idle_on_tick = false;
  const BehindAHog none = ran_behind_a_hog(o);
  CHECK(none.ran_during_hog == 0);
  CHECK(none.kicks == 0);
}

// --- sleeps the clock cannot count -----------------------------------------------------

namespace {
template <class D>
task<void> sleep_then_count(D d, std::atomic<int>& woke) {
  co_await taskplace_pool::sleep_for(d);
  woke.fetch_add(1);
}
}  // namespace

TEST_CASE("a negative sleep is none and one too long for the clock lasts until shutdown",
          "[pool][sleep]") {
  using std::chrono::duration;
  using std::chrono::hours;
  CHECK(taskplace_pool::sleep_for(hours::max()).d == Nanoseconds::max());
  CHECK(taskplace_pool::sleep_for(duration<double>(1e300)).d == Nanoseconds::max());
  CHECK(taskplace_pool::sleep_for(Nanoseconds{std::int64_t{1} << 62}).d == Nanoseconds::max());
  CHECK(taskplace_pool::sleep_for(hours::min()).d == Nanoseconds{0});
  CHECK(taskplace_pool::sleep_for(-1s).d == Nanoseconds{0});
  CHECK(taskplace_pool::sleep_for(duration<std::int64_t, std::ratio<1, 3>>(3)).d == 1s);
  CHECK(taskplace_pool::sleep_for(duration<std::int64_t, std::ratio<1, 3>>(std::int64_t{1} << 62))
            .d == Nanoseconds::max());
  CHECK(taskplace_pool::sleep_for(250ms).d == 250ms);

  std::atomic<int> woke{0}, short_woke{0};
  CurrentPool pool{pool_test::two_cpus()};
  (void)pool.spawn(sleep_then_count(Nanoseconds::max(), woke));
  (void)pool.spawn(sleep_then_count(hours::max(), woke));
  (void)pool.spawn(sleep_then_count(duration<double>(1e300), woke));
  pool.block_on(sleep_then_count(-1s, short_woke));
  pool.block_on(sleep_then_count(hours::min(), short_woke));
  pool.block_on(sleep_then_count(200us, short_woke));
  const auto rep = pool.shutdown();  // does not wait for "forever"
  CHECK(short_woke.load() == 3);
  CHECK(woke.load() == 0);
  CHECK(rep.abandoned == 3);
  CHECK(rep.completed == 3);
}

namespace {
// Sleeps `d` `n` times; returns the shortest sleep steady_clock saw.
task<Nanoseconds> shortest_sleep(Nanoseconds d, int n) {
  Nanoseconds shortest = Nanoseconds::max();
  for (int i = 0; i < n; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    co_await taskplace_pool::sleep_for(d);
    shortest = std::min(shortest, std::chrono::duration_cast<Nanoseconds>(std::chrono::steady_clock::now() - t0));
  }
  co_return shortest;
}
}  // namespace

TEST_CASE("a sleep lasts its whole duration by steady_clock, whichever clock the pool reads",
          "[pool][sleep]") {
  // The pool times sleeps on its own clock (the TSC where it is
  // invariant, calibrated against steady_clock to 1/1024, and deadlines
  // padded by TscClock::rate_error_inverse); a sleep must not end early by
  // the clock a user measures it with.
  CurrentPool pool{pool_test::two_cpus()};
  const bool tsc = taskplace::TscClock::process().uses_tsc();
  INFO("the pool's clock reads the " << (tsc ? "TSC" : "steady clock"));
  CHECK(pool.block_on(shortest_sleep(Nanoseconds{3'000'000}, static_cast<int>(pool_test::sized(20)))) >=
        Nanoseconds{3'000'000});
  CHECK(pool.block_on(shortest_sleep(Nanoseconds{50'000}, static_cast<int>(pool_test::sized(50)))) >=
        Nanoseconds{50'000});
}

// --- channels whose values throw when moved -------------------------------------------

namespace {
// The n-th move from now throws (0: none).
std::atomic<int> moves_until_throw{0};
struct Fragile {
  int v = 0;
  explicit Fragile(int x) : v(x) {}
  Fragile(Fragile&& o) : v(o.v) {
    if (moves_until_throw.load() > 0 && moves_until_throw.fetch_sub(1) == 1)
      throw std::runtime_error("move failed");
  }
  Fragile& operator=(Fragile&& o) {
    v = o.v;
    return *this;
  }
};

task<int> receive_one(Channel<Fragile>& ch) {
  auto v = co_await ch.recv();
  co_return v ? v->v : -1;
}
task<void> send_one(Channel<Fragile>& ch, int x) { co_await ch.send(Fragile{x}); }

// Sends x to a waiting receiver with the k-th move throwing. Returns
// whether the send threw.
task<bool> send_throwing(Channel<Fragile>& ch, int x, int k, bool awaited) {
  bool threw = false;
  moves_until_throw = k;
  try {
    if (awaited)
      co_await ch.send(Fragile{x});
    else
      (void)ch.try_send(Fragile{x});
  } catch (const std::runtime_error&) {
    threw = true;
  }
  moves_until_throw = 0;
  co_return threw;
}
// try_recv with the k-th move throwing. Returns the value, -1 for none,
// -2 when it threw.
task<int> recv_throwing(Channel<Fragile>& ch, int k) {
  int got = -2;
  moves_until_throw = k;
  try {
    auto v = ch.try_recv();
    got = v ? v->v : -1;
  } catch (const std::runtime_error&) {
  }
  moves_until_throw = 0;
  co_return got;
}
}  // namespace

TEST_CASE("a channel whose value's move throws loses no waiter", "[pool][channel]") {
  // One worker: a task spawned first has run up to its wait before the
  // next one starts. Each move of the operation throws in turn.
  CurrentPool pool{one_cpu()};
  SECTION("a send to a waiting receiver leaves it waiting") {
    for (const bool awaited : {false, true}) {
      for (int k = 1; k <= 4; ++k) {
        INFO((awaited ? "send" : "try_send") << ", move " << k << " throws");
        Channel<Fragile> ch{4};
        auto r = pool.spawn(receive_one(ch));
        const bool threw = pool.block_on(send_throwing(ch, k, k, awaited));
        CHECK(ch.try_send(Fragile{-k}));  // to the receiver if it still waits, else buffered
        REQUIRE(r.wait_for(5s));
        CHECK(r.get() == (threw ? -k : k));
      }
    }
  }
  SECTION("a receive that refills the buffer from a blocked sender loses neither") {
    for (int k = 1; k <= 2; ++k) {
      INFO("move " << k << " throws");
      Channel<Fragile> ch{1};
      CHECK(ch.try_send(Fragile{10}));  // full
      auto s = pool.spawn(send_one(ch, 11));
      const int first = pool.block_on(recv_throwing(ch, k));
      std::vector<int> got;
      if (first != -2) got.push_back(first);
      while (auto v = ch.try_recv()) got.push_back(v->v);
      REQUIRE(s.wait_for(5s));  // the sender was woken: its value went in
      CHECK(got == std::vector<int>{10, 11});
    }
  }
  SECTION("a rendezvous receive from a blocked sender leaves it waiting") {
    Channel<Fragile> ch{0};
    auto s = pool.spawn(send_one(ch, 11));
    CHECK(pool.block_on(recv_throwing(ch, 1)) == -2);
    CHECK(pool.block_on(recv_throwing(ch, 0)) == 11);
    REQUIRE(s.wait_for(5s));
  }
  SECTION("close() still wakes a receiver a throwing send left waiting") {
    Channel<Fragile> ch{4};
    auto r = pool.spawn(receive_one(ch));
    // The one move: into r (try_send's parameter is built in place).
    CHECK(pool.block_on(send_throwing(ch, 1, 1, false)));
    ch.close();
    REQUIRE(r.wait_for(5s));
    CHECK(r.get() == -1);
  }
  CHECK(pool.shutdown().abandoned == 0);
}

// --- join handles -------------------------------------------------------------

namespace {
task<bool> awaits_twice(CurrentPool& p) {
  auto h = p.spawn(twice(2));
  const int v = co_await h;
  try {
    (void)co_await h;
  } catch (const std::logic_error&) {
    co_return v == 4;
  }
  co_return false;
}
task<int> after_event(Event& e) {
  co_await e.wait();
  co_return 5;
}
task<int> await_shared(JoinHandle<int>& h) {
  try {
    co_return co_await h;
  } catch (const std::logic_error&) {
    co_return -1;
  }
}
}  // namespace

TEST_CASE("a join handle is move-only and yields its result once", "[pool][join]") {
  CHECK_FALSE(std::is_copy_constructible_v<JoinHandle<int>>);
  CHECK_FALSE(std::is_copy_assignable_v<JoinHandle<int>>);
  CHECK(std::is_nothrow_move_constructible_v<JoinHandle<int>>);
  CHECK(std::is_nothrow_move_assignable_v<JoinHandle<int>>);
  CurrentPool pool{pool_test::two_cpus()};
  SECTION("get() a second time throws std::logic_error") {
    auto h = pool.spawn(twice(21));
    CHECK(h.get() == 42);
    CHECK_THROWS_AS(h.get(), std::logic_error);
  }
  SECTION("... also after the task failed") {
    auto h = pool.spawn(fails("failed"));
    CHECK_THROWS_WITH(h.get(), "failed");
    CHECK_THROWS_AS(h.get(), std::logic_error);
  }
  SECTION("co_await a second time throws std::logic_error") {
    CHECK(pool.block_on(awaits_twice(pool)));
  }
  SECTION("a moved-from handle is empty") {
    auto h = pool.spawn(twice(1));
    auto g = std::move(h);
    CHECK_THROWS_AS(h.get(), std::logic_error);
    CHECK(g.get() == 2);
  }
  SECTION("a second task awaiting one handle while the first waits is refused") {
    CurrentPool one{one_cpu()};
    Event e;
    auto h = one.spawn(after_event(e));   // waits for e
    auto a = one.spawn(await_shared(h));  // waits for h
    auto b = one.spawn(await_shared(h));  // refused
    REQUIRE(b.wait_for(5s));
    CHECK(b.get() == -1);
    e.set();
    REQUIRE(a.wait_for(5s));
    CHECK(a.get() == 5);
  }
}

namespace {
// No move constructor: every move copies, and the fail_at-th copy throws,
// saying on which side of the pool it ran.
std::atomic<int> heavy_copies{0}, heavy_fail_at{0};
struct Heavy {
  int v = 0;
  explicit Heavy(int x) : v(x) {}
  Heavy(const Heavy& o) : v(o.v) {
    if (heavy_copies.fetch_add(1) + 1 == heavy_fail_at.load())
      throw std::runtime_error(
          taskplace_pool::detail::current_context() != nullptr ? "on a worker" : "off the pool");
  }
  Heavy& operator=(const Heavy&) = default;
};
task<Heavy> make_heavy() { co_return Heavy{7}; }
}  // namespace

TEST_CASE("a result whose copy throws fails its task instead of ending the program",
          "[pool][join]") {
  // Each copy of the value in turn throws: in the task (co_return), in the
  // root as it takes and publishes the value, or in the caller's get().
  // Every one reaches block_on's caller; the ones thrown on a worker count
  // as failed tasks.
  CurrentPool pool{pool_test::two_cpus()};
  std::uint64_t on_worker = 0;
  for (int k = 1; k <= 6; ++k) {
    INFO("copy " << k << " throws");
    heavy_copies = 0;
    heavy_fail_at = k;
    try {
      const Heavy h = pool.block_on(make_heavy());
      CHECK(h.v == 7);
    } catch (const std::runtime_error& e) {
      const std::string where = e.what();
      CHECK((where == "on a worker" || where == "off the pool"));
      on_worker += where == "on a worker" ? 1 : 0;
    }
  }
  heavy_fail_at = 0;
  CHECK(on_worker >= 1);
  CHECK(pool.stats().failed == on_worker);
  CHECK(pool.stats().completed == 6);
}

// --- counters after a join -------------------------------------------------------

namespace {
struct Probe;
std::atomic<JoinHandle<Probe>*> probe_handle{nullptr};
std::atomic<bool> probe_looked{false};
// A value whose copies, destroyed on a worker once the task's result is
// published, hold that worker until the joiner has read the counters.
struct Probe {
  int v = 0;
  explicit Probe(int x) : v(x) {}
  Probe(Probe&& o) noexcept : v(o.v) {}
  ~Probe();
};
Probe::~Probe() {
  if (taskplace_pool::detail::current_context() == nullptr) return;
  auto* h = probe_handle.load();
  if (h != nullptr && h->done()) (void)eventually([] { return probe_looked.load(); }, 5s);
}
task<Probe> probe_after(Event& go) {
  co_await go.wait();
  co_return Probe{1};
}
}  // namespace

TEST_CASE("a task counts as completed before its result is published", "[pool][join]") {
  CurrentPool pool{pool_test::two_cpus()};
  Event go;
  auto h = pool.spawn(probe_after(go));
  probe_handle.store(&h);
  go.set();
  const Probe p = h.get();
  const auto st = pool.stats();
  probe_handle.store(nullptr);
  probe_looked.store(true);
  CHECK(p.v == 1);
  CHECK(st.completed == 1);
  CHECK(st.spawned == 1);
}
