// taskplace/kit/spin_lock.hpp: SpinLock, the lock of sections of a few
// dozen to a few hundred instructions that never block (a worker queue's
// deque operation, a placement under a task's lock, a wait list's
// unlink), and spin_pause, the pause of a spinning loop. One lock for the
// pool, the Boost.Fiber group, the Asio runtime and the kit's TaskStore.
//
// Kernel analogue: raw_spinlock_t (a runqueue's lock, a wait queue head's
// lock), held for the few instructions of an enqueue or an unlink.
//
//   taskplace::kit::SpinLock m;
//   { std::lock_guard lk(m); /* a few loads and stores */ }
#pragma once

#include "taskplace/detail/config.hpp"

#include <atomic>
#include <cstdint>
#include <thread>

namespace taskplace::kit {

inline void spin_pause() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

// A test-and-test-and-set lock (Lockable: std::lock_guard, std::unique_lock).
// Taking it free is one exchange and releasing it one plain store, where a
// std::mutex is two library calls and its unlock a second locked
// instruction (an exchange that tells whether a waiter sleeps in the
// kernel). A waiter spins reading the word with a pause, without writing
// it, and after spin_limit reads yields its thread to the OS between
// reads, so that a holder preempted inside the section (more threads than
// CPUs) gets a CPU back instead of being spun against for a whole time
// slice. Not fair, not recursive. For sections that never block or wait:
// a waiter that must sleep for long takes a std::mutex.
// Thread-safety: any threads.
class SpinLock {
 public:
  static constexpr std::uint32_t spin_limit = 128;
  SpinLock() = default;
  SpinLock(const SpinLock&) = delete;
  SpinLock& operator=(const SpinLock&) = delete;

  void lock() noexcept {
    if (!locked_.exchange(true, std::memory_order_acquire)) return;
    lock_contended();
  }
  // Returns: whether the lock was free and is now held.
  bool try_lock() noexcept {
    return !locked_.load(std::memory_order_relaxed) && !locked_.exchange(true, std::memory_order_acquire);
  }
  // Requires: held by the caller.
  void unlock() noexcept { locked_.store(false, std::memory_order_release); }

 private:
  TASKPLACE_NOINLINE void lock_contended() noexcept {
    std::uint32_t reads = 0;
    do {
      while (locked_.load(std::memory_order_relaxed)) {
        if (reads < spin_limit) {
          ++reads;
          spin_pause();
        } else {
          std::this_thread::yield();
        }
      }
    } while (locked_.exchange(true, std::memory_order_acquire));
  }

  std::atomic<bool> locked_{false};
};

}  // namespace taskplace::kit
