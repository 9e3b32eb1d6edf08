// taskplace_pool/spin_lock.hpp: detail::SpinLock, the lock of the blocking
// primitives' state and wait lists (Channel, Event, Mutex, Semaphore,
// Latch), whose critical sections are a few dozen instructions: the kit's
// (taskplace/kit/spin_lock.hpp), which the Boost.Fiber group's and the
// Asio runtime's queues take too. Internal to the pool's headers. (A
// JoinHandle keeps a std::mutex: a thread off the pool sleeps on it with
// a condition variable.)
//
//   detail::SpinLock m;
//   { std::lock_guard lk(m); /* a few loads and stores */ }
#pragma once

#include "taskplace/detail/config.hpp"

#include "taskplace/kit/spin_lock.hpp"

namespace taskplace_pool::detail {

using taskplace::kit::SpinLock;

}  // namespace taskplace_pool::detail
