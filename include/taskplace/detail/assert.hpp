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

namespace taskplace::detail {

[[noreturn]] inline void precondition_failed(const char* cond, const char* what,
                                             const char* file, int line) {
  throw PreconditionError(std::string("taskplace precondition failed: ") + what +
                          " (" + cond + ") at " + file + ":" +
                          std::to_string(line));
}

}  // namespace taskplace::detail
