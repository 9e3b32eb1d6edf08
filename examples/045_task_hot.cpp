// 045_task_hot.cpp: the second half of "is stealing worth it?": once a dry
// worker has found a queued task, TaskHot says whether that task is worth
// moving (kernel task_hot() / can_migrate_task()).
//
// Worker 0 runs a task and has another queued behind it; worker 1, on the
// same LLC, has nothing. The queued task ran 100 us ago (hot: migration
// cost 500 us), so worker 1's balances leave it, until its periodic
// balances have failed twice in a row (cache_nice_tries of the LLC: 1);
// newidle balances never count. A task that has not run for a millisecond
// is cold and moves at once. Last, the rule is the balance traits' Hot
// member: between SMT siblings today's rule never finds a task hot, the
// classic one (v2.6.23 to v5.9) does.
#include <cstdio>

#include <taskplace/taskplace.hpp>

using namespace std::chrono_literals;
using taskplace::BalanceKind;
using taskplace::PullOutcome;

int main() {
  const taskplace::TaskHot<> hot;              // today's kernel: SMT exempt, 500 us
  taskplace::TaskHot<>::state worker1{};       // worker 1's failure counts, per level
  const std::uint32_t llc = 0;                 // worker 1's level 0 is the LLC (no SMT)
  taskplace::ManualClock clock{10ms};

  taskplace::Move queued{.kind = taskplace::LevelKind::llc, .last_ran = clock.now() - 100us};
  int moved_at = -1;
  const char* kinds[] = {"newidle", "periodic"};
  for (int attempt = 0; attempt < 6 && moved_at < 0; ++attempt) {
    // Worker 1 runs dry (newidle) now and then; its tick kicks a periodic
    // balance every other attempt. The queued task keeps running briefly
    // on worker 0, so it stays hot.
    const BalanceKind kind = attempt % 2 == 0 ? BalanceKind::newidle : BalanceKind::periodic;
    clock.advance(50us);
    queued.last_ran = clock.now() - 100us;
    const bool may = hot.can_migrate(worker1, llc, queued, clock.now());
    std::printf("attempt %d (%-8s): hot %-3s failures %u -> %s\n", attempt, kinds[kind == BalanceKind::periodic],
                hot.is_hot(queued, clock.now()) ? "yes" : "no", worker1.nr_balance_failed[llc],
                may ? "moved" : "left where it is");
    hot.record(worker1, llc, kind, may ? PullOutcome::moved : PullOutcome::refused);
    if (may) moved_at = attempt;
  }
  // Two periodic refusals (attempts 1 and 3) make the count 2 > 1: the
  // newidle balance at attempt 4 may take it.
  const taskplace::Move cold{.kind = taskplace::LevelKind::llc, .last_ran = clock.now() - 1ms};
  const bool cold_moves = hot.can_migrate(worker1, llc, cold, clock.now());
  std::printf("a task that last ran 1 ms ago: %s\n", cold_moves ? "moved at once" : "left");

  // The rule as a traits member (what kit::Stealer, the pool and the
  // Boost.Fiber group apply): the default, and the classic one.
  struct classic : taskplace::DefaultBalanceTraits {
    using Hot = taskplace::TaskHot<taskplace::task_hot::AllLevels2007>;
  };
  using Today = taskplace::IdleBalancer<taskplace::UniformTopology>::hot_policy;
  using Classic = taskplace::IdleBalancer<taskplace::UniformTopology, classic>::hot_policy;
  const taskplace::Move smt{.kind = taskplace::LevelKind::smt, .last_ran = clock.now() - 100us};
  const bool today_hot = Today{}.is_hot(smt, clock.now());
  const bool classic_hot = Classic{}.is_hot(smt, clock.now());
  std::printf("an SMT move of a task that ran 100 us ago: hot under today's rule %s, under the classic %s\n",
              today_hot ? "yes" : "no", classic_hot ? "yes" : "no");
  return moved_at == 4 && cold_moves && !today_hot && classic_hot ? 0 : 1;
}
