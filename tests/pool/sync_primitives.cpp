// The pool's Mutex, Semaphore and Latch: mutual exclusion across workers,
// FIFO hand-off to blocked waiters, the errors each one defines, what
// shutdown does with tasks blocked on them, and that their wake-ups are
// placed by the placer. Checks run on the test's thread: the tasks record
// what they saw and return it.
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <thread>
#include <type_traits>
#include <utility>
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
using taskplace_pool::Latch;
using taskplace_pool::Mutex;
using taskplace_pool::Semaphore;
using taskplace_pool::task;
using taskplace_pool::WakeHint;
using pool_test::CurrentPool;
using pool_test::one_cpu;

namespace {

task<void> until(const int& arrived, int n) {
  while (arrived < n) co_await taskplace_pool::yield{};
}
task<void> count_n(std::atomic<int>& n) {
  n.fetch_add(1);
  co_return;
}

// Runs `t` on `pool` and returns its value; a task that does not finish
// within `limit` (a lost wake-up) fails the test instead of hanging it.
template <class P, class T>
T finish(P& pool, task<T> t, std::chrono::nanoseconds limit = 30s) {
  auto h = pool.spawn(std::move(t));
  REQUIRE(h.wait_for(limit));
  return h.get();
}


}  // namespace

// --- the wait list's removals ---------------------------------------------------

TEST_CASE("a wait list gives up its first k nodes in order and unlinks any node", "[pool][sync]") {
  struct Node {
    int id;
    Node* next_waiter = nullptr;
    bool queued = false;
  };
  taskplace_pool::detail::WaitList<Node> l;
  Node a{1}, b{2}, c{3}, d{4};
  CHECK(l.take_front(3) == nullptr);
  for (Node* n : {&a, &b, &c, &d}) l.push_back(n);
  Node* first = l.take_front(2);
  std::vector<int> taken;
  for (Node* n = first; n != nullptr; n = n->next_waiter) taken.push_back(n->id);
  CHECK(taken == std::vector<int>{1, 2});  // the second's link was cut
  CHECK(l.front() == &c);
  // queued: set by push_back, cleared by what takes a node off.
  CHECK_FALSE(a.queued);
  CHECK_FALSE(b.queued);
  CHECK(c.queued);
  CHECK(d.queued);
  CHECK_FALSE(l.remove(&a));  // not queued any more
  CHECK(l.remove(&d));        // the tail: c is the tail now
  CHECK_FALSE(d.queued);
  l.push_back(&a);
  CHECK(l.remove(&c));  // the head
  CHECK(l.front() == &a);
  CHECK(l.remove(&a));
  CHECK(l.empty());
  l.push_back(&b);  // usable again: the tail went with the last node
  CHECK(l.take_front(10) == &b);
  CHECK(b.next_waiter == nullptr);
  CHECK_FALSE(b.queued);
  CHECK(l.empty());
}

// --- the primitives' spin lock -----------------------------------------------------

TEST_CASE("the primitives' spin lock keeps a plain count exact with more threads than CPUs",
          "[pool][sync][spin_lock]") {
  // Four threads on a machine of two CPUs or fewer: holders are preempted
  // inside the section, and the waiters must yield their CPU to them.
  taskplace_pool::detail::SpinLock m;
  long counter = 0;  // not atomic: only the lock orders the increments
  std::atomic<int> inside{0}, overlaps{0};
  constexpr int threads = 4;
  const long iters = pool_test::sized(100'000);
  std::vector<std::thread> ts;
  for (int i = 0; i < threads; ++i)
    ts.emplace_back([&] {
      for (long k = 0; k < iters; ++k) {
        std::lock_guard lk(m);
        if (inside.fetch_add(1, std::memory_order_relaxed) != 0) overlaps.fetch_add(1);
        ++counter;
        inside.fetch_sub(1, std::memory_order_relaxed);
      }
    });
  for (auto& t : ts) t.join();
  CHECK(overlaps.load() == 0);
  CHECK(counter == threads * iters);
  CHECK(m.try_lock());  // released by every holder
  m.unlock();
}

TEST_CASE("a held spin lock refuses try_lock and is taken again once released", "[pool][sync][spin_lock]") {
  taskplace_pool::detail::SpinLock m;
  REQUIRE(m.try_lock());
  CHECK_FALSE(m.try_lock());
  bool other_got_it = true;
  std::thread([&] { other_got_it = m.try_lock(); }).join();
  CHECK_FALSE(other_got_it);
  // A thread blocked in lock() gets it when the holder lets go.
  std::atomic<bool> got{false};
  std::thread waiter([&] {
    m.lock();
    got = true;
    m.unlock();
  });
  std::this_thread::sleep_for(20ms);
  CHECK_FALSE(got.load());
  m.unlock();
  waiter.join();
  CHECK(got.load());
  CHECK(m.try_lock());
  m.unlock();
}

// --- Mutex ------------------------------------------------------------------------

namespace {
// Locks, bumps a plain counter, unlocks, `iters` times; every fourth time
// through the scoped form, and every 64th time suspended while holding
// the lock, so that the others queue behind it. `overlaps` counts entries
// that found another task inside.
task<void> hammer(Mutex& m, long& counter, std::atomic<bool>& inside, std::atomic<int>& overlaps,
                  std::uint32_t iters, std::uint32_t id) {
  for (std::uint32_t i = 0; i < iters; ++i) {
    const bool scoped = (i + id) % 4 == 0;
    Mutex::Guard g;
    if (scoped)
      g = co_await m.scoped_lock();
    else
      co_await m.lock();
    if (inside.exchange(true, std::memory_order_relaxed)) overlaps.fetch_add(1);
    ++counter;  // not atomic: only the mutex orders the tasks' increments
    if (i % 64 == 0) co_await taskplace_pool::yield{};
    inside.store(false, std::memory_order_relaxed);
    if (scoped)
      g.unlock();
    else
      m.unlock();
  }
}

struct Hammered {
  long counter = 0;
  int overlaps = 0;
  bool free_after = false;
  std::uint64_t wakeups = 0;
};
// `m` outlives the pool: a task the pool destroys unlocks its guard.
template <class P>
Hammered hammer_on(P& pool, Mutex& m, std::uint32_t tasks, std::uint32_t iters) {
  Hammered out;
  std::atomic<bool> inside{false};
  std::atomic<int> overlaps{0};
  std::vector<JoinHandle<void>> hs;
  for (std::uint32_t t = 0; t < tasks; ++t) hs.push_back(pool.spawn(hammer(m, out.counter, inside, overlaps, iters, t)));
  for (auto& h : hs) REQUIRE(h.wait_for(20s));  // ~0.3 s in a Debug build
  out.overlaps = overlaps.load();
  out.free_after = m.try_lock();
  if (out.free_after) m.unlock();
  out.wakeups = pool.stats().wakeups;  // only unlocks that hand off wake anyone here
  return out;
}
}  // namespace

TEMPLATE_LIST_TEST_CASE("a mutex lets one task at a time in, across workers", "[pool][mutex]",
                        pool_test::Policies) {
  constexpr std::uint32_t tasks = 8;
  const std::uint32_t iters = pool_test::sized(20'000);
  Mutex m;
  UniformPool<TestType> pool{pool_test::two_cpus()};
  const Hammered r = hammer_on(pool, m, tasks, iters);
  CHECK(r.counter == static_cast<long>(tasks) * iters);
  CHECK(r.overlaps == 0);
  CHECK(r.free_after);
  CHECK(r.wakeups > 0);  // the contended path ran: some unlock handed the lock over
  CHECK(pool.shutdown().abandoned == 0);
}

TEST_CASE("a mutex lets one task at a time in with more workers than CPUs", "[pool][mutex]") {
  // Four workers on two CPUs: a holder's worker loses its CPU mid-section.
  constexpr std::uint32_t tasks = 8;
  const std::uint32_t iters = pool_test::sized(20'000);
  Mutex m;
  CurrentPool pool{pool_test::four_cpus()};
  const Hammered r = hammer_on(pool, m, tasks, iters);
  CHECK(r.counter == static_cast<long>(tasks) * iters);
  CHECK(r.overlaps == 0);
  CHECK(r.free_after);
}

namespace {
task<void> lock_in_turn(Mutex& m, int& arrived, std::vector<int>& order) {
  const int turn = arrived++;
  co_await m.lock();
  order.push_back(turn);
  m.unlock();
}
struct MutexFifo {
  std::vector<int> order;
  bool try_lock_while_held = true;
  bool try_lock_after_handoff = true;
  bool free_at_end = false;
};
// Holds the lock while five tasks queue on it in turn, releases it, and
// tries to take it back at once: the hand-off gave it to the first waiter.
task<MutexFifo> waiters_take_the_lock_in_turn(CurrentPool& p) {
  MutexFifo out;
  Mutex m;
  int arrived = 0;
  co_await m.lock();
  std::vector<JoinHandle<void>> hs;
  for (int i = 0; i < 5; ++i) hs.push_back(p.spawn(lock_in_turn(m, arrived, out.order)));
  co_await until(arrived, 5);
  out.try_lock_while_held = m.try_lock();
  m.unlock();
  out.try_lock_after_handoff = m.try_lock();
  if (out.try_lock_after_handoff) m.unlock();
  for (auto& h : hs) co_await h;
  out.free_at_end = m.try_lock();
  if (out.free_at_end) m.unlock();
  co_return out;
}
}  // namespace

TEST_CASE("a mutex hands itself to its blocked waiters in the order they came", "[pool][mutex]") {
  CurrentPool pool{one_cpu()};
  const MutexFifo r = finish(pool, waiters_take_the_lock_in_turn(pool));
  CHECK(r.order == std::vector<int>{0, 1, 2, 3, 4});
  CHECK_FALSE(r.try_lock_while_held);
  CHECK_FALSE(r.try_lock_after_handoff);  // no barging: the first waiter owns it
  CHECK(r.free_at_end);
}

namespace {
task<void> hold_until(Mutex& m, std::atomic<bool>& held, Event& release) {
  co_await m.lock();
  held.store(true);
  co_await release.wait();
  m.unlock();
}
}  // namespace

TEST_CASE("try_lock fails while a task holds the mutex and succeeds once it is released", "[pool][mutex]") {
  Mutex m;
  CHECK(m.try_lock());  // off the pool too
  CHECK_FALSE(m.try_lock());
  m.unlock();
  std::atomic<bool> held{false};
  Event release;
  CurrentPool pool{pool_test::two_cpus()};
  auto h = pool.spawn(hold_until(m, held, release));
  REQUIRE(eventually([&] { return held.load(); }));
  CHECK_FALSE(m.try_lock());
  release.set();
  REQUIRE(h.wait_for(10s));
  CHECK(m.try_lock());
  m.unlock();
}

namespace {
struct GuardSteps {
  bool owned_in_scope = false;
  bool held_in_scope = true;       // try_lock inside the scope succeeded (wrong)
  bool free_after_scope = false;
  bool caught = false;
  bool free_after_throw = false;
  bool moved_from_empty = false;
  bool moved_to_owns = false;
  bool free_after_early_unlock = false;
};
task<GuardSteps> guard_steps(Mutex& m) {
  GuardSteps s;
  {
    auto g = co_await m.scoped_lock();
    s.owned_in_scope = g.owns_lock();
    s.held_in_scope = m.try_lock();
  }
  s.free_after_scope = m.try_lock();
  if (s.free_after_scope) m.unlock();
  try {
    auto g = co_await m.scoped_lock();
    throw std::runtime_error("inside the section");
  } catch (const std::runtime_error&) {
    s.caught = true;
  }
  s.free_after_throw = m.try_lock();
  if (s.free_after_throw) m.unlock();
  {
    auto g = co_await m.scoped_lock();
    Mutex::Guard h = std::move(g);
    s.moved_from_empty = !g.owns_lock();
    s.moved_to_owns = h.owns_lock();
    h.unlock();  // early; the destructors then unlock nothing
    s.free_after_early_unlock = !h.owns_lock() && m.try_lock();
    if (s.free_after_early_unlock) m.unlock();
  }
  co_return s;
}
}  // namespace

TEST_CASE("a mutex guard unlocks when its scope ends, also by an exception", "[pool][mutex]") {
  CHECK_FALSE(std::is_copy_constructible_v<Mutex::Guard>);
  CHECK_FALSE(std::is_copy_assignable_v<Mutex::Guard>);
  CHECK(std::is_nothrow_move_constructible_v<Mutex::Guard>);
  Mutex m;
  CurrentPool pool{pool_test::two_cpus()};
  const GuardSteps s = finish(pool, guard_steps(m));
  CHECK(s.owned_in_scope);
  CHECK_FALSE(s.held_in_scope);
  CHECK(s.free_after_scope);
  CHECK(s.caught);
  CHECK(s.free_after_throw);
  CHECK(s.moved_from_empty);
  CHECK(s.moved_to_owns);
  CHECK(s.free_after_early_unlock);
  CHECK(m.try_lock());
  m.unlock();
}

TEST_CASE("unlocking a mutex that is not locked throws std::logic_error and changes nothing",
          "[pool][mutex]") {
  Mutex m;
  CHECK_THROWS_AS(m.unlock(), std::logic_error);
  CHECK(m.try_lock());  // still usable
  m.unlock();
  CHECK_THROWS_AS(m.unlock(), std::logic_error);  // a second unlock
  CHECK(m.try_lock());
  CHECK_FALSE(m.try_lock());  // the failed unlocks did not leave it half-released
  m.unlock();
  Mutex::Guard empty;
  CHECK_FALSE(empty.owns_lock());
  CHECK_THROWS_AS(empty.unlock(), std::logic_error);
}

// --- Semaphore ------------------------------------------------------------------------

namespace {
// Holds a permit until `permits` holders were inside at once (or 5 s
// passed), then 200 us more: a semaphore that let one more in would show it.
task<void> hold_permit(Semaphore& s, std::atomic<int>& inflight, std::atomic<int>& most, int permits) {
  co_await s.acquire();
  const int now = inflight.fetch_add(1) + 1;
  int seen = most.load();
  while (now > seen && !most.compare_exchange_weak(seen, now)) {
  }
  const auto limit = std::chrono::steady_clock::now() + 5s;
  while (most.load() < permits && std::chrono::steady_clock::now() < limit)
    co_await taskplace_pool::sleep_for(20us);
  co_await taskplace_pool::sleep_for(200us);
  inflight.fetch_sub(1);
  s.release();
}
}  // namespace

TEST_CASE("a semaphore of P permits lets exactly P tasks in at once", "[pool][semaphore]") {
  constexpr int permits = 3, tasks = 16;
  for (const auto& topo : {pool_test::two_cpus(), pool_test::four_cpus()}) {
    INFO(topo.cpu_count() << " workers");
    Semaphore s{permits};
    std::atomic<int> inflight{0}, most{0};
    CurrentPool pool{topo};
    std::vector<JoinHandle<void>> hs;
    for (int i = 0; i < tasks; ++i) hs.push_back(pool.spawn(hold_permit(s, inflight, most, permits)));
    for (auto& h : hs) REQUIRE(h.wait_for(30s));
    CHECK(most.load() == permits);
    CHECK(inflight.load() == 0);
    CHECK(s.available() == static_cast<std::size_t>(permits));
  }
}

namespace {
task<void> acquire_in_turn(Semaphore& s, int& arrived, std::vector<int>& order) {
  const int turn = arrived++;
  co_await s.acquire();
  order.push_back(turn);
}
struct SemaphoreFifo {
  std::vector<int> order;
  bool try_acquire_after_handoff = true;
  std::size_t available_after_handoff = 99;
  std::size_t available_after_rest = 99;
};
// Five tasks queue on an empty semaphore in turn; one permit goes to the
// first of them, not to the releaser's try_acquire; five more serve the
// other four and leave one in the count.
task<SemaphoreFifo> waiters_get_permits_in_turn(CurrentPool& p) {
  SemaphoreFifo out;
  Semaphore s{0};
  int arrived = 0;
  std::vector<JoinHandle<void>> hs;
  for (int i = 0; i < 5; ++i) hs.push_back(p.spawn(acquire_in_turn(s, arrived, out.order)));
  co_await until(arrived, 5);
  s.release();
  out.try_acquire_after_handoff = s.try_acquire();
  out.available_after_handoff = s.available();
  s.release(5);
  out.available_after_rest = s.available();
  for (auto& h : hs) co_await h;
  co_return out;
}
}  // namespace

TEST_CASE("a semaphore hands released permits to its blocked waiters in the order they came",
          "[pool][semaphore]") {
  CurrentPool pool{one_cpu()};
  const SemaphoreFifo r = finish(pool, waiters_get_permits_in_turn(pool));
  CHECK(r.order == std::vector<int>{0, 1, 2, 3, 4});
  CHECK_FALSE(r.try_acquire_after_handoff);  // the permit went to the first waiter
  CHECK(r.available_after_handoff == 0);
  CHECK(r.available_after_rest == 1);  // 5 released, 4 handed to waiters
}

namespace {
struct Overflowed {
  bool threw = false;
  int woken_after_throw = -1;
  std::size_t available_after_throw = 99;
  std::size_t available_at_end = 99;
};
task<void> acquire_and_count(Semaphore& s, int& arrived, int& woken) {
  ++arrived;
  co_await s.acquire();
  ++woken;
}
// Three waiters on a semaphore of at most one permit: a release of five
// would leave two in the count and throws, waking no one; four fit.
task<Overflowed> release_past_the_maximum(CurrentPool& p) {
  Overflowed out;
  Semaphore s{0, 1};
  int arrived = 0, woken = 0;
  std::vector<JoinHandle<void>> hs;
  for (int i = 0; i < 3; ++i) hs.push_back(p.spawn(acquire_and_count(s, arrived, woken)));
  co_await until(arrived, 3);
  try {
    s.release(5);
  } catch (const std::overflow_error&) {
    out.threw = true;
  }
  co_await taskplace_pool::yield{};  // anything woken would run now
  out.woken_after_throw = woken;
  out.available_after_throw = s.available();
  s.release(4);
  for (auto& h : hs) co_await h;
  out.available_at_end = s.available();
  co_return out;
}
}  // namespace

TEST_CASE("a release that would take a semaphore past its maximum throws std::overflow_error and changes nothing",
          "[pool][semaphore]") {
  Semaphore s{2, 3};
  CHECK(s.max_permits() == 3);
  s.release();
  CHECK(s.available() == 3);
  CHECK_THROWS_AS(s.release(), std::overflow_error);
  CHECK(s.available() == 3);
  CHECK(s.try_acquire());
  CHECK(s.available() == 2);
  Semaphore full{std::numeric_limits<std::size_t>::max()};  // the default maximum
  CHECK_THROWS_AS(full.release(), std::overflow_error);
  CHECK(full.available() == std::numeric_limits<std::size_t>::max());
  CHECK_THROWS_AS(Semaphore(4, 3), std::invalid_argument);
  Semaphore none{0};
  CHECK_FALSE(none.try_acquire());

  CurrentPool pool{one_cpu()};
  const Overflowed r = finish(pool, release_past_the_maximum(pool));
  CHECK(r.threw);
  CHECK(r.woken_after_throw == 0);
  CHECK(r.available_after_throw == 0);
  CHECK(r.available_at_end == 1);
}

// --- Latch ------------------------------------------------------------------------

namespace {
task<int> wait_on_latch(Latch& l, const std::atomic<int>& counted, std::atomic<int>& resumed) {
  co_await l.wait();
  resumed.fetch_add(1);
  co_return counted.load();
}
task<void> count_down_after(Latch& l, std::atomic<int>& counted, Event* go) {
  if (go != nullptr) co_await go->wait();
  counted.fetch_add(1);
  l.count_down();
}
}  // namespace

TEST_CASE("a latch releases its waiters only after the last of N tasks counted down", "[pool][latch]") {
  constexpr int n = 16, waiters = 4;
  Latch l{n};
  Event last;
  std::atomic<int> counted{0}, resumed{0}, late{0};
  CurrentPool pool{pool_test::two_cpus()};
  std::vector<JoinHandle<int>> ws;
  for (int i = 0; i < waiters; ++i) ws.push_back(pool.spawn(wait_on_latch(l, counted, resumed)));
  std::vector<JoinHandle<void>> cs;
  for (int i = 0; i < n - 1; ++i) cs.push_back(pool.spawn(count_down_after(l, counted, nullptr)));
  auto final_one = pool.spawn(count_down_after(l, counted, &last));  // waits for `last`
  for (auto& c : cs) REQUIRE(c.wait_for(10s));
  CHECK(counted.load() == n - 1);
  std::this_thread::sleep_for(20ms);  // time for a waiter woken too early to run
  CHECK(resumed.load() == 0);
  CHECK_FALSE(l.try_wait());
  last.set();
  for (auto& w : ws) {
    REQUIRE(w.wait_for(10s));
    CHECK(w.get() == n);  // every waiter saw all N count-downs
  }
  REQUIRE(final_one.wait_for(10s));
  CHECK(resumed.load() == waiters);
  CHECK(l.try_wait());
  CHECK(finish(pool, wait_on_latch(l, counted, late)) == n);  // a wait on a done latch returns at once
}

TEST_CASE("counting a latch down below zero throws std::logic_error and changes nothing", "[pool][latch]") {
  Latch l{2};
  CHECK_FALSE(l.try_wait());
  CHECK_THROWS_AS(l.count_down(3), std::logic_error);
  CHECK_FALSE(l.try_wait());
  l.count_down(0);
  l.count_down(2);  // all that was left
  CHECK(l.try_wait());
  CHECK_THROWS_AS(l.count_down(), std::logic_error);
  l.count_down(0);
  CHECK(l.try_wait());
  Latch done{0};
  CHECK(done.try_wait());
}

// --- shutdown ------------------------------------------------------------------------

namespace {
task<void> lock_then_count(Mutex& m, int& arrived, std::atomic<int>& got) {
  ++arrived;
  auto g = co_await m.scoped_lock();
  got.fetch_add(1);
}
task<void> acquire_then_count(Semaphore& s, std::atomic<int>& got) {
  co_await s.acquire();
  got.fetch_add(1);
}
task<void> wait_then_count(Latch& l, std::atomic<int>& got) {
  co_await l.wait();
  got.fetch_add(1);
}
// Takes the lock and keeps its guard while four tasks queue, then waits
// on `never` with it.
task<void> hold_guard_forever(Mutex& m, const int& arrived, Event& never) {
  auto g = co_await m.scoped_lock();
  co_await until(arrived, 4);
  co_await never.wait();
}
// Takes the lock while four tasks queue, then passes its guard on.
task<void> pass_guard_on(Mutex& m, const int& arrived, Channel<Mutex::Guard>& ch) {
  auto g = co_await m.scoped_lock();
  co_await until(arrived, 4);
  co_await ch.send(std::move(g));
}
task<void> take_guard_then_wait(Channel<Mutex::Guard>& ch, Event& never) {
  auto g = co_await ch.recv();
  co_await never.wait();
}
}  // namespace

TEST_CASE("shutdown destroys the tasks blocked on a mutex, semaphore or latch and reports them abandoned",
          "[pool][shutdown]") {
  // As for tasks waiting on a channel or an event nobody will signal:
  // shutdown runs everything runnable, then destroys the waiters and
  // counts them abandoned. None of them resumes.
  std::atomic<int> got{0}, done{0};
  Event never;
  SECTION("a semaphore with no permit and a latch one short") {
    Semaphore s{0};
    Latch l{3};
    CurrentPool pool{pool_test::two_cpus()};
    for (int i = 0; i < 4; ++i) (void)pool.spawn(acquire_then_count(s, got));
    for (int i = 0; i < 4; ++i) (void)pool.spawn(wait_then_count(l, got));
    l.count_down(2);
    for (int i = 0; i < 50; ++i) (void)pool.spawn(count_n(done));
    const auto rep = pool.shutdown();
    CHECK(got.load() == 0);
    CHECK(done.load() == 50);
    CHECK(rep.completed == 50);
    CHECK(rep.abandoned == 8);
    CHECK(pool.shutdown().abandoned == 8);  // idempotent
    // The destroyed waiters left the lists: the primitives are consistent.
    s.release(2);
    CHECK(s.available() == 2);
    l.count_down();
    CHECK(l.try_wait());
  }
  SECTION("a mutex whose holder keeps its guard while four tasks wait") {
    // One worker: the holder takes the lock before the waiters queue. The
    // newest task is destroyed first (the pool's live list), so the
    // waiters leave the queue before the holder's guard unlocks as its
    // frame goes: the mutex ends free.
    Mutex m;
    int arrived = 0;
    CurrentPool pool{one_cpu()};
    (void)pool.spawn(hold_guard_forever(m, arrived, never));
    for (int i = 0; i < 4; ++i) (void)pool.spawn(lock_then_count(m, arrived, got));
    const auto rep = pool.shutdown();
    CHECK(got.load() == 0);
    CHECK(rep.completed == 0);
    CHECK(rep.abandoned == 5);
    CHECK(m.try_lock());
    m.unlock();
  }
  SECTION("a mutex whose guard went to a task newer than its waiters") {
    // The guard's owner is destroyed first: its unlock hands the lock to
    // the first waiter, still alive, which is then destroyed unresumed.
    Mutex m;
    int arrived = 0;
    Channel<Mutex::Guard> ch{1};
    CurrentPool pool{one_cpu()};
    (void)pool.spawn(pass_guard_on(m, arrived, ch));
    for (int i = 0; i < 4; ++i) (void)pool.spawn(lock_then_count(m, arrived, got));
    (void)pool.spawn(take_guard_then_wait(ch, never));
    const auto rep = pool.shutdown();
    CHECK(got.load() == 0);
    CHECK(rep.completed == 1);
    CHECK(rep.abandoned == 5);
  }
}

// --- placement ------------------------------------------------------------------------

namespace {
// Records every placement (WakeEvent) of the pool's placers.
struct RecordingHook {
  static inline std::mutex m;
  static inline std::vector<taskplace::WakeEvent> events;
  void operator()(const taskplace::WakeEvent& e) const noexcept {
    std::lock_guard lk(m);
    events.push_back(e);
  }
  static std::vector<taskplace::WakeEvent> take() {
    std::lock_guard lk(m);
    return std::exchange(events, {});
  }
};
struct CurrentRecorded : taskplace::traits::Current {
  using Hook = RecordingHook;
};
using RecordedPool = UniformPool<CurrentRecorded>;

taskplace::TaskKey self_key() {
  return reinterpret_cast<taskplace::TaskKey>(taskplace_pool::detail::current_task());
}

enum class Primitive { mutex, semaphore, latch };

task<void> block_on_primitive(Primitive which, Mutex& m, Semaphore& s, Latch& l, int& arrived,
                              taskplace::TaskKey& key) {
  key = self_key();
  ++arrived;
  switch (which) {
    case Primitive::mutex:
      co_await m.lock();
      m.unlock();
      break;
    case Primitive::semaphore: co_await s.acquire(); break;
    case Primitive::latch: co_await l.wait(); break;
  }
}

struct OneWake {
  std::uint64_t placements = 0;   // the placers' wake-ups during the signal
  std::uint64_t handoffs = 0;     // ... of them placed as hand-offs (current_cpu)
  std::vector<taskplace::WakeEvent> events;
  taskplace::TaskKey waker = taskplace::no_task, wakee = taskplace::no_task;
};
// One task blocks on the primitive; this one signals it with `hint`.
task<OneWake> signal_one(RecordedPool& p, Primitive which, WakeHint hint) {
  OneWake out;
  Mutex m;
  Semaphore s{0};
  Latch l{1};
  int arrived = 0;
  if (which == Primitive::mutex) co_await m.lock();
  auto h = p.spawn(block_on_primitive(which, m, s, l, arrived, out.wakee));
  co_await until(arrived, 1);  // it blocked in the run that counted it
  out.waker = self_key();
  (void)RecordingHook::take();
  const auto before = p.placer_stats();
  switch (which) {
    case Primitive::mutex: m.unlock(hint); break;
    case Primitive::semaphore: s.release(1, hint); break;
    case Primitive::latch: l.count_down(1, hint); break;
  }
  const auto after = p.placer_stats();
  out.events = RecordingHook::take();
  out.placements = after.get(taskplace::WakeCounter::wakeups) - before.get(taskplace::WakeCounter::wakeups);
  out.handoffs = after.get(taskplace::WakeCounter::current_cpu) - before.get(taskplace::WakeCounter::current_cpu);
  co_await h;
  co_return out;
}
}  // namespace

TEST_CASE("an unlock, release or count_down that wakes a task is one placement, waker to wakee",
          "[pool][placement]") {
  // One worker: nothing else runs while the signalling task signals.
  RecordedPool pool{one_cpu()};
  for (const Primitive which : {Primitive::mutex, Primitive::semaphore, Primitive::latch}) {
    for (const WakeHint hint : {WakeHint::async, WakeHint::handoff}) {
      INFO("primitive " << static_cast<int>(which) << ", hint " << static_cast<int>(hint));
      const OneWake r = finish(pool, signal_one(pool, which, hint));
      CHECK(r.placements == 1);
      REQUIRE(r.events.size() == 1);
      CHECK(r.events[0].waker == r.waker);  // the running task
      CHECK(r.events[0].wakee == r.wakee);  // the one it woke
      CHECK(r.handoffs == (hint == WakeHint::handoff ? 1u : 0u));  // the hint reached the placer
    }
  }
}

TEST_CASE("a semaphore release and a latch's last count_down place each task they wake",
          "[pool][placement]") {
  // From off the pool: the shared placer places each, with no waker.
  Semaphore s{0};
  Latch l{1};
  std::atomic<int> got{0};
  RecordedPool pool{pool_test::two_cpus()};
  std::vector<JoinHandle<void>> hs;
  for (int i = 0; i < 3; ++i) hs.push_back(pool.spawn(acquire_then_count(s, got)));
  for (int i = 0; i < 4; ++i) hs.push_back(pool.spawn(wait_then_count(l, got)));
  // The seven have blocked once nothing is left to run (quiescent here
  // means: every worker idle with an empty queue).
  REQUIRE(eventually([&] {
    const RecordedPool::Machine mach{pool};
    return pool.stats().tasks_run >= 7 && mach.is_idle(0) && mach.is_idle(1);
  }));
  (void)RecordingHook::take();
  const auto before = pool.placer_stats().get(taskplace::WakeCounter::wakeups);
  s.release(3);
  l.count_down();
  const auto after = pool.placer_stats().get(taskplace::WakeCounter::wakeups);
  const auto events = RecordingHook::take();
  for (auto& h : hs) REQUIRE(h.wait_for(10s));
  CHECK(got.load() == 7);
  CHECK(after - before == 7);
  REQUIRE(events.size() == 7);
  for (const auto& e : events) CHECK(e.waker == taskplace::no_task);
}
