// The simulator's memory: linear in CPUs plus tasks, and flat over the
// length of a run. This file replaces the global operator new and delete
// to count live heap bytes, so it is its own test program.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <new>

#include "taskplace/topology/uniform.hpp"
#include "taskplace/wake_placer.hpp"
#include "taskplace_sim/latency_histogram.hpp"
#include "taskplace_sim/machine.hpp"
#include "taskplace_sim/workloads.hpp"

namespace {
std::atomic<std::size_t> live_bytes{0};
constexpr std::size_t header = 16;  // keeps malloc's 16-byte alignment
}  // namespace

void* operator new(std::size_t n) {
  void* raw = std::malloc(n + header);
  if (raw == nullptr) throw std::bad_alloc{};
  *static_cast<std::size_t*>(raw) = n;
  live_bytes += n;
  return static_cast<char*>(raw) + header;
}
void operator delete(void* p) noexcept {
  if (p == nullptr) return;
  void* raw = static_cast<char*>(p) - header;
  live_bytes -= *static_cast<std::size_t*>(raw);
  std::free(raw);
}
void* operator new[](std::size_t n) { return ::operator new(n); }
void operator delete[](void* p) noexcept { ::operator delete(p); }
void operator delete(void* p, std::size_t) noexcept { ::operator delete(p); }
void operator delete[](void* p, std::size_t) noexcept { ::operator delete(p); }

using namespace std::chrono_literals;
using taskplace::UniformTopology;
using namespace taskplace_sim;

namespace {
// netperf's shape (Chen 2023) on 2 nodes x 1 LLC x c cores x 2 threads:
// 4c CPUs, as many client/server pairs as CPUs (twice as many tasks).
struct Sized {
  UniformTopology topo;
  Machine<UniformTopology, taskplace::traits::Current> m;
  explicit Sized(std::uint32_t cores) : topo{2, 1, cores, 2}, m{topo, workloads::netperf(4 * cores, 4 * cores), Costs{}, 1} {}
};
}  // namespace

TEST_CASE("a machine's memory is linear in its CPUs plus tasks", "[simulator][memory]") {
  // 56 CPUs / 112 tasks against 224 CPUs / 448 tasks (netperf's size):
  // four times the CPUs and tasks may take at most ~4x the bytes (25%
  // slack for vectors' power-of-two growth); a CPU x CPU table would take
  // 16x.
  auto bytes = [](std::uint32_t cores) {
    const std::size_t before = live_bytes.load();
    Sized s{cores};
    s.m.run(2ms, 10ms);
    return live_bytes.load() - before;
  };
  const std::size_t small = bytes(14), large = bytes(56);
  INFO("56 CPUs: " << small << " bytes, 224 CPUs: " << large << " bytes");
  CHECK(small > 0);
  CHECK(large >= 2 * small);  // it does grow with the machine ...
  CHECK(large <= 5 * small);  // ... and linearly
}

TEST_CASE("a machine's memory does not grow with the length of the run", "[simulator][memory]") {
  // Every completion records a latency; a histogram keeps them in bounded
  // memory, where a vector of samples would add 8 bytes per completion
  // (about 2.3 million completions in the extra 200 ms here: 18 MB).
  Sized s{56};
  const auto r = s.m.run(2ms, 20ms);
  const std::size_t after_short = live_bytes.load();
  s.m.run_until(s.m.now() + 200ms);
  const auto r2 = s.m.report();
  const std::size_t after_long = live_bytes.load();
  INFO("completions " << r.completions << " then " << r2.completions << "; live bytes " << after_short << " then "
                      << after_long);
  CHECK(r2.completions > 10 * r.completions / 2);  // the long run did run
  CHECK(after_long <= after_short + 64 * 1024);
}

TEST_CASE("the latency histogram is exact below 2048 ns, within 0.1% above, in bounded memory",
          "[simulator][memory]") {
  LatencyHistogram h;
  CHECK(h.quantile(0.5) == 0);  // empty
  h.record(-5);                  // negative counts as 0
  CHECK(h.quantile(1.0) == 0);
  h.clear();
  CHECK(h.empty());

  // Values 0..2047 once each: nearest rank round(q x 2047) is the value.
  for (std::int64_t v = 2047; v >= 0; --v) h.record(v);
  CHECK(h.quantile(0.0) == 0);
  CHECK(h.quantile(0.5) == 1024);  // round(1023.5)
  CHECK(h.quantile(0.99) == 2027);  // round(2026.53)
  CHECK(h.quantile(1.0) == 2047);

  // Above: each bucket is 1/1024 of its power of two wide, so the lower
  // bound is within 0.1% of any value in it; the maximum stays exact.
  for (const std::int64_t v : {std::int64_t{2048}, std::int64_t{4097}, std::int64_t{123'456'789},
                               std::int64_t{1} << 62, INT64_MAX}) {
    const auto i = LatencyHistogram::index_of(static_cast<std::uint64_t>(v));
    const auto lo = LatencyHistogram::lower_bound_of(i);
    CHECK(lo <= static_cast<std::uint64_t>(v));
    CHECK(static_cast<double>(static_cast<std::uint64_t>(v) - lo) <= static_cast<double>(v) / 1024.0);
    CHECK(LatencyHistogram::index_of(lo) == i);
  }
  // The last of 55,296 buckets: 2048 exact ones, then 1024 per power of
  // two from 2^11 to 2^62 (52 of them).
  CHECK(LatencyHistogram::index_of(INT64_MAX) == 55'295);
  LatencyHistogram g;
  g.record(123'456'789);
  CHECK(g.quantile(1.0) == 123'456'789);
  // Below the maximum a quantile reads its bucket's lower bound: between
  // 2^26 and 2^27 a bucket is 2^26 / 1024 = 65,536 ns wide, so
  // 1883 * 65,536 = 123,404,288.
  CHECK(g.quantile(0.5) == 123'404'288);
  // A million more values below 1 ms add no memory.
  const std::size_t mem = g.memory_bytes();
  for (std::int64_t k = 0; k < 1'000'000; ++k) g.record(k % 1'000'000);
  CHECK(g.memory_bytes() == mem);
  CHECK(g.count() == 1'000'001);
}

TEST_CASE("a diverging scenario stops with an error in bounded memory, and a capacity keeps it flat", "[simulator][memory]") {
  // A sender 10x faster than its receiver: without a mailbox capacity the
  // mailbox would grow by a message every microsecond (24 bytes each: 24 MB
  // a simulated second, 96 MB in 4 s); the machine stops at 65,536 queued
  // messages (a ring of 65,536 x 24 bytes, 1.5 MB) with SimulationDiverged.
  const UniformTopology two{1, 1, 2, 1};
  auto workload = [](std::uint32_t capacity) {
    Workload w;
    w.tasks.push_back(TaskSpec{.name = "fast", .program = {Step::compute(1us), Step::send(1, false, 64), Step::loop()}, .start_cpu = 0});
    w.tasks.push_back(TaskSpec{.name = "slow", .program = {Step::wait(), Step::compute(10us), Step::loop()}, .start_cpu = 1, .mailbox_bytes = capacity});
    return w;
  };
  const std::size_t before = live_bytes.load();
  {
    Machine<UniformTopology, taskplace::traits::Current> m{two, workload(0), Costs{}, 1};
    CHECK_THROWS_AS(m.run_until(4s), SimulationDiverged);
    const std::size_t peak = live_bytes.load() - before;
    INFO("live bytes at the error: " << peak);
    CHECK(peak < 4u * 1024 * 1024);
  }
  {
    // A 64 KB pipe: the sender blocks when it is full; the run goes on in
    // flat memory.
    Machine<UniformTopology, taskplace::traits::Current> m{two, workload(64 * 1024), Costs{}, 1};
    m.start_measuring();
    m.run_until(100ms);
    const std::size_t at_100ms = live_bytes.load();
    m.run_until(1s);
    const Report r = m.report();
    CHECK(r.sends_blocked > 0);
    CHECK(live_bytes.load() <= at_100ms + 16 * 1024);
    CHECK(m.task(1).mailbox.size() <= 1024);  // 64 KB of 64-byte messages
  }
}
