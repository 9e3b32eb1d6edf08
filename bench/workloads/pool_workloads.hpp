// bench/workloads/pool_workloads.hpp: the four workloads on the taskplace
// pool, as coroutines over its channels.
//
// pipe: two tasks pass a token (perf bench sched pipe). pgbench: one client
// task keeps one request in flight per backend, each backend spins
// pgbench_work_ns then replies (Wang 2013's 1:N select-only load). hackbench:
// groups of senders each send to every receiver of their group. udp_rr:
// request/response pairs whose clients pause between requests (netperf
// UDP_RR, Chen 2023). Every run checks that every message arrived.
//
//   workloads::Result r = workloads::pool::run(pool, "pipe", sizes, "Current");
//   // throws std::runtime_error if the run does not finish within the timeout
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "taskplace/stats.hpp"
#include "taskplace_pool/pool.hpp"
#include "workloads/common.hpp"

namespace workloads::pool {

using taskplace_pool::Channel;
using taskplace_pool::JoinHandle;
using taskplace_pool::task;

struct Msg {
  std::uint32_t from = 0;
  std::int64_t t0 = 0;
};

// --- pipe -------------------------------------------------------------------
inline task<void> pipe_echo(Channel<Msg>& in, Channel<Msg>& out, std::uint32_t n) {
  for (std::uint32_t i = 0; i < n; ++i) {
    auto m = co_await in.recv();
    if (!m) throw std::runtime_error("pipe: channel closed early");
    co_await out.send(*m);
  }
}
inline task<void> pipe_lead(Channel<Msg>& out, Channel<Msg>& in, std::uint32_t n, LatencyLog& log) {
  for (std::uint32_t i = 0; i < n; ++i) {
    const std::int64_t t0 = now_ns();
    co_await out.send(Msg{0, t0});
    auto m = co_await in.recv();
    if (!m) throw std::runtime_error("pipe: channel closed early");
    log.add(now_ns() - t0);
  }
}
template <class Pool>
task<std::uint64_t> pipe(Pool& p, Sizes s, LatencyLog& log) {
  // The sync hint, as a pipe's wake-ups carry; or, on request, the
  // hand-off (Wakeup::current_cpu) a strict request/reply pair may pass.
  const auto hint = s.pipe_handoff ? taskplace_pool::WakeHint::handoff : taskplace_pool::WakeHint::sync;
  Channel<Msg> ab{1, hint}, ba{1, hint};
  auto b = p.spawn(pipe_echo(ab, ba, s.pipe_rounds));
  auto a = p.spawn(pipe_lead(ab, ba, s.pipe_rounds, log));
  co_await a;
  co_await b;
  co_return s.pipe_rounds;
}

// --- pgbench ------------------------------------------------------------------
inline task<void> pg_backend(Channel<Msg>& req, Channel<Msg>& reply, std::uint32_t work) {
  while (auto m = co_await req.recv()) {
    busy_work(work);
    co_await reply.send(*m);
  }
}
inline task<std::uint64_t> pg_client(std::vector<std::unique_ptr<Channel<Msg>>>& req, Channel<Msg>& reply,
                                     std::uint32_t total, LatencyLog& log) {
  std::uint32_t sent = 0, got = 0;
  const auto n = static_cast<std::uint32_t>(req.size());
  for (std::uint32_t i = 0; i < n && sent < total; ++i, ++sent) co_await req[i]->send(Msg{i, now_ns()});
  while (got < total) {
    auto m = co_await reply.recv();
    if (!m) throw std::runtime_error("pgbench: reply channel closed early");
    ++got;
    log.add(now_ns() - m->t0);
    if (sent < total) {
      ++sent;
      co_await req[m->from]->send(Msg{m->from, now_ns()});
    }
  }
  for (auto& c : req) c->close();
  co_return got;
}
template <class Pool>
task<std::uint64_t> pgbench(Pool& p, Sizes s, LatencyLog& log) {
  std::vector<std::unique_ptr<Channel<Msg>>> req;
  Channel<Msg> reply{};
  std::vector<JoinHandle<void>> backends;
  for (std::uint32_t i = 0; i < s.pgbench_clients; ++i) req.push_back(std::make_unique<Channel<Msg>>(1));
  for (std::uint32_t i = 0; i < s.pgbench_clients; ++i)
    backends.push_back(p.spawn(pg_backend(*req[i], reply, s.pgbench_work_ns)));
  const std::uint64_t got = co_await p.spawn(pg_client(req, reply, s.pgbench_requests, log));
  for (auto& b : backends) co_await b;
  co_return got;
}

// --- hackbench ----------------------------------------------------------------
inline task<void> hb_sender(std::vector<std::unique_ptr<Channel<Msg>>>& to, std::uint32_t loops) {
  for (std::uint32_t l = 0; l < loops; ++l)
    for (auto& c : to) co_await c->send(Msg{l, now_ns()});
}
inline task<std::uint64_t> hb_receiver(Channel<Msg>& in, std::uint64_t expect, LatencyLog& log) {
  std::uint64_t got = 0;
  while (got < expect) {
    auto m = co_await in.recv();
    if (!m) throw std::runtime_error("hackbench: channel closed early");
    log.add(now_ns() - m->t0);
    ++got;
  }
  co_return got;
}
template <class Pool>
task<std::uint64_t> hackbench(Pool& p, Sizes s, LatencyLog& log) {
  const std::uint32_t f = s.hackbench_fanout;
  std::vector<std::vector<std::unique_ptr<Channel<Msg>>>> groups(s.hackbench_groups);
  std::vector<LatencyLog> logs(std::size_t{s.hackbench_groups} * f);
  for (auto& l : logs) l.reserve(std::size_t{f} * s.hackbench_loops);
  std::vector<JoinHandle<std::uint64_t>> receivers;
  std::vector<JoinHandle<void>> senders;
  for (auto& g : groups)
    for (std::uint32_t r = 0; r < f; ++r) g.push_back(std::make_unique<Channel<Msg>>(64));
  for (std::size_t gi = 0; gi < groups.size(); ++gi)
    for (std::uint32_t r = 0; r < f; ++r)
      receivers.push_back(p.spawn(hb_receiver(*groups[gi][r], std::uint64_t{f} * s.hackbench_loops,
                                              logs[gi * f + r])));
  for (auto& g : groups)
    for (std::uint32_t sd = 0; sd < f; ++sd) senders.push_back(p.spawn(hb_sender(g, s.hackbench_loops)));
  std::uint64_t got = 0;
  for (auto& h : senders) co_await h;
  for (auto& h : receivers) got += co_await h;
  for (auto& l : logs) log.merge(l);
  co_return got;
}

// --- udp_rr -------------------------------------------------------------------
inline task<void> udp_server(Channel<Msg>& in, Channel<Msg>& out) {
  while (auto m = co_await in.recv()) co_await out.send(*m);
}
inline task<std::uint64_t> udp_client(Channel<Msg>& out, Channel<Msg>& in, Sizes s, LatencyLog& log) {
  std::uint64_t got = 0;
  for (std::uint32_t t = 0; t < s.udp_transactions; ++t) {
    const std::int64_t t0 = now_ns();
    co_await out.send(Msg{0, t0});
    auto m = co_await in.recv();
    if (!m) throw std::runtime_error("udp_rr: channel closed early");
    log.add(now_ns() - t0);
    ++got;
    co_await taskplace_pool::sleep_for(std::chrono::nanoseconds{s.udp_sleep_ns});
  }
  out.close();
  co_return got;
}
template <class Pool>
task<std::uint64_t> udp_rr(Pool& p, Sizes s, LatencyLog& log) {
  std::vector<std::unique_ptr<Channel<Msg>>> req, resp;
  std::vector<LatencyLog> logs(s.udp_pairs);
  for (auto& l : logs) l.reserve(s.udp_transactions);
  std::vector<JoinHandle<void>> servers;
  std::vector<JoinHandle<std::uint64_t>> clients;
  for (std::uint32_t i = 0; i < s.udp_pairs; ++i) {
    req.push_back(std::make_unique<Channel<Msg>>(1));
    resp.push_back(std::make_unique<Channel<Msg>>(1));
  }
  for (std::uint32_t i = 0; i < s.udp_pairs; ++i) servers.push_back(p.spawn(udp_server(*req[i], *resp[i])));
  for (std::uint32_t i = 0; i < s.udp_pairs; ++i)
    clients.push_back(p.spawn(udp_client(*req[i], *resp[i], s, logs[i])));
  std::uint64_t got = 0;
  for (auto& h : clients) got += co_await h;
  for (auto& h : servers) co_await h;
  for (auto& l : logs) log.merge(l);
  co_return got;
}

// Effects: runs `workload` ("pipe", "pgbench", "hackbench", "udp_rr") on
// `p` and checks that every message arrived.
// Returns: the measurements, with the pool's and balancer's counters.
// Throws: std::runtime_error when the run does not finish within `timeout`
// (a lost wake-up) or delivered the wrong number of messages.
template <class Pool>
Result run(Pool& p, const std::string& workload, const Sizes& s, const std::string& runtime,
           std::chrono::nanoseconds timeout = std::chrono::seconds{60}) {
  // The log is owned here so that it outlives an abandoned run.
  auto log = std::make_shared<LatencyLog>();
  log->reserve(expected_ops(workload.c_str(), s));  // a bad name throws below
  task<std::uint64_t> t;
  if (workload == "pipe") t = pipe(p, s, *log);
  else if (workload == "pgbench") t = pgbench(p, s, *log);
  else if (workload == "hackbench") t = hackbench(p, s, *log);
  else if (workload == "udp_rr") t = udp_rr(p, s, *log);
  else throw std::invalid_argument("unknown workload: " + workload);
  p.reset_stats();
  const std::int64_t t0 = now_ns();
  auto h = p.spawn(std::move(t));
  if (!h.wait_for(timeout))
    throw std::runtime_error(workload + " on " + runtime + ": did not finish within the timeout (lost wake-up?)");
  const std::uint64_t ops = h.get();
  const std::int64_t t1 = now_ns();
  if (ops != expected_ops(workload.c_str(), s))
    throw std::runtime_error(workload + ": delivered " + std::to_string(ops) + " of " +
                             std::to_string(expected_ops(workload.c_str(), s)));
  Result r = finish(workload, runtime, t1 - t0, ops, *log);
  const auto st = p.stats();
  r.migrations = st.migrations;
  r.affine_pct = st.wakeups ? 100.0 * static_cast<double>(st.affine_wakeups) / static_cast<double>(st.wakeups) : 0;
  r.steal_attempts = static_cast<std::int64_t>(st.steal_attempts);
  const auto& b = p.balancer_stats();
  r.skips = static_cast<std::int64_t>(b.get(taskplace::BalanceCounter::entry_gate_skips) +
                                      b.get(taskplace::BalanceCounter::budget_stops) + st.hot_skips);
  const auto ps = p.placer_stats();
  for (std::size_t i = 0; i < static_cast<std::size_t>(taskplace::WakeCounter::count_); ++i) {
    const auto c = static_cast<taskplace::WakeCounter>(i);
    r.counters.emplace_back(taskplace::to_string(c), ps.get(c));
  }
  r.counters.emplace_back("steals", st.steals);
  r.counters.emplace_back("parks", st.parks);
  r.counters.emplace_back("kicks", st.kicks);
  return r;
}

}  // namespace workloads::pool
