// taskplace/kit/task_store.hpp: per-task state for tasks the runtime does
// not own. A runtime whose scheduler sees only opaque job handles (a
// pointer or an integer, its actor or job objects being someone else's)
// keeps the placer's task_state and the task's last worker here, keyed by
// that handle.
//
// Kernel analogue: the fields of task_struct the wake-up path reads
// (p->wake_entry's flips, p->recent_used_cpu, task_cpu(p)); the kernel owns
// its tasks and needs no table.
//
//   taskplace::kit::TaskStore<Placer::task_state> store;
//   auto& e = store.get(job, job_id);           // a wake-up: the wakee's entry
//   placer.place({.wakee = &e.state, .wakee_key = store.key(job),
//                 .waking_cpu = w, .prev_cpu = e.prev_cpu()}, machine, now);
//   e.ran_on(worker);                           // when it runs
//   store.erase(job, job_id);                   // when it finishes
//
// Reuse: a handle may be reused for a new task once the old one finished
// (an address freed and allocated again). Each entry carries the id the
// runtime gave its task (a sequence number, a generation); a lookup with
// another id does not see it, and get() resets it for the new task. A
// runtime without ids passes 0 and must erase at finish.
//
// Hot-path cost (x86-64, measured in tests/kit/task_store.test.cpp):
// find(), and get() of a handle present, take no atomic read-modify-write
// and no lock: acquire loads of the shard's table, the probed slots' keys
// and the entry's id. Only get() of a new (or reused) handle and erase()
// take the shard's lock (one exchange, released by a plain store). So a
// wake-up of a known task costs no locked instruction for its state, and
// a task's whole life one lock round trip to insert and one to erase.
#pragma once

#include "taskplace/detail/config.hpp"

#include <atomic>
#include <bit>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <type_traits>
#include <vector>

#include "taskplace/detail/assert.hpp"
#include "taskplace/kit/spin_lock.hpp"
#include "taskplace/types.hpp"

namespace taskplace::kit {

// TaskHandle: how the runtime names a task: a pointer or an integer.
// Every value is allowed but the two largest of std::uintptr_t (the table's
// empty and erased marks, offset by two); a pointer never is one.
template <class H>
concept TaskHandle = std::is_pointer_v<H> || std::is_integral_v<H>;

// The store. `State` is the per-task state (WakePlacer::task_state),
// default-constructible. `H` is the runtime's handle type.
// Thread-safety: find(), get(), erase() from any thread, concurrently.
// An entry's address is stable from its get() to its erase(); its fields
// follow WakePlacer::task_state's rules (the runtime orders a task's
// wake-ups, as one task is woken once per sleep). Using an entry after
// its erase() (a wake-up of a finished task) is the runtime's bug; the
// id check catches it at the next lookup, not while the entry is in use.
// Memory: the tables a shard outgrows are kept until the store goes
// (lock-free readers may still probe them): at most as much again as the
// largest table, as each table doubles.
template <class State, TaskHandle H = const void*>
class TaskStore {
  static_assert(std::default_initializable<State>,
                "TaskStore<State>: State (the placer's task_state) must be default-constructible");

 public:
  using handle_type = H;

  // One task's state. prev_cpu is the worker it last ran on (kernel
  // task_cpu(p), the placer's prev_cpu): written by the worker that runs
  // it, read by its wakers (relaxed: a hint, as in the kernel).
  struct Entry {
    State state{};
    CpuId prev_cpu() const noexcept { return prev_.load(std::memory_order_relaxed); }
    void ran_on(CpuId c) noexcept { prev_.store(c, std::memory_order_relaxed); }
    std::uint64_t id() const noexcept { return id_.load(std::memory_order_acquire); }

   private:
    friend class TaskStore;
    std::atomic<CpuId> prev_{no_cpu};
    std::atomic<std::uint64_t> id_{0};
  };

  // Effects: a store of `shards` shards (rounded up to a power of two,
  // at least 1), each with room for 16 tasks to start with.
  explicit TaskStore(std::uint32_t shards = 64) {
    const std::uint32_t n = std::bit_ceil(shards == 0 ? 1u : shards);
    shards_ = std::make_unique<Shard[]>(n);
    heads_ = std::make_unique<std::atomic<const Slot*>[]>(n);
    mask_ = n - 1;
    for (std::uint32_t i = 0; i < n; ++i) {
      shards_[i].head = &heads_[i];
      shards_[i].grow(16);
    }
  }
  TaskStore(const TaskStore&) = delete;
  TaskStore& operator=(const TaskStore&) = delete;

  // Returns: the placer's TaskKey for a handle (never no_task).
  static TaskKey key(H h) noexcept { return raw(h); }

  // Returns: the entry of the task (h, id), or null when h has none or
  //   has one for another id (a reused handle). No lock, no RMW.
  Entry* find(H h, std::uint64_t id) const noexcept {
    const std::uintptr_t k = raw(h);
    const std::uint64_t m = mix(k);
    Entry* e = lookup(heads_[m & mask_].load(std::memory_order_acquire), k, m);
    return e != nullptr && e->id_.load(std::memory_order_acquire) == id ? e : nullptr;
  }

  // Returns: the entry of the task (h, id): found as find() does, else
  //   made under the shard's lock: a new one (fresh State, prev_cpu
  //   no_cpu), or h's old entry reset for the new id (the handle reused).
  // Throws: std::bad_alloc (the store is unchanged).
  TASKPLACE_ALWAYS_INLINE Entry& get(H h, std::uint64_t id) {
    const std::uintptr_t k = raw(h);
    const std::uint64_t m = mix(k);
    const std::size_t i = m & mask_;
    if (Entry* e = lookup(heads_[i].load(std::memory_order_acquire), k, m);
        e != nullptr && e->id_.load(std::memory_order_acquire) == id) [[likely]]
      return *e;
    return make(shards_[i], k, m, id);
  }

  // Effects: forgets the task (h, id), its entry free for another task.
  // Returns: whether it was there (a handle held by another id is left).
  bool erase(H h, std::uint64_t id) noexcept {
    const std::uintptr_t k = raw(h);
    const std::uint64_t m = mix(k);
    Shard& s = shard_of(m);
    std::lock_guard lk(s.m);
    return s.remove(k, m, id);
  }

  // Returns: how many tasks the store holds (a snapshot).
  std::size_t size() const noexcept {
    std::size_t n = 0;
    for (std::uint32_t i = 0; i <= mask_; ++i) n += shards_[i].live.load(std::memory_order_relaxed);
    return n;
  }
  std::uint32_t shard_count() const noexcept { return mask_ + 1; }

 private:
  static constexpr std::uintptr_t empty = 0, erased = 1;

  static std::uintptr_t raw(H h) noexcept {
    std::uintptr_t v;
    if constexpr (std::is_pointer_v<H>) v = reinterpret_cast<std::uintptr_t>(h);
    else v = static_cast<std::uintptr_t>(h);
    TASKPLACE_EXPECTS(v < UINTPTR_MAX - 1, "a TaskStore handle must be below UINTPTR_MAX - 1");
    return v + 2;  // never empty or erased
  }
  // The hash of a key: one multiply by 2^64 / golden ratio (Fibonacci
  // hashing), its high half folded onto its low half, so that pointers,
  // which differ in their middle bits, spread over the shards (low bits)
  // and the slots (bits 8 and up). Computed once a lookup: the shard and
  // the probe both read it.
  static std::uint64_t mix(std::uint64_t x) noexcept {
    x *= 0x9e3779b97f4a7c15ULL;
    return x ^ (x >> 32);
  }

  // get()'s slow path, apart so that a hit's path stays a leaf's.
  TASKPLACE_NOINLINE Entry& make(auto& s, std::uintptr_t k, std::uint64_t m, std::uint64_t id) {
    std::lock_guard lk(s.m);
    if (Entry* e = lookup(s.tables.back()->first(), k, m)) {
      if (e->id_.load(std::memory_order_relaxed) != id) reset(*e, id);
      return *e;
    }
    return *s.insert(k, m, id);
  }

  static void reset(Entry& e, std::uint64_t id) noexcept {
    e.state = State{};
    e.prev_.store(no_cpu, std::memory_order_relaxed);
    e.id_.store(id, std::memory_order_release);
  }

  struct Slot {
    std::atomic<std::uintptr_t> key{empty};
    std::atomic<Entry*> entry{nullptr};
  };
  // A table of `cap` slots (a power of two) and a header before them, one
  // array: the header's key is the table's mask in bytes (slot i lies at
  // byte (i * sizeof(Slot)) & mask of the first), so that a reader, given
  // the first slot, finds the size one slot before it.
  struct Table {
    explicit Table(std::size_t cap) : all(std::make_unique<Slot[]>(cap + 1)), mask(cap - 1) {
      all[0].key.store(mask * sizeof(Slot), std::memory_order_relaxed);  // published with the table
    }
    Slot* first() const noexcept { return all.get() + 1; }
    Slot& operator[](std::size_t i) const noexcept { return all[1 + i]; }
    std::unique_ptr<Slot[]> all;
    std::size_t mask;
  };
  static_assert(std::has_single_bit(sizeof(Slot)), "TaskStore: a slot's offset is masked in bytes");

  // `hash`: mix(k), as for every function below that takes a key.
  // Returns: k's entry in the table whose first slot is `slots`, or null.
  // The probe walks byte offsets (slot i from hash >> 8 on, mod the
  // table's size), so that a slot's address is one add.
  static Entry* lookup(const Slot* slots, std::uintptr_t k, std::uint64_t hash) noexcept {
    const std::size_t mask = slots[-1].key.load(std::memory_order_relaxed);  // the header
    const char* base = reinterpret_cast<const char*>(slots);
    // (hash >> 8) * sizeof(Slot) but for the low bits, which the mask clears.
    for (std::size_t at = hash >> (8 - std::countr_zero(sizeof(Slot)));; at += sizeof(Slot)) {
      const Slot& s = *reinterpret_cast<const Slot*>(base + (at & mask));
      const std::uintptr_t x = s.key.load(std::memory_order_acquire);
      if (x == k) {
        Entry* e = s.entry.load(std::memory_order_relaxed);
        TASKPLACE_ASSUME(e != nullptr);  // a key is published after its entry (place())
        return e;
      }
      if (x == empty) return nullptr;
    }
  }

  // A shard: what its writers share, under m. Its readers read its
  // current table's first slot from heads_, a line that only a table's
  // growth writes.
  struct alignas(64) Shard {
    SpinLock m;
    std::atomic<const Slot*>* head = nullptr;  // its heads_ entry
    std::atomic<std::size_t> live{0};
    std::size_t used = 0;  // live plus erased slots, under m
    std::vector<std::unique_ptr<Table>> tables;  // every table, the current one last
    std::vector<std::unique_ptr<Entry[]>> chunks;
    std::vector<Entry*> free;

    // Effects: a fresh entry for (k, id), reset before its key is
    //   published, so that no reader sees it with an old task's id.
    // Precondition: m held, k absent.
    Entry* insert(std::uintptr_t k, std::uint64_t hash, std::uint64_t id) {
      Table* t = tables.back().get();
      if ((used + 1) * 4 > (t->mask + 1) * 3) t = grow((live.load(std::memory_order_relaxed) + 1) * 4);
      if (free.empty()) {
        constexpr std::size_t chunk = 64;
        chunks.push_back(std::make_unique<Entry[]>(chunk));
        free.reserve(chunks.size() * chunk);  // erase() never allocates
        for (std::size_t i = chunk; i > 0; --i) free.push_back(&chunks.back()[i - 1]);
      }
      Entry* e = free.back();
      free.pop_back();
      reset(*e, id);
      place(*t, k, hash, e);
      ++used;
      live.fetch_add(1, std::memory_order_relaxed);
      return e;
    }
    static void place(Table& t, std::uintptr_t k, std::uint64_t hash, Entry* e) noexcept {
      for (std::size_t i = hash >> 8;; ++i) {
        Slot& s = t[i & t.mask];
        if (s.key.load(std::memory_order_relaxed) <= erased) {
          s.entry.store(e, std::memory_order_relaxed);
          s.key.store(k, std::memory_order_release);  // publishes the entry
          return;
        }
      }
    }
    // Precondition: m held.
    bool remove(std::uintptr_t k, std::uint64_t hash, std::uint64_t id) noexcept {
      Table* t = tables.back().get();
      for (std::size_t i = hash >> 8;; ++i) {
        Slot& s = (*t)[i & t->mask];
        const std::uintptr_t x = s.key.load(std::memory_order_relaxed);
        if (x == empty) return false;
        if (x != k) continue;
        Entry* e = s.entry.load(std::memory_order_relaxed);
        if (e->id_.load(std::memory_order_relaxed) != id) return false;
        s.key.store(erased, std::memory_order_release);
        free.push_back(e);  // capacity reserved with its chunk: no allocation
        live.fetch_sub(1, std::memory_order_relaxed);
        return true;
      }
    }
    // Effects: a table of at least `want` slots holding the live entries,
    //   published; the old one kept for readers still in it.
    // Precondition: m held (or the constructor).
    Table* grow(std::size_t want) {
      const std::size_t cap = std::bit_ceil(std::max<std::size_t>(want, 16));
      auto fresh = std::make_unique<Table>(cap);
      if (!tables.empty()) {
        const Table& old = *tables.back();
        for (std::size_t i = 0; i <= old.mask; ++i) {
          const std::uintptr_t x = old[i].key.load(std::memory_order_relaxed);
          if (x > erased) place(*fresh, x, mix(x), old[i].entry.load(std::memory_order_relaxed));
        }
      }
      used = live.load(std::memory_order_relaxed);
      tables.push_back(std::move(fresh));
      head->store(tables.back()->first(), std::memory_order_release);
      return tables.back().get();
    }
  };

  Shard& shard_of(std::uint64_t m) const noexcept { return shards_[m & mask_]; }

  std::unique_ptr<Shard[]> shards_;
  // Each shard's current table (its first slot), for the lock-free
  // readers: 8 bytes a shard, so that a lookup indexes it directly.
  std::unique_ptr<std::atomic<const Slot*>[]> heads_;
  std::uint32_t mask_ = 0;
};

}  // namespace taskplace::kit
