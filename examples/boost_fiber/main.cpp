// examples/boost_fiber/main.cpp: four threads run fibers under the taskplace
// algorithm; a producer feeds consumers through a buffered_channel, and the
// placer's counters say where the wake-ups went.
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <vector>

#include <boost/fiber/all.hpp>

#include "taskplace_fiber/algorithm.hpp"
#include "taskplace_fiber/run.hpp"

int main() {
  using Group = taskplace_fiber::Group<taskplace::traits::Current>;
  constexpr std::uint32_t workers = 4;
  Group group{workers};

  // Four fresh threads, worker 0's running the body as its main fiber; all
  // joined when it returns (a thread's scheduler lives until the thread
  // exits, and the group must outlive it).
  std::atomic<std::uint64_t> sum{0};
  taskplace_fiber::run(group, [&] {
    boost::fibers::buffered_channel<std::uint64_t> ch{64};
    std::vector<boost::fibers::fiber> consumers;
    for (int i = 0; i < 8; ++i)
      consumers.emplace_back([&] {
        std::uint64_t v = 0;
        while (ch.pop(v) == boost::fibers::channel_op_status::success) sum += v;
      });
    for (std::uint64_t i = 1; i <= 10000; ++i) ch.push(i);
    ch.close();
    for (auto& f : consumers) f.join();
  });

  const auto st = group.placer_stats();
  std::printf("sum %llu (expected %llu)\n", static_cast<unsigned long long>(sum.load()), 10000ull * 10001 / 2);
  for (auto c : {taskplace::WakeCounter::wakeups, taskplace::WakeCounter::idle_target,
                 taskplace::WakeCounter::idle_prev, taskplace::WakeCounter::idle_scan,
                 taskplace::WakeCounter::target_busy})
    std::printf("%-12s %llu\n", taskplace::to_string(c), static_cast<unsigned long long>(st.get(c)));
  const auto gs = group.stats();
  std::printf("placed_remote %llu, migrations %llu, steals %llu\n",
              static_cast<unsigned long long>(gs.placed_remote), static_cast<unsigned long long>(gs.migrations),
              static_cast<unsigned long long>(gs.steals));
  return sum.load() == 10000ull * 10001 / 2 ? 0 : 1;
}
