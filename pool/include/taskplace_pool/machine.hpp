// taskplace_pool/machine.hpp: the MachineState the pool's placer reads, a
// view over its workers (Pool::Machine). Internal to pool.hpp.
#pragma once

#include "taskplace/detail/config.hpp"

#include <atomic>
#include <cstdint>
#include <mutex>
#include <ranges>

#include "taskplace/types.hpp"
#include "taskplace_pool/core.hpp"
#include "taskplace_pool/worker.hpp"

namespace taskplace_pool::detail {

// The MachineState the placer reads: a view over the workers.
// Invariant: answers are snapshots; workers change them concurrently.
template <class Pool>
class PoolMachine {
 public:
  // `now`: the time the answers are for (is_idle's preemption window);
  // the default ignores preemptions.
  explicit PoolMachine(const Pool& p, Nanoseconds now = Nanoseconds::max()) noexcept : p_(&p), now_(now) {}
  // Nothing running, nothing queued, and the worker's thread not
  // preempted lately (kernel available_idle_cpu: idle, and the vCPU not
  // preempted by the hypervisor; here the other threads of the OS play
  // the hypervisor).
  bool is_idle(CpuId c) const noexcept {
    const auto& w = *p_->workers_[c];
    return w.running.load(std::memory_order_relaxed) == 0 && w.waiting() == 0 &&
           w.preempted_until.load(std::memory_order_relaxed) <= now_.count();
  }
  std::uint32_t nr_running(CpuId c) const noexcept { return p_->workers_[c]->nr_running(); }
  // One nice-0 task = 1024, runnable tasks only (sleepers excluded, so
  // the pool passes wakee_load = 0, as wake_affine.hpp asks, except to
  // WakeAffine2008, which reads the wakee's weight).
  std::uint64_t load(CpuId c) const noexcept { return std::uint64_t{nr_running(c)} * 1024; }
  // Busy share of c's LLC, in percent (kernel SIS_UTIL input), sampled
  // at most once a tick for the whole LLC (taskplace::LlcUtilizationSample;
  // kernel: the LLC's nr_idle_scan, which the periodic balance writes):
  // a wake-up whose time is a tick or more past the LLC's last sample,
  // or before it (a clock read on another CPU), or a Machine without a
  // time, takes a new one, reading each worker of the LLC once; the
  // others read the sample.
  std::uint32_t llc_utilization_pct(CpuId c) const {
    const auto llc = p_->topo_.llc_cpus(c);
    if (std::ranges::empty(llc)) return 0;
    return p_->workers_[static_cast<CpuId>(*std::ranges::begin(llc))]->llc_sample.read(
        llc, [this](CpuId x) { return !is_idle(x); }, now_, p_->opts_.tick);
  }
  // What getting a new task running on c costs (MachineState O5): 0
  // while c runs or has work, the options' costs.parked when c sleeps on
  // its futex, costs.spinning when it spins (kit::Machine's rule).
  Nanoseconds wake_cost(CpuId c) const noexcept {
    if (!is_idle(c)) return Nanoseconds{0};
    const auto& costs = p_->opts_.costs;
    return p_->workers_[c]->park.load(std::memory_order_relaxed) == park_parked ? costs.parked : costs.spinning;
  }
  // A cache line's round trip between workers (MachineState O6).
  Nanoseconds crossing_cost() const noexcept { return p_->opts_.costs.crossing; }
  // Reservation state of c (MachineState O3), a copy taken under c's
  // lock (kit::SleepSlot; empty, and never read, without a reservation
  // policy).
  typename Pool::reservation_cpu_state reservation(CpuId c) const noexcept {
    return p_->workers_[c]->sleeps.reservation();
  }

 private:
  const Pool* p_;
  Nanoseconds now_;
};

}  // namespace taskplace_pool::detail
