// bench/micro/callgrind_driver.cpp: runs one micro-benchmark case N times so
// that valgrind's callgrind can count instructions per call.
//
// Each case is a non-inlined extern "C" function (tp_<case>_<variant>), so
// `--toggle-collect=tp_flip_wide_policy` counts exactly the instructions of
// the calls. scripts/bench also subtracts a 0-iteration run, which gives the
// same count plus the loop around the call:
//   instructions per call = (Ir(N) - Ir(0)) / N.
//
//   valgrind --tool=callgrind --toggle-collect=tp_flip_wide_policy
//     ./taskplace_callgrind_driver flip_wide policy 100000
//
// The placer has no baseline: `place <idle|busy|half> <cpus> N` runs
// WakePlacer<UniformTopology, traits::Current>::place on placer_cases.hpp's
// machines, one call of tp_place per decision; `place_sis` the same with
// traits::SisCurrent<> (tp_place_sis), whose baseline is `place`; and
// `pair current|sis|runtime|runtime_judged N` a settled ping-pong pair
// (tp_pair_<set>: the decision plus the run and sleep reports around it).
//   valgrind --tool=callgrind --toggle-collect=tp_place
//     ./taskplace_callgrind_driver place half 224 100000
//
// `kit kit|old|kit_nollc|old_nollc current|runtime|prev N`: one wake-up's
// bookkeeping (kit_cases.hpp: the task-state lookup, the placement, the
// machine-state update) through the kit and through the pool's hand-written
// state before the kit, each with and without the LLC sample (tp_kit_wake).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string_view>

#include "cases.hpp"
#include "kit_cases.hpp"
#include "placer_cases.hpp"

namespace {
constexpr taskplace::UniformTopology westmere = taskplace::presets::westmere_12cpu_2013();
#if TASKPLACE_BENCH_HAVE_NEWIDLE
constexpr taskplace::UniformTopology spr = taskplace::presets::sapphire_rapids_2x56x2();
#endif
}  // namespace

namespace {
// The decision alone (the reports outside it): count with
// --toggle-collect=tp_decide_<set>, Ir / N.
template <class Traits>
__attribute__((noinline)) taskplace::CpuId decide_only(const bench::PairCase<Traits>& c, std::uint32_t i) {
  return c.decide(i).cpu;
}
}  // namespace

extern "C" {
__attribute__((noinline)) bool tp_flip_wide_policy(bench::FlipWidePolicy& p,
                                                   const bench::FlipWideInput& in) {
  return p(in);
}
__attribute__((noinline)) bool tp_flip_wide_baseline(bench::FlipWideBaseline& b,
                                                     const bench::FlipWideInput& in) {
  return b(in);
}
#if TASKPLACE_BENCH_HAVE_NEWIDLE
__attribute__((noinline)) bool tp_newidle_gate_policy(const bench::GatePolicy& p,
                                                      const bench::GateInput& in) {
  return p(in);
}
__attribute__((noinline)) bool tp_newidle_gate_baseline(const bench::GateBaseline& b,
                                                        const bench::GateInput& in) {
  return b(in);
}
__attribute__((noinline)) bool tp_newidle_gate_raw(const bench::GateRawBaseline& b,
                                                   const bench::GateInput& in) {
  return b(in);
}
#endif
#if TASKPLACE_BENCH_HAVE_RESERVATION
__attribute__((noinline)) bool tp_reservation_policy(const bench::ReservationPolicy& p,
                                                     const bench::ReservationInput& in) {
  return p(in);
}
__attribute__((noinline)) bool tp_reservation_baseline(const bench::ReservationBaseline& b,
                                                       const bench::ReservationInput& in) {
  return b(in);
}
#endif
__attribute__((noinline)) taskplace::CpuId tp_place(bench::PlaceCase& c, std::uint32_t i) {
  return c(i).cpu;
}
__attribute__((noinline)) taskplace::CpuId tp_place_sis(bench::SisPlaceCase& c, std::uint32_t i) {
  return c(i).cpu;
}
__attribute__((noinline)) taskplace::CpuId tp_pair_current(bench::PairCase<taskplace::traits::Current>& c,
                                                           std::uint32_t i) {
  return c(i).cpu;
}
__attribute__((noinline)) taskplace::CpuId tp_pair_sis(bench::PairCase<taskplace::traits::SisCurrent<>>& c,
                                                       std::uint32_t i) {
  return c(i).cpu;
}
__attribute__((noinline)) taskplace::CpuId tp_decide_current(const bench::PairCase<taskplace::traits::Current>& c,
                                                             std::uint32_t i) {
  return decide_only(c, i);
}
__attribute__((noinline)) taskplace::CpuId tp_decide_sis(const bench::PairCase<taskplace::traits::SisCurrent<>>& c,
                                                         std::uint32_t i) {
  return decide_only(c, i);
}
__attribute__((noinline)) taskplace::CpuId tp_decide_runtime(const bench::PairCase<taskplace::traits::Runtime>& c,
                                                             std::uint32_t i) {
  return decide_only(c, i);
}
__attribute__((noinline)) taskplace::CpuId tp_decide_runtime_judged(const bench::PairCase<bench::RuntimeJudged>& c,
                                                                    std::uint32_t i) {
  return decide_only(c, i);
}
__attribute__((noinline)) taskplace::CpuId tp_pair_runtime(bench::PairCase<taskplace::traits::Runtime>& c,
                                                           std::uint32_t i) {
  return c(i).cpu;
}
__attribute__((noinline)) taskplace::CpuId tp_pair_runtime_judged(bench::PairCase<bench::RuntimeJudged>& c,
                                                                  std::uint32_t i) {
  return c(i).cpu;
}

}

namespace {
template <class F, class Input>
unsigned run(F&& f, const Input& in, long n) {
  unsigned hits = 0;
  for (long i = 0; i < n; ++i) hits += f(in[static_cast<std::size_t>(i) & bench::ring_mask]);
  return hits;
}
}  // namespace

static int pair_main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: %s pair current|sis|runtime|runtime_judged N\n", argv[0]);
    return 2;
  }
  const long n = std::strtol(argv[3], nullptr, 10);
  unsigned long sum = 0;
  if (std::string_view{argv[2]} == "sis") {
    bench::PairCase<taskplace::traits::SisCurrent<>> c;
    for (long i = 0; i < n; ++i) sum += tp_pair_sis(c, static_cast<std::uint32_t>(i));
  } else if (std::string_view{argv[2]} == "runtime") {
    bench::PairCase<taskplace::traits::Runtime> c;
    for (long i = 0; i < n; ++i) sum += tp_pair_runtime(c, static_cast<std::uint32_t>(i));
  } else if (std::string_view{argv[2]} == "runtime_judged") {
    bench::PairCase<bench::RuntimeJudged> c;
    for (long i = 0; i < n; ++i) sum += tp_pair_runtime_judged(c, static_cast<std::uint32_t>(i));
  } else {
    bench::PairCase<taskplace::traits::Current> c;
    for (long i = 0; i < n; ++i) sum += tp_pair_current(c, static_cast<std::uint32_t>(i));
  }
  std::printf("pair %s n=%ld sum=%lu\n", argv[2], n, sum);
  return 0;
}

// `decide current|sis|runtime|runtime_judged N`: the pair's decisions, each between its
// reports; tp_decide_<set> holds the decision alone.
template <class Traits, class F>
unsigned long decide_loop(F f, long n) {
  bench::PairCase<Traits> c;
  unsigned long sum = 0;
  for (long i = 0; i < n; ++i) {
    const auto k = static_cast<std::uint32_t>(i);
    c.runs(k);
    sum += f(c, k);
    c.sleeps(k);
  }
  return sum;
}
static int decide_main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: %s decide current|sis|runtime|runtime_judged N\n", argv[0]);
    return 2;
  }
  const long n = std::strtol(argv[3], nullptr, 10);
  const std::string_view set = argv[2];
  const unsigned long sum = set == "sis"       ? decide_loop<taskplace::traits::SisCurrent<>>(tp_decide_sis, n)
                            : set == "runtime" ? decide_loop<taskplace::traits::Runtime>(tp_decide_runtime, n)
                            : set == "runtime_judged" ? decide_loop<bench::RuntimeJudged>(tp_decide_runtime_judged, n)
                                               : decide_loop<taskplace::traits::Current>(tp_decide_current, n);
  std::printf("decide %s n=%ld sum=%lu\n", argv[2], n, sum);
  return 0;
}

static int place_main(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: %s place|place_sis idle|busy|half CPUS N\n", argv[0]);
    return 2;
  }
  const std::string_view load = argv[2];
  const bench::Load l = load == "idle" ? bench::Load::idle
                        : load == "busy" ? bench::Load::busy
                                         : bench::Load::half;
  const auto topo = bench::shape(std::strtol(argv[3], nullptr, 10));
  const long n = std::strtol(argv[4], nullptr, 10);
  unsigned long sum = 0;
  if (std::string_view{argv[1]} == "place_sis") {
    bench::SisPlaceCase c{topo, l};
    for (long i = 0; i < n; ++i) sum += tp_place_sis(c, static_cast<std::uint32_t>(i));
  } else {
    bench::PlaceCase c{topo, l};
    for (long i = 0; i < n; ++i) sum += tp_place(c, static_cast<std::uint32_t>(i));
  }
  std::printf("place %s %u n=%ld sum=%lu\n", argv[2], topo.cpu_count(), n, sum);
  return 0;
}

// One wake-up of a kit case, not inlined: its instructions are what
// (Ir(N) - Ir(0)) / N counts (tp_kit_wake<...> for --toggle-collect).
template <class Case>
__attribute__((noinline)) taskplace::CpuId tp_kit_wake(Case& c, std::uint32_t i) {
  return c(i);
}
template <class Case>
static unsigned long kit_loop(long n) {
  auto c = std::make_unique<Case>();  // its set-up (2 rings of the stream) counts in Ir(0) too
  unsigned long sum = 0;
  for (long i = 0; i < n; ++i) sum += tp_kit_wake(*c, static_cast<std::uint32_t>(i));
  return sum + c->kicks;
}
template <class Traits>
static unsigned long kit_run(std::string_view which, long n) {
  namespace k = bench::kitcase;
  if (which == "kit") return kit_loop<k::KitCase<Traits>>(n);
  if (which == "old") return kit_loop<k::OldCase<Traits>>(n);
  if (which == "kit_nollc") return kit_loop<k::KitCase<Traits, false>>(n);
  return kit_loop<k::OldCase<Traits, false>>(n);
}
// `kit CASE current|runtime|prev N`: prev (traits::PrevCpu:
// no affine step, no search) leaves the bookkeeping and the placement call
// with the least decision.
static int kit_main(int argc, char** argv) {
  const std::string_view which = argc == 5 ? argv[2] : "", set = argc == 5 ? argv[3] : "";
  if ((which != "kit" && which != "old" && which != "kit_nollc" && which != "old_nollc") ||
      (set != "current" && set != "runtime" && set != "prev")) {
    std::fprintf(stderr, "usage: %s kit kit|old|kit_nollc|old_nollc current|runtime|prev N\n", argv[0]);
    return 2;
  }
  const long n = std::strtol(argv[4], nullptr, 10);
  const unsigned long sum = set == "current"   ? kit_run<taskplace::traits::Current>(which, n)
                            : set == "runtime" ? kit_run<taskplace::traits::Runtime>(which, n)
                                               : kit_run<taskplace::traits::PrevCpu>(which, n);
  std::printf("kit %s %s n=%ld sum=%lu\n", argv[2], argv[3], n, sum);
  return 0;
}

int main(int argc, char** argv) {
  if (argc >= 2 && (std::string_view{argv[1]} == "place" || std::string_view{argv[1]} == "place_sis"))
    return place_main(argc, argv);
  if (argc >= 2 && std::string_view{argv[1]} == "pair") return pair_main(argc, argv);
  if (argc >= 2 && std::string_view{argv[1]} == "decide") return decide_main(argc, argv);
  if (argc >= 2 && std::string_view{argv[1]} == "kit") return kit_main(argc, argv);
  if (argc != 4) {
    std::fprintf(stderr,
                 "usage: %s flip_wide|newidle_gate|reservation policy|baseline N\n"
                 "       %s newidle_gate raw N   (the formula without the policy's guards)\n",
                 argv[0], argv[0]);
    return 2;
  }
  const std::string_view which = argv[1];
  const bool policy = std::strcmp(argv[2], "policy") == 0;
  const long n = std::strtol(argv[3], nullptr, 10);
  unsigned hits = 0;
  if (which == "flip_wide") {
    const auto in = bench::flip_wide_inputs(westmere.cpu_count());
    if (policy) {
      bench::FlipWidePolicy p{&westmere};
      hits = run([&](const auto& x) { return tp_flip_wide_policy(p, x); }, in, n);
    } else {
      bench::FlipWideBaseline b{westmere.llc_size(0)};
      hits = run([&](const auto& x) { return tp_flip_wide_baseline(b, x); }, in, n);
    }
#if TASKPLACE_BENCH_HAVE_NEWIDLE
  } else if (which == "newidle_gate") {
    const std::uint32_t levels = spr.level_count(0);
    const auto in = bench::gate_inputs(levels);
    if (policy) {
      const bench::GatePolicy p{bench::gate_histories(levels), levels};
      hits = run([&](const auto& x) { return tp_newidle_gate_policy(p, x); }, in, n);
    } else if (std::strcmp(argv[2], "raw") == 0) {
      const bench::GateRawBaseline b{bench::gate_histories(levels), levels};
      hits = run([&](const auto& x) { return tp_newidle_gate_raw(b, x); }, in, n);
    } else {
      const bench::GateBaseline b{bench::gate_histories(levels), levels};
      hits = run([&](const auto& x) { return tp_newidle_gate_baseline(b, x); }, in, n);
    }
#endif
#if TASKPLACE_BENCH_HAVE_RESERVATION
  } else if (which == "reservation") {
    const auto in = bench::reservation_inputs();
    if (policy) {
      const bench::ReservationPolicy p{};
      hits = run([&](const auto& x) { return tp_reservation_policy(p, x); }, in, n);
    } else {
      const bench::ReservationBaseline b{};
      hits = run([&](const auto& x) { return tp_reservation_baseline(b, x); }, in, n);
    }
#endif
  } else {
    std::fprintf(stderr, "unknown or unavailable case: %s\n", argv[1]);
    return 2;
  }
  std::printf("%s %s n=%ld hits=%u\n", argv[1], argv[2], n, hits);
  return 0;
}
