// bench/micro/pool_pipe_driver.cpp: the pool's pipe (two tasks passing a
// token, bench/workloads/pool_workloads.hpp) for callgrind, to count the
// instructions of a round trip: the pool's own hand-off (AlwaysAffine, no
// decision and no reports) and what traits::Runtime's placement and the
// reports around it add. Sets whose decisions read idle states (Current,
// PrevCpu's split pair) decide under valgrind's timing as they would not
// natively, so their counts would not be theirs; they are left out.
//
//   valgrind --tool=callgrind ./taskplace_pool_pipe_driver pool_pipe runtime 100000
//   instructions per round trip = (Ir(N) - Ir(0)) / N   (scripts/bench micro)
//
// A run is 1000 + N round trips, so that N = 0 holds the pool's start,
// the first placements and the shutdown. The pool has 2 workers in one
// LLC (the pair settles on one, the other parks), and costs of seconds:
// under valgrind a run lasts some 50 times longer, and with the measured
// costs the runs and overlaps the gate reads would exceed them, so the
// decisions would not be those of a native run (traits::Runtime keeps
// the pair by test (a) in both). The parked worker's ticks follow the
// run's length under valgrind: the count moves by about 10 between runs.
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "taskplace/topology/uniform.hpp"
#include "workloads/pool_workloads.hpp"

namespace {

template <class Traits>
int run(std::uint32_t rounds) {
  using namespace std::chrono_literals;
  taskplace_pool::PoolOptions o;
  o.costs = taskplace::kit::WakeCosts{.spinning = 300ms, .parked = 2s, .crossing = 150ms};
  taskplace_pool::Pool<taskplace::UniformTopology, Traits> pool{taskplace::UniformTopology{1, 1, 2, 1}, o};
  workloads::Sizes s;
  s.pipe_rounds = 1000 + rounds;
  const workloads::Result r = workloads::pool::run(pool, "pipe", s, "driver", std::chrono::minutes{10});
  std::printf("pool_pipe n=%u ops=%llu\n", rounds, static_cast<unsigned long long>(r.ops));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string_view set = argc == 4 && std::string_view{argv[1]} == "pool_pipe" ? argv[2] : "";
  if (set != "affine" && set != "runtime") {
    std::fprintf(stderr, "usage: %s pool_pipe affine|runtime N\n", argv[0]);
    return 2;
  }
  const auto n = static_cast<std::uint32_t>(std::strtoul(argv[3], nullptr, 10));
  if (set == "affine") return run<taskplace::traits::AlwaysAffine>(n);
  return run<taskplace::traits::Runtime>(n);
}
