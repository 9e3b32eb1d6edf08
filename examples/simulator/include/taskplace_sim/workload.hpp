// taskplace_sim/workload.hpp: what the simulated tasks do.
//
// A task runs a program of steps: compute, wake another task (a message
// into its mailbox, with or without the sync hint, of a size that its
// receiver pays for in cache lines), signal another (a coalescing
// wake-up: signals pending at once count as one), wait for a message or a
// signal, sleep on a timer, count a completed unit of work, loop (nested
// loops jump back to their own first step). A mailbox may have a capacity
// in bytes (a pipe's buffer): a sender that finds it full blocks until the
// receiver takes a message, and is woken then, as pipe_write() waits on a
// full pipe and pipe_read() wakes its writers. Messages make
// request/response workloads exact: a server replies to whoever asked.
//
//   Workload w{.unit = "tps"};
//   w.tasks.push_back({.program = {Step::wait(), Step::compute(75us), Step::reply(true), Step::loop()}});
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "taskplace/types.hpp"

namespace taskplace_sim {

using taskplace::CpuId;
using taskplace::Nanoseconds;

enum class Op : std::uint8_t {
  compute,       // run for d
  compute_exp,   // run for an exponentially distributed time of mean d
  send,          // message to task `target` (stamped now)
  send_rr,       // message to the next member of group `target`, round-robin
  reply,         // message (stamped now) to the sender of the last message
  respond,       // like reply, but carrying the received message's stamp
                 // back (a server answering: latency counts the round trip)
  signal,        // a coalescing wake-up of task `target` (kill(2) of a
                 // standard signal): sets its pending flag, wakes it if it
                 // waits for one; a signal already pending is not queued again
  wait_signal,   // block until a signal is pending, then clear it
  nudge,         // with probability permille/1000, a spurious wake-up of a
                 // random other member of group `target` (a lock handoff)
  wait,          // block until a message is in the mailbox, then take it
  sleep,         // block on a timer for d
  sleep_exp,     // block on a timer, exponential with mean d
  count,         // one unit of work done; latency = now - stamp of the last
                 // message taken (or of the previous count)
  loop,          // back to step `target` (0: the first); `times` > 0: only
                 // that many times, then on (and the count starts again, so
                 // an enclosing loop can run it anew)
  end,           // the task exits
};

struct Step {
  Op op = Op::end;
  Nanoseconds d{0};
  std::uint32_t target = 0;
  bool sync = false;
  std::uint32_t permille = 1000;
  std::uint32_t times = 0;
  std::uint32_t bytes = 0;  // a message's payload (send, send_rr, reply, respond)

  static Step compute(Nanoseconds d) { return {Op::compute, d}; }
  static Step compute_exp(Nanoseconds mean) { return {Op::compute_exp, mean}; }
  static Step send(std::uint32_t task, bool sync = false, std::uint32_t bytes = 0) {
    return {Op::send, {}, task, sync, 1000, 0, bytes};
  }
  static Step send_rr(std::uint32_t group, bool sync = false, std::uint32_t bytes = 0) {
    return {Op::send_rr, {}, group, sync, 1000, 0, bytes};
  }
  static Step reply(bool sync = false, std::uint32_t bytes = 0) { return {Op::reply, {}, 0, sync, 1000, 0, bytes}; }
  static Step respond(bool sync = false, std::uint32_t bytes = 0) {
    return {Op::respond, {}, 0, sync, 1000, 0, bytes};
  }
  static Step signal(std::uint32_t task) { return {Op::signal, {}, task}; }
  static Step wait_signal() { return {Op::wait_signal}; }
  static Step nudge(std::uint32_t group, std::uint32_t permille) {
    return {Op::nudge, {}, group, false, permille};
  }
  static Step wait() { return {Op::wait}; }
  static Step sleep(Nanoseconds d) { return {Op::sleep, d}; }
  static Step sleep_exp(Nanoseconds mean) { return {Op::sleep_exp, mean}; }
  static Step count() { return {Op::count}; }
  static Step loop(std::uint32_t times = 0, std::uint32_t to = 0) { return {Op::loop, {}, to, false, 1000, times}; }
  static Step end() { return {Op::end}; }
};

// One task. Invariant: a program that loops forever contains a blocking
// or compute step (the machine rejects a busy loop of instant steps).
struct TaskSpec {
  std::string name;
  std::vector<Step> program;
  std::uint32_t footprint_kb = 256;    // working set
  CpuId start_cpu = 0;                  // where it was forked
  std::uint32_t initial_messages = 0;   // messages already waiting at start
  std::uint32_t initial_from = 0;       // ... sent by this task
  std::uint32_t mailbox_bytes = 0;      // capacity of its mailbox (0: none;
                                        // a message counts max(bytes, 1))
};

struct Workload {
  std::string unit = "ops/s";        // throughput unit, per simulated second
  std::vector<TaskSpec> tasks;
  std::vector<std::vector<std::uint32_t>> groups;  // task ids, for send_rr / nudge
};

}  // namespace taskplace_sim
