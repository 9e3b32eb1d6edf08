// Tests of the simulator's building blocks: the event queue's order (heap
// and lanes), the mailbox ring, the cost model's distances and refills,
// and the span index's incremental counts checked against a recount by
// walking the spans (the machine's balancers rely on the two agreeing).
#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "taskplace/topology/uniform.hpp"
#include "taskplace_sim/cost_model.hpp"
#include "taskplace_sim/event_queue.hpp"
#include "taskplace_sim/machine.hpp"
#include "taskplace_sim/machine_state.hpp"
#include "taskplace_sim/rng.hpp"
#include "taskplace_sim/span_index.hpp"
#include "taskplace_sim/workloads.hpp"

using namespace std::chrono_literals;
using taskplace::CpuId;
using taskplace::Nanoseconds;
using taskplace::UniformTopology;
using namespace taskplace_sim;

TEST_CASE("the event queue pops by time, then in push order", "[simulator][parts]") {
  EventQueue q;
  Rng rng{3};
  std::vector<std::pair<std::int64_t, std::uint32_t>> pushed;
  for (std::uint32_t i = 0; i < 2000; ++i) {
    const std::int64_t t = rng.below(50);  // many ties
    q.push(Nanoseconds{t}, EventKind::timer, i, 0);
    pushed.emplace_back(t, i);
  }
  // The expected order: by time, ties by push order (a stable sort).
  std::stable_sort(pushed.begin(), pushed.end(), [](auto& a, auto& b) { return a.first < b.first; });
  REQUIRE(q.size() == pushed.size());
  for (const auto& [t, i] : pushed) {
    REQUIRE(!q.empty());
    const Event e = q.pop();
    CHECK(e.t == t);
    CHECK(e.a == i);
  }
  CHECK(q.empty());
}

TEST_CASE("the event queue (heap and lanes) interleaves pushes and pops like one sorted list",
          "[simulator][parts]") {
  // Lanes are a speed-up only: whatever goes where, pops come out by
  // (time, push number), the order the heap alone gives.
  EventQueue q;
  Rng rng{17};
  std::vector<std::pair<std::int64_t, std::uint64_t>> ref;  // (t, seq), kept sorted
  std::uint64_t seq = 0;
  std::int64_t now = 0;
  for (int step = 0; step < 20000; ++step) {
    const std::uint64_t r = rng.below(8);
    if (ref.empty() || r < 5) {
      std::int64_t t = now + rng.below(30);
      if (r <= 1) {
        q.push(Nanoseconds{t}, EventKind::timer, 0, seq);
      } else {
        // Lane 0: a fixed delay (in order); lane 1: a delay that varies, so
        // some pushes are earlier than the lane's newest and go to the heap.
        const std::size_t lane = r == 2 ? 0 : 1;
        if (lane == 0) t = now + 7;
        q.push_in_lane(lane, Nanoseconds{t}, EventKind::arrival, 0, seq);
      }
      ref.emplace_back(t, seq++);
      std::sort(ref.begin(), ref.end());
    } else {
      REQUIRE(q.size() == ref.size());
      CHECK(q.top().t == ref.front().first);
      const Event e = q.pop();
      REQUIRE(e.t == ref.front().first);
      REQUIRE(e.b == ref.front().second);
      now = e.t;
      ref.erase(ref.begin());
    }
  }
  while (!ref.empty()) {
    const Event e = q.pop();
    REQUIRE(e.b == ref.front().second);
    ref.erase(ref.begin());
  }
  CHECK(q.empty());
}

TEST_CASE("pop_until takes only what is due, and a bad lane is refused", "[simulator][parts]") {
  EventQueue q;
  q.push_in_lane(1, Nanoseconds{10}, EventKind::tick, 4, 0);
  q.push(Nanoseconds{10}, EventKind::cpu, 5, 0);  // same time, pushed later
  q.push_in_lane(0, Nanoseconds{20}, EventKind::arrival, 6, 0);
  CHECK_FALSE(q.pop_until(Nanoseconds{9}).has_value());
  CHECK(q.size() == 3);
  auto e = q.pop_until(Nanoseconds{10});
  REQUIRE(e.has_value());
  CHECK(e->a == 4);  // the tie goes to the earlier push, lane or not
  e = q.pop_until(Nanoseconds{10});
  REQUIRE(e.has_value());
  CHECK(e->a == 5);
  CHECK_FALSE(q.pop_until(Nanoseconds{19}).has_value());
  e = q.pop_until(Nanoseconds{20});
  REQUIRE(e.has_value());
  CHECK(e->a == 6);
  CHECK_FALSE(q.pop_until(Nanoseconds{1000}).has_value());
  CHECK(q.empty());
  CHECK_THROWS_AS(q.push_in_lane(EventQueue::lane_count, Nanoseconds{1}, EventKind::tick, 0, 0), std::out_of_range);
  CHECK(q.empty());
}

TEST_CASE("a mailbox is a FIFO across growth and wrap-around", "[simulator][parts]") {
  Mailbox box;
  std::uint32_t next_in = 0, next_out = 0;
  for (int round = 0; round < 50; ++round) {
    for (int k = 0; k < round % 7 + 1; ++k) box.push_back({.from = next_in++});
    for (int k = 0; k < round % 5 && !box.empty(); ++k) CHECK(box.pop_front().from == next_out++);
  }
  while (!box.empty()) CHECK(box.pop_front().from == next_out++);
  CHECK(next_out == next_in);
}

TEST_CASE("the cost model's distances and refills follow the topology", "[simulator][parts]") {
  // two_node_80cpu numbers SMT last: 40 is cpu 0's sibling, 1 shares its
  // LLC, 20 is on the other node.
  const auto topo = taskplace::presets::two_node_80cpu();
  Costs c;
  c.refill_core = 10us;
  c.refill_llc = 20us;
  c.refill_node = 30us;
  c.cache_cool = 1ms;
  const CostModel m{topo, c};
  CHECK(m.distance(0, 0) == Distance::same_cpu);
  CHECK(m.distance(0, 40) == Distance::smt);
  CHECK(m.distance(0, 1) == Distance::llc);
  CHECK(m.distance(0, 20) == Distance::other_node);
  CHECK(m.llc_count() == 2);
  CHECK(m.llc_size(5) == 40);
  // The rates are per 256 KB: a 128 KB working set halves every refill.
  CHECK(m.cache_penalty(0, 1, 0, 128) == 5us);
  CHECK(m.cache_penalty(0, 20, 0, 256) == 60us);
  // Back on its own core: only what others' 250 us of run time cooled.
  CHECK(m.cache_penalty(0, 0, 250'000, 256) == 2500ns);
  CHECK(m.cache_penalty(taskplace::no_cpu, 3, 0, 256) == 0us);
  // A message: message_lines (8) plus a line per 64 bytes, at the
  // distance: 50 ns in an L3, 200 ns across nodes.
  CHECK(m.message_cost(0, 40) == 8 * 50ns);
  CHECK(m.message_cost(0, 1, 100) == (8 + 2) * 50ns);
  CHECK(m.message_cost(0, 20, 64) == (8 + 1) * 200ns);
  CHECK(m.message_cost(0, 0, 100) == 0ns);
  CHECK(m.message_cost(taskplace::no_cpu, 20) == 0us);
  // The other thread of each core (SMT numbered last: k and k + 40).
  REQUIRE(m.siblings(0).size() == 1);
  CHECK(m.siblings(0)[0] == 40);
  CHECK(m.siblings(79)[0] == 39);
  const CostModel flat{taskplace::presets::eight_socket_80core(), c};
  CHECK(flat.siblings(5).empty());
}

namespace {

// The recount the span index replaces: walk c's level-i span.
template <class T>
std::uint32_t walk_count(const T& topo, CpuId c, std::uint32_t i, const std::vector<bool>& flag) {
  std::uint32_t n = 0;
  for (auto x : topo.level_cpus(c, i)) n += flag[static_cast<CpuId>(x)] ? 1u : 0u;
  return n;
}

}  // namespace

TEST_CASE("span index counts match a walk of every span after random changes", "[simulator][parts]") {
  const UniformTopology topos[] = {taskplace::presets::sapphire_rapids_2x56x2(), taskplace::presets::epyc_2x64x2(),
                                   taskplace::presets::eight_socket_80core(), UniformTopology{1, 1, 1, 1},
                                   UniformTopology{2, 2, 3, 2}};
  for (const auto& topo : topos) {
    SpanIndex ix{topo};
    REQUIRE(ix.exact());
    const auto n = static_cast<CpuId>(topo.cpu_count());
    std::vector<bool> bal(n, false), cand(n, false);
    Rng rng{n};
    for (int step = 0; step < 3000; ++step) {
      const CpuId c = rng.below(n);
      if (rng.below(2) == 0) {
        bal[c] = !bal[c];
        ix.set_balancing(c, bal[c]);
      } else {
        cand[c] = !cand[c];
        ix.set_load(c, cand[c] ? 2 : 0);
      }
      if (step % 100 != 0) continue;
      REQUIRE(ix.check().empty());
      for (CpuId x = 0; x < n; ++x)
        for (std::uint32_t i = 0; i < topo.level_count(x); ++i) {
          const auto g = ix.group(x, i);
          REQUIRE(ix.size(g) == std::ranges::size(topo.level_cpus(x, i)));
          REQUIRE(ix.balancing(g) == walk_count(topo, x, i, bal));
          const auto list = ix.candidates(g);
          REQUIRE(list.size() == walk_count(topo, x, i, cand));
          for (const CpuId s : list) {
            REQUIRE(cand[s]);
            // A listed CPU is in the span, at the position the index says.
            const auto span = topo.level_cpus(x, i);
            REQUIRE(span[ix.position(s, i)] == s);
          }
        }
    }
  }
}

TEST_CASE("the machine's incremental counts match a recount throughout busy runs", "[simulator][parts]") {
  // check_invariants recounts the idle flags, the per-LLC idle counts the
  // placer's llc_utilization_pct reads, the queued count and the span
  // index's balancing / candidate state.
  SECTION("aim7 on 80 CPUs, where newidle balancing is frequent") {
    const auto topo = taskplace::presets::eight_socket_80core();
    Machine<UniformTopology, taskplace::traits::Current> m{topo, workloads::aim7(400, 80), Costs{}, 2};
    for (int i = 1; i <= 40; ++i) {
      m.run_until(Nanoseconds{i * 500'000});
      const std::string v = m.check_invariants();
      INFO(v);
      REQUIRE(v.empty());
    }
  }
  SECTION("netperf on 224 CPUs with SMT") {
    const auto topo = taskplace::presets::sapphire_rapids_2x56x2();
    Machine<UniformTopology, taskplace::traits::Current> m{topo, workloads::netperf(168, 224), Costs{}, 2};
    for (int i = 1; i <= 20; ++i) {
      m.run_until(Nanoseconds{i * 250'000});
      const std::string v = m.check_invariants();
      INFO(v);
      REQUIRE(v.empty());
    }
  }
}

namespace {

// A 4-CPU machine whose single balancing level overlaps: cpu c's span is
// {c, c + 1} ({2, 3} for cpu 3), so cpu 1's span {1, 2} is not cpu 2's.
// The span index cannot describe it and the machine walks the spans.
struct OverlappingTopology : UniformTopology {
  OverlappingTopology() : UniformTopology{1, 1, 4, 1} {}
  constexpr cpu_range level_cpus(CpuId c, std::uint32_t) const noexcept {
    const CpuId first = c + 1 < cpu_count() ? c : c - 1;
    return {first, 2, 0, 2};
  }
};
static_assert(taskplace::Topology<OverlappingTopology>);

}  // namespace

TEST_CASE("a topology whose spans overlap falls back to walking them, and work is conserved", "[simulator][parts]") {
  const OverlappingTopology topo;
  const SpanIndex ix{topo};
  CHECK_FALSE(ix.exact());
  CHECK(SpanIndex{UniformTopology{1, 1, 4, 1}}.exact());
  // Eight CPU-bound tasks with sleeps, all forked on cpu 0: the balancers
  // must spread them through the overlapping spans.
  Workload w;
  for (std::uint32_t i = 0; i < 8; ++i)
    w.tasks.push_back(TaskSpec{.name = "t" + std::to_string(i),
                               .program = {Step::compute(2ms), Step::sleep(100us), Step::loop(20), Step::end()}});
  Machine<OverlappingTopology, taskplace::traits::Current> m{topo, w, Costs{}, 1};
  for (int i = 1; i <= 10; ++i) {
    m.run_until(Nanoseconds{i * 2'000'000});
    const std::string v = m.check_invariants();
    INFO(v);
    REQUIRE(v.empty());
  }
  const Report r = m.run_to_completion(2s);
  REQUIRE(r.all_done.count() > 0);
  std::uint64_t ran_elsewhere = 0;
  for (std::uint32_t i = 0; i < m.task_count(); ++i) {
    CHECK(m.task(i).cpu_time == m.task(i).work);
    // 21 computes of 2 ms each (less the +-5% noise), plus refills.
    CHECK(m.task(i).cpu_time >= 42ms * 95 / 100);
    ran_elsewhere += m.task(i).last_cpu != 0 ? 1u : 0u;
  }
  CHECK(ran_elsewhere > 0);
}
