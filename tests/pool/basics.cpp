// The pool: tasks, spawning, exceptions, shutdown, pinning,
// channels and events, and that wake-ups go through the placer.
#include <pthread.h>
#include <sched.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "pool_test_support.hpp"
#include "taskplace/topology/sysfs.hpp"
#include "taskplace_pool/pool.hpp"

using namespace std::chrono_literals;
using taskplace_pool::Channel;
using taskplace_pool::ChannelClosed;
using taskplace_pool::Event;
using taskplace_pool::JoinHandle;
using taskplace_pool::Pinning;
using taskplace_pool::PoolOptions;
using taskplace_pool::task;
using pool_test::UniformPool;

namespace {

task<void> bump(std::vector<std::atomic<int>>& counts, std::size_t i, bool yield_first) {
  if (yield_first) co_await taskplace_pool::yield{};
  counts[i].fetch_add(1, std::memory_order_relaxed);
}

task<int> twice(int x) { co_return 2 * x; }

task<int> fails(std::string what) {
  throw std::runtime_error(what);
  co_return 0;
}

task<std::string> catches() {
  try {
    (void)co_await fails("inner");
  } catch (const std::runtime_error& e) {
    co_return std::string("caught ") + e.what();
  }
  co_return "not caught";
}

task<int> awaits_spawned(UniformPool<taskplace::traits::Current>& p) {
  auto h = p.spawn(fails("spawned"));
  try {
    co_return co_await h;
  } catch (const std::runtime_error&) {
    co_return -1;
  }
}

}  // namespace

// Spawns 20,000 tasks (a third of them yielding once) on a two-worker pool
// of type P, shuts it down, and checks that each ran exactly once; `check`
// then sees the pool before it is destroyed.
template <class P, class Check>
void every_task_runs_once(Check&& check) {
  const std::size_t n = pool_test::sized(20'000);
  std::vector<std::atomic<int>> counts(n);
  taskplace_pool::ShutdownReport rep;
  {
    P pool{pool_test::two_cpus()};
    for (std::size_t i = 0; i < n; ++i) (void)pool.spawn(bump(counts, i, i % 3 == 0));
    rep = pool.shutdown();
    CHECK(pool.stats().spawned == n);
    check(pool);
  }
  std::size_t ran_once = 0;
  for (auto& c : counts) ran_once += c.load() == 1 ? 1 : 0;
  CHECK(ran_once == n);
  CHECK(rep.completed == n);
  CHECK(rep.abandoned == 0);
}

TEMPLATE_LIST_TEST_CASE("every spawned task runs exactly once", "[pool]", pool_test::Policies) {
  every_task_runs_once<UniformPool<TestType>>([](const auto&) {});
}

TEST_CASE("a pool balancing with today's kernel's success-rate dice runs every task once", "[pool][balance]") {
  // The balancer traits are the pool's third argument; with the dice each
  // worker's balancer state carries their per-level counts.
  using P = taskplace_pool::Pool<taskplace::UniformTopology, taskplace::traits::Current,
                                 taskplace::traits::BalanceLinux2026>;
  every_task_runs_once<P>([](const P& pool) {
    CHECK(pool.balancer_stats().get(taskplace::BalanceCounter::runs) > 0);  // workers ran dry and balanced
  });
}

TEST_CASE("a task's value reaches the coroutine that awaits it", "[pool]") {
  UniformPool<taskplace::traits::Current> pool{pool_test::two_cpus()};
  CHECK(pool.block_on(twice(21)) == 42);
}

TEST_CASE("an exception thrown in a task reaches its awaiter", "[pool]") {
  UniformPool<taskplace::traits::Current> pool{pool_test::two_cpus()};
  SECTION("a nested task's exception is caught by the awaiting task") {
    CHECK(pool.block_on(catches()) == "caught inner");
  }
  SECTION("a spawned task's exception reaches the task awaiting its handle") {
    CHECK(pool.block_on(awaits_spawned(pool)) == -1);
    pool.shutdown();
    CHECK(pool.stats().failed == 1);
  }
  SECTION("block_on rethrows on the calling thread") {
    CHECK_THROWS_WITH(pool.block_on(fails("outer")), "outer");
  }
}

namespace {
task<void> sleeps_then_counts(std::atomic<int>& n) {
  co_await taskplace_pool::sleep_for(200us);
  n.fetch_add(1);
}
task<void> waits_forever(Event& e, std::atomic<int>& n) {
  co_await e.wait();
  n.fetch_add(1);
}
}  // namespace

TEST_CASE("shutdown runs every pending task and reports the ones left waiting", "[pool]") {
  std::atomic<int> slept{0}, woke{0};
  Event never;
  UniformPool<taskplace::traits::Current> pool{pool_test::two_cpus()};
  for (int i = 0; i < 100; ++i) (void)pool.spawn(sleeps_then_counts(slept));
  for (int i = 0; i < 10; ++i) (void)pool.spawn(waits_forever(never, woke));
  const auto rep = pool.shutdown();
  CHECK(slept.load() == 100);  // sleeping tasks are pending work: they ran
  CHECK(woke.load() == 0);
  CHECK(rep.completed == 100);
  CHECK(rep.abandoned == 10);  // the waiters nobody can wake any more
  CHECK(pool.shutdown().abandoned == 10);  // idempotent
  CHECK_THROWS_AS(pool.spawn(twice(1)), std::logic_error);
}

namespace {
task<void> count_n(std::atomic<int>& n) {
  n.fetch_add(1);
  co_return;
}
// Returns: how many of CPUs 0..n-1 a thread may be pinned to here, asked
// of the OS directly from a scratch thread (online and in this process's
// cpuset: what the pool's workers will be granted).
unsigned pinnable_below(unsigned n) {
  unsigned ok = 0;
  std::thread probe([&] {
    for (unsigned c = 0; c < n && c < CPU_SETSIZE; ++c) {
      cpu_set_t set;
      CPU_ZERO(&set);
      CPU_SET(c, &set);
      if (::pthread_setaffinity_np(::pthread_self(), sizeof(set), &set) == 0) ++ok;
    }
  });
  probe.join();
  return ok;
}
}  // namespace

TEST_CASE("a pool whose pinning the OS refuses still runs every task", "[pool][pinning]") {
  std::atomic<int> n{0};
  SECTION("every pin refused") {
    UniformPool<taskplace::traits::Current> pool{pool_test::two_cpus(),
                                                 PoolOptions{.pinning = Pinning::simulate_failure}};
    for (int i = 0; i < 1000; ++i) (void)pool.spawn(count_n(n));
    pool.shutdown();
    CHECK(pool.started());
    CHECK(pool.pinned_workers() == 0);
  }
  SECTION("more workers than CPUs: the pins past the machine's CPUs fail") {
    UniformPool<taskplace::traits::Current> pool{pool_test::four_cpus()};
    for (int i = 0; i < 1000; ++i) (void)pool.spawn(count_n(n));
    pool.shutdown();
    CHECK(pool.worker_count() == 4);
    CHECK(pool.pinned_workers() == pinnable_below(4));  // 2 on a 2-CPU machine
  }
  CHECK(n.load() == 1000);
}

TEST_CASE("a pool over the running machine has one worker per allowed CPU, pinned", "[pool][pinning]") {
  // Only a machine without a CPU tree in sysfs may skip; with one, a
  // SysfsError is a failure.
  if (!std::filesystem::exists("/sys/devices/system/cpu/online")) {
    WARN("no CPU tree in sysfs here: skipped");
    return;
  }
  auto pool = std::make_unique<taskplace_pool::SystemPool<>>();
  std::atomic<int> n{0};
  for (int i = 0; i < 100; ++i) (void)pool->spawn(count_n(n));
  pool->shutdown();
  CHECK(n.load() == 100);
  CHECK(pool->worker_count() == pool->topology().cpu_count());
  CHECK(pool->pinned_workers() == pool->worker_count());
}

namespace {
task<void> produce(Channel<int>& ch, int from, int count) {
  for (int i = from; i < from + count; ++i) co_await ch.send(i);
}
task<std::vector<int>> consume_all(Channel<int>& ch) {
  std::vector<int> got;
  while (auto v = co_await ch.recv()) got.push_back(*v);
  co_return got;
}
task<std::vector<int>> bounded_order(UniformPool<taskplace::traits::Current>& p, std::size_t cap) {
  Channel<int> ch{cap};
  auto prod = p.spawn(produce(ch, 0, 500));
  auto cons = p.spawn(consume_all(ch));
  co_await prod;
  ch.close();
  co_return co_await cons;
}
task<bool> send_on_closed() {
  Channel<int> ch{4};
  ch.close();
  try {
    co_await ch.send(1);
  } catch (const ChannelClosed&) {
    co_return true;
  }
  co_return false;
}
}  // namespace

TEST_CASE("a channel delivers every value once, in order, at any capacity", "[pool][channel]") {
  UniformPool<taskplace::traits::Current> pool{pool_test::two_cpus()};
  const std::size_t cap = GENERATE(std::size_t{0}, std::size_t{1}, std::size_t{2},
                                   std::size_t{64}, Channel<int>::unbounded);
  const auto got = pool.block_on(bounded_order(pool, cap));
  REQUIRE(got.size() == 500);
  bool ordered = true;
  for (std::size_t i = 0; i < got.size(); ++i) ordered = ordered && got[i] == static_cast<int>(i);
  CHECK(ordered);
}

TEST_CASE("a full channel refuses try_send and a closed one refuses send", "[pool][channel]") {
  UniformPool<taskplace::traits::Current> pool{pool_test::two_cpus()};
  Channel<int> ch{2};
  CHECK(ch.try_send(1));
  CHECK(ch.try_send(2));
  CHECK_FALSE(ch.try_send(3));  // capacity 2
  CHECK(ch.try_recv() == 1);
  CHECK(ch.size() == 1);
  ch.close();
  CHECK(ch.try_recv() == 2);  // drained after close
  CHECK_FALSE(ch.try_recv().has_value());
  CHECK_THROWS_AS(ch.try_send(4), ChannelClosed);
  CHECK(pool.block_on(send_on_closed()));
}

namespace {
// Each waiter notes its turn and blocks in the same run: on one worker
// nothing else runs between the two, so turn order is queueing order.
task<int> recv_in_turn(Channel<int>& ch, int& arrived) {
  const int turn = arrived++;
  auto v = co_await ch.recv();
  co_return v ? *v - turn : -1000;  // 0 when served in turn
}
task<void> send_in_turn(Channel<int>& ch, int& arrived) {
  const int turn = arrived++;
  co_await ch.send(turn);
}
task<bool> send_fails_in_turn(Channel<int>& ch, int& arrived) {
  ++arrived;
  try {
    co_await ch.send(7);
  } catch (const ChannelClosed&) {
    co_return true;
  }
  co_return false;
}
task<bool> recv_gets_nothing(Channel<int>& ch, int& arrived) {
  ++arrived;
  co_return !(co_await ch.recv()).has_value();
}
task<void> until(const int& arrived, int n) {
  while (arrived < n) co_await taskplace_pool::yield{};
}
// Three blocked receivers, then three blocked senders, are served first
// come first served; closing a channel with three blocked receivers and
// another with three blocked senders wakes all six, each as documented.
task<std::vector<int>> waiters_in_order(UniformPool<taskplace::traits::Current>& p) {
  std::vector<int> out;  // 0 = as expected
  Channel<int> rendezvous{0};
  int arrived = 0;
  std::vector<JoinHandle<int>> rs;
  for (int i = 0; i < 3; ++i) rs.push_back(p.spawn(recv_in_turn(rendezvous, arrived)));
  co_await until(arrived, 3);
  for (int i = 0; i < 3; ++i) co_await rendezvous.send(i);
  for (auto& r : rs) out.push_back(co_await r);

  Channel<int> full{1};
  (void)full.try_send(100);
  arrived = 0;
  std::vector<JoinHandle<void>> ss;
  for (int i = 0; i < 3; ++i) ss.push_back(p.spawn(send_in_turn(full, arrived)));
  co_await until(arrived, 3);
  for (int want : {100, 0, 1, 2}) out.push_back(*co_await full.recv() - want);
  for (auto& s : ss) co_await s;

  Channel<int> no_senders{0}, no_receivers{0};
  arrived = 0;
  std::vector<JoinHandle<bool>> closed;
  for (int i = 0; i < 3; ++i) closed.push_back(p.spawn(recv_gets_nothing(no_senders, arrived)));
  for (int i = 0; i < 3; ++i) closed.push_back(p.spawn(send_fails_in_turn(no_receivers, arrived)));
  co_await until(arrived, 6);
  no_senders.close();
  no_receivers.close();
  for (auto& c : closed) out.push_back(co_await c ? 0 : 1);
  co_return out;
}
}  // namespace

TEST_CASE("a channel serves its blocked waiters in the order they came, and close wakes them all",
          "[pool][channel]") {
  UniformPool<taskplace::traits::Current> pool{pool_test::one_cpu()};
  const auto got = pool.block_on(waiters_in_order(pool));
  // 3 receivers in turn, then 100 (the buffered value) and 3 senders in
  // turn, then 3 receivers given nullopt and 3 senders given ChannelClosed.
  CHECK(got == std::vector<int>(3 + 4 + 6, 0));
}

TEST_CASE("a wait list is a FIFO that empties and refills", "[pool][channel]") {
  struct Node {
    int id;
    Node* next_waiter = nullptr;
    bool queued = false;
  };
  taskplace_pool::detail::WaitList<Node> l;
  Node a{1}, b{2}, c{3};
  CHECK(l.empty());
  l.push_back(&a);
  l.push_back(&b);
  CHECK(l.front() == &a);
  l.pop_front();
  l.pop_front();
  CHECK(l.empty());  // the tail went with the last node
  l.push_back(&c);
  CHECK(l.front() == &c);
  l.push_back(&a);
  l.push_back(&b);
  std::vector<int> order;
  for (Node* n = l.take_all(); n != nullptr; n = n->next_waiter) order.push_back(n->id);
  CHECK(order == std::vector<int>{3, 1, 2});
  CHECK(l.empty());
  CHECK_FALSE((a.queued || b.queued || c.queued));  // take_all takes each node off
  l.push_back(&b);  // usable again after take_all
  CHECK(l.front() == &b);
}

namespace {
task<void> wait_and_count(Event& e, std::atomic<int>& n) {
  co_await e.wait();
  n.fetch_add(1);
}
task<bool> blocking_get_on_worker(UniformPool<taskplace::traits::Current>& p) {
  auto h = p.spawn(twice(1));
  bool refused = false;
  try {
    (void)h.get();
  } catch (const std::logic_error&) {
    refused = true;
  }
  co_return refused && co_await h == 2;
}
}  // namespace

TEST_CASE("an event set from outside the pool wakes every waiter", "[pool][event]") {
  UniformPool<taskplace::traits::Current> pool{pool_test::two_cpus()};
  Event e;
  std::atomic<int> n{0};
  std::vector<JoinHandle<void>> hs;
  for (int i = 0; i < 50; ++i) hs.push_back(pool.spawn(wait_and_count(e, n)));
  std::this_thread::sleep_for(5ms);
  CHECK(n.load() == 0);
  e.set();
  for (auto& h : hs) REQUIRE(h.wait_for(10s));
  CHECK(n.load() == 50);
  CHECK(e.is_set());
}

TEST_CASE("threads off the pool waking tasks at once share one placer safely", "[pool][event]") {
  // Four threads each set their own event, at the same time, each waking
  // 25 waiting tasks: every wake-up from off the pool goes through the
  // pool's one shared placer, under its lock (ThreadSanitizer runs this).
  // Its counts, single-writer counters, must come out exact: as many as
  // the pool's own count of wake-ups.
  UniformPool<taskplace::traits::Current> pool{pool_test::two_cpus()};
  constexpr int setters = 4, per_event = 25;
  std::vector<std::unique_ptr<Event>> events;
  std::atomic<int> n{0};
  std::vector<JoinHandle<void>> hs;
  for (int k = 0; k < setters; ++k) {
    events.push_back(std::make_unique<Event>());
    for (int i = 0; i < per_event; ++i) hs.push_back(pool.spawn(wait_and_count(*events.back(), n)));
  }
  std::this_thread::sleep_for(5ms);
  pool.reset_stats();
  std::atomic<bool> go{false};
  std::vector<std::thread> ts;
  for (int k = 0; k < setters; ++k)
    ts.emplace_back([&, k] {
      while (!go.load()) std::this_thread::yield();
      events[static_cast<std::size_t>(k)]->set();
    });
  go = true;
  for (auto& t : ts) t.join();
  for (auto& h : hs) REQUIRE(h.wait_for(10s));
  CHECK(n.load() == setters * per_event);
  const auto woken = pool.stats().wakeups;
  CHECK(woken <= static_cast<std::uint64_t>(setters * per_event));
  CHECK(pool.placer_stats().get(taskplace::WakeCounter::wakeups) == woken);
}

TEST_CASE("blocking on a handle from a worker thread is refused", "[pool]") {
  UniformPool<taskplace::traits::Current> pool{pool_test::two_cpus()};
  CHECK(pool.block_on(blocking_get_on_worker(pool)));
}

namespace {
task<void> ping(Channel<int>& out, Channel<int>& in, int n) {
  for (int i = 0; i < n; ++i) {
    co_await out.send(i);
    (void)co_await in.recv();
  }
  out.close();
}
task<void> pong(Channel<int>& in, Channel<int>& out) {
  while (auto v = co_await in.recv()) co_await out.send(*v);
}
template <class Pool>
task<void> ping_pong(Pool& p, int n, taskplace_pool::WakeHint hint = taskplace_pool::WakeHint::sync) {
  // Rendezvous channels: every message is exactly one wake-up (whichever
  // side comes second wakes the one waiting).
  Channel<int> a{0, hint}, b{0, hint};
  auto x = p.spawn(pong(a, b));
  auto y = p.spawn(ping(a, b, n));
  co_await y;
  co_await x;
}
}  // namespace

TEST_CASE("every wake-up between tasks is placed by the placer", "[pool][placement]") {
  const int n = static_cast<int>(pool_test::sized(5000));
  SECTION("AlwaysAffine queues every wakee on the waking worker") {
    UniformPool<taskplace::traits::AlwaysAffine> pool{pool_test::two_cpus()};
    pool.block_on(ping_pong(pool, n));
    const auto st = pool.stats();
    CHECK(st.wakeups >= static_cast<std::uint64_t>(2 * n));  // one per message
    CHECK(st.affine_wakeups == st.wakeups);
    CHECK(pool.placer_stats().get(taskplace::WakeCounter::wakeups) >= st.wakeups);
  }
  SECTION("PrevCpu never pulls a wakee to the waking worker") {
    UniformPool<taskplace::traits::PrevCpu> pool{pool_test::two_cpus()};
    pool.block_on(ping_pong(pool, n));
    CHECK(pool.placer_stats().get(taskplace::WakeCounter::affine_pulled) == 0);
    CHECK(pool.placer_stats().get(taskplace::WakeCounter::prev_kept) ==
          pool.placer_stats().get(taskplace::WakeCounter::wakeups));
  }
  SECTION("Current searches for an idle worker and finds one") {
    UniformPool<taskplace::traits::Current> pool{pool_test::two_cpus()};
    pool.block_on(ping_pong(pool, n));
    const auto& ps = pool.placer_stats();
    CHECK(ps.get(taskplace::WakeCounter::wakeups) >= static_cast<std::uint64_t>(2 * n));
    const auto idle_found = ps.get(taskplace::WakeCounter::idle_target) +
                            ps.get(taskplace::WakeCounter::idle_prev) +
                            ps.get(taskplace::WakeCounter::idle_recent) +
                            ps.get(taskplace::WakeCounter::idle_scan);
    CHECK(idle_found + ps.get(taskplace::WakeCounter::target_busy) ==
          ps.get(taskplace::WakeCounter::wakeups));
  }
}

namespace {
// Counts the placements the affine step's sync rule decided.
struct SyncRuleHook {
  static inline std::atomic<std::uint64_t> decided{0};
  void operator()(const taskplace::WakeEvent& e) const noexcept {
    if (e.placement.affine == taskplace::AffineReason::sync) decided.fetch_add(1, std::memory_order_relaxed);
  }
};
struct CurrentWithSyncHook : taskplace::traits::Current {
  using Hook = SyncRuleHook;
};
}  // namespace

TEST_CASE("channel wake-ups carry the sync hint unless the channel is async", "[pool][placement]") {
  // Two tasks on two workers: a wake-up from the busy waking worker whose
  // queue is empty is decided by the sync rule exactly when it has the hint.
  // The options keep Current spreading the pair (pool_test::spreading;
  // wake-ups within one worker never reach the affine step).
  const int n = static_cast<int>(pool_test::sized(5000));
  const PoolOptions spread = pool_test::spreading();
  SECTION("sync (the default): the sync rule decides") {
    SyncRuleHook::decided = 0;
    UniformPool<CurrentWithSyncHook> pool{pool_test::two_cpus(), spread};
    pool.block_on(ping_pong(pool, n));
    const auto ps = pool.placer_stats();
    const auto st = pool.stats();
    std::string counters;
    for (std::size_t i = 0; i < static_cast<std::size_t>(taskplace::WakeCounter::count_); ++i)
      counters += std::string(taskplace::to_string(static_cast<taskplace::WakeCounter>(i))) + "=" +
                  std::to_string(ps.get(static_cast<taskplace::WakeCounter>(i))) + " ";
    INFO(counters << "migrations=" << st.migrations << " steals=" << st.steals << " parks=" << st.parks);
    CHECK(SyncRuleHook::decided.load() > 2);
  }
  SECTION("async: only the two join wake-ups can be sync") {
    SyncRuleHook::decided = 0;
    UniformPool<CurrentWithSyncHook> pool{pool_test::two_cpus(), spread};
    pool.block_on(ping_pong(pool, n, taskplace_pool::WakeHint::async));
    CHECK(SyncRuleHook::decided.load() <= 2);
    CHECK(pool.stats().wakeups >= static_cast<std::uint64_t>(2 * n));
  }
}

TEST_CASE("a hand-off channel keeps a ping-pong pair on one worker under Current", "[pool][placement]") {
  // WakeHint::handoff is the placer's Wakeup::current_cpu: every wake-up
  // from inside a task lands on the waking worker, where Current, left to
  // itself on an idle machine, sends each one to the idle prev (the test
  // above). The options are that test's, so that nothing else keeps the
  // pair together.
  const int n = static_cast<int>(pool_test::sized(5000));
  const PoolOptions spread = pool_test::spreading();
  UniformPool<taskplace::traits::Current> pool{pool_test::two_cpus(), spread};
  pool.block_on(ping_pong(pool, n, taskplace_pool::WakeHint::handoff));
  const auto st = pool.stats();
  const auto& ps = pool.placer_stats();
  CHECK(st.wakeups >= static_cast<std::uint64_t>(2 * n));
  // Every in-pool wake-up of a message is a hand-off; at most three go
  // through the decision (sync, not hand-offs), each only if the one it
  // wakes is already waiting: the close that ends pong's loop and the two
  // joins of the root task.
  CHECK(ps.get(taskplace::WakeCounter::current_cpu) >= static_cast<std::uint64_t>(2 * n));
  CHECK(ps.get(taskplace::WakeCounter::wakeups) - ps.get(taskplace::WakeCounter::current_cpu) <= 3);
  CHECK(st.affine_wakeups + 3 >= st.wakeups);
}

TEST_CASE("a worker that runs dry balances only while some worker holds two or more tasks",
          "[pool][balance]") {
  // Current on an idle pair of workers spreads a ping-pong pair (every
  // wake-up to the idle prev), so no worker ever holds two tasks for
  // long: with the overload gate (kernel v3.16) most newly idle balances
  // are skipped at once; without it none is.
  const int n = static_cast<int>(pool_test::sized(5000));
  PoolOptions gated = pool_test::spreading(), ungated = pool_test::spreading();
  ungated.overload_gate = false;
  UniformPool<taskplace::traits::Current> a{pool_test::two_cpus(), gated};
  a.block_on(ping_pong(a, n));
  const auto sa = a.balancer_stats();
  UniformPool<taskplace::traits::Current> b{pool_test::two_cpus(), ungated};
  b.block_on(ping_pong(b, n));
  const auto sb = b.balancer_stats();
  INFO("gated: runs " << sa.get(taskplace::BalanceCounter::runs) << ", skipped "
                      << sa.get(taskplace::BalanceCounter::not_overloaded_skips) << "; ungated: runs "
                      << sb.get(taskplace::BalanceCounter::runs));
  CHECK(sa.get(taskplace::BalanceCounter::not_overloaded_skips) > 0);
  CHECK(sa.get(taskplace::BalanceCounter::not_overloaded_skips) <= sa.get(taskplace::BalanceCounter::runs));
  CHECK(sb.get(taskplace::BalanceCounter::not_overloaded_skips) == 0);
  CHECK(sb.get(taskplace::BalanceCounter::runs) > 0);
  // Every message arrived either way (ping_pong checks the count).
  CHECK(a.stats().wakeups >= static_cast<std::uint64_t>(2 * n));
  CHECK(b.stats().wakeups >= static_cast<std::uint64_t>(2 * n));
}

TEST_CASE("a worker that lost its CPU lately is not idle to the placer", "[pool][placement]") {
  // With a 1 ns gap every spinning or woken worker counts as preempted, so
  // Current finds no idle worker and keeps each wakee on the waking one
  // (sync rule, then nothing idle); without the rule it spreads the pair.
  const int n = static_cast<int>(pool_test::sized(5000));
  PoolOptions always;
  always.preempt_gap = 1ns;
  always.preempted_for = 1s;
  UniformPool<taskplace::traits::Current> pool{pool_test::two_cpus(), always};
  pool.block_on(ping_pong(pool, n));
  const auto st = pool.stats();
  CHECK(st.wakeups >= static_cast<std::uint64_t>(2 * n));
  CHECK(st.affine_wakeups * 10 >= st.wakeups * 9);
  CHECK(pool.placer_stats().get(taskplace::WakeCounter::idle_prev) * 10 <= st.wakeups);
}

namespace {
// `waiter` blocks on `go`; `waker` sets it with the sync hint (on one
// worker: the waking worker, so the hand-off slot), then reads what the
// placer would read of its worker, before and after it blocks itself.
task<void> blocks_on(Event& ready, Event& go) {
  ready.set();  // queues the waker behind this task: one worker
  co_await go.wait();
}
struct SlotView {
  std::uint32_t before = 0, with_slot = 0, after_run = 0;
  bool idle_with_slot = true;
};
template <class Pool>
task<void> hands_off(Pool& pool, Event& ready, Event& go, SlotView& v) {
  co_await ready.wait();
  const typename Pool::Machine m{pool};
  v.before = m.nr_running(0);  // this task, running
  go.set(taskplace_pool::WakeHint::sync);
  v.with_slot = m.nr_running(0);  // and the waiter, in the slot
  v.idle_with_slot = m.is_idle(0);
  co_await taskplace_pool::yield{};  // the waiter runs from the slot and ends
  v.after_run = m.nr_running(0);
}
}  // namespace

TEST_CASE("a task in the hand-off slot counts on its worker for the placer", "[pool][placement]") {
  // The slot's own flag, not the shared queued count, says it is full;
  // the other workers' placements and balances must still see the task
  // (kernel: a wakee queued on the waker's runqueue is in its nr_running).
  pool_test::CurrentPool pool{pool_test::one_cpu()};
  Event ready, go;
  SlotView v;
  auto w = pool.spawn(blocks_on(ready, go));
  pool.block_on(hands_off(pool, ready, go, v));
  w.get();
  CHECK(v.before == 1);
  CHECK(v.with_slot == 2);
  CHECK_FALSE(v.idle_with_slot);
  CHECK(v.after_run == 1);
}

namespace {
// Round trips over two channels until `stop`; counts them in `rounds`.
task<void> ping_until(Channel<int>& out, Channel<int>& in, std::atomic<bool>& stop,
                      std::atomic<int>& rounds) {
  while (!stop.load()) {
    co_await out.send(1);
    (void)co_await in.recv();
    rounds.fetch_add(1);
  }
  out.close();
}
}  // namespace

TEST_CASE("a pair handing off through the slot on one worker never wakes the parked worker",
          "[pool][placement]") {
  // At every tick of the pair's worker the slot holds the next of the two
  // (the waker just blocked): a task the worker holds, but no thief's. A
  // kick, or an overload that has the parked worker wake each tick, would
  // wake it to find nothing it may take (each a futex wake-up on the
  // busy worker's path). Ticks of 100 us: some 300 in the 30 ms measured.
  PoolOptions o;
  o.tick = 100us;
  UniformPool<taskplace::traits::AlwaysAffine> pool{pool_test::two_cpus(), o};
  Channel<int> ab{1}, ba{1};  // sync wake-ups: each goes to the waker's slot
  std::atomic<bool> stop{false};
  std::atomic<int> rounds{0};
  auto b = pool.spawn(pong(ab, ba));
  auto a = pool.spawn(ping_until(ab, ba, stop, rounds));
  // The spawns may start the two on two workers; AlwaysAffine brings the
  // second to the first's worker at its first wake-up.
  REQUIRE(pool_test::eventually([&] { return rounds.load() >= 1000; }));
  std::this_thread::sleep_for(5ms);  // the other worker runs dry and parks
  pool.reset_stats();
  const int before = rounds.load();
  std::this_thread::sleep_for(30ms);
  const auto st = pool.stats();
  stop = true;
  a.get();
  b.get();
  CHECK(rounds.load() - before > 1000);
  CHECK(st.migrations == 0);
  CHECK(st.kicks == 0);
}

namespace {
// Keeps its worker's thread until `release`: the worker is busy meanwhile.
task<void> holds_worker(std::atomic<int>& holding, std::atomic<bool>& release) {
  holding.fetch_add(1);
  while (!release.load()) std::this_thread::yield();
  co_return;
}
}  // namespace

TEST_CASE("the LLC's busy share is sampled once a tick, not read from every worker at each wake-up",
          "[pool][placement]") {
  // Kernel: SIS_UTIL's nr_idle_scan is written by the periodic balance and
  // read by the wake-ups; reading every worker of the LLC at each wake-up
  // costs a remote line per CPU of the LLC. A tick of an hour: no sample
  // expires while the test runs unless the test's times say so.
  PoolOptions o;
  o.tick = 1h;
  pool_test::CurrentPool pool{pool_test::two_cpus(), o};
  using M = pool_test::CurrentPool::Machine;
  REQUIRE(pool_test::eventually([&] { return M{pool}.is_idle(0) && M{pool}.is_idle(1); }));
  const taskplace::Nanoseconds t = taskplace::TscClock::process().now();
  CHECK(M{pool, t}.llc_utilization_pct(0) == 0);  // both idle: sampled now

  std::atomic<int> holding{0};
  std::atomic<bool> release{false};
  auto a = pool.spawn(holds_worker(holding, release));
  auto b = pool.spawn(holds_worker(holding, release));  // the idlest worker: the other one
  REQUIRE(pool_test::eventually([&] { return holding.load() == 2; }));
  REQUIRE_FALSE(M{pool}.is_idle(0));
  REQUIRE_FALSE(M{pool}.is_idle(1));
  // Both busy now, but within a tick of the sample, through either CPU of
  // the LLC: the sample stands (reading the workers would give 100).
  CHECK(M{pool, t + 1ms}.llc_utilization_pct(1) == 0);
  CHECK(M{pool, t + 59min}.llc_utilization_pct(0) == 0);
  // A tick after it: a new sample.
  CHECK(M{pool, t + 1h}.llc_utilization_pct(0) == 100);
  // A time before the sample (another CPU's clock read) takes a new one.
  CHECK(M{pool, t + 1ms}.llc_utilization_pct(1) == 100);

  release = true;
  a.get();
  b.get();
  REQUIRE(pool_test::eventually([&] { return M{pool}.is_idle(0) && M{pool}.is_idle(1); }));
  CHECK(M{pool, t + 2ms}.llc_utilization_pct(0) == 100);  // the t + 1 ms sample
  CHECK(M{pool, t + 2h}.llc_utilization_pct(0) == 0);
}

namespace {
task<void> waits_on(Event& e) { co_await e.wait(); }
// Wakes the waiters of `a` and `b` with the sync hint in one run: the
// first goes to the hand-off slot with this run's unit of pending work,
// the second pushes it to the queue (where another worker may steal it
// and finish it while this task still spins) and takes the unit.
task<void> wakes_two(Event& a, Event& b, std::chrono::nanoseconds spin) {
  a.set(taskplace_pool::WakeHint::sync);
  b.set(taskplace_pool::WakeHint::sync);
  const auto until = std::chrono::steady_clock::now() + spin;
  while (std::chrono::steady_clock::now() < until) {
  }
  co_return;
}
// Effects: shuts `pool` down on another thread; a shutdown that has not
// returned within 10 s fails the test (the thread is left behind, holding
// the pool) instead of hanging it.
template <class P>
taskplace_pool::ShutdownReport shutdown_within_10s(const std::shared_ptr<P>& pool) {
  auto out = std::make_shared<std::atomic<bool>>(false);
  auto rep = std::make_shared<taskplace_pool::ShutdownReport>();
  std::thread t([=] {
    *rep = pool->shutdown();
    out->store(true);
  });
  if (!pool_test::eventually([&] { return out->load(); }, 10s)) {
    t.detach();
    FAIL("shutdown() did not return: the count of pending work is off");
  }
  t.join();
  return *rep;
}
// Effects: 200 rounds (fewer under ThreadSanitizer) of two waiters and
// the task that wakes both (wakes_two, spinning `spin` after), each round
// on two events of its own; then shuts the pool down, which must return
// with every task completed.
template <class P>
void wake_rounds_then_shutdown(const std::shared_ptr<P>& pool, std::chrono::nanoseconds spin) {
  const int rounds = static_cast<int>(pool_test::sized(200));
  std::vector<std::unique_ptr<Event>> events;
  for (int i = 0; i < rounds; ++i) {
    events.push_back(std::make_unique<Event>());
    events.push_back(std::make_unique<Event>());
    Event& a = *events[events.size() - 2];
    Event& b = *events.back();
    (void)pool->spawn(waits_on(a));
    (void)pool->spawn(waits_on(b));
    (void)pool->spawn(wakes_two(a, b, spin));
  }
  const auto rep = shutdown_within_10s(pool);
  CHECK(rep.completed == static_cast<std::uint64_t>(3 * rounds));
  CHECK(rep.abandoned == 0);
}
}  // namespace

TEST_CASE("hand-offs that push the slot's task to the queue keep the count of pending work exact",
          "[pool][shutdown][placement]") {
  // shutdown() waits until the units counted pending equal those counted
  // done; a hand-off's wakee holds its waker's unit. A unit counted twice
  // or never makes shutdown wait forever or return with work left.
  SECTION("one worker: every round pushes the first wakee out of the slot") {
    // FIFO on one worker: both waiters block before the waker runs.
    wake_rounds_then_shutdown(std::make_shared<pool_test::CurrentPool>(pool_test::one_cpu()), 0ns);
  }
  SECTION("two workers: the pushed wakee may be stolen and finish while its waker runs") {
    wake_rounds_then_shutdown(
        std::make_shared<UniformPool<taskplace::traits::AlwaysAffine>>(pool_test::two_cpus()), 20us);
  }
}

TEST_CASE("a worker that runs dry goes through the newidle balance", "[pool][balance]") {
  UniformPool<taskplace::traits::AlwaysAffine> pool{pool_test::two_cpus()};
  std::atomic<int> n{0};
  for (int i = 0; i < 200; ++i) (void)pool.spawn([](std::atomic<int>& k) -> task<void> {
    for (int j = 0; j < 2000; ++j) std::atomic_signal_fence(std::memory_order_seq_cst);
    k.fetch_add(1);
    co_return;
  }(n));
  pool.shutdown();
  CHECK(n.load() == 200);
  CHECK(pool.balancer_stats().get(taskplace::BalanceCounter::runs) > 0);
}
