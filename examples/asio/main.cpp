// The Asio embedding: four io_contexts, one thread each, whose handlers are
// placed by taskplace. Eight sessions pass a token around a ring (each hop a
// continuation deferred to the next session's executor: a sync wake-up);
// a steady_timer's completion, bound to a session's executor, starts the
// ring, so that Asio's own completion is placed too. Exits 0 when every hop
// ran once. docs/embedding.md walks through it.
#include <atomic>
#include <chrono>
#include <cstdio>
#include <thread>
#include <vector>

#include <boost/asio/bind_executor.hpp>
#include <boost/asio/defer.hpp>
#include <boost/asio/steady_timer.hpp>

#include "taskplace_asio/executor.hpp"
#include "taskplace_asio/runtime.hpp"

int main() {
  constexpr std::uint32_t sessions = 8, hops = 100'000;
  taskplace_asio::Runtime<> rt{4};
  struct Session {
    std::uint32_t id = 0;
    std::uint64_t hops = 0;  // written by its handlers only: one at a time
  };
  std::vector<Session> ring(sessions);
  for (std::uint32_t i = 0; i < sessions; ++i) ring[i].id = i;
  std::atomic<std::uint32_t> left{hops};

  // A hop: the session counts it and defers the next hop to the next one.
  struct Hop {
    taskplace_asio::Runtime<>* rt;
    std::vector<Session>* ring;
    std::atomic<std::uint32_t>* left;
    std::uint32_t at;
    void operator()() const {
      ++(*ring)[at].hops;
      if (left->fetch_sub(1) == 1) return;
      const std::uint32_t next = (at + 1) % static_cast<std::uint32_t>(ring->size());
      boost::asio::defer(taskplace_asio::TaskExecutor{*rt, &(*ring)[next]}, Hop{rt, ring, left, next});
    }
  };

  // The ring starts at a timer's completion, on worker 0's io_context.
  boost::asio::steady_timer timer{rt.context(0), std::chrono::milliseconds{1}};
  timer.async_wait(boost::asio::bind_executor(taskplace_asio::TaskExecutor{rt, &ring[0]},
                                              [&](const boost::system::error_code&) { Hop{&rt, &ring, &left, 0}(); }));
  // join() waits for handlers posted, not for Asio's operations (the
  // timer): wait for the ring's end first.
  while (left.load() != 0) std::this_thread::sleep_for(std::chrono::milliseconds{1});
  rt.join();

  std::uint64_t total = 0;
  for (auto& s : ring) total += s.hops;
  const auto st = rt.stats();
  std::printf("%llu hops ran (%u asked); %llu handlers, %llu migrations, %llu steals, %llu placed remote\n",
              static_cast<unsigned long long>(total), hops, static_cast<unsigned long long>(st.handlers),
              static_cast<unsigned long long>(st.migrations), static_cast<unsigned long long>(st.steals),
              static_cast<unsigned long long>(st.remote));
  return total == hops ? 0 : 1;
}
