// bench/micro/kit_cases.hpp: the bookkeeping of one wake-up, done through the
// embedding kit and through the hand-written state the pool kept before the
// kit, over the same stream of wake-ups and the same placer.
//
// Shared by callgrind_driver.cpp (`kit kit|old|kit_nollc|old_nollc SET N`,
// instructions per wake-up; scripts/bench micro's "kit ..." rows).
//
// What one wake-up does, in both cases (what an embedding adds to the
// placer's decision):
//   - the task-state lookup: the wakee's and the waker's task_state and the
//     wakee's last worker;
//   - the placement call (WakePlacer::place over the machine state at `now`);
//   - the machine-state update: the wakee counted queued on the chosen
//     worker, with the overload flag;
//   - the run side of the wake-up placed `lag` wake-ups before: the task
//     leaves that worker's queue, the worker runs it, the task's last worker
//     is written; where the placer reads sleeps (traits::Runtime), the run
//     and the sleep reported on the task's state;
//   - one waker in two then sleeps: its worker stops, and spins or parks;
//   - every 256th wake-up, the overload flag's refresh (a tick's work).
// The runtime's own queues (the push of the task, the unpark of a parked
// worker) are the same in both and left out.
//
// KitCase: kit::TaskStore keyed by the task's address, and kit::Machine's
// counters, used as docs/embedding.md asks: one get() a wake-up, for the
// wakee; the entry goes with the queued task to its run (ran_on, the run
// report), and the running task's entry, kept from its start, is the waker
// of the wake-ups it makes and takes its sleep report.
//
// OldCase: the pool's state as it was before the kit (commit 6b98401,
// examples/pool/include/taskplace_pool/pool.hpp: Pool::wake_task, push,
// note_queued, Pool::Machine, the Worker's counters): the task's
// placement state and last_cpu in the task's own record (no lookup), per
// worker queued / handoff / running / park / preempted_until, the overload
// flag with the kick flag beside it, and the LLC utilisation sampled once a
// tick for SIS_UTIL (LlcUtilizationSample). wake_cost and crossing_cost are
// today's pool's (taskplace_pool/machine.hpp), which traits::Runtime reads.
// `Llc = false`, in both: without llc_utilization_pct (the kit's
// Machine::at(now) against at(now, topology)), so that the search scans
// as if the LLC were idle.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <random>
#include <ranges>
#include <vector>

#include "taskplace/kit/machine.hpp"
#include "taskplace/kit/sleeps.hpp"
#include "taskplace/kit/task_store.hpp"
#include "taskplace/placer/llc_utilization.hpp"
#include "taskplace/topology/uniform.hpp"
#include "taskplace/wake_placer.hpp"

namespace bench::kitcase {

using taskplace::CpuId;
using taskplace::Nanoseconds;

inline constexpr std::uint32_t ring = 4096;   // wake-ups in the stream (a power of two)
inline constexpr std::uint32_t tasks = 1024;  // tasks the stream wakes
inline constexpr std::uint32_t lag = 8;       // a woken task runs this many wake-ups later
// The overload flag is refreshed at a tick (kernel update_sd_lb_stats), here
// every 256 wake-ups (768 us of the stream), in both cases alike.
inline constexpr std::uint32_t refresh_every = 256;

struct Event {
  CpuId waking;          // the worker whose running task wakes
  std::uint16_t wakee;   // the task woken, unless `pair`
  bool pair;             // the wakee is the waker's partner (task ^ 1): a ping-pong
  bool waker_sleeps;     // after the wake-up the waker sleeps ...
  bool parks;            // ... and its worker parks (else spins)
};

// The stream: one wake-up in two to the waker's partner, the others to any
// task; the waker is the task that runs on the waking worker (the one that
// last started there).
inline std::vector<Event> stream(std::uint32_t workers, std::uint32_t seed = 29) {
  std::mt19937 rng(seed);
  std::vector<Event> v(ring);
  for (auto& e : v) {
    e.waking = static_cast<CpuId>(rng() % workers);
    e.wakee = static_cast<std::uint16_t>(rng() % tasks);
    e.pair = rng() % 2 != 0;
    e.waker_sleeps = rng() % 2 != 0;
    e.parks = rng() % 4 == 0;
  }
  return v;
}

inline taskplace::UniformTopology topology() { return {1, 1, 6, 2}; }  // 12 workers, one LLC
inline constexpr std::uint32_t workers = 12;
inline constexpr std::int64_t tick_ns = 4'000'000;
inline constexpr taskplace::kit::WakeCosts costs{.spinning = Nanoseconds{300}, .parked = Nanoseconds{20'000},
                                                 .crossing = Nanoseconds{150}};

// The parts both cases share: the placer, the stream, the clock; `Ref` is
// how the case reaches a task's state (an entry, a record).
template <class Traits, class Ref>
struct Common {
  using Placer = taskplace::WakePlacer<taskplace::UniformTopology, Traits>;
  static constexpr bool reports = taskplace::kit::reports_sleeps<Placer>;
  taskplace::UniformTopology topo = topology();
  Placer placer{topo};
  std::vector<Event> in = stream(topo.cpu_count());
  std::int64_t clock = 10'000'000'000;
  // A placed wake-up, queued until it runs `lag` wake-ups later: the task,
  // what the wake-up found for it (the runtime's queued item carries it),
  // the worker.
  struct Placed {
    std::uint16_t task;
    Ref ref;
    CpuId cpu;
  };
  Placed pending[lag]{};
  // Each worker's running task (the waker of its wake-ups), as the runtime
  // keeps it from the task's start: its number and its state.
  std::uint16_t current[workers]{};
  Ref current_ref[workers]{};
  std::uint64_t kicks = 0;

  // The wakee of event `ev`.
  std::uint16_t wakee(const Event& ev) const noexcept {
    return ev.pair ? static_cast<std::uint16_t>(current[ev.waking] ^ 1u) : ev.wakee;
  }
};

template <class Traits, bool Llc = true>
struct KitCase : Common<Traits, typename taskplace::kit::TaskStore<
                                    typename taskplace::WakePlacer<taskplace::UniformTopology, Traits>::task_state,
                                    const void*>::Entry*> {
  using Placer = taskplace::WakePlacer<taskplace::UniformTopology, Traits>;
  using Store = taskplace::kit::TaskStore<typename Placer::task_state, const void*>;
  using C = Common<Traits, typename Store::Entry*>;
  struct alignas(64) Actor {  // what the runtime owns; the store keys its address
    std::uint64_t payload;
  };
  std::unique_ptr<Actor[]> actors = std::make_unique<Actor[]>(tasks);
  Store store;
  taskplace::kit::Machine machine{workers, costs};

  KitCase() {
    for (CpuId c = 0; c < workers; ++c) {
      auto& e = store.get(handle(static_cast<std::uint16_t>(c)), 0);
      e.ran_on(c);
      machine.running(c);
      this->current[c] = static_cast<std::uint16_t>(c);
      this->current_ref[c] = &e;
    }
    for (std::uint32_t i = 0; i < lag; ++i) {
      const auto t = static_cast<std::uint16_t>(workers + i);
      this->pending[i] = {t, &store.get(handle(t), 0), i % workers};
      machine.queued(i % workers);
    }
    for (std::uint32_t i = 0; i < 2 * ring; ++i) (void)(*this)(i);  // every task seen, the machine settled
  }
  const void* handle(std::uint16_t t) const noexcept { return &actors[t]; }

  CpuId operator()(std::uint32_t i) {
    const Event& ev = this->in[i & (ring - 1)];
    this->clock += 3'000;
    const Nanoseconds now{this->clock};
    // The wake-up (the Asio runtime's place()): the wakee's entry looked
    // up by its handle, the waker's the running task's.
    const std::uint16_t t = this->wakee(ev);
    const void* h = handle(t);
    auto& e = store.get(h, 0);
    typename Placer::Wakeup w{.wakee = &e.state, .wakee_key = Store::key(h), .prev_cpu = e.prev_cpu(),
                              .wakee_load = taskplace::kit::wakee_load<Placer>};
    auto* waker = this->current_ref[ev.waking];
    w.waking_cpu = ev.waking;
    w.waker = &waker->state;
    w.waker_key = Store::key(handle(this->current[ev.waking]));
    w.sync = true;
    CpuId c;
    if constexpr (Llc) c = this->placer.place(w, machine.at(now, this->topo, Nanoseconds{tick_ns}), now).cpu;
    else c = this->placer.place(w, machine.at(now), now).cpu;
    if (machine.queued(c)) ++this->kicks;
    // The waker sleeps: its report (late), its worker idle.
    if (ev.waker_sleeps) {
      if constexpr (C::reports) this->placer.task_sleeps(waker->state, now);
      auto ww = machine.worker(ev.waking);
      ww.stopped();
      if (ev.parks) ww.parked();
      else ww.spinning();
    }
    // The run of the wake-up placed `lag` before, with the entry its
    // wake-up found.
    auto& r = this->pending[i % lag];
    auto rw = machine.worker(r.cpu);
    rw.dequeued();
    rw.running();
    r.ref->ran_on(r.cpu);
    if constexpr (C::reports) this->placer.task_runs(r.ref->state, now);
    this->current[r.cpu] = r.task;
    this->current_ref[r.cpu] = r.ref;
    r = {t, &e, c};
    if ((i & (refresh_every - 1)) == 0) machine.refresh_overload();  // a tick's
    return c;
  }
};

template <class Traits>
struct OldRecord {  // the task's record (6b98401: the pool's task record's placement and last_cpu)
  typename taskplace::WakePlacer<taskplace::UniformTopology, Traits>::task_state placement{};
  CpuId last_cpu = taskplace::no_cpu;
};

template <class Traits, bool Llc = true>
struct OldCase : Common<Traits, OldRecord<Traits>*> {
  using C = Common<Traits, OldRecord<Traits>*>;
  using Placer = typename C::Placer;
  using Record = OldRecord<Traits>;
  static constexpr std::uint32_t park_awake = 0, park_parked = 1;
  // The worker's counters the wake-up reads and writes (6b98401: Worker).
  struct alignas(64) Worker {
    std::atomic<std::uint32_t> queued{0};
    std::atomic<std::uint32_t> handoff{0};
    std::atomic<std::uint32_t> running{0};
    std::atomic<std::uint32_t> park{park_awake};
    std::atomic<std::int64_t> preempted_until{INT64_MIN};
    taskplace::LlcUtilizationSample llc_sample;
    std::uint32_t waiting() const noexcept {
      return queued.load(std::memory_order_relaxed) + handoff.load(std::memory_order_relaxed);
    }
    std::uint32_t nr_running() const noexcept { return running.load(std::memory_order_relaxed) + waiting(); }
    bool can_give() const noexcept {
      const std::uint32_t n = queued.load(std::memory_order_relaxed);
      return n > 0 && n + running.load(std::memory_order_relaxed) >= 2;
    }
  };
  std::unique_ptr<Record[]> records = std::make_unique<Record[]>(tasks);
  std::vector<std::unique_ptr<Worker>> ws;
  alignas(64) std::atomic<bool> overloaded{false};
  std::atomic<bool> overload_kicked{false};

  // 6b98401's Pool::Machine (with today's wake_cost and crossing_cost).
  class Machine {
   public:
    Machine(const OldCase& p, Nanoseconds now) noexcept : p_(&p), now_(now) {}
    bool is_idle(CpuId c) const noexcept {
      const Worker& w = *p_->ws[c];
      return w.running.load(std::memory_order_relaxed) == 0 && w.waiting() == 0 &&
             w.preempted_until.load(std::memory_order_relaxed) <= now_.count();
    }
    std::uint32_t nr_running(CpuId c) const noexcept { return p_->ws[c]->nr_running(); }
    std::uint64_t load(CpuId c) const noexcept { return std::uint64_t{nr_running(c)} * 1024; }
    std::uint32_t llc_utilization_pct(CpuId c) const
      requires Llc
    {
      const auto llc = p_->topo.llc_cpus(c);
      if (std::ranges::empty(llc)) return 0;
      return p_->ws[static_cast<CpuId>(*std::ranges::begin(llc))]->llc_sample.read(
          llc, [this](CpuId x) { return !is_idle(x); }, now_, Nanoseconds{tick_ns});
    }
    Nanoseconds wake_cost(CpuId c) const noexcept {
      if (!is_idle(c)) return Nanoseconds{0};
      return p_->ws[c]->park.load(std::memory_order_relaxed) == park_parked ? costs.parked : costs.spinning;
    }
    Nanoseconds crossing_cost() const noexcept { return costs.crossing; }

   private:
    const OldCase* p_;
    Nanoseconds now_;
  };

  OldCase() {
    for (CpuId c = 0; c < workers; ++c) ws.push_back(std::make_unique<Worker>());
    for (CpuId c = 0; c < workers; ++c) {
      records[c].last_cpu = c;
      ws[c]->running.store(1, std::memory_order_relaxed);
      this->current[c] = static_cast<std::uint16_t>(c);
      this->current_ref[c] = &records[c];
    }
    for (std::uint32_t i = 0; i < lag; ++i) {
      const auto t = static_cast<std::uint16_t>(workers + i);
      this->pending[i] = {t, &records[t], i % workers};
      queued(*ws[i % workers]);
    }
    for (std::uint32_t i = 0; i < 2 * ring; ++i) (void)(*this)(i);
  }
  // 6b98401's push (the queued count) and note_queued (kick_idle_on_tick).
  void queued(Worker& w) {
    w.queued.fetch_add(1, std::memory_order_seq_cst);
    if (overloaded.load(std::memory_order_relaxed) && overload_kicked.load(std::memory_order_relaxed)) return;
    if (!w.can_give()) return;
    if (!overloaded.load(std::memory_order_relaxed)) overloaded.store(true, std::memory_order_relaxed);
    if (!overload_kicked.exchange(true, std::memory_order_relaxed)) ++this->kicks;
  }
  void refresh_overload() noexcept {
    if (!overloaded.load(std::memory_order_relaxed) && !overload_kicked.load(std::memory_order_relaxed)) return;
    for (const auto& w : ws)
      if (w->can_give()) return;
    overloaded.store(false, std::memory_order_relaxed);
    overload_kicked.store(false, std::memory_order_relaxed);
  }

  CpuId operator()(std::uint32_t i) {
    const Event& ev = this->in[i & (ring - 1)];
    this->clock += 3'000;
    const Nanoseconds now{this->clock};
    // 6b98401's wake_task: the wakee's record is the task, the waker's the
    // running task's.
    const std::uint16_t tn = this->wakee(ev);
    Record& t = records[tn];
    Record& waker = *this->current_ref[ev.waking];
    const CpuId c = this->placer
                        .place(typename Placer::Wakeup{.waker = &waker.placement,
                                                       .waker_key = reinterpret_cast<taskplace::TaskKey>(&waker),
                                                       .wakee = &t.placement,
                                                       .wakee_key = reinterpret_cast<taskplace::TaskKey>(&t),
                                                       .waking_cpu = ev.waking,
                                                       .prev_cpu = t.last_cpu,
                                                       .sync = true,
                                                       .wakee_load = taskplace::runnable_only_wakee_load<
                                                           typename Placer::affine_policy>,
                                                       .waker_load = 1024},
                               Machine{*this, now}, now)
                        .cpu;
    queued(*ws[c]);
    if (ev.waker_sleeps) {
      if constexpr (C::reports) this->placer.task_sleeps(waker.placement, now);
      Worker& ww = *ws[ev.waking];
      ww.running.store(0, std::memory_order_relaxed);
      ww.park.store(ev.parks ? park_parked : park_awake, std::memory_order_relaxed);
    }
    auto& r = this->pending[i % lag];
    Worker& rw = *ws[r.cpu];
    rw.queued.fetch_sub(1, std::memory_order_relaxed);
    rw.running.store(1, std::memory_order_relaxed);
    if (rw.park.load(std::memory_order_relaxed) != park_awake) rw.park.store(park_awake, std::memory_order_relaxed);
    r.ref->last_cpu = r.cpu;
    if constexpr (C::reports) this->placer.task_runs(r.ref->placement, now);
    this->current[r.cpu] = r.task;
    this->current_ref[r.cpu] = r.ref;
    r = {tn, &t, c};
    if ((i & (refresh_every - 1)) == 0) refresh_overload();
    return c;
  }
};

}  // namespace bench::kitcase
