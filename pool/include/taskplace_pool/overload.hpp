// taskplace_pool/overload.hpp: the pool's overload flag (some worker could
// give a thief a task), the input of the placer's and balancer's overload
// gate and of the kicks of parked workers. Internal to pool.hpp.
#pragma once

#include "taskplace/detail/config.hpp"

#include <atomic>

#include "taskplace/idle_balancer.hpp"

namespace taskplace_pool::detail {

// Two relaxed flags on a line of their own: overloaded (some worker can
// give, Worker::can_give) and kicked (a parked worker was kicked for this
// overload). Both stay set until a refresh finds no worker that can give.
// Thread-safety: every member from any thread; the answers are snapshots.
class OverloadFlag {
 public:
  // Returns: the gate's input: unknown without the gate, else whether
  // the flag is set.
  taskplace::Overload state(bool gate) const noexcept {
    if (!gate) return taskplace::Overload::unknown;
    return set() ? taskplace::Overload::some : taskplace::Overload::none;
  }
  bool set() const noexcept { return overloaded_.load(std::memory_order_relaxed); }

  // Effects: after a task was queued on `w` (its queue, not the hand-off
  // slot, whose task no thief takes), sets the flag if a thief could now
  // take a task from `w` (kernel add_nr_running, a runqueue of two or
  // more), and, with `kick`, calls kick_one(w) to kick a parked worker to
  // steal it: the kick w's tick would give (nohz_balancer_kick), which w
  // cannot give while its task runs on. Read before written, so that a
  // set flag's cache line stays shared. Once per overload.
  template <class Worker, class KickOne>
  void note_queued(const Worker& w, bool kick, KickOne&& kick_one) {
    if (set() && (!kick || kicked_.load(std::memory_order_relaxed))) return;
    if (!w.can_give()) return;
    if (!set()) overloaded_.store(true, std::memory_order_relaxed);
    if (kick && !kicked_.exchange(true, std::memory_order_relaxed)) kick_one(w);
  }

  // Effects: clears both flags when no worker of `workers` (a range of
  // pointers to workers) can give a task to a thief (kernel: the top
  // level's load balance, update_sd_lb_stats). A queueing that races
  // with the scan may be missed until the next one, or the next tick's
  // kick of a parked worker, which steals ungated.
  template <class Workers>
  void refresh(const Workers& workers) noexcept {
    if (!set() && !kicked_.load(std::memory_order_relaxed)) return;
    for (const auto& w : workers)
      if (w->can_give()) return;
    overloaded_.store(false, std::memory_order_relaxed);
    kicked_.store(false, std::memory_order_relaxed);
  }

 private:
  alignas(64) std::atomic<bool> overloaded_{false};
  std::atomic<bool> kicked_{false};
};

}  // namespace taskplace_pool::detail
