// taskplace/types.hpp: vocabulary types shared by every header.
//
// Provides the CPU and task identifiers, the balance-level kinds, the time
// type (nanoseconds, as everywhere in the kernel's scheduler) and the
// exception types that bad input raises.
//
//   taskplace::CpuId cpu = 3;
//   taskplace::Nanoseconds now = clock.now();
#pragma once

#include "taskplace/detail/config.hpp"

#include <chrono>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace taskplace {

// A dense CPU index in [0, topology.cpu_count()). Topologies built from the
// operating system keep their own mapping to OS CPU numbers.
using CpuId = std::uint32_t;

// "No CPU": returned by searches that found nothing, used as "unknown".
inline constexpr CpuId no_cpu = std::numeric_limits<CpuId>::max();

// Opaque identity of a task, compared for equality only (the kernel compares
// task_struct pointers). 0 means "no task". Embedders typically pass
// reinterpret_cast<TaskKey>(task_pointer) or a task id + 1.
using TaskKey = std::uintptr_t;
inline constexpr TaskKey no_task = 0;

// The most balance levels a CPU may have (SMT, cluster, LLC, node, and a few
// NUMA distances). Per-CPU state sized by it lives in fixed arrays.
inline constexpr std::uint32_t max_levels = 8;

// Every time stamp and duration in the library: signed 64-bit nanoseconds
// since the clock's epoch. Signed, so that "a clock went backwards" is
// visible as a negative difference instead of a huge unsigned one.
using Nanoseconds = std::chrono::nanoseconds;

// A duration tunable that is never negative: a negative value becomes zero
// where it is set (construction or assignment), so that a policy reads it
// on its hot path without clamping it again. Publicly a Nanoseconds: every
// read (count(), comparisons, arithmetic giving a Nanoseconds) works on it
// unchanged. The compound assignments clamp as well; ++, -- and %= are
// deleted.
// Invariant: count() >= 0.
//   taskplace::NonNegativeNanoseconds p = -5s;   // p == 0s
struct NonNegativeNanoseconds : Nanoseconds {
  constexpr NonNegativeNanoseconds() noexcept : Nanoseconds(0) {}
  template <class Rep, class Period>
    requires std::is_convertible_v<std::chrono::duration<Rep, Period>, Nanoseconds>
  constexpr NonNegativeNanoseconds(const std::chrono::duration<Rep, Period>& d) noexcept
      : Nanoseconds(clamp(Nanoseconds(d))) {}

  constexpr NonNegativeNanoseconds& operator+=(const Nanoseconds& d) noexcept {
    return *this = Nanoseconds(*this) + d;
  }
  constexpr NonNegativeNanoseconds& operator-=(const Nanoseconds& d) noexcept {
    return *this = Nanoseconds(*this) - d;
  }
  constexpr NonNegativeNanoseconds& operator*=(const rep& k) noexcept {
    return *this = Nanoseconds(*this) * k;
  }
  constexpr NonNegativeNanoseconds& operator/=(const rep& k) noexcept {
    return *this = Nanoseconds(*this) / k;
  }
  NonNegativeNanoseconds& operator%=(const rep&) = delete;
  NonNegativeNanoseconds& operator++() = delete;
  NonNegativeNanoseconds operator++(int) = delete;
  NonNegativeNanoseconds& operator--() = delete;
  NonNegativeNanoseconds operator--(int) = delete;

 private:
  static constexpr Nanoseconds clamp(Nanoseconds d) noexcept { return d.count() < 0 ? Nanoseconds(0) : d; }
};

// The kinds of balance level, smallest span first (kernel: the sched domain
// levels SMT, CLS, MC, PKG/NUMA).
enum class LevelKind : std::uint8_t {
  smt,      // hardware threads of one core
  cluster,  // cores sharing a mid-level cache (kernel CLS)
  llc,      // CPUs sharing the last-level cache (kernel MC)
  node,     // CPUs of one NUMA node or package
  machine,  // every CPU of the topology
};

constexpr const char* to_string(LevelKind k) noexcept {
  switch (k) {
    case LevelKind::smt: return "smt";
    case LevelKind::cluster: return "cluster";
    case LevelKind::llc: return "llc";
    case LevelKind::node: return "node";
    case LevelKind::machine: return "machine";
  }
  return "unknown";
}

// Raised when a topology is constructed from inconsistent data. The message
// names the CPU and the rule it breaks, e.g.
// "cpu 5: SMT siblings share an LLC (sibling 4 is in llc 0, cpu 5 in llc 1)".
class TopologyError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// Raised when a sysfs (or fake sysfs) file is missing or malformed. The
// message names the file.
class SysfsError : public std::runtime_error {
 public:
  SysfsError(const std::string& file, const std::string& what)
      : std::runtime_error(file + ": " + what), file_(file) {}
  const std::string& file() const noexcept { return file_; }

 private:
  std::string file_;
};

// Raised by a checked precondition (see detail/assert.hpp): an out-of-range
// CPU id, a level index past level_count(), and the like.
class PreconditionError : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

}  // namespace taskplace
