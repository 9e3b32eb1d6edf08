// kit::WorkerDeque: one worker's ready queue (the Boost.Fiber group's and
// the Asio runtime's): oldest first, a pick for thieves, the drain count,
// and every item taken exactly once under a pusher, a thief and the owner.
#include "taskplace/kit/worker_deque.hpp"

#include <catch2/catch.hpp>

#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

#include "taskplace/kit/idle.hpp"

using taskplace::kit::WorkerDeque;

static_assert(taskplace::kit::WorkerQueue<WorkerDeque<int*>>);

TEST_CASE("a worker deque gives its items oldest first and counts the pops that empty it", "[kit][worker_deque]") {
  WorkerDeque<int*> q;
  int a = 1, b = 2, c = 3;
  CHECK(q.pop() == nullptr);  // empty: no item, no drain
  CHECK(q.drains() == 0);
  q.push(&a);
  q.push(&b);
  CHECK(q.size() == 2);
  CHECK(q.pop() == &a);
  CHECK(q.drains() == 0);  // b is still queued
  CHECK(q.pop() == &b);
  CHECK(q.drains() == 1);  // that pop emptied it
  q.push(&c);
  CHECK(q.pop(false) == &c);  // a yield's pop: the caller queues again at once
  CHECK(q.drains() == 1);
  CHECK(q.size() == 0);
}

TEST_CASE("the owner's pushes queue behind the others and count in the length", "[kit][worker_deque]") {
  WorkerDeque<int*> q;
  int a = 1, b = 2, c = 3;
  q.push(&a);
  q.push_owned(&b);
  q.push(&c);
  CHECK(q.size() == 3);
  CHECK(q.try_steal() == &a);
  CHECK(q.pop() == &b);
  CHECK(q.pop() == &c);
  CHECK(q.size() == 0);
}

TEST_CASE("a thief's pick chooses among the queued items, oldest first", "[kit][worker_deque]") {
  WorkerDeque<int*> q;
  int a = 1, b = 2, c = 3;
  q.push(&a);
  q.push(&b);
  q.push(&c);
  // The first item whose value is odd past the first: c.
  auto odd_after_first = [](auto first, auto last) {
    for (auto it = std::next(first); it != last; ++it)
      if (**it % 2 == 1) return it;
    return last;
  };
  CHECK(q.try_steal(odd_after_first) == &c);
  CHECK(q.size() == 2);
  CHECK(q.try_steal([](auto, auto last) { return last; }) == nullptr);  // the pick declines
  CHECK(q.size() == 2);
  CHECK(q.try_steal() == &a);  // no pick: the oldest
  CHECK(q.pop() == &b);
  CHECK(q.try_steal() == nullptr);
  CHECK(q.drains() == 1);  // steals are no drains
}

TEST_CASE("a worker deque hands each item to exactly one of its owner and a thief", "[kit][worker_deque]") {
  constexpr int n = 100'000;
  WorkerDeque<std::uintptr_t*> q;
  std::vector<std::uintptr_t> items(n);
  std::vector<std::atomic<int>> taken(n);
  std::atomic<bool> pushed{false};
  std::atomic<int> got{0};
  auto take = [&](std::uintptr_t* x) {
    if (x == nullptr) return;
    taken[static_cast<std::size_t>(x - items.data())].fetch_add(1);
    got.fetch_add(1);
  };
  std::thread pusher([&] {
    for (auto& x : items) q.push(&x);
    pushed = true;
  });
  std::thread thief([&] {
    while (!pushed.load() || q.size() != 0) take(q.try_steal());
  });
  while (!pushed.load() || q.size() != 0) take(q.pop());  // the owner
  pusher.join();
  thief.join();
  CHECK(got.load() == n);
  int twice = 0;
  for (auto& t : taken) twice += t.load() != 1 ? 1 : 0;
  CHECK(twice == 0);
  CHECK(q.size() == 0);
}

TEST_CASE("a counted worker deque keeps its worker's queued count in the machine", "[kit][worker_deque]") {
  static_assert(taskplace::kit::WorkerQueue<taskplace::kit::CountedWorkerDeque<int*>>);
  taskplace::kit::Machine machine{2};
  taskplace::kit::CountedWorkerDeque<int*> q{.machine = &machine, .owner = 1, .d = {}};
  int a = 1, b = 2, c = 3;
  q.push(&a);
  q.push(&b);
  q.push(&c);
  CHECK(machine.queued_on(1) == 3);
  CHECK(machine.queued_on(0) == 0);
  CHECK(q.pop() == &a);              // the owner's pop
  CHECK(q.try_steal() == &b);        // a thief's steal
  CHECK(machine.queued_on(1) == 1);  // each removal counted once
  CHECK(q.try_steal([](auto, auto last) { return last; }) == nullptr);
  CHECK(machine.queued_on(1) == 1);  // nothing taken, nothing counted
  CHECK(q.pop() == &c);
  CHECK(q.pop() == nullptr);
  CHECK(machine.queued_on(1) == 0);
  CHECK(q.drains() == 1);
}

TEST_CASE("a counted worker deque counts the owner's pushes as the others'", "[kit][worker_deque]") {
  taskplace::kit::Machine machine{2};
  taskplace::kit::CountedWorkerDeque<int*> q{.machine = &machine, .owner = 0, .d = {}};
  int a = 1, b = 2;
  q.push(&a);
  q.push_owned(&b);  // behind the other's push
  CHECK(q.size() == 2);
  CHECK(machine.queued_on(0) == 2);
  CHECK(machine.can_give(0));
  CHECK(q.pop() == &a);
  CHECK(q.pop() == &b);
  CHECK(machine.queued_on(0) == 0);
}
