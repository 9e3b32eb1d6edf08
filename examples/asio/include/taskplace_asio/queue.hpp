// taskplace_asio/queue.hpp: the Asio runtime's queued handler and its
// per-worker ready queue (a kit::WorkerQueue), and the flat topology of
// its workers. See runtime.hpp for why the queue is beside the io_context.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <new>
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

// A worker's spare handler blocks (NodeCache::block bytes each), so that
// a post from a worker takes the block a handler that ran there gave
// back, not a malloc and a free a handler (Asio's recycling allocator
// does the same for its operations, with room for two). Blocks are
// ::operator new's, freed unsized (clang before 17 declares no sized
// ::operator delete by default), so any thread frees any block; a thread
// without a cache (off the pool, or a worker past its loop) allocates
// and frees them as they are. Holds `capacity` blocks at most: a fan-out's burst
// (a sender's twenty messages) from the handlers that ran before it.
class NodeCache {
 public:
  static constexpr std::size_t block = 128;
  static constexpr std::size_t capacity = 64;

  NodeCache() = default;
  NodeCache(const NodeCache&) = delete;
  NodeCache& operator=(const NodeCache&) = delete;
  ~NodeCache() {
    while (count_ > 0) ::operator delete(blocks_[--count_]);
  }

  // This thread's cache (null: none). A worker installs its own for its
  // loop's life (Install).
  static NodeCache*& current() noexcept {
    static thread_local NodeCache* c = nullptr;  // constant-initialized: no guard
    return c;
  }
  struct Install {
    explicit Install(NodeCache& c) noexcept { current() = &c; }
    ~Install() { current() = nullptr; }
    Install(const Install&) = delete;
    Install& operator=(const Install&) = delete;
  };

  // Returns: a block of at least n bytes: a cached one where n fits one.
  static void* allocate(std::size_t n) {
    if (n > block) return ::operator new(n);
    if (NodeCache* c = current(); c != nullptr && c->count_ > 0) return c->blocks_[--c->count_];
    return ::operator new(block);
  }
  // Effects: gives back what allocate(n) returned.
  static void deallocate(void* p, std::size_t n) noexcept {
    if (n > block) return ::operator delete(p);
    if (NodeCache* c = current(); c != nullptr && c->count_ < capacity) {
      c->blocks_[c->count_++] = p;
      return;
    }
    ::operator delete(p);
  }

 private:
  std::size_t count_ = 0;
  void* blocks_[capacity];
};

// A queued handler: its task, and whether the task is the handler's own
// (post without a task: erased from the store when it has run). Its
// memory comes from the thread's NodeCache.
struct Node {
  Task task = nullptr;
  bool own = false;
  // When the task last ran (the end of its last handler; the cache-hot
  // test's input, kit::LastRanOf), copied from its state at the post.
  taskplace::Nanoseconds last_ran = taskplace::Nanoseconds::min();
  virtual void run() = 0;
  virtual ~Node() = default;
  // `delete x` gives the dynamic type's size (the virtual destructor).
  static void* operator new(std::size_t n) { return NodeCache::allocate(n); }
  static void operator delete(void* p, std::size_t n) noexcept { NodeCache::deallocate(p, n); }
  // An over-aligned callable's node: not cached (a block is aligned as
  // ::operator new(size) aligns).
  static void* operator new(std::size_t n, std::align_val_t a) { return ::operator new(n, a); }
  static void operator delete(void* p, std::size_t, std::align_val_t a) noexcept { ::operator delete(p, a); }
};
// F constructed in place from what post() was given (one move, or a copy).
template <class F>
struct NodeOf final : Node {
  template <class A>
  explicit NodeOf(A&& a) : f(std::forward<A>(a)) {}
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
