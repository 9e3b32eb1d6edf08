// tools/replay/chrome_trace.hpp: the reader of the Chrome trace JSON that
// taskplace::kit::ChromeTrace writes (a runtime's own wake-up placements
// and newidle balances), for the replay under several policy sets
// (runtime.cpp).
//
// The reader is strict JSON (RFC 8259): a document that is not JSON is an
// error naming the line and the column. Within it, it takes the events of
// "traceEvents" whose "cat" is "wake" (each needs ts, tid and the args
// waker, wakee, waking_cpu, prev_cpu, target, cpu), "task" (ts, the name
// runs, stops or sleeps, the args task and cpu) or "balance"; others
// (metadata, other producers' events) are counted and skipped. A wake
// event's optional "machine" (kit::MachineView, docs/replay.md) is read
// strictly too: present, each of its fields must be well formed.
//
//   if (taskplace::replay::starts_as_json(text)) auto t = taskplace::replay::read_chrome_trace(text);
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "perf_trace.hpp"  // TraceError
#include "taskplace/kit/trace.hpp"  // MachineView
#include "taskplace/types.hpp"

namespace taskplace::replay {

// One placement as the runtime made it.
struct RecordedWake {
  std::size_t seq = 0;       // its place among the wake and task events of the file
  std::int64_t time_ns = 0;  // ts (microseconds, three decimals) in ns
  TaskKey waker = no_task;   // no_task: woken from outside any task
  TaskKey wakee = no_task;
  CpuId waking_cpu = 0;
  CpuId prev_cpu = 0;
  CpuId target = 0;          // the runtime's affine step's choice
  CpuId cpu = 0;             // where the runtime put the wakee
  std::string reason;        // the event's name: the final step's reason
  std::string affine;        // the affine step's reason
  bool wide = false;
  bool sync = false;
  bool waker_by_key = false;  // args.waker_by_key: the runtime gave its placer the waker's key, not its state
  std::uint32_t waker_flips = 0;  // args.waker_flips: with waker_by_key, the flips it passed (Wakeup::waker_flips)
  // args.machine: what the runtime's placer read (view.cpus == 0: the
  // event has none, as in traces written before the kit recorded it).
  kit::MachineView view;
};

// A task's run, stop or sleep, as the runtime recorded it (kit::TaskEvent).
struct RecordedTask {
  std::size_t seq = 0;       // its place among the wake and task events of the file
  kit::TaskEvent event;
};

struct ChromeTraceInput {
  std::string process;             // the process_name metadata, if any
  std::vector<RecordedWake> wakes; // in the file's order
  std::vector<RecordedTask> tasks; // "task" events (runs, stops, sleeps), in the file's order
  std::size_t balances = 0;        // "balance" events
  std::size_t other_events = 0;    // events of any other kind (metadata too)
  std::uint64_t dropped = 0;       // otherData.dropped: what the recorder's cap left out
  std::uint32_t max_cpu_seen = 0;  // over waking_cpu, prev_cpu, target and cpu
  std::size_t views = 0;           // wake events with args.machine
};

// Returns: whether the first character that is not white space is '{'.
bool starts_as_json(std::string_view text) noexcept;

// Throws: TraceError("line L column C: ...") for text that is not JSON, or
//   a wake event that lacks one of its fields; TraceError when the
//   document has no "traceEvents" array or no wake event at all.
ChromeTraceInput read_chrome_trace(std::string_view text);

}  // namespace taskplace::replay
