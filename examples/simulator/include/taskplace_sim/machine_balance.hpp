// taskplace_sim/machine_balance.hpp: the simulated machine's load
// balancing: the newidle balance through the library's IdleBalancer, with
// the cost model of a pull attempt, and the periodic balance of each
// level. Part of Machine (machine.hpp includes it; include that).
//
// Kernel analogue: newidle_balance / sched_balance_newidle (the balancer
// call; the pull is a caricature of load_balance: the busiest CPU of the
// span, the first movable of its queued tasks in enqueue order, at most
// sysctl_sched_nr_migrate = 32 looked at, as detach_tasks() walks
// cfs_tasks from its tail), the periodic rebalance_domains with its
// cache-hot test (can_migrate_task, cache_nice_tries), and NOHZ: idle CPUs
// do not tick, and a busy CPU whose tick finds it running two or more
// kicks the balance of the idle ones (nohz_balancer_kick,
// _nohz_idle_balance).
//
// The span questions (which CPUs of a span are balancing, which have a
// task to give) are answered from the SpanIndex, which the machine keeps
// up to date, instead of walking the span: the answers are the same as a
// walk's, first CPU in span order on ties.
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <ranges>

#include "taskplace_sim/machine.hpp"

namespace taskplace_sim {

// The queued task of `src` a pull takes: the one queued longest ago; with
// a `thief` (a balance at its level `level`, of kind `kind`), the first in
// enqueue order the library's TaskHot lets it take (kernel
// can_migrate_task: not cache hot, or the level's balances failed more
// than cache_nice_tries times), looking at no more than 32 (kernel
// sysctl_sched_nr_migrate, detach_tasks' loop_max); -1 if none.
// Complexity: O(1), at most 32 steps.
template <taskplace::Topology T, class W, class B>
std::int64_t Machine<T, W, B>::pick_victim(CpuId src, const Cpu* thief, std::uint32_t level,
                                           taskplace::LevelKind kind) const {
  constexpr std::uint32_t nr_migrate = 32;
  std::uint32_t looked = 0;
  for (std::uint32_t id = rq_.oldest(src); id != RunQueues::none && looked < nr_migrate; id = rq_.after(id), ++looked)
    if (thief == nullptr || may_take(*thief, level, kind, tasks_[id].last_ran)) return id;
  return -1;
}

// Whether `thief`, balancing at its level `level` (of kind `kind`), may
// take a queued task that last ran at `last_ran`: the cache-hot test of
// Costs::cache_hot's model.
template <taskplace::Topology T, class W, class B>
bool Machine<T, W, B>::may_take(const Cpu& thief, std::uint32_t level, taskplace::LevelKind kind,
                                Nanoseconds last_ran) const {
  const taskplace::Move m{.kind = kind, .last_ran = last_ran};
  return costs_.cache_hot == CacheHotModel::kernel ? hot_kernel_.can_migrate(thief.hot, level, m, now_)
                                                   : hot_table_.can_migrate(thief.hot, level, m, now_);
}

// Effects: records how a balance of `thief` at `level` ended, as
// Costs::cache_hot's model counts: the kernel's counts every outcome
// (TaskHot::record); the table's only a periodic balance that pulled or
// found only hot tasks.
template <taskplace::Topology T, class W, class B>
void Machine<T, W, B>::record_hot(Cpu& thief, std::uint32_t level, taskplace::BalanceKind kind,
                                  taskplace::PullOutcome o) const {
  if (costs_.cache_hot == CacheHotModel::kernel)
    hot_kernel_.record(thief.hot, level, kind, o);
  else if (kind == taskplace::BalanceKind::periodic && o != taskplace::PullOutcome::balanced)
    hot_table_.record(thief.hot, level, kind, o);
}

// The CPU of `span` (c's level `level` span; other than c) with the most
// tasks and one queued, as the load figures read now show it (seen_load: a
// pull still inside its walk is not seen yet); on a tie, the first in
// SpanIndex's bucket order (the first in span order where the spans are
// walked); no_cpu if none.
// Complexity: O(1) with exact spans (SpanIndex::busiest), O(span) else.
template <taskplace::Topology T, class W, class B>
template <class Span>
CpuId Machine<T, W, B>::busiest(const Span& span, std::uint32_t level, CpuId c) const {
  CpuId best = taskplace::no_cpu;
  std::uint32_t most = 0;
  if (spans_.exact()) {
    // Every candidate has a queued task and two or more: the walk's test;
    // the most tasks first (ties: SpanIndex's bucket order).
    return spans_.busiest(spans_.group(c, level), c);
  }
  for (auto x : span) {
    const auto s = static_cast<CpuId>(x);
    if (s == c) continue;
    const std::uint32_t n = seen_load(s);
    if (n > most) {
      most = n;
      best = s;
    }
  }
  return best;
}

// Takes queued task `id` off src's queue (the caller queues it).
template <taskplace::Topology T, class W, class B>
auto Machine<T, W, B>::detach(CpuId src, std::uint32_t id) -> Task& {
  Task& t = tasks_[id];
  rq_.remove(id);
  refresh(src);
  return t;
}

// Effects: a newidle puller on `thief` takes src's run-queue lock at
// `clock` (its own balance time, moved on) and holds it lock_lines cache
// lines at the two CPUs' distance; the task running on src makes no
// progress for that long (its segment, and its slice, end that much later;
// a CPU switching tasks stalls in its switch the same way). A lock held at
// `clock` is a contended spinlock: the puller spins (busy, not idle) until
// every holder ahead of it has let go, and each hand-off then moves the
// lock's line from the releasing CPU to the next waiter, one line at their
// distance, before that waiter holds it. So the k-th of k waiters queued
// at once waits k holds and k hand-offs: the wait grows with the waiters.
// Kernel analogue: load_balance's double_rq_lock of this_rq and busiest
// around detach_tasks; busiest cannot schedule, and wake-ups onto it and
// its tick spin, until the puller lets go (the model charges the running
// task only: wake-ups onto src are not delayed). The hand-off: the
// queued spinlock's waiters spin on their own node until the lock word,
// written by the releasing CPU, reaches the queue's head (kernel:
// qspinlock.c's MCS queue; the ticket locks of v2.6.25-v4.1 hand over the
// same line, read by every waiter); a line's move costs line_llc,
// line_other_llc or line_node (costs.hpp).
template <taskplace::Topology T, class W, class B>
void Machine<T, W, B>::lock_for_pull(CpuId thief, CpuId src, Nanoseconds& clock) {
  const Nanoseconds hold = cost_.line(thief, src) * costs_.lock_lines;
  if (hold.count() <= 0) return;
  Cpu& s = cpus_[src];
  const Nanoseconds asked = clock;
  if (clock < s.lock_free_at) clock = s.lock_free_at + cost_.line(s.lock_owner, thief);
  if (measuring_) r_.lock_wait_time += clock - asked;
  clock += hold;
  s.lock_free_at = clock;
  s.lock_owner = thief;
  if (!runs_task(src) || s.in_step) return;
  account(src);
  start_segment_at(src, std::max(s.seg_start, now_) + hold, s.slice_end + hold);
  if (measuring_) r_.lock_stall_time += hold;
}

// Effects: a pull from `src` (about to be detached, at now_) becomes
// visible to other balancers' reads only at `at`, when its puller's walk
// and lock hold end: until then seen_load(src) stays at src's load before
// the pull (or more), and a `seen` event at `at` brings the span index up
// to date. Kernel analogue: a balancer reads every CPU's load figures
// during update_sd_lb_stats, then takes the busiest CPU's lock, and only
// detach_tasks changes the figures; balancers whose walks overlap read the
// same figures, pick the same busiest CPU and queue on its lock, and
// those after the first find fewer tasks than they read.
template <taskplace::Topology T, class W, class B>
void Machine<T, W, B>::show_pull_at(CpuId src, Nanoseconds at) {
  if (at <= now_) return;
  PullSeen& p = pull_seen_[src];
  p.load = seen_load(src);
  cpus_[src].pull_shown = true;
  if (at > p.until) {
    p.until = at;
    push(at, EventKind::seen, src, 0);
  }
}

// Effects: the newidle balance of c through the library's IdleBalancer.
// Each pull attempt costs newidle_base plus balance_lines cache lines per
// CPU of the span at its distance (walk_cost), plus, when it pulls, the
// wait for and hold of the busiest CPU's run-queue lock (lock_for_pull):
// concurrent balancers cost each other only there. With the overload gate (overload_gated) the
// machine's overload flag goes to the balancer as taskplace::Overload;
// while it is clear there is nothing any walk could pull: no balance, no
// cost, the CPU's idle period starts at once (kernel: newidle_balance
// stamps idle_stamp, then returns early unless the root domain is
// overloaded).
// Returns: true if the CPU is now busy balancing (overhead mode).
template <taskplace::Topology T, class W, class B>
bool Machine<T, W, B>::newidle(CpuId c) {
  Cpu& k = cpus_[c];
  Nanoseconds clock_now = now_;
  const SimClock clock{&clock_now};
  // noexcept: a pull that failed halfway (an allocation in push_back)
  // would leave the machine's queues inconsistent whatever the balancer
  // kept, so it terminates instead; and a noexcept pull lets the balancer
  // work on the state in place, without the copy its exception guarantee
  // needs.
  const bool test_hot = costs_.cache_hot == CacheHotModel::kernel;
  auto pull = [&](std::uint32_t level, taskplace::LevelKind kind, const auto& span) noexcept {
    clock_now += noisy(walk_cost(c, level));
    constexpr auto newidle = taskplace::BalanceKind::newidle;
    const CpuId src = busiest(span, level, c);
    if (src == taskplace::no_cpu) {
      record_hot(k, level, newidle, taskplace::PullOutcome::balanced);
      return false;
    }
    // Before it locks, the balance reads the busiest CPU's task count
    // afresh at the end of its walk (kernel: load_balance tests
    // busiest->nr_running > 1): a pull from it that has ended by then
    // shows, and with nothing left queued there the lock is not taken.
    if (rq_.empty(src) && pull_seen_[src].until < clock_now) {
      record_hot(k, level, newidle, taskplace::PullOutcome::balanced);
      return false;
    }
    // The busiest CPU's lock is taken before its tasks are looked at
    // (kernel: load_balance's rq_lock_irqsave(busiest) around
    // detach_tasks), so a pull that finds only hot tasks holds it too.
    lock_for_pull(c, src, clock_now);
    if (rq_.empty(src)) {
      // The figures the walk read were stale: a pull that another
      // balancer's walk had not yet shown took the task (kernel:
      // detach_tasks finds nothing to move; the balance is counted as
      // balanced, load_balance's out_balanced).
      if (measuring_) ++r_.newidle_stale;
      record_hot(k, level, newidle, taskplace::PullOutcome::balanced);
      return false;
    }
    const std::int64_t v = pick_victim(src, test_hot ? &k : nullptr, level, kind);
    if (v < 0) {
      record_hot(k, level, newidle, taskplace::PullOutcome::refused);
      return false;
    }
    record_hot(k, level, newidle, taskplace::PullOutcome::moved);
    // Until this balance's walk ends (clock_now: its lock hold done), the
    // load figures other balancers read still show src as it was.
    show_pull_at(src, clock_now);
    Task& t = detach(src, static_cast<std::uint32_t>(v));
    t.vruntime = t.vruntime - cpus_[src].min_vruntime + k.min_vruntime;
    t.vr_cpu = c;
    t.cpu = c;
    rq_.push(c, t.id, t.vruntime);
    refresh(c);
    return true;
  };
  const taskplace::Overload overload = !overload_gated ? taskplace::Overload::unknown
                                       : overload_flag_ ? taskplace::Overload::some
                                                        : taskplace::Overload::none;
  const taskplace::BalanceResult r = balancer_.balance(c, bst_[c], pull, clock, overload);
  if (r.outcome == taskplace::BalanceOutcome::not_overloaded) {
    k.idle_stamped = true;
    if (measuring_) ++r_.newidle_not_overloaded;
    return false;
  }
  if (measuring_) {
    ++r_.newidle_runs;
    r_.newidle_time += r.spent;
    if (r.outcome == taskplace::BalanceOutcome::pulled) ++r_.newidle_pulls;
    if (r.outcome == taskplace::BalanceOutcome::entry_gate || r.outcome == taskplace::BalanceOutcome::budget)
      ++r_.newidle_skipped;
  }
  k.idle_stamped = r.outcome != taskplace::BalanceOutcome::pulled;
  if (r.spent.count() <= 0 && r.outcome != taskplace::BalanceOutcome::pulled) return false;
  k.mode = CpuMode::overhead;
  set_balancing(c, true);
  k.curr = -1;
  refresh(c);
  if (smt_) smt_changed(c);
  push(now_ + r.spent, EventKind::cpu, c, ++k.gen);
  return true;
}

// Effects: the periodic balance of c: for each level due (all of them
// with `all_levels`, as a NOHZ idle balance runs them), pull one task that
// is not cache hot from the busiest CPU when it runs at least two more
// than c; stops at the first pull. A balance of the top level (the whole
// machine) also sets the overload flag to whether any CPU runs two or more
// now (kernel: update_sd_lb_stats at the root domain's top level, the only
// place the flag is cleared). Returns: whether it pulled.
template <taskplace::Topology T, class W, class B>
bool Machine<T, W, B>::periodic_balance(CpuId c, bool all_levels) {
  Cpu& k = cpus_[c];
  const auto levels = static_cast<std::uint32_t>(topo_->level_count(c));
  for (std::uint32_t i = 0; i < levels; ++i) {
    if (!all_levels && k.ticks % (i + 1) != 0) continue;
    if (i + 1 == levels) overload_flag_ = overloaded_count_ > 0;
    const auto span = topo_->level_cpus(c, i);
    if (measuring_) r_.periodic_time += costs_.periodic_per_cpu * static_cast<std::int64_t>(std::ranges::size(span));
    constexpr auto periodic = taskplace::BalanceKind::periodic;
    const CpuId src = busiest(span, i, c);
    if (src == taskplace::no_cpu || nr_running(src) < nr_running(c) + 2) {
      record_hot(k, i, periodic, taskplace::PullOutcome::balanced);
      continue;
    }
    const std::int64_t v = pick_victim(src, &k, i, topo_->level_kind(c, i));
    if (v < 0) {
      record_hot(k, i, periodic, taskplace::PullOutcome::refused);
      continue;
    }
    record_hot(k, i, periodic, taskplace::PullOutcome::moved);
    Task& t = detach(src, static_cast<std::uint32_t>(v));
    --queued_;
    if (measuring_) ++r_.periodic_pulls;
    enqueue(t, c, false);
    return true;
  }
  return false;
}

// Effects: the NOHZ idle balance a busy CPU's tick kicks: every idle CPU,
// in CPU order, runs its periodic balance at every level, until no CPU
// runs two or more; at most once a tick machine-wide (kernel:
// nohz_balancer_kick when the kicking CPU runs two or more, then
// _nohz_idle_balance on behalf of every idle CPU). The kicked CPU's time
// is not charged (it was idle).
template <taskplace::Topology T, class W, class B>
void Machine<T, W, B>::nohz_kick() {
  if (now_ < nohz_next_) return;
  nohz_next_ = now_ + costs_.tick;
  for (std::size_t w = 0; w < idle_bits_.size() && overloaded_count_ > 0; ++w) {
    std::uint64_t bits = idle_bits_[w];
    while (bits != 0 && overloaded_count_ > 0) {
      const auto c = static_cast<CpuId>(w * 64 + static_cast<std::size_t>(std::countr_zero(bits)));
      bits &= bits - 1;
      if (idle_now(c)) periodic_balance(c, true);
    }
  }
}

// Effects: the periodic tick of c: cost decay and the balance of the levels
// due (periodic_balance); a tick that finds c idle stops (NOHZ: restarted
// when c next runs a task, restart_tick); one that finds c running two or
// more kicks the idle CPUs' balance (nohz_kick).
template <taskplace::Topology T, class W, class B>
void Machine<T, W, B>::on_tick(CpuId c) {
  Cpu& k = cpus_[c];
  if (costs_.nohz && idle_now(c)) {
    k.tick_on = false;
    return;
  }
  balancer_.tick(bst_[c], now_);
  ++k.ticks;
  periodic_balance(c, false);
  if (costs_.nohz && nr_running(c) >= 2 && idle_count_ > 0) nohz_kick();
  events_.push_in_lane(tick_lane, now_ + costs_.tick, EventKind::tick, c, 0);
}

}  // namespace taskplace_sim
