// taskplace_sim/machine_prefetch.hpp: what the simulated machine's event
// loop asks the cache for ahead of use. Part of Machine (machine.hpp
// includes it; include that). Nothing here changes what is simulated.
//
// On a big machine (4096 CPUs, 8,192 or more tasks) the records an event
// reads are far larger than a core's caches, and each event starts with
// a chain of misses, each found only by reading the one before: the CPU
// record, the task it runs, the task's program and per-step counters. The
// loop breaks the chain into stages a whole pop apart: as an event starts,
// the next event's CPU record (prefetch_next_cpu); as it ends, through
// that record (arrived meanwhile), the task and its program
// (prefetch_next_task), fetched while the next pop works. A task queued
// to run has its program fetched as it is queued (prefetch_program).
#pragma once

#include <cstdint>

#include "taskplace_sim/machine.hpp"

namespace taskplace_sim {

template <taskplace::Topology T, class W, class B>
void Machine<T, W, B>::prefetch_next_cpu() const noexcept {
  if (events_.empty()) return;
  const Event n = events_.top();
  if (n.kind == EventKind::cpu || n.kind == EventKind::tick) prefetch(&cpus_[n.a]);
  else prefetch(&tasks_[n.a]);
}

template <taskplace::Topology T, class W, class B>
void Machine<T, W, B>::prefetch_next_task() const noexcept {
  if (events_.empty()) return;
  const Event n = events_.top();
  if (n.kind != EventKind::cpu || cpus_[n.a].curr < 0) return;
  const Task& t = tasks_[static_cast<std::uint32_t>(cpus_[n.a].curr)];
  prefetch(&t);
  prefetch(reinterpret_cast<const char*>(&t) + 64);
  prefetch_program(t);
}

// t's program from its step on (an event may run several steps; at most
// four lines), its start (where loops go back) and its counters.
template <taskplace::Topology T, class W, class B>
void Machine<T, W, B>::prefetch_program(const Task& t) const noexcept {
  if (t.pc < t.program.size()) {
    const auto* from = reinterpret_cast<const char*>(&t.program[t.pc]);
    const auto* end = reinterpret_cast<const char*>(t.program.data() + t.program.size());
    for (int k = 0; k < 4 && from < end; ++k, from += 64) prefetch(from);
  }
  prefetch(t.program.data());
  prefetch(t.rr + t.pc);
}

template <taskplace::Topology T, class W, class B>
void Machine<T, W, B>::prefetch(const void* p) noexcept {
#if defined(__GNUC__) || defined(__clang__)
  __builtin_prefetch(p);
#else
  (void)p;
#endif
}

}  // namespace taskplace_sim
