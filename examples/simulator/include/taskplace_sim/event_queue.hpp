// taskplace_sim/event_queue.hpp: the machine's timed events, earliest first.
//
// A 4-ary min-heap ordered by (time, insertion number): events at the same
// time come out in the order they were pushed, so a run replays exactly.
// The heap is a flat array of 32-byte events (no allocation once it has
// grown to the machine's working size), and a 4-ary heap is half as deep
// as a binary one, which matters more than the extra comparisons when the
// sift-down walks cold cache lines.
//
// Beside the heap, a few lanes: FIFOs for events whose delay after the
// current time is the same at every push (a remote wake-up's fixed
// latency, the tick period). Those arrive in time order, so a lane keeps
// them sorted at O(1) a push and they stay out of the heap, which then
// holds only the CPUs' segment ends and the timers (on the 224-CPU
// scenario it is half as large). A push to a lane whose newest event is
// later than the new one goes to the heap instead, and a pop takes the
// earliest (time, push number) of the heap's top and the lanes' fronts,
// so lanes never change what pops when: only how fast.
//
//   taskplace_sim::EventQueue q;
//   q.push(Nanoseconds{5}, EventKind::tick, 0, 0);
//   q.push_in_lane(0, Nanoseconds{7}, EventKind::arrival, 3, 0);
//   while (!q.empty()) { const Event e = q.pop(); /* ... */ }
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <vector>

#include "taskplace/types.hpp"
#include "taskplace_sim/ring.hpp"

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
  constexpr bool before(const Event& o) const noexcept { return (t < o.t) | ((t == o.t) & (seq < o.seq)); }
};

class EventQueue {
 public:
  static constexpr std::size_t lane_count = 2;

  // Effects: adds an event at time `t`, after every event already queued
  // for the same time. Complexity: O(log n).
  void push(Nanoseconds t, EventKind kind, std::uint32_t a, std::uint64_t b) {
    heap_push(Event{t.count(), seq_++, kind, a, b});
  }

  // Effects: as push; the event goes to lane `lane` when it is no earlier
  // than the lane's newest event, else to the heap. Throws
  // std::out_of_range if lane >= lane_count. Complexity: O(1) when it
  // goes to the lane.
  void push_in_lane(std::size_t lane, Nanoseconds t, EventKind kind, std::uint32_t a, std::uint64_t b) {
    if (lane >= lane_count) throw std::out_of_range("EventQueue: no such lane");
    const Event e{t.count(), seq_++, kind, a, b};
    Ring<Event>& l = lanes_[lane];
    if (l.empty() || l.back().t <= e.t) {
      l.push_back(e);
    } else {
      heap_push(e);
    }
  }

  bool empty() const noexcept {
    if (!heap_.empty()) return false;
    for (const auto& l : lanes_)
      if (!l.empty()) return false;
    return true;
  }
  std::size_t size() const noexcept {
    std::size_t n = heap_.size();
    for (const auto& l : lanes_) n += l.size();
    return n;
  }
  // Returns: the earliest event. Precondition: !empty().
  const Event& top() const noexcept {
    const int s = source();
    return s < 0 ? heap_.front() : lanes_[static_cast<std::size_t>(s)].front();
  }

  // Effects: removes and returns the earliest event. Precondition: !empty().
  // Complexity: O(log n).
  Event pop() { return take(source()); }

  // Effects: removes and returns the earliest event if its time is at most
  // `until`; std::nullopt (nothing removed) if there is none.
  std::optional<Event> pop_until(Nanoseconds until) {
    const int s = source();
    if (s == no_event) return std::nullopt;
    const Event& e = s < 0 ? heap_.front() : lanes_[static_cast<std::size_t>(s)].front();
    if (e.t > until.count()) return std::nullopt;
    return take(s);
  }

 private:
  static constexpr std::size_t arity = 4;
  static constexpr int from_heap = -1, no_event = -2;

  // Returns: where the earliest event is: a lane's index, from_heap, or
  // no_event when the queue is empty.
  int source() const noexcept {
    int best = heap_.empty() ? no_event : from_heap;
    const Event* e = heap_.empty() ? nullptr : &heap_.front();
    for (std::size_t i = 0; i < lane_count; ++i) {
      if (lanes_[i].empty()) continue;
      const Event& f = lanes_[i].front();
      if (e == nullptr || f.before(*e)) {
        e = &f;
        best = static_cast<int>(i);
      }
    }
    return best;
  }
  Event take(int s) { return s < 0 ? heap_pop() : lanes_[static_cast<std::size_t>(s)].pop_front(); }

  void heap_push(const Event& e) {
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
  Event heap_pop() {
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

  std::vector<Event> heap_;
  std::array<Ring<Event>, lane_count> lanes_{};
  std::uint64_t seq_ = 0;
};

}  // namespace taskplace_sim
