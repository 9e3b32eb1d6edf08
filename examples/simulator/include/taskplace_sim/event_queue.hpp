// taskplace_sim/event_queue.hpp: the machine's timed events, earliest first.
//
// A 4-ary min-heap ordered by (time, insertion number): events at the same
// time come out in the order they were pushed, so a run replays exactly.
// The heap is a flat array of 32-byte events (no allocation once it has
// grown to the machine's working size), and a 4-ary heap is half as deep
// as a binary one, which matters more than the extra comparisons when the
// sift-down walks cold cache lines.
//
//   taskplace_sim::EventQueue q;
//   q.push(Nanoseconds{5}, EventKind::tick, 0, 0);
//   while (!q.empty()) { const Event e = q.pop(); /* ... */ }
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "taskplace/types.hpp"

namespace taskplace_sim {

using taskplace::Nanoseconds;

// cpu: a CPU's segment or balance ends (a = CPU, b = the CPU's generation
// when it was pushed; a stale generation means the plan changed since);
// arrival: a remote wake-up reaches its CPU (a = task); timer: a sleep
// ends (a = task); tick: the periodic tick (a = CPU).
enum class EventKind : std::uint8_t { cpu, arrival, timer, tick };

struct Event {
  std::int64_t t = 0;     // simulated time, ns
  std::uint64_t seq = 0;  // insertion number: the tie-break
  EventKind kind = EventKind::cpu;
  std::uint32_t a = 0;
  std::uint64_t b = 0;
  // Returns: true if this event comes before `o`.
  constexpr bool before(const Event& o) const noexcept { return t != o.t ? t < o.t : seq < o.seq; }
};

class EventQueue {
 public:
  // Effects: adds an event at time `t`, after every event already queued
  // for the same time. Complexity: O(log n).
  void push(Nanoseconds t, EventKind kind, std::uint32_t a, std::uint64_t b) {
    Event e{t.count(), seq_++, kind, a, b};
    std::size_t i = heap_.size();
    heap_.push_back(e);
    while (i > 0) {
      const std::size_t parent = (i - 1) / arity;
      if (!e.before(heap_[parent])) break;
      heap_[i] = heap_[parent];
      i = parent;
    }
    heap_[i] = e;
  }

  bool empty() const noexcept { return heap_.empty(); }
  std::size_t size() const noexcept { return heap_.size(); }
  // Precondition: !empty().
  const Event& top() const noexcept { return heap_.front(); }

  // Effects: removes and returns the earliest event. Precondition: !empty().
  // Complexity: O(log n).
  Event pop() {
    const Event out = heap_.front();
    const Event last = heap_.back();
    heap_.pop_back();
    const std::size_t n = heap_.size();
    if (n == 0) return out;
    std::size_t i = 0;
    for (;;) {
      const std::size_t first = i * arity + 1;
      if (first >= n) break;
      std::size_t best = first;
      const std::size_t end = first + arity < n ? first + arity : n;
      for (std::size_t c = first + 1; c < end; ++c)
        if (heap_[c].before(heap_[best])) best = c;
      if (!heap_[best].before(last)) break;
      heap_[i] = heap_[best];
      i = best;
    }
    heap_[i] = last;
    return out;
  }

 private:
  static constexpr std::size_t arity = 4;
  std::vector<Event> heap_;
  std::uint64_t seq_ = 0;
};

}  // namespace taskplace_sim
