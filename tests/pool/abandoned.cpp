// What shutdown() leaves behind when it destroys the tasks that wait on
// something nobody can signal any more (abandoned tasks): their join
// handles say so (TaskAbandoned) and release the threads blocked on them,
// and their channel and join waits leave the lists they were queued on,
// so that whatever touches those primitives afterwards (a close, a send,
// another abandoned task's destructor) never reaches a freed frame. Run
// under AddressSanitizer too (scripts/test), where a missing unlink is a
// use after free.
#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <stdexcept>
#include <thread>

#include <catch2/catch.hpp>

#include "pool_test_support.hpp"
#include "taskplace_pool/pool.hpp"

using namespace std::chrono_literals;
using taskplace_pool::Channel;
using taskplace_pool::Event;
using taskplace_pool::JoinHandle;
using taskplace_pool::task;
using taskplace_pool::TaskAbandoned;
using pool_test::CurrentPool;
using pool_test::one_cpu;

namespace {

task<int> waits_forever(Event& never) {
  co_await never.wait();
  co_return 1;
}
task<int> returns(int v) { co_return v; }
task<void> recv_then_count(Channel<int>& ch, std::atomic<int>& n) {
  auto v = co_await ch.recv();
  n.fetch_add(v ? 1 : 100);
}
task<void> send_then_count(Channel<int>& ch, int v, std::atomic<int>& n) {
  co_await ch.send(v);
  n.fetch_add(1);
}
// Closes the channel when its frame goes, as a producer's RAII closer
// would, and meanwhile waits forever.
task<void> closes_when_destroyed(Channel<int>& ch, Event& never) {
  struct Closer {
    Channel<int>& ch;
    ~Closer() { ch.close(); }
  } closer{ch};
  co_await never.wait();
}
task<int> joins(JoinHandle<int> h) { co_return co_await h; }
task<int> spawns_then_joins(CurrentPool& pool, Event& never) {
  co_return co_await pool.spawn(waits_forever(never));
}

}  // namespace

TEST_CASE("the handle of a task shutdown abandons says so and never blocks again", "[pool][shutdown][join]") {
  Event never;
  CurrentPool pool{pool_test::two_cpus()};
  auto h = pool.spawn(returns(1));
  REQUIRE(h.wait_for(10s));
  auto abandoned = pool.spawn(waits_forever(never));
  CHECK_FALSE(abandoned.done());
  const auto rep = pool.shutdown();
  CHECK(rep.completed == 1);
  CHECK(rep.abandoned == 1);
  CHECK(h.get() == 1);  // finished before shutdown, kept its value
  CHECK(abandoned.done());
  REQUIRE(abandoned.wait_for(0s));  // else get() below would block for good
  CHECK_THROWS_AS(abandoned.get(), TaskAbandoned);
  CHECK_THROWS_AS(abandoned.get(), std::logic_error);  // taken once, as any result
}

TEST_CASE("a thread blocked on an abandoned task's result is released by shutdown", "[pool][shutdown][join]") {
  // Both ways a thread off the pool blocks on a result: get() on a handle
  // and block_on. Each thread is blocked (or about to block) when
  // shutdown() runs; either way it returns with TaskAbandoned.
  enum Outcome : int { waiting, value, abandoned, other };
  struct Shared {
    Event never;
    std::atomic<int> by_get{waiting}, by_block_on{waiting};
  };
  auto sh = std::make_shared<Shared>();
  auto pool = std::make_shared<CurrentPool>(pool_test::two_cpus());
  auto outcome = [](std::atomic<int>& out, auto&& wait) {
    try {
      (void)wait();
      out = value;
    } catch (const TaskAbandoned&) {
      out = abandoned;
    } catch (...) {
      out = other;
    }
  };
  auto h = std::make_shared<JoinHandle<int>>(pool->spawn(waits_forever(sh->never)));
  std::thread by_get([=] { outcome(sh->by_get, [&] { return h->get(); }); });
  std::thread by_block_on(
      [=] { outcome(sh->by_block_on, [&] { return pool->block_on(waits_forever(sh->never)); }); });
  // The block_on's task is spawned before shutdown refuses spawns from off
  // the pool: wait until it is.
  const bool spawned = pool_test::eventually([&] { return pool->stats().spawned == 2; }, 10s);
  REQUIRE(spawned);
  const auto rep = pool->shutdown();
  const bool released = pool_test::eventually(
      [&] { return sh->by_get.load() != waiting && sh->by_block_on.load() != waiting; }, 10s);
  if (!released) {  // fail loudly rather than hang on the join
    by_get.detach();
    by_block_on.detach();
    FAIL("a thread blocked on an abandoned task's result was not released");
  }
  by_get.join();
  by_block_on.join();
  CHECK(rep.abandoned == 2);
  CHECK(sh->by_get.load() == abandoned);
  CHECK(sh->by_block_on.load() == abandoned);
}

TEST_CASE("a task awaiting an abandoned task's handle is abandoned with it, in either order",
          "[pool][shutdown][join]") {
  // shutdown() destroys the newest task first. The joiner may be the
  // older (it spawned the task it awaits: the awaited one goes first and
  // must not wake the joiner) or the newer (it was handed the handle: it
  // goes first, and its wait must leave the handle's state).
  Event never;
  CurrentPool pool{one_cpu()};
  SECTION("joiner older") { (void)pool.spawn(spawns_then_joins(pool, never)); }
  SECTION("joiner newer") { (void)pool.spawn(joins(pool.spawn(waits_forever(never)))); }
  const auto rep = pool.shutdown();
  CHECK(rep.completed == 0);
  CHECK(rep.abandoned == 2);
}

TEST_CASE("abandoned channel waiters leave the channel", "[pool][shutdown][channel]") {
  std::atomic<int> n{0};
  SECTION("receivers: a later send finds none to hand its value to") {
    Channel<int> rendezvous{0}, buffered{4};
    {
      CurrentPool pool{one_cpu()};
      for (int i = 0; i < 3; ++i) (void)pool.spawn(recv_then_count(rendezvous, n));
      for (int i = 0; i < 3; ++i) (void)pool.spawn(recv_then_count(buffered, n));
      CHECK(pool.shutdown().abandoned == 6);
    }
    // A queued receiver would take the value (into a freed frame) and be
    // woken: the rendezvous would accept it and the buffer stay empty.
    CHECK_FALSE(rendezvous.try_send(7));
    CHECK(buffered.try_send(7));
    CHECK(buffered.size() == 1);
    rendezvous.close();
    buffered.close();
  }
  SECTION("senders: a later receive takes no value from them") {
    Channel<int> rendezvous{0}, full{1};
    REQUIRE(full.try_send(1));
    {
      CurrentPool pool{one_cpu()};
      for (int i = 0; i < 3; ++i) (void)pool.spawn(send_then_count(rendezvous, 10 + i, n));
      for (int i = 0; i < 3; ++i) (void)pool.spawn(send_then_count(full, 20 + i, n));
      CHECK(pool.shutdown().abandoned == 6);
    }
    // A queued sender's value would refill the buffer (rendezvous: be
    // received) from a freed frame.
    CHECK_FALSE(rendezvous.try_recv().has_value());
    CHECK(full.try_recv() == std::optional<int>{1});
    CHECK(full.size() == 0);
    CHECK_FALSE(full.try_recv().has_value());
    full.close();
  }
  CHECK(n.load() == 0);  // no abandoned task resumed
}

TEST_CASE("a channel closed by an abandoned task's destructor wakes only live waiters",
          "[pool][shutdown][channel]") {
  // The closer's frame goes while the pool destroys its tasks; it closes
  // the channel its receivers wait on. Receivers newer than it went first
  // and left the channel; older ones are still queued, alive, and are
  // woken onto the stopped pool, where they are destroyed unresumed.
  std::atomic<int> n{0};
  Event never;
  Channel<int> ch{0};
  CurrentPool pool{one_cpu()};
  SECTION("receivers newer than the closer") {
    (void)pool.spawn(closes_when_destroyed(ch, never));
    for (int i = 0; i < 3; ++i) (void)pool.spawn(recv_then_count(ch, n));
  }
  SECTION("receivers older than the closer") {
    for (int i = 0; i < 3; ++i) (void)pool.spawn(recv_then_count(ch, n));
    (void)pool.spawn(closes_when_destroyed(ch, never));
  }
  const auto rep = pool.shutdown();
  CHECK(rep.abandoned == 4);
  CHECK(n.load() == 0);
  CHECK_THROWS_AS(ch.try_send(1), taskplace_pool::ChannelClosed);  // the closer ran
}
