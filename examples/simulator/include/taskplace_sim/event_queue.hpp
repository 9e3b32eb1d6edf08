// taskplace_sim/event_queue.hpp: the machine's timed events, earliest first.
//
// A 4-ary min-heap ordered by (time, insertion number): events at the same
// time come out in the order they were pushed, so a run replays exactly.
// The heap holds one pending event per CPU and more (4,096 on 4096 CPUs,
// 50,000 sleep timers under aim7 there), so a pop's walk is what it costs:
// its nodes are 16 bytes (the time, and the insertion number and the
// event's slot in one word), a node's four children share one 64-byte
// cache line, and the rest of the event (its kind and arguments) waits in
// a slot table that only the popped event's slot is read from. A pop
// leaves a hole at the root for the next push to fill, or the next pop
// (see heap_pop). No allocation once the heap has grown to the machine's
// working size.
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
#include <new>
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
// ends (a = task); tick: the periodic tick (a = CPU); seen: a pull from
// CPU a becomes visible in the load figures other balancers read.
enum class EventKind : std::uint8_t { cpu, arrival, timer, tick, seen };

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
  // Throws std::length_error past 2^40 pushes or with 2^24 events in the
  // heap (neither reachable by a run this simulator can hold in memory).
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
    if (heap_size() != 0) return false;
    for (const auto& l : lanes_)
      if (!l.empty()) return false;
    return true;
  }
  std::size_t size() const noexcept {
    std::size_t n = heap_size();
    for (const auto& l : lanes_) n += l.size();
    return n;
  }
  // Returns: the earliest event. Precondition: !empty().
  Event top() const noexcept {
    const int s = source();
    return s < 0 ? heap_event(heap_min()) : lanes_[static_cast<std::size_t>(s)].front();
  }

  // Effects: removes and returns the earliest event. Precondition: !empty().
  // Complexity: O(log n).
  Event pop() { return take(source()); }

  // Effects: removes and returns the earliest event if its time is at most
  // `until`; std::nullopt (nothing removed) if there is none.
  std::optional<Event> pop_until(Nanoseconds until) {
    const int s = source();
    if (s == no_event) return std::nullopt;
    const std::int64_t t = s < 0 ? from_node_time(node(heap_min()).time) : lanes_[static_cast<std::size_t>(s)].front().t;
    if (t > until.count()) return std::nullopt;
    return take(s);
  }

 private:
  static constexpr std::size_t arity = 4;
  static constexpr int from_heap = -1, no_event = -2;

  // Returns: where the earliest event is: a lane's index, from_heap, or
  // no_event when the queue is empty.
  int source() const noexcept {
    const std::size_t h = heap_min();
    const bool heap = h != no_node;
    int best = heap ? from_heap : no_event;
    std::int64_t t = heap ? from_node_time(node(h).time) : 0;
    std::uint64_t seq = heap ? node(h).order >> slot_bits : 0;
    for (std::size_t i = 0; i < lane_count; ++i) {
      if (lanes_[i].empty()) continue;
      const Event& f = lanes_[i].front();
      if (best == no_event || f.t < t || (f.t == t && f.seq < seq)) {
        t = f.t;
        seq = f.seq;
        best = static_cast<int>(i);
      }
    }
    return best;
  }
  Event take(int s) { return s < 0 ? heap_pop() : lanes_[static_cast<std::size_t>(s)].pop_front(); }

  // A heap node: the time with its sign bit flipped (so that unsigned
  // order is the times' order), then seq << slot_bits | slot. Insertion
  // numbers are unique, so comparing (time, order) compares (t, seq).
  struct Node {
    std::uint64_t time;
    std::uint64_t order;
  };
  static constexpr std::uint64_t sign = std::uint64_t{1} << 63;
  static std::uint64_t to_node_time(std::int64_t t) noexcept { return static_cast<std::uint64_t>(t) ^ sign; }
  static std::int64_t from_node_time(std::uint64_t t) noexcept { return static_cast<std::int64_t>(t ^ sign); }
  struct Slot {
    std::uint64_t b;
    std::uint32_t a;
    EventKind kind;
  };
  static constexpr unsigned slot_bits = 24;
  static constexpr std::uint64_t slot_mask = (std::uint64_t{1} << slot_bits) - 1;
  static constexpr std::uint64_t max_seq = std::uint64_t{1} << (64 - slot_bits);
  static bool less(const Node& x, const Node& y) noexcept {
#if defined(__SIZEOF_INT128__)
    // One 128-bit comparison, a subtraction with borrow, where the
    // two-field test is three compares and flags (a sixth fewer
    // instructions per pop).
    __extension__ using U = unsigned __int128;
    return ((U{x.time} << 64) | x.order) < ((U{y.time} << 64) | y.order);
#else
    return (x.time < y.time) | ((x.time == y.time) & (x.order < y.order));
#endif
  }

  // Heap node i lives at nodes_[i + pad]: then the children of node i,
  // 4i + 1 .. 4i + 4, start on a multiple of four nodes, a cache line.
  static constexpr std::size_t pad = arity - 1;
  template <class U>
  struct LineAligned {
    using value_type = U;
    LineAligned() = default;
    template <class V>
    LineAligned(const LineAligned<V>&) noexcept {}
    U* allocate(std::size_t n) { return static_cast<U*>(::operator new(n * sizeof(U), std::align_val_t{64})); }
    void deallocate(U* p, std::size_t) noexcept { ::operator delete(p, std::align_val_t{64}); }
    friend bool operator==(const LineAligned&, const LineAligned&) noexcept { return true; }
  };
  Node& node(std::size_t i) noexcept { return nodes_[i + pad]; }
  const Node& node(std::size_t i) const noexcept { return nodes_[i + pad]; }
  Event heap_event(std::size_t i) const noexcept {
    const Node& n = node(i);
    const Slot& p = slots_[n.order & slot_mask];
    return Event{from_node_time(n.time), n.order >> slot_bits, p.kind, p.a, p.b};
  }

  // A pop leaves the root a hole (held_): the event that usually follows
  // it, the popped CPU's next segment end, fills the hole with one walk
  // down and up, where a pop and a push would walk twice. A second pop
  // first fills the hole with the last node, as a plain pop does. Either
  // way the heap holds the same events: only the work changes.
  static constexpr std::size_t no_node = ~std::size_t{0};
  std::size_t heap_size() const noexcept { return size_ - (held_ ? 1 : 0); }
  // Where the heap's least event is: the root, or while the root is a
  // hole, the least of its children; no_node when there is none.
  std::size_t heap_min() const noexcept {
    if (!held_) return size_ > 0 ? 0 : no_node;
    if (size_ <= 1) return no_node;
    const std::size_t end = size_ < arity + 1 ? size_ : arity + 1;
    std::size_t best = 1;
    for (std::size_t c = 2; c < end; ++c)
      if (less(node(c), node(best))) best = c;
    return best;
  }

  void heap_push(const Event& e) {
    if (e.seq >= max_seq) throw std::length_error("EventQueue: more than 2^40 events pushed");
    std::uint64_t slot = 0;
    if (!free_.empty()) {
      slot = free_.back();
      free_.pop_back();
    } else {
      if (slots_.size() > slot_mask) throw std::length_error("EventQueue: 2^24 events in the heap");
      slot = slots_.size();
      slots_.emplace_back();
    }
    slots_[slot] = Slot{e.b, e.a, e.kind};
    const Node x{to_node_time(e.t), e.seq << slot_bits | slot};
    if (held_) {
      held_ = false;
      fill_root(x);
      return;
    }
    if (nodes_.empty()) nodes_.resize(pad);
    nodes_.emplace_back();
    sift_up(size_++, x);
  }
  // Returns the root's event and leaves the root a hole. Precondition:
  // heap_min() != no_node.
  Event heap_pop() {
    if (held_) {
      held_ = false;
      const Node last = node(--size_);
      nodes_.pop_back();
      fill_root(last);
    }
    const Event out = heap_event(0);
    free_.push_back(static_cast<std::uint32_t>(node(0).order & slot_mask));
    held_ = true;
    return out;
  }
  // Effects: x takes the root's place (Floyd's method: three comparisons a
  // level, not four).
  void fill_root(const Node& x) {
    const std::size_t n = size_;
    if (n == 0) return;
    // The hole goes down to a leaf along the least children...
    std::size_t i = 0;
    for (;;) {
      const std::size_t first = i * arity + 1;
      if (first >= n) break;
      std::size_t best = first;
      if (first + arity <= n) {
        // The least of four by masks, not branches: which child wins is
        // a coin toss a predictor gets wrong half the time.
        const Node* c = &node(first);
        const std::size_t m01 = static_cast<std::size_t>(less(c[1], c[0]));
        const std::size_t m23 = 2 + static_cast<std::size_t>(less(c[3], c[2]));
        const std::size_t pick = std::size_t{0} - static_cast<std::size_t>(less(c[m23], c[m01]));
        best = first + (m01 ^ ((m01 ^ m23) & pick));
      } else {
        for (std::size_t c = first + 1; c < n; ++c)
          if (less(node(c), node(best))) best = c;
      }
      node(i) = node(best);
      i = best;
    }
    // ...and x rises from there to its place.
    sift_up(i, x);
  }
  // Effects: x, for the hole at i, rises to its place.
  void sift_up(std::size_t i, const Node& x) {
    while (i > 0) {
      const std::size_t parent = (i - 1) / arity;
      if (!less(x, node(parent))) break;
      node(i) = node(parent);
      i = parent;
    }
    node(i) = x;
  }

  std::vector<Node, LineAligned<Node>> nodes_;  // pad nodes, then the heap
  std::size_t size_ = 0;                        // heap nodes (the hole included)
  bool held_ = false;                           // the root is a hole
  std::vector<Slot> slots_;                     // the events' kinds and arguments
  std::vector<std::uint32_t> free_;             // unused slots
  std::array<Ring<Event>, lane_count> lanes_{};
  std::uint64_t seq_ = 0;
};

}  // namespace taskplace_sim
