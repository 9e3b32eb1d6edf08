// taskplace_sim/machine_state.hpp: the records the simulated machine keeps
// per task and per CPU, and the small types they use.
//
// Kernel analogue: the parts of task_struct / sched_entity and of struct rq
// the simulation needs (state, vruntime, where it last ran; the queue, the
// current task, min_vruntime, the balance bookkeeping).
//
//   taskplace_sim::Mailbox box;
//   box.push_back({.from = 1});
//   const Msg m = box.pop_front();
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "taskplace/policy/task_hot.hpp"
#include "taskplace/types.hpp"
#include "taskplace_sim/ring.hpp"
#include "taskplace_sim/workload.hpp"

namespace taskplace_sim {

using taskplace::CpuId;
using taskplace::Nanoseconds;
using taskplace::TaskKey;

// waiting: for a message; waiting_signal: for a signal; blocked_send: on a
// full mailbox, to send again once its receiver took a message.
enum class TaskState : std::uint8_t { runnable, running, waiting, waiting_signal, blocked_send, sleeping, in_flight, done };
enum class CpuMode : std::uint8_t { idle, running, overhead };

// A Clock whose time the simulator moves (the balancer times its pulls).
struct SimClock {
  const Nanoseconds* t;
  Nanoseconds now() const noexcept { return *t; }
};

// A message: who sent it, from which CPU, and the stamp latency counts from.
struct Msg {
  std::uint32_t from = 0;
  CpuId from_cpu = taskplace::no_cpu;
  Nanoseconds stamp{0};
  std::uint32_t bytes = 0;
};

// A task's FIFO of messages (no allocation per message once it has
// reached the task's working depth).
using Mailbox = Ring<Msg>;

// One simulated task. `PlacerState` is the WakePlacer's per-task state.
// Laid out by use: what every step and wake-up reads first (with the
// spec's program, footprint and mailbox capacity copied in, so the hot
// path does not go through `spec`), the accounting next, the mailbox and
// the placer's state after, the rest last. On a big machine 8,192 or more
// of these are far larger than the caches.
template <class PlacerState>
struct alignas(64) TaskRecord {
  std::span<const Step> program;     // spec->program
  std::int64_t vruntime = 0;
  Nanoseconds remaining{0};          // of the current compute (with penalties)
  Nanoseconds extra{0};              // message costs owed to the next compute
  std::uint32_t pc = 0;
  CpuId cpu = 0;                       // queue / running / destination CPU
  CpuId last_cpu = taskplace::no_cpu;  // where it last ran
  CpuId vr_cpu = taskplace::no_cpu;  // whose min_vruntime frame vruntime is in
  TaskState state = TaskState::runnable;
  bool computing = false;
  bool spurious = false;             // woken without a message
  bool has_last = false;
  bool signal_pending = false;
  // --- accounting ---------------------------------------------------------
  std::uint32_t id = 0;
  std::uint32_t home_l3 = ~0u;       // the L3 its working set is in (none yet)
  std::uint32_t footprint_kb = 0;    // spec->footprint_kb
  std::uint32_t mailbox_bytes = 0;   // spec->mailbox_bytes
  std::uint32_t* rr = nullptr;       // per step: send_rr's position, loop's count (the machine's)
  Nanoseconds cpu_time{0};           // Invariant: cpu_time + remaining == work
  Nanoseconds work{0};               // every compute, penalty and cost assigned
  Nanoseconds last_ran{0};
  std::int64_t cool_mark = 0;
  std::uint64_t mailbox_used = 0;    // bytes queued (capacity: mailbox_bytes)
  // --- messages and the placer --------------------------------------------
  Mailbox mailbox;
  Msg last{};
  PlacerState ps{};
  // --- the rest -----------------------------------------------------------
  TaskKey key = 0;
  Nanoseconds last_count{0};
  std::vector<std::uint32_t> blocked_senders;  // waiting for room in the mailbox
  const TaskSpec* spec = nullptr;
};

// One simulated CPU: what it is doing (its queue is in RunQueues). The
// fields an event reads or writes fill the first cache line; the balances'
// and the spin model's follow in the second, so that the 4096 records of a
// big machine cost one line each on the event path.
struct alignas(64) CpuRecord {
  Nanoseconds seg_start{0}, slice_end{0};
  std::uint64_t gen = 0;             // bumped when the CPU's plan changes
  std::int64_t min_vruntime = 0;
  std::int64_t run_total = 0;        // task run time on this CPU, ns
  std::int32_t curr = -1;
  std::uint32_t pending = 0;         // wake-ups in flight towards this CPU
  std::uint32_t rate = 100;          // percent speed of the current segment
  CpuMode mode = CpuMode::idle;
  bool balancing = false, in_step = false, need_resched = false, idle_stamped = false;
  bool idle_flag = true;
  bool busy_flag = false;            // has a task: counts for SIS_UTIL
  bool tick_on = true;               // false: idle, its tick stopped (NOHZ)
  bool overloaded = false;           // runs two or more (nr_running >= 2)
  bool pull_shown = false;           // a pull from it is inside its puller's walk (Machine::seen_load)
  // --- the second line --------------------------------------------------
  std::uint64_t ticks = 0;
  // Periodic balances of each level that found only hot tasks (kernel:
  // nr_balance_failed, one per sched domain of this CPU), as the library's
  // TaskHot keeps them.
  taskplace::TaskHotState hot{};
  Nanoseconds lock_free_at{0};       // when newidle pullers release its run-queue lock
  CpuId lock_owner = 0;              // the last puller to hold it (its line is there)
  Nanoseconds idle_at{0};            // when it last went idle (WakeModel::runtime: spinning, then parked)
};
static_assert(sizeof(CpuRecord) == 128, "CpuRecord: one line for the event path, one for the rest");

}  // namespace taskplace_sim
