// Tests for taskplace/policy/task_hot.hpp (kernel task_hot() and the
// cache-hot part of can_migrate_task()).
#include "taskplace/policy/task_hot.hpp"

#include <catch2/catch.hpp>

#include <chrono>
#include <cstdint>
#include <limits>
#include <string_view>
#include <tuple>
#include <vector>

using namespace std::chrono_literals;
using taskplace::BalanceKind;
using taskplace::LevelKind;
using taskplace::Move;
using taskplace::Nanoseconds;
using taskplace::PullOutcome;
using taskplace::TaskHot;
namespace th = taskplace::task_hot;

namespace {

using BothRules = std::tuple<TaskHot<th::AllLevels2007>, TaskHot<th::SmtExempt2020>>;

constexpr Move llc_move(Nanoseconds last_ran) { return Move{.kind = LevelKind::llc, .last_ran = last_ran}; }

}  // namespace

TEMPLATE_LIST_TEST_CASE("a task is hot for exactly migration_cost after it last ran", "[task_hot]", BothRules) {
  const TestType hot{};
  // kernel task_hot(): delta < sysctl_sched_migration_cost (500000 ns), strict.
  const Nanoseconds ran = 7ms;
  CHECK(hot.is_hot(llc_move(ran), ran));
  CHECK(hot.is_hot(llc_move(ran), ran + 499'999ns));
  CHECK_FALSE(hot.is_hot(llc_move(ran), ran + 500'000ns));
  CHECK_FALSE(hot.is_hot(llc_move(ran), ran + 1s));
  // Every level above SMT uses the same test.
  for (auto k : {LevelKind::cluster, LevelKind::llc, LevelKind::node, LevelKind::machine}) {
    CHECK(hot.is_hot({.kind = k, .last_ran = ran}, ran + 100us));
    CHECK_FALSE(hot.is_hot({.kind = k, .last_ran = ran}, ran + 600us));
  }
}

TEMPLATE_LIST_TEST_CASE("migration_cost 0 makes no task hot and a negative one every task", "[task_hot]",
                        BothRules) {
  TestType never{};
  never.migration_cost = 0ns;  // kernel: sysctl_sched_migration_cost = 0
  CHECK_FALSE(never.is_hot(llc_move(5ms), 5ms));
  TestType always{};
  always.migration_cost = -1ns;  // kernel: -1
  CHECK(always.is_hot(llc_move(0ns), 1h));
  always.migration_cost = Nanoseconds::min();
  CHECK(always.is_hot(llc_move(0ns), Nanoseconds::max()));
}

TEST_CASE("SMT siblings share every cache since v5.10; the classic rule tests them too", "[task_hot]") {
  const Move smt{.kind = LevelKind::smt, .last_ran = 1ms};
  CHECK_FALSE(TaskHot<th::SmtExempt2020>{}.is_hot(smt, 1ms + 10us));
  CHECK(TaskHot<th::AllLevels2007>{}.is_hot(smt, 1ms + 10us));
  // The exemption comes first in the kernel: not even a next buddy or a
  // negative cost makes an SMT move hot.
  TaskHot<th::SmtExempt2020> h{};
  h.migration_cost = -1ns;
  CHECK_FALSE(h.is_hot({.kind = LevelKind::smt, .last_ran = 0ns, .next_buddy = true, .dst_nr_running = 3}, 0ns));
  // The classic rule's SMT level takes no failure (cache_nice_tries 0): one
  // failed periodic balance lets a hot task across.
  TaskHot<th::AllLevels2007> c{};
  TaskHot<th::AllLevels2007>::state s{};
  CHECK_FALSE(c.can_migrate(s, 0, smt, 1ms + 10us));
  c.record(s, 0, BalanceKind::periodic, PullOutcome::refused);
  CHECK(c.can_migrate(s, 0, smt, 1ms + 10us));
}

TEMPLATE_LIST_TEST_CASE("the next buddy is hot when the destination has tasks", "[task_hot]", BothRules) {
  TestType hot{};
  Move m = llc_move(0ns);  // ran long ago: cold by its stamp
  m.next_buddy = true;
  const Nanoseconds now = 10ms;
  CHECK_FALSE(hot.is_hot(m, now));  // empty destination: the stamp decides
  m.dst_nr_running = 1;
  CHECK(hot.is_hot(m, now));
  hot.migration_cost = 0ns;  // the buddy test comes before "0: nothing is hot"
  CHECK(hot.is_hot(m, now));
  hot.hot_buddy = false;  // CACHE_HOT_BUDDY off
  CHECK_FALSE(hot.is_hot(m, now));
}

TEMPLATE_LIST_TEST_CASE("a stamp after now reads as ran just now, extreme stamps saturate", "[task_hot][faults]",
                        BothRules) {
  const TestType hot{};
  // Clock went backwards (or the stamp came from another CPU's clock): the
  // kernel's s64 delta is negative, below the cost: hot.
  CHECK(hot.is_hot(llc_move(2ms), 1ms));
  // The difference does not fit in 64 bits: no overflow, a very old task.
  CHECK_FALSE(hot.is_hot(llc_move(Nanoseconds::min()), Nanoseconds::max()));
  CHECK(hot.is_hot(llc_move(Nanoseconds::max()), Nanoseconds::min()));
  // The stamp of a task that never ran (an embedder's "none": the clock's
  // minimum) reads as cold at any time.
  CHECK_FALSE(hot.is_hot(llc_move(Nanoseconds::min()), 0ns));
  CHECK_FALSE(hot.is_hot(llc_move(Nanoseconds::min()), 1ms));
}

TEST_CASE("cache_nice_tries follows sd_init: SMT 0, cluster LLC package 1, NUMA 2", "[task_hot]") {
  const TaskHot<> hot{};
  CHECK(hot.tries(LevelKind::smt) == 0);
  CHECK(hot.tries(LevelKind::cluster) == 1);
  CHECK(hot.tries(LevelKind::llc) == 1);
  CHECK(hot.tries(LevelKind::node) == 1);
  CHECK(hot.tries(LevelKind::machine) == 2);
  // A value outside the enumeration reads as the machine level's.
  CHECK(hot.tries(static_cast<LevelKind>(200)) == 2);
}

TEMPLATE_LIST_TEST_CASE("a hot task moves only after more than cache_nice_tries failed periodic balances",
                        "[task_hot]", BothRules) {
  const TestType hot{};
  typename TestType::state s{};
  // A CPU whose levels are llc (index 0) and machine (index 1, NUMA). The
  // task on the busy CPU runs every 100 us, so it is always hot.
  const Nanoseconds now = 1s;
  const Move llc{.kind = LevelKind::llc, .last_ran = now - 100us};
  const Move numa{.kind = LevelKind::machine, .last_ran = now - 100us};

  // LLC: cache_nice_tries 1, so the third periodic balance moves it
  // (nr_balance_failed 2 > 1). Newidle balances in between never count.
  CHECK_FALSE(hot.can_migrate(s, 0, llc, now));
  hot.record(s, 0, BalanceKind::periodic, PullOutcome::refused);  // 1
  hot.record(s, 0, BalanceKind::newidle, PullOutcome::refused);   // still 1
  CHECK(s.nr_balance_failed[0] == 1);
  CHECK_FALSE(hot.can_migrate(s, 0, llc, now));
  hot.record(s, 0, BalanceKind::periodic, PullOutcome::refused);  // 2
  CHECK(hot.can_migrate(s, 0, llc, now));
  // The move resets the count: the next hot task waits again.
  hot.record(s, 0, BalanceKind::periodic, PullOutcome::moved);
  CHECK(s.nr_balance_failed[0] == 0);
  CHECK_FALSE(hot.can_migrate(s, 0, llc, now));

  // NUMA: cache_nice_tries 2, three failures needed; each level counts alone.
  for (int i = 0; i < 2; ++i) hot.record(s, 1, BalanceKind::periodic, PullOutcome::refused);
  CHECK_FALSE(hot.can_migrate(s, 1, numa, now));
  CHECK(s.nr_balance_failed[0] == 0);
  hot.record(s, 1, BalanceKind::periodic, PullOutcome::refused);
  CHECK(hot.can_migrate(s, 1, numa, now));
  // A balance that found nothing to take (or only pinned tasks) also resets
  // (kernel out_balanced / out_all_pinned), periodic or newidle.
  hot.record(s, 1, BalanceKind::newidle, PullOutcome::balanced);
  CHECK(s.nr_balance_failed[1] == 0);

  // A cold task moves with no failures at all.
  CHECK(hot.can_migrate(s, 0, llc_move(now - 2ms), now));
}

TEST_CASE("failure counts saturate instead of wrapping", "[task_hot][faults]") {
  const TaskHot<> hot{};
  TaskHot<>::state s{};
  s.nr_balance_failed[2] = std::numeric_limits<std::uint32_t>::max() - 1;
  hot.record(s, 2, BalanceKind::periodic, PullOutcome::refused);
  hot.record(s, 2, BalanceKind::periodic, PullOutcome::refused);
  CHECK(s.nr_balance_failed[2] == std::numeric_limits<std::uint32_t>::max());
  CHECK(hot.can_migrate(s, 2, llc_move(1s), 1s));
}

TEST_CASE("a level index past max_levels is a precondition error", "[task_hot][faults]") {
  const TaskHot<> hot{};
  TaskHot<>::state s{};
  // Tests build with TASKPLACE_CHECKED=1; unchecked builds read 0 failures
  // and ignore the record.
  CHECK_THROWS_AS(hot.can_migrate(s, taskplace::max_levels, llc_move(0ns), 0ns), taskplace::PreconditionError);
  CHECK_THROWS_AS(hot.record(s, taskplace::max_levels, BalanceKind::periodic, PullOutcome::refused),
                  taskplace::PreconditionError);
  CHECK(s == TaskHot<>::state{});
}

TEST_CASE("per-level cache_nice_tries can be replaced per object", "[task_hot]") {
  TaskHot<> eager{.migration_cost = 250us, .cache_nice_tries = {0, 0, 0, 0, 0}};
  TaskHot<>::state s{};
  const Move m = llc_move(1ms);
  CHECK(eager.is_hot(m, 1ms + 249us));
  CHECK_FALSE(eager.is_hot(m, 1ms + 250us));
  CHECK_FALSE(eager.can_migrate(s, 0, m, 1ms + 10us));
  eager.record(s, 0, BalanceKind::periodic, PullOutcome::refused);
  CHECK(eager.can_migrate(s, 0, m, 1ms + 10us));  // 1 > 0
}

TEST_CASE("pull outcomes have names", "[task_hot]") {
  CHECK(std::string_view(to_string(PullOutcome::moved)) == "moved");
  CHECK(std::string_view(to_string(PullOutcome::balanced)) == "balanced");
  CHECK(std::string_view(to_string(PullOutcome::refused)) == "refused");
}

TEST_CASE("find_movable takes the first candidate the test lets go, judging at most nr_migrate", "[task_hot]") {
  const TaskHot<> hot{};
  TaskHot<>::state s{};
  const Nanoseconds now = 10ms;
  // Last-ran stamps of a victim's queue: hot, hot, cold, cold.
  const std::vector<Nanoseconds> q = {now - 10us, now - 200us, now - 600us, now - 5ms};
  auto stamp = [](Nanoseconds t) { return t; };
  auto r = hot.find_movable(s, 0, LevelKind::llc, q.begin(), q.end(), stamp, now);
  REQUIRE(r.found);
  CHECK(r.it == q.begin() + 2);  // the first cold one
  CHECK(r.looked == 3);
  CHECK(r.hot() == 2);
  // From the other end (a pool that gives up its newest first): the 5 ms one.
  auto b = hot.find_movable(s, 0, LevelKind::llc, q.rbegin(), q.rend(), stamp, now);
  REQUIRE(b.found);
  CHECK(*b.it == now - 5ms);
  CHECK(b.looked == 1);
  CHECK(b.hot() == 0);
  // A limit of 2 (the kernel's loop_max) stops before the cold ones.
  auto l = hot.find_movable(s, 0, LevelKind::llc, q.begin(), q.end(), stamp, now, 0, 2);
  CHECK_FALSE(l.found);
  CHECK(l.it == q.begin() + 2);
  CHECK(l.looked == 2);
  CHECK(l.hot() == 2);
  // All hot: none found; the first nr_migrate (32 of 40) judged, the scan
  // stopped after them.
  const std::vector<Nanoseconds> all_hot(40, now - 1us);
  auto n = hot.find_movable(s, 0, LevelKind::llc, all_hot.begin(), all_hot.end(), stamp, now);
  CHECK_FALSE(n.found);
  CHECK(n.looked == taskplace::tunables::nr_migrate);  // 32 of 40
  CHECK(n.hot() == 32);
  // Enough failed periodic balances: the first candidate goes, hot or not.
  hot.record(s, 0, BalanceKind::periodic, PullOutcome::refused);
  hot.record(s, 0, BalanceKind::periodic, PullOutcome::refused);
  auto f = hot.find_movable(s, 0, LevelKind::llc, all_hot.begin(), all_hot.end(), stamp, now);
  CHECK(f.found);
  CHECK(f.it == all_hot.begin());
  // An empty queue: nothing judged.
  const std::vector<Nanoseconds> none;
  auto e = hot.find_movable(s, 0, LevelKind::llc, none.begin(), none.end(), stamp, now);
  CHECK_FALSE(e.found);
  CHECK(e.looked == 0);
}
