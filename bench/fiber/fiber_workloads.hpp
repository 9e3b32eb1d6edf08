// bench/fiber/fiber_workloads.hpp: the four workloads of
// workloads/common.hpp as blocking Boost.Fiber fibers over
// boost::fibers::buffered_channel, with the same sizes as the pool's
// coroutine versions (bench/workloads/pool_workloads.hpp).
//
//   workloads::LatencyLog log;
//   std::uint64_t ops = workloads::fiber::run("pgbench", sizes, log);  // from a fiber
#pragma once

#include <chrono>
#include <cstdint>
#include <exception>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <boost/fiber/all.hpp>

#include "workloads/common.hpp"

namespace workloads::fiber {

struct Msg {
  std::uint32_t from = 0;
  std::int64_t t0 = 0;
};

// buffered_channel holds capacity - 1 messages and wants a power of two:
// the channel of room `n` has capacity the next power of two above n.
class Chan {
 public:
  explicit Chan(std::size_t room) : ch_(round_up(room + 1)) {}
  void send(const Msg& m) {
    if (ch_.push(m) != boost::fibers::channel_op_status::success) throw std::runtime_error("send on a closed channel");
  }
  bool recv(Msg& m) { return ch_.pop(m) == boost::fibers::channel_op_status::success; }
  void close() noexcept { ch_.close(); }

 private:
  static std::size_t round_up(std::size_t n) {
    std::size_t p = 2;
    while (p < n) p *= 2;
    return p;
  }
  boost::fibers::buffered_channel<Msg> ch_;
};
using ChanPtr = std::unique_ptr<Chan>;

inline std::uint64_t pipe(const Sizes& s, LatencyLog& log) {
  Chan ab{1}, ba{1};
  boost::fibers::fiber echo([&] {
    Msg m;
    for (std::uint32_t i = 0; i < s.pipe_rounds; ++i) {
      if (!ab.recv(m)) throw std::runtime_error("pipe: channel closed early");
      ba.send(m);
    }
  });
  std::uint64_t got = 0;
  boost::fibers::fiber lead([&] {
    Msg m;
    for (std::uint32_t i = 0; i < s.pipe_rounds; ++i) {
      const std::int64_t t0 = now_ns();
      ab.send(Msg{0, t0});
      if (!ba.recv(m)) throw std::runtime_error("pipe: channel closed early");
      log.add(now_ns() - t0);
      ++got;
    }
  });
  lead.join();
  echo.join();
  return got;
}

inline std::uint64_t pgbench(const Sizes& s, LatencyLog& log) {
  std::vector<ChanPtr> req;
  for (std::uint32_t i = 0; i < s.pgbench_clients; ++i) req.push_back(std::make_unique<Chan>(1));
  Chan reply{s.pgbench_clients};  // every backend's reply fits: the pool's is unbounded
  std::vector<boost::fibers::fiber> backends;
  for (std::uint32_t i = 0; i < s.pgbench_clients; ++i)
    backends.emplace_back([&, i] {
      Msg m;
      while (req[i]->recv(m)) {
        busy_work(s.pgbench_work_ns);
        reply.send(m);
      }
    });
  std::uint64_t got = 0;
  boost::fibers::fiber client([&] {
    std::uint32_t sent = 0;
    const auto n = static_cast<std::uint32_t>(req.size());
    for (std::uint32_t i = 0; i < n && sent < s.pgbench_requests; ++i, ++sent) req[i]->send(Msg{i, now_ns()});
    Msg m;
    while (got < s.pgbench_requests) {
      if (!reply.recv(m)) throw std::runtime_error("pgbench: reply channel closed early");
      ++got;
      log.add(now_ns() - m.t0);
      if (sent < s.pgbench_requests) {
        ++sent;
        req[m.from]->send(Msg{m.from, now_ns()});
      }
    }
    for (auto& c : req) c->close();
  });
  client.join();
  for (auto& b : backends) b.join();
  return got;
}

inline std::uint64_t hackbench(const Sizes& s, LatencyLog& log) {
  const std::uint32_t f = s.hackbench_fanout;
  std::vector<std::vector<ChanPtr>> groups(s.hackbench_groups);
  for (auto& g : groups)
    for (std::uint32_t r = 0; r < f; ++r) g.push_back(std::make_unique<Chan>(64));
  std::vector<LatencyLog> logs(std::size_t{s.hackbench_groups} * f);
  for (auto& l : logs) l.reserve(std::size_t{f} * s.hackbench_loops);
  std::vector<std::uint64_t> got(logs.size(), 0);
  std::vector<boost::fibers::fiber> receivers, senders;
  const std::uint64_t expect = std::uint64_t{f} * s.hackbench_loops;
  for (std::size_t gi = 0; gi < groups.size(); ++gi)
    for (std::uint32_t r = 0; r < f; ++r)
      receivers.emplace_back([&, gi, r] {
        const std::size_t k = gi * f + r;
        Msg m;
        while (got[k] < expect) {
          if (!groups[gi][r]->recv(m)) throw std::runtime_error("hackbench: channel closed early");
          logs[k].add(now_ns() - m.t0);
          ++got[k];
        }
      });
  for (auto& g : groups)
    for (std::uint32_t sd = 0; sd < f; ++sd)
      senders.emplace_back([&g, &s] {
        for (std::uint32_t l = 0; l < s.hackbench_loops; ++l)
          for (auto& c : g) c->send(Msg{l, now_ns()});
      });
  for (auto& h : senders) h.join();
  for (auto& h : receivers) h.join();
  std::uint64_t total = 0;
  for (std::size_t k = 0; k < logs.size(); ++k) {
    total += got[k];
    log.merge(logs[k]);
  }
  return total;
}

inline std::uint64_t udp_rr(const Sizes& s, LatencyLog& log) {
  std::vector<ChanPtr> req, resp;
  for (std::uint32_t i = 0; i < s.udp_pairs; ++i) {
    req.push_back(std::make_unique<Chan>(1));
    resp.push_back(std::make_unique<Chan>(1));
  }
  std::vector<LatencyLog> logs(s.udp_pairs);
  for (auto& l : logs) l.reserve(s.udp_transactions);
  std::vector<std::uint64_t> got(s.udp_pairs, 0);
  std::vector<boost::fibers::fiber> servers, clients;
  for (std::uint32_t i = 0; i < s.udp_pairs; ++i)
    servers.emplace_back([&, i] {
      Msg m;
      while (req[i]->recv(m)) resp[i]->send(m);
    });
  for (std::uint32_t i = 0; i < s.udp_pairs; ++i)
    clients.emplace_back([&, i] {
      Msg m;
      for (std::uint32_t t = 0; t < s.udp_transactions; ++t) {
        const std::int64_t t0 = now_ns();
        req[i]->send(Msg{0, t0});
        if (!resp[i]->recv(m)) throw std::runtime_error("udp_rr: channel closed early");
        logs[i].add(now_ns() - t0);
        ++got[i];
        boost::this_fiber::sleep_for(std::chrono::nanoseconds{s.udp_sleep_ns});
      }
      req[i]->close();
    });
  for (auto& h : clients) h.join();
  for (auto& h : servers) h.join();
  std::uint64_t total = 0;
  for (std::uint32_t i = 0; i < s.udp_pairs; ++i) {
    total += got[i];
    log.merge(logs[i]);
  }
  return total;
}

// A fork-join: each round the master sends one task to each of
// forkjoin_tasks fibers, each spins forkjoin_work_ns and answers, and the
// master waits for every answer before the next round. A dispatcher whose
// wakees' work is short next to waking a sleeping worker (the pattern of a
// parallel loop over small chunks).
inline std::uint64_t forkjoin(const Sizes& s, LatencyLog& log) {
  std::vector<ChanPtr> task;
  for (std::uint32_t i = 0; i < s.forkjoin_tasks; ++i) task.push_back(std::make_unique<Chan>(1));
  Chan done{s.forkjoin_tasks};
  std::vector<boost::fibers::fiber> helpers;
  for (std::uint32_t i = 0; i < s.forkjoin_tasks; ++i)
    helpers.emplace_back([&, i] {
      Msg m;
      while (task[i]->recv(m)) {
        busy_work(s.forkjoin_work_ns);
        done.send(m);
      }
    });
  std::uint64_t rounds = 0;
  for (std::uint32_t r = 0; r < s.forkjoin_rounds; ++r) {
    const std::int64_t t0 = now_ns();
    for (std::uint32_t i = 0; i < s.forkjoin_tasks; ++i) task[i]->send(Msg{i, t0});
    Msg m;
    for (std::uint32_t i = 0; i < s.forkjoin_tasks; ++i)
      if (!done.recv(m)) throw std::runtime_error("forkjoin: channel closed early");
    log.add(now_ns() - t0);
    ++rounds;
  }
  for (auto& c : task) c->close();
  for (auto& f : helpers) f.join();
  return rounds;
}

// Effects: runs `workload` in the calling fiber's pool and checks that every
// message arrived. Throws: std::invalid_argument for an unknown workload,
// std::runtime_error for a wrong message count.
inline std::uint64_t run(const std::string& workload, const Sizes& s, LatencyLog& log) {
  std::uint64_t ops = 0;
  if (workload == "pipe") ops = pipe(s, log);
  else if (workload == "pgbench") ops = pgbench(s, log);
  else if (workload == "hackbench") ops = hackbench(s, log);
  else if (workload == "udp_rr") ops = udp_rr(s, log);
  else if (workload == "forkjoin") ops = forkjoin(s, log);
  else throw std::invalid_argument("unknown workload: " + workload);
  if (ops != expected_ops(workload.c_str(), s))
    throw std::runtime_error(workload + ": delivered " + std::to_string(ops) + " of " +
                             std::to_string(expected_ops(workload.c_str(), s)));
  return ops;
}

// One timed run of a workload; an exception it throws is kept in `error`.
struct TimedRun {
  std::uint64_t ops = 0;
  std::int64_t elapsed_ns = 0;
  std::string error;  // empty when the run succeeded
};

// Effects: run(workload, s, log) from the calling fiber, timed; never throws
// what the run throws (it lands in TimedRun::error).
inline TimedRun timed_run(const std::string& workload, const Sizes& s, LatencyLog& log) {
  TimedRun r;
  try {
    log.reserve(expected_ops(workload.c_str(), s));
    const std::int64_t t0 = now_ns();
    r.ops = run(workload, s, log);
    r.elapsed_ns = now_ns() - t0;
  } catch (const std::exception& e) {
    r.error = e.what();
  }
  return r;
}

}  // namespace workloads::fiber
