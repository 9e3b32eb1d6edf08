// taskplace_asio/queue.hpp: the Asio runtime's queued handler and its
// per-worker ready queue (a kit::WorkerQueue), and the flat topology of
// its workers. See runtime.hpp for why the queue is beside the io_context.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <utility>
#include <vector>

#include "taskplace/kit/machine.hpp"
#include "taskplace/kit/worker_deque.hpp"
#include "taskplace/stats.hpp"
#include "taskplace/topology/table.hpp"
#include "taskplace/types.hpp"

namespace taskplace_asio {

using Task = const void*;  // a task's handle; its address names it

namespace detail {
// Each worker's placer and balancer are used by its thread alone, and
// the placer for posts from off the pool under a lock: single-writer
// counters, no locked instruction per count (the pool's layout).
template <class W>
struct WorkerTraits : W {
  using Stats = taskplace::SingleWriterStats;
};

// A queued handler: its task, and whether the task is the handler's own
// (post without a task: erased from the store when it has run).
struct Node {
  Task task = nullptr;
  bool own = false;
  // When the task last ran (the end of its last handler; the cache-hot
  // test's input, kit::LastRanOf), copied from its state at the post.
  taskplace::Nanoseconds last_ran = taskplace::Nanoseconds::min();
  virtual void run() = 0;
  virtual ~Node() = default;
};
template <class F>
struct NodeOf final : Node {
  explicit NodeOf(F&& fn) : f(std::move(fn)) {}
  void run() override { f(); }
  F f;
};

// One worker's ready handlers as a thief sees them (kit::WorkerQueue),
// counted in the runtime's kit::Machine. The owner takes the oldest; a
// thief too (the one waiting longest). The runtime reads its size()
// seq_cst after the worker's sleeping flag (Runtime::wake).
using Queue = taskplace::kit::CountedWorkerDeque<Node*>;

// A queued handler's last run, for the thieves (kit::LastRanOf).
struct NodeLastRan {
  taskplace::Nanoseconds operator()(Node* const& x) const noexcept { return x->last_ran; }
};

inline taskplace::TableTopology flat_topology(std::uint32_t workers) {
  if (workers == 0) throw std::invalid_argument("taskplace_asio::Runtime: workers must be >= 1");
  std::vector<std::uint32_t> cores(workers), same(workers, 0);
  for (std::uint32_t i = 0; i < workers; ++i) cores[i] = i;
  return taskplace::TableTopology(std::move(cores), same, same);
}
}  // namespace detail

}  // namespace taskplace_asio
