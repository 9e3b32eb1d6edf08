// 026_sis_current.cpp: SIS_CURRENT (Chen Yu, 2023, never merged) in one
// screen. Two tasks that wake each other and run only briefly between
// sleeps stay on the waking CPU instead of crossing to an idle one.
//
// A 2-CPU machine, a clock that moves by hand. Every run lasts 10 us, then
// the task wakes its partner and sleeps; only one task runs at a time, so
// the partner's previous CPU is always idle.
//  1. A ping-pong pair under traits::Current: the wakee goes back to its
//     idle previous CPU; the pair runs split over both CPUs.
//  2. The same pair under traits::SisCurrent<>: split as well until the
//     flips that formed the pair have decayed (one 1 s flip period), then
//     each wakee lands on the waking CPU (wake_on_current) and the pair
//     shares one CPU.
//  3. A 1:N waker under traits::SisCurrent<>: D wakes W1, W2, W3 in turn,
//     each answers D. D switches partner at every wake-up, so its flip
//     count is never 0, and the rule never keeps a pair.
// Every placement is checked against the decision's rules (check_placement).
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdio>

#include <taskplace/taskplace.hpp>
#include <taskplace/testing/machine.hpp>

using namespace std::chrono_literals;
namespace tp = taskplace;

namespace {

constexpr tp::Nanoseconds run_length = 10us;

struct Outcome {
  std::uint32_t wakeups = 0;
  std::uint32_t kept = 0;         // reason wake_on_current
  std::uint32_t crossed = 0;      // the wakee went to the other CPU
  std::uint32_t to_idle_prev = 0; // the wakee went to its idle previous CPU (idle_target)
  tp::Nanoseconds first_kept{-1}; // when the rule first fired
  bool conforms = true;           // every placement passed check_placement
};

// Runs `trips` wake-ups among N tasks on 2 CPUs: the running task runs
// 10 us, wakes the next one of `order` (which maps a wake-up's index to the
// task woken), and sleeps. Prints the wake-ups listed in `shown`.
template <class Traits, std::size_t N, class Order>
Outcome run(const char* name, std::uint32_t trips, Order order,
            std::array<std::uint32_t, 5> shown) {
  const tp::UniformTopology topo{1, 1, 2, 1};  // 2 cores, one shared cache
  using Placer = tp::WakePlacer<tp::UniformTopology, Traits>;
  const Placer placer{topo};
  tp::testing::ScriptedMachine<> m{2};
  tp::ManualClock clock;

  std::array<typename Placer::task_state, N> task{};
  std::array<tp::CpuId, N> cpu{};  // where each task last ran
  for (std::size_t i = 0; i < N; ++i) cpu[i] = static_cast<tp::CpuId>(i % 2);

  Outcome out;
  std::size_t running = 0;  // task 0 starts on CPU 0
  m.busy(cpu[running]);
  placer.task_runs(task[running], clock.now());
  std::printf("%s\n", name);
  for (std::uint32_t i = 0; i < trips; ++i) {
    clock.advance(run_length);
    const std::size_t next = order(i);
    const auto key = [](std::size_t t) { return static_cast<tp::TaskKey>(t + 1); };
    const tp::Placement p =
        placer.place({.waker = &task[running], .waker_key = key(running), .wakee = &task[next],
                      .wakee_key = key(next), .waking_cpu = cpu[running], .prev_cpu = cpu[next]},
                     m, clock.now());
    const auto bad = tp::testing::check_placement(
        topo, m, tp::AnyCpu{}, {.waking_cpu = cpu[running], .prev_cpu = cpu[next]}, p);
    for (const auto& v : bad) std::printf("  violation %s: %s\n", v.rule.c_str(), v.detail.c_str());
    out.conforms = out.conforms && bad.empty();

    ++out.wakeups;
    if (p.reason == tp::WakeReason::wake_on_current) {
      if (out.kept++ == 0) out.first_kept = clock.now();
    }
    if (p.cpu != cpu[running]) ++out.crossed;
    if (p.cpu == cpu[next] && p.affine == tp::AffineReason::prev_idle &&
        p.reason == tp::WakeReason::idle_target)
      ++out.to_idle_prev;
    bool show = false;
    for (auto s : shown) show = show || s == i;
    if (show)
      std::printf("  %9.3f ms  T%zu on CPU %u wakes T%zu (last on CPU %u) -> CPU %u (%s, %s)\n",
                  static_cast<double>(clock.now().count()) / 1e6, running + 1, cpu[running],
                  next + 1, cpu[next], p.cpu, tp::to_string(p.affine), tp::to_string(p.reason));

    // The waker sleeps; the wakee runs where it was placed.
    placer.task_sleeps(task[running], clock.now());
    m.idle(cpu[running]);
    cpu[next] = p.cpu;
    running = next;
    m.busy(cpu[running]);
    placer.task_runs(task[running], clock.now());
  }
  std::printf("  %u wake-ups: %u kept on the waking CPU (wake_on_current), %u to the other CPU",
              out.wakeups, out.kept, out.crossed);
  if (out.kept > 0)
    std::printf("; the first kept at %.3f ms", static_cast<double>(out.first_kept.count()) / 1e6);
  std::printf("\n  average run of T1: %lld ns, flips of T1: %u\n\n",
              static_cast<long long>(tp::DurationTracker::average(task[0].duration).count()),
              placer.flips().flips(task[0].flips));
  return out;
}

// Duration is tracked here only so that the trace can print T1's average.
struct CurrentTraced : tp::traits::Current {
  using Duration = tp::DurationTracker;
};

}  // namespace

int main() {
  // 160,000 runs of 10 us: 1.6 s, of which the first second is the flip
  // period that a new pair waits out.
  constexpr std::uint32_t trips = 160'000;
  const auto pair = [](std::uint32_t i) -> std::size_t { return (i + 1) % 2; };
  // The trace: the first two wake-ups, and three just past 1 s: the
  // waker's flips decay at 1000.010 ms but the wakee's are still 1; at
  // 1000.020 ms the other task's decay too, and the pair is kept.
  constexpr std::array<std::uint32_t, 5> around_switch = {0, 1, 100'000, 100'001, 100'002};

  const Outcome current = run<CurrentTraced, 2>("ping-pong pair, traits::Current", trips, pair,
                                                around_switch);
  const Outcome sis = run<tp::traits::SisCurrent<>, 2>("ping-pong pair, traits::SisCurrent<>",
                                                       trips, pair, around_switch);
  // D is task 0 (T1); the wake-ups alternate D -> W, W -> D, with W going
  // round W1 (T2), W2 (T3), W3 (T4).
  const auto one_to_three = [](std::uint32_t i) -> std::size_t {
    return i % 2 == 0 ? 1 + (i / 2) % 3 : 0;
  };
  const Outcome fan = run<tp::traits::SisCurrent<>, 4>("1:3 waker, traits::SisCurrent<>", trips,
                                                       one_to_three, {0, 1, 2, 3, 100'000});

  // Current: every wake-up goes back to the wakee's idle previous CPU, the
  // other one (affine prev_idle, then idle_target: the target is idle).
  const bool current_ok = current.kept == 0 && current.to_idle_prev == trips;
  // SisCurrent: split like Current until both tasks' flips have decayed
  // (the first wake-up after 1 s decays only the waker's, so 100,001
  // wake-ups cross), then every wake-up is kept on the waking CPU.
  const bool sis_ok = sis.to_idle_prev == 100'001 && sis.first_kept == 1s + 20us &&
                      sis.kept == trips - 100'001;
  // 1:N: D's flips grow at every wake-up, so the rule never keeps a pair.
  const bool fan_ok = fan.kept == 0 && fan.crossed == trips;
  const bool ok = current_ok && sis_ok && fan_ok && current.conforms && sis.conforms && fan.conforms;
  std::printf("%s\n", ok ? "as expected" : "UNEXPECTED");
  return ok ? 0 : 1;
}
