// tools/replay/perf_trace.hpp: the decoder of `perf script` text for the
// scheduler tracepoints that `perf sched record` captures.
//
// Reads the lines `perf script -F comm,pid,tid,cpu,time,event,trace` (or
// perf's default fields) prints for sched:sched_waking, sched_wakeup,
// sched_wakeup_new, sched_switch, sched_migrate_task and
// sched_process_fork; the header that `perf script --header` prints gives
// the CPU count. Every other line (other events, blank lines, comments) is
// counted and skipped; a line of one of these events whose fields cannot be
// read is an error naming the line.
//
//   taskplace::replay::Trace t = taskplace::replay::read_trace(std::cin);
//   for (const auto& e : t.events) ...
#pragma once

#include <cstdint>
#include <istream>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace taskplace::replay {

// A trace that cannot be read: the message names the line and the field.
class TraceError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

enum class EventKind : std::uint8_t {
  waking,      // sched:sched_waking, on the waking CPU, in the waker's context
  wakeup,      // sched:sched_wakeup: target_cpu is where the wakee was queued
  wakeup_new,  // sched:sched_wakeup_new: a forked task's first queueing
  switch_to,   // sched:sched_switch
  migrate,     // sched:sched_migrate_task
  fork,        // sched:sched_process_fork
};

const char* to_string(EventKind k) noexcept;

// One decoded line. `tid`/`comm` are perf's columns: the task running on
// `cpu` when the event fired (for sched_waking: the waker, or whatever the
// CPU ran when an interrupt woke the task). `pid` is the task the event is
// about: the wakee, the migrated task, the next task of a switch, the child
// of a fork.
struct Event {
  EventKind kind{};
  std::size_t line = 0;      // 1-based line number in the input
  std::int64_t time_ns = 0;  // perf's timestamp, in ns
  std::uint32_t cpu = 0;
  std::int32_t tid = 0;
  std::string comm;
  std::int32_t pid = 0;
  std::string task_comm;
  std::int32_t prio = 0;           // waking/wakeup/migrate: the task's prio; switch: next_prio
  std::uint32_t target_cpu = 0;    // waking/wakeup/wakeup_new: target_cpu; migrate: dest_cpu
  std::uint32_t orig_cpu = 0;      // migrate
  std::int32_t prev_pid = 0;       // switch; fork: the parent
  std::string prev_comm;           // switch; fork: the parent
  std::int32_t prev_prio = 0;      // switch
  std::string prev_state;          // switch: "S", "D", "R", "R+", ...
  // switch: the previous task stays queued (preempted or yielding: R, R+)
  bool prev_runnable() const noexcept { return !prev_state.empty() && prev_state[0] == 'R'; }
};

struct TraceHeader {
  std::uint32_t nr_cpus_online = 0;  // "# nrcpus online : N"; 0 when absent
  std::uint32_t nr_cpus_avail = 0;   // "# nrcpus avail : N"
  std::string cmdline;               // "# cmdline : ..."
};

struct Trace {
  TraceHeader header;
  std::vector<Event> events;
  std::size_t lines = 0;          // lines read
  std::size_t skipped_lines = 0;  // comments, blank lines, other events
  std::uint32_t max_cpu_seen = 0;
};

// Returns: the event on `line`, or nothing for a line that is not one of
//   the six events (comments, blank lines, other events, free text).
// Throws: TraceError("line N: ...") for a line of one of the six events
//   whose columns or fields are missing or not numbers.
std::optional<Event> parse_line(std::string_view line, std::size_t line_no);

// Effects: reads every line; the header's comment lines fill `header`.
// Throws: TraceError for a malformed line (see parse_line), and when the
//   input holds none of the six events at all (not a `perf sched record`
//   trace, or converted without the trace field).
Trace read_trace(std::istream& in);

}  // namespace taskplace::replay
