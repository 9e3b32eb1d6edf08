// taskplace_pool/spin_lock.hpp: detail::SpinLock, the lock of the blocking
// primitives' state and wait lists (Channel, Event, Mutex, Semaphore,
// Latch), whose critical sections are a few dozen instructions, and
// detail::cpu_relax, the pause of a spinning loop. Internal to the pool's
// headers. (A JoinHandle keeps a std::mutex: a thread off the pool sleeps
// on it with a condition variable.)
//
// Kernel analogue: the spinlock_t of a wait queue head, which every
// wake_up() takes for the few instructions that unlink a waiter.
//
//   detail::SpinLock m;
//   { std::lock_guard lk(m); /* a few loads and stores */ }
#pragma once

#include "taskplace/detail/config.hpp"

#include <atomic>
#include <cstdint>
#include <thread>

namespace taskplace_pool::detail {

inline void cpu_relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

// A test-and-test-and-set lock (Lockable: std::lock_guard, std::unique_lock).
// Taking it free is one exchange and releasing it one plain store, where a
// std::mutex's unlock is a second locked instruction (an exchange that
// tells whether a waiter sleeps in the kernel); each locked instruction
// waits for the stores before it to drain, and a channel's ping-pong takes
// a lock four times a round trip. A waiter spins reading the word with a
// pause, without writing it, and after spin_limit reads yields its thread
// to the OS between reads, so that a holder preempted inside the section
// (more threads than CPUs, a try_send from a thread off the pool) gets a
// CPU back instead of being spun against for a whole time slice.
// Not fair, not recursive. For sections that never block or wait: a
// waiter that must sleep for long takes a std::mutex.
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
  void lock_contended() noexcept {
    std::uint32_t reads = 0;
    do {
      while (locked_.load(std::memory_order_relaxed)) {
        if (reads < spin_limit) {
          ++reads;
          cpu_relax();
        } else {
          std::this_thread::yield();
        }
      }
    } while (locked_.exchange(true, std::memory_order_acquire));
  }

  std::atomic<bool> locked_{false};
};

}  // namespace taskplace_pool::detail
