// taskplace_sim/run_queue.hpp: every CPU's queue of runnable tasks, in two
// orders at once: by vruntime (what a pick takes) and by enqueue time (what
// a balancer looks at first).
//
// Kernel analogue: the cfs_rq's red-black tree ordered by vruntime
// (pick_next_entity takes its leftmost entity, O(log n)) and rq->cfs_tasks,
// the list detach_tasks() walks from its tail, looking at no more than
// sysctl_sched_nr_migrate (32) tasks per balance.
//
// Per CPU an indexed binary heap of (vruntime, push number): ties go to the
// task queued first. Per task, its slot in its CPU's heap and its links in
// that CPU's enqueue-order list, so removing any queued task is O(log n).
// A task is on at most one CPU's queue.
//
//   taskplace_sim::RunQueues rq{2, 3};
//   rq.push(0, 1, 500);  rq.push(0, 2, 100);
//   rq.top(0);      // 2: the least vruntime
//   rq.oldest(0);   // 1: queued first
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "taskplace/types.hpp"

namespace taskplace_sim {

class RunQueues {
 public:
  static constexpr std::uint32_t none = ~0u;
  struct Entry {
    std::int64_t key = 0;   // vruntime
    std::uint64_t seq = 0;  // push number: the tie-break
    std::uint32_t id = 0;   // task
    bool before(const Entry& o) const noexcept { return key < o.key || (key == o.key && seq < o.seq); }
  };

  RunQueues() = default;
  // Effects: `cpus` empty queues for tasks 0..tasks-1. Complexity: O(cpus + tasks).
  RunQueues(std::size_t cpus, std::size_t tasks)
      : q_(cpus), link_(tasks) {}

  bool empty(taskplace::CpuId c) const noexcept { return q_[c].heap.empty(); }
  std::uint32_t size(taskplace::CpuId c) const noexcept { return static_cast<std::uint32_t>(q_[c].heap.size()); }
  // Whether task `id` is queued, and where (none if not).
  taskplace::CpuId cpu_of(std::uint32_t id) const noexcept { return link_[id].cpu; }

  // Effects: queues task `id` (not queued anywhere) on c with vruntime `key`,
  // newest in c's enqueue order. Complexity: O(log n).
  void push(taskplace::CpuId c, std::uint32_t id, std::int64_t key) {
    Queue& q = q_[c];
    Link& l = link_[id];
    l.cpu = c;
    q.heap.push_back({key, seq_++, id});
    up(q, q.heap.size() - 1);
    l.prev = q.tail;
    l.next = none;
    if (q.tail != none) link_[q.tail].next = id; else q.head = id;
    q.tail = id;
  }
  // The queued task of least vruntime, and that vruntime. Precondition: !empty(c).
  std::uint32_t top(taskplace::CpuId c) const noexcept { return q_[c].heap.front().id; }
  std::int64_t top_key(taskplace::CpuId c) const noexcept { return q_[c].heap.front().key; }
  // Effects: removes and returns top(c). Complexity: O(log n).
  std::uint32_t pop(taskplace::CpuId c) {
    const std::uint32_t id = top(c);
    remove(id);
    return id;
  }
  // Effects: removes queued task `id` from its CPU's queue. Precondition:
  // cpu_of(id) != none. Complexity: O(log n).
  void remove(std::uint32_t id) {
    Link& l = link_[id];
    Queue& q = q_[l.cpu];
    const std::size_t i = l.slot;
    const Entry last = q.heap.back();
    q.heap.pop_back();
    if (i < q.heap.size()) {
      q.heap[i] = last;
      link_[last.id].slot = static_cast<std::uint32_t>(i);
      if (i > 0 && last.before(q.heap[(i - 1) / 2])) up(q, i); else down(q, i);
    }
    const std::uint32_t p = l.prev, n = l.next;
    if (p != none) link_[p].next = n; else q.head = n;
    if (n != none) link_[n].prev = p; else q.tail = p;
    l.slot = l.cpu = none;
  }
  // Enqueue order: the task queued longest ago on c (none if empty), and
  // the one queued after `id` (none if it is the newest).
  std::uint32_t oldest(taskplace::CpuId c) const noexcept { return q_[c].head; }
  std::uint32_t after(std::uint32_t id) const noexcept { return link_[id].next; }
  // Every queued entry of c, in heap order (for checks).
  std::span<const Entry> entries(taskplace::CpuId c) const noexcept { return q_[c].heap; }

 private:
  struct Queue {
    std::vector<Entry> heap;
    std::uint32_t head = none, tail = none;
  };
  void up(Queue& q, std::size_t i) {
    const Entry e = q.heap[i];
    while (i > 0) {
      const std::size_t p = (i - 1) / 2;
      if (!e.before(q.heap[p])) break;
      q.heap[i] = q.heap[p];
      link_[q.heap[i].id].slot = static_cast<std::uint32_t>(i);
      i = p;
    }
    q.heap[i] = e;
    link_[e.id].slot = static_cast<std::uint32_t>(i);
  }
  void down(Queue& q, std::size_t i) {
    const Entry e = q.heap[i];
    const std::size_t n = q.heap.size();
    for (;;) {
      std::size_t c = 2 * i + 1;
      if (c >= n) break;
      if (c + 1 < n && q.heap[c + 1].before(q.heap[c])) ++c;
      if (!q.heap[c].before(e)) break;
      q.heap[i] = q.heap[c];
      link_[q.heap[i].id].slot = static_cast<std::uint32_t>(i);
      i = c;
    }
    q.heap[i] = e;
    link_[e.id].slot = static_cast<std::uint32_t>(i);
  }

  // Per task: its slot in its CPU's heap, its neighbours in that CPU's
  // enqueue order, and the CPU; together, so a queue change touches one
  // line per task rather than four arrays' (8,192 or more tasks on a big
  // machine).
  struct Link {
    std::uint32_t slot = none, prev = none, next = none, cpu = none;
  };
  std::vector<Queue> q_;
  std::vector<Link> link_;
  std::uint64_t seq_ = 0;
};

}  // namespace taskplace_sim
