// bench/workloads/continuation_workloads.hpp: the four workloads written
// once in blocking-free continuation style, for runtimes whose unit of work
// is a posted function (oneTBB task_arena::enqueue, Boost.Asio thread_pool
// post).
//
// Each message is a posted closure that runs the receiving actor's step;
// an actor never blocks a worker thread. A migration is an actor step that
// runs on a different thread than its previous step. Where an actor hears
// from several others at once (pgbench's client, hackbench's receivers) its
// state takes a mutex. There are no bounded channels: hackbench's senders
// post one message to each receiver per step and then post their next
// step, so the queue, not a full channel, paces them; udp_rr's pause is
// the executor's timer.
//
//   workloads::Result r = workloads::cont::pipe(exec, sizes, "asio");
//   // Exec: any type with `void post(std::function<void()>)`; udp_rr also
//   // needs `void after(std::int64_t ns, std::function<void()>)`. An Exec
//   // whose unit of placement is a task (the taskplace Asio runtime) has
//   // `post(const void* actor, f)` (and `after(actor, ns, f)`) instead: each
//   // message is then a wake-up of its receiving actor, named by address.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <stdexcept>
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

// Effects: posts `f`, a message to `actor`: ex.post(actor, f) where the
//   executor places by task, else ex.post(f).
template <class Exec, class F>
void post_to(Exec& ex, const void* actor, F&& f) {
  if constexpr (requires { ex.post(actor, std::function<void()>{}); })
    ex.post(actor, std::function<void()>(std::forward<F>(f)));
  else
    ex.post(std::function<void()>(std::forward<F>(f)));
}
template <class Exec, class F>
void after_to(Exec& ex, const void* actor, std::int64_t ns, F&& f) {
  if constexpr (requires { ex.after(actor, ns, std::function<void()>{}); })
    ex.after(actor, ns, std::function<void()>(std::forward<F>(f)));
  else
    ex.after(ns, std::function<void()>(std::forward<F>(f)));
}

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
  st->log.reserve(s.pipe_rounds);
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
    post_to(*st->ex, &st->b, [st, to_a] {
      st->b.step();
      post_to(*st->ex, &st->a, to_a);
    });
  };
  const std::int64_t t0 = now_ns();
  post_to(ex, &st->a, [&send_to_b] { send_to_b(); });
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
  st->log.reserve(s.pgbench_requests);
  auto fut = st->finished.get_future();
  struct Ops {
    static void request(const std::shared_ptr<State>& st, std::uint32_t b, std::int64_t t) {
      post_to(*st->ex, &st->backends[b], [st, b, t] {
        st->backends[b].step();
        busy_work(st->work);
        post_to(*st->ex, &st->client, [st, b, t] { reply(st, b, t); });
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
  post_to(ex, &st->client, [st] {
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

template <class Exec>
Result hackbench(Exec& ex, const Sizes& s, const std::string& runtime) {
  struct Receiver {
    std::mutex m;  // the group's senders deliver at once
    Actor actor;
    LatencyLog log;
  };
  struct State {
    Exec* ex;
    std::uint32_t f, loops;
    std::vector<std::unique_ptr<Receiver>> rx;
    std::vector<Actor> tx;
    std::atomic<std::uint64_t> left{0}, got{0};
    std::promise<void> finished;
  };
  auto st = std::make_shared<State>();
  st->ex = &ex;
  st->f = s.hackbench_fanout;
  st->loops = s.hackbench_loops;
  const std::size_t n = std::size_t{s.hackbench_groups} * st->f;
  for (std::size_t i = 0; i < n; ++i) {
    st->rx.push_back(std::make_unique<Receiver>());
    st->rx.back()->log.reserve(std::size_t{st->f} * st->loops);
  }
  st->tx.resize(n);
  st->left = expected_ops("hackbench", s);
  auto fut = st->finished.get_future();
  struct Ops {
    static void deliver(const std::shared_ptr<State>& st, std::size_t r, std::int64_t t) {
      {
        Receiver& rx = *st->rx[r];
        std::lock_guard lk(rx.m);
        rx.actor.step();
        rx.log.add(now_ns() - t);
      }
      st->got.fetch_add(1, std::memory_order_relaxed);
      if (st->left.fetch_sub(1, std::memory_order_acq_rel) == 1) st->finished.set_value();
    }
    // Sender `k` (group k / f) sends loop `l` to every receiver of its group.
    static void send(const std::shared_ptr<State>& st, std::size_t k, std::uint32_t l) {
      st->tx[k].step();
      const std::size_t first = k / st->f * st->f;
      for (std::size_t r = first; r < first + st->f; ++r) {
        const std::int64_t t = now_ns();
        post_to(*st->ex, &st->rx[r]->actor, [st, r, t] { deliver(st, r, t); });
      }
      if (l + 1 < st->loops) post_to(*st->ex, &st->tx[k], [st, k, l] { send(st, k, l + 1); });
    }
  };
  const std::int64_t t0 = now_ns();
  if (st->left == 0) st->finished.set_value();
  else
    for (std::size_t k = 0; k < n; ++k) post_to(ex, &st->tx[k], [st, k] { Ops::send(st, k, 0); });
  fut.wait();
  const std::int64_t t1 = now_ns();  // the merge is not the runtime's work
  LatencyLog log;
  for (auto& r : st->rx) log.merge(r->log);
  Result r = finish("hackbench", runtime, t1 - t0, st->got.load(), log);
  for (auto& x : st->rx) r.migrations += x->actor.migrations;
  for (auto& x : st->tx) r.migrations += x.migrations;
  return r;
}

template <class Exec>
Result udp_rr(Exec& ex, const Sizes& s, const std::string& runtime) {
  struct Pair {
    Actor client, server;
    LatencyLog log;
    std::uint32_t done = 0;
  };
  struct State {
    Exec* ex;
    std::uint32_t transactions, sleep_ns;
    std::vector<Pair> pairs;
    std::atomic<std::uint32_t> left{0};
    std::promise<void> finished;
  };
  auto st = std::make_shared<State>();
  st->ex = &ex;
  st->transactions = s.udp_transactions;
  st->sleep_ns = s.udp_sleep_ns;
  st->pairs.resize(s.udp_pairs);
  for (auto& p : st->pairs) p.log.reserve(s.udp_transactions);
  st->left = s.udp_transactions == 0 ? 0 : s.udp_pairs;
  auto fut = st->finished.get_future();
  // One step of a pair at a time: request, response, pause, request...
  struct Ops {
    static void request(const std::shared_ptr<State>& st, std::uint32_t i) {
      st->pairs[i].client.step();
      const std::int64_t t0 = now_ns();
      post_to(*st->ex, &st->pairs[i].server, [st, i, t0] {
        st->pairs[i].server.step();
        post_to(*st->ex, &st->pairs[i].client, [st, i, t0] { response(st, i, t0); });
      });
    }
    static void response(const std::shared_ptr<State>& st, std::uint32_t i, std::int64_t t0) {
      Pair& p = st->pairs[i];
      p.client.step();
      p.log.add(now_ns() - t0);
      if (++p.done < st->transactions) after_to(*st->ex, &p.client, st->sleep_ns, [st, i] { request(st, i); });
      else if (st->left.fetch_sub(1, std::memory_order_acq_rel) == 1) st->finished.set_value();
    }
  };
  const std::int64_t t0 = now_ns();
  if (st->left == 0) st->finished.set_value();
  else
    for (std::uint32_t i = 0; i < s.udp_pairs; ++i) post_to(ex, &st->pairs[i].client, [st, i] { Ops::request(st, i); });
  fut.wait();
  const std::int64_t t1 = now_ns();  // the merge is not the runtime's work
  LatencyLog log;
  std::uint64_t got = 0;
  for (auto& p : st->pairs) {
    log.merge(p.log);
    got += p.done;
  }
  Result r = finish("udp_rr", runtime, t1 - t0, got, log);
  for (auto& p : st->pairs) r.migrations += p.client.migrations + p.server.migrations;
  return r;
}

// Effects: runs `workload` on `ex`. Throws std::invalid_argument for an
// unknown workload, std::runtime_error for a wrong message count.
template <class Exec>
Result run(Exec& ex, const std::string& workload, const Sizes& s, const std::string& runtime) {
  Result r;
  if (workload == "pipe") r = pipe(ex, s, runtime);
  else if (workload == "pgbench") r = pgbench(ex, s, runtime);
  else if (workload == "hackbench") r = hackbench(ex, s, runtime);
  else if (workload == "udp_rr") r = udp_rr(ex, s, runtime);
  else throw std::invalid_argument("unknown workload: " + workload);
  if (r.ops != expected_ops(workload.c_str(), s))
    throw std::runtime_error(workload + " on " + runtime + ": delivered " + std::to_string(r.ops) + " of " +
                             std::to_string(expected_ops(workload.c_str(), s)));
  return r;
}

}  // namespace workloads::cont
