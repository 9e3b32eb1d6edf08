// taskplace/detail/assert.hpp: checked preconditions.
//
// TASKPLACE_EXPECTS(cond, what) checks a precondition when checking is on and
// compiles to nothing otherwise. Checking is on when TASKPLACE_CHECKED is
// defined to 1, or when it is undefined and NDEBUG is not defined (debug
// builds). A failed check throws taskplace::PreconditionError naming the
// condition, so tests can assert on it; release builds pay nothing.
//
// Functions guarded this way are declared TASKPLACE_NOEXCEPT: noexcept in
// unchecked builds only, so a failed check can always propagate.
#pragma once

#include "taskplace/detail/config.hpp"

#include <string>

#include "taskplace/types.hpp"

#ifndef TASKPLACE_CHECKED
#ifdef NDEBUG
#define TASKPLACE_CHECKED 0
#else
#define TASKPLACE_CHECKED 1
#endif
#endif

#if TASKPLACE_CHECKED
#define TASKPLACE_NOEXCEPT
#define TASKPLACE_EXPECTS(cond, what)                                        \
  do {                                                                       \
    if (!(cond)) [[unlikely]]                                                \
      ::taskplace::detail::precondition_failed(#cond, what, __FILE__, __LINE__); \
  } while (0)
#else
#define TASKPLACE_NOEXCEPT noexcept
// sizeof keeps the operands "used" without evaluating them.
#define TASKPLACE_EXPECTS(cond, what) ((void)sizeof(cond))
#endif

// TASKPLACE_ASSUME(cond) tells the optimiser that cond holds, for invariants
// a type establishes in its constructor (a topology's sizes are >= 1), so
// that a generic guard downstream (a factor of 0 read as 1) compiles away.
// Never for a precondition on caller input: those are TASKPLACE_EXPECTS.
#if defined(__clang__)
#define TASKPLACE_ASSUME(cond) __builtin_assume(cond)
#elif defined(__GNUC__)
#define TASKPLACE_ASSUME(cond)         \
  do {                                 \
    if (!(cond)) __builtin_unreachable(); \
  } while (0)
#elif defined(_MSC_VER)
#define TASKPLACE_ASSUME(cond) __assume(cond)
#else
#define TASKPLACE_ASSUME(cond) ((void)0)
#endif

namespace taskplace::detail {

[[noreturn]] inline void precondition_failed(const char* cond, const char* what,
                                             const char* file, int line) {
  throw PreconditionError(std::string("taskplace precondition failed: ") + what +
                          " (" + cond + ") at " + file + ":" +
                          std::to_string(line));
}

}  // namespace taskplace::detail
