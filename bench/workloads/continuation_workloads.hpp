// bench/workloads/continuation_workloads.hpp: pipe and pgbench written once
// in blocking-free continuation style, for runtimes whose unit of work is a
// posted function (oneTBB task_arena::enqueue, Boost.Asio thread_pool post).
//
// Each message is a posted closure that runs the receiving actor's step;
// an actor never blocks a worker thread. A migration is an actor step that
// runs on a different thread than its previous step.
//
//   workloads::cont::Result r = workloads::cont::pipe(exec, sizes, "asio");
//   // Exec: any type with `void post(std::function<void()>)`.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "workloads/common.hpp"

namespace workloads::cont {

inline int thread_index() {
  static std::atomic<int> next{0};
  thread_local int me = next.fetch_add(1);
  return me;
}

// Where an actor last ran. Thread-safety: one step of an actor at a time.
struct Actor {
  int last = -1;
  std::uint64_t migrations = 0;
  void step() {
    const int me = thread_index();
    if (last >= 0 && last != me) ++migrations;
    last = me;
  }
};

template <class Exec>
Result pipe(Exec& ex, const Sizes& s, const std::string& runtime) {
  struct State {
    Exec* ex;
    std::uint32_t n, done = 0;
    Actor a, b;
    LatencyLog log;
    std::int64_t t0 = 0;
    std::promise<void> finished;
  };
  auto st = std::make_shared<State>();
  st->ex = &ex;
  st->n = s.pipe_rounds;
  auto fut = st->finished.get_future();
  // a sends to b, b replies to a: one posted closure per message.
  std::function<void()> send_to_b;
  auto to_a = [st, &send_to_b] {
    st->a.step();
    st->log.add(now_ns() - st->t0);
    if (++st->done == st->n) st->finished.set_value();
    else send_to_b();
  };
  send_to_b = [st, to_a] {
    st->t0 = now_ns();
    st->ex->post([st, to_a] {
      st->b.step();
      st->ex->post(to_a);
    });
  };
  const std::int64_t t0 = now_ns();
  ex.post([&send_to_b] { send_to_b(); });
  fut.wait();
  Result r = finish("pipe", runtime, now_ns() - t0, st->done, st->log);
  r.migrations = st->a.migrations + st->b.migrations;
  return r;
}

template <class Exec>
Result pgbench(Exec& ex, const Sizes& s, const std::string& runtime) {
  struct State {
    Exec* ex;
    std::uint32_t total, work, sent = 0, got = 0;
    std::mutex client_m;  // replies from several backends arrive at once
    Actor client;
    std::vector<Actor> backends;
    LatencyLog log;
    std::promise<void> finished;
  };
  auto st = std::make_shared<State>();
  st->ex = &ex;
  st->total = s.pgbench_requests;
  st->work = s.pgbench_work_ns;
  st->backends.resize(s.pgbench_clients);
  auto fut = st->finished.get_future();
  struct Ops {
    static void request(const std::shared_ptr<State>& st, std::uint32_t b, std::int64_t t) {
      st->ex->post([st, b, t] {
        st->backends[b].step();
        busy_work(st->work);
        st->ex->post([st, b, t] { reply(st, b, t); });
      });
    }
    static void reply(const std::shared_ptr<State>& st, std::uint32_t b, std::int64_t t) {
      bool again = false, last = false;
      {
        std::lock_guard lk(st->client_m);
        st->client.step();
        st->log.add(now_ns() - t);
        last = ++st->got == st->total;
        if (st->sent < st->total) {
          ++st->sent;
          again = true;
        }
      }
      if (again) request(st, b, now_ns());
      if (last) st->finished.set_value();
    }
  };
  const std::int64_t t0 = now_ns();
  ex.post([st] {
    std::uint32_t n = 0;
    {
      std::lock_guard lk(st->client_m);
      st->client.step();
      n = std::min<std::uint32_t>(static_cast<std::uint32_t>(st->backends.size()), st->total);
      st->sent = n;
    }
    for (std::uint32_t b = 0; b < n; ++b) Ops::request(st, b, now_ns());
  });
  fut.wait();
  Result r = finish("pgbench", runtime, now_ns() - t0, st->got, st->log);
  r.migrations = st->client.migrations;
  for (auto& b : st->backends) r.migrations += b.migrations;
  return r;
}

}  // namespace workloads::cont
