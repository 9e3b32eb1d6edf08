// The pool in thirty lines: two tasks pass a token over channels
// on a pool over this machine; the wake-ups are placed by the kernel's
// policy set (traits::Current), and the pool's counters say where they went.
// With --handoff the channels promise that each waker blocks next
// (WakeHint::handoff, kernel WF_CURRENT_CPU) and the pair shares a worker.
#include <cstdio>
#include <string_view>

#include "taskplace_pool/pool.hpp"

using taskplace_pool::Channel;
using taskplace_pool::task;

task<void> echo(Channel<int>& in, Channel<int>& out) {
  while (auto v = co_await in.recv()) co_await out.send(*v + 1);
}

task<int> lead(Channel<int>& out, Channel<int>& in, int rounds) {
  int token = 0;
  for (int i = 0; i < rounds; ++i) {
    co_await out.send(token);
    token = *co_await in.recv();
  }
  out.close();
  co_return token;
}

int main(int argc, char** argv) {
  const bool handoff = argc > 1 && std::string_view{argv[1]} == "--handoff";
  const auto hint = handoff ? taskplace_pool::WakeHint::handoff : taskplace_pool::WakeHint::sync;
  taskplace_pool::SystemPool<taskplace::traits::Current> pool;  // one worker per allowed CPU
  Channel<int> a{1, hint}, b{1, hint};
  auto e = pool.spawn(echo(a, b));
  const int token = pool.block_on(lead(a, b, 10'000));
  e.get();
  const auto s = pool.stats();
  std::printf("token %d after %llu wake-ups on %u workers (%u pinned): %.0f%% on the waking worker, "
              "%llu migrations\n",
              token, static_cast<unsigned long long>(s.wakeups), pool.worker_count(),
              pool.pinned_workers(),
              s.wakeups ? 100.0 * static_cast<double>(s.affine_wakeups) / static_cast<double>(s.wakeups) : 0.0,
              static_cast<unsigned long long>(s.migrations));
  return token == 10'000 ? 0 : 1;
}
