// Consumer proof: the installed pool runs a ping-pong of 1000 messages over
// two channels on two workers and shuts down with every task completed.
#include <taskplace/topology/uniform.hpp>
#include <taskplace_pool/pool.hpp>

#include <cstdio>

namespace {
using taskplace_pool::Channel;
using taskplace_pool::task;

task<void> echo(Channel<int>& in, Channel<int>& out) {
  while (auto v = co_await in.recv()) co_await out.send(*v + 1);
  out.close();
}

template <class Pool>
task<int> lead(Pool& pool) {
  Channel<int> to{1}, from{1};
  auto peer = pool.spawn(echo(to, from));
  int v = 0;
  for (int i = 0; i < 1000; ++i) {
    co_await to.send(v);
    v = *co_await from.recv();
  }
  to.close();
  co_await peer;
  co_return v;
}
}  // namespace

int main() {
  // Two workers on one LLC, whatever the machine running the proof has.
  taskplace_pool::Pool<taskplace::UniformTopology> pool{taskplace::UniformTopology{1, 1, 2, 1}};
  const int v = pool.block_on(lead(pool));
  const auto report = pool.shutdown();
  std::printf("ping-pong reached %d; %llu tasks completed, %llu abandoned\n", v,
              static_cast<unsigned long long>(report.completed),
              static_cast<unsigned long long>(report.abandoned));
  return v == 1000 && report.abandoned == 0 ? 0 : 1;
}
