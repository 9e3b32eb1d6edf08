// 020_override_policy.cpp: replace one policy through the traits.
//
// The defaults are today's kernel (DefaultWakeTraits). Derive from them and
// replace one member: here the wide rule becomes Matt Fleming's 2017
// experiment (wide::MasterOnly2017, Fleming 2017), which drops the "the wakee must
// itself switch partners at least f times" test. A dispatcher that has
// woken many workers then counts as wide even toward a fresh worker.
#include <cstdint>
#include <cstdio>
#include <vector>

#include <taskplace/taskplace.hpp>

struct Machine {
  std::vector<std::uint32_t> running;
  bool is_idle(taskplace::CpuId c) const { return running[c] == 0; }
  std::uint32_t nr_running(taskplace::CpuId c) const { return running[c]; }
  std::uint64_t load(taskplace::CpuId c) const { return running[c] * 1024u; }
};

// One member replaced; everything else stays the kernel's.
struct MasterOnlyTraits : taskplace::DefaultWakeTraits {
  using Wide = taskplace::WideDetector<taskplace::wide::MasterOnly2017>;
};

template <class Traits>
bool dispatcher_is_wide(const char* name) {
  using Placer = taskplace::WakePlacer<taskplace::UniformTopology, Traits>;
  const taskplace::UniformTopology topology{1, 1, 4, 2};  // LLC of 8 CPUs: factor 8
  const Placer placer{topology};
  Machine machine{{1, 1, 1, 1, 1, 1, 1, 1}};  // all busy: the search keeps the target

  typename Placer::task_state dispatcher;
  std::vector<typename Placer::task_state> workers(32);
  taskplace::Placement last{};
  // The dispatcher on cpu 0 wakes 32 workers in turn, 10 us apart; worker
  // i last ran on cpu 1 + i % 7. The workers wake nobody: 0 flips each.
  for (std::uint32_t i = 0; i < workers.size(); ++i)
    last = placer.place({.waker = &dispatcher, .waker_key = 1, .wakee = &workers[i],
                         .wakee_key = 2 + i, .waking_cpu = 0, .prev_cpu = 1 + i % 7},
                        machine, taskplace::Nanoseconds{10'000 * (i + 1)});
  std::printf("%-16s dispatcher flips %u, worker flips 0, factor 8: wide=%s, target cpu %u (%s)\n",
              name, placer.flips().flips(dispatcher.flips), last.wide ? "yes" : "no", last.target,
              taskplace::to_string(last.affine));
  return last.wide;
}

int main() {
  // wide::Symmetric2015: lo = 0 < 8, not wide: the affine step decides.
  const bool current = dispatcher_is_wide<taskplace::traits::Current>("traits::Current");
  // wide::MasterOnly2017: hi = 32 >= 8 * 0, wide: the worker stays near its prev.
  const bool master_only = dispatcher_is_wide<MasterOnlyTraits>("wide::MasterOnly2017");
  return !current && master_only ? 0 : 1;
}
