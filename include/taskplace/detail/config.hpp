// taskplace/detail/config.hpp: the language check every public header
// makes first, before it includes anything else.
//
// Kernel analogue: none. taskplace is C++20 (concepts, requires-clauses,
// designated initialisers): compiled as C++17 or older, each header would
// fail hundreds of lines deep with "'requires' does not name a type".
// Instead the build stops here with one line that names the fix.
//
//   c++ -std=c++20 app.cpp      // CMake: link taskplace::taskplace (it carries cxx_std_20)
//   #include <taskplace/taskplace.hpp>
#pragma once

#if (defined(_MSVC_LANG) ? _MSVC_LANG : __cplusplus) < 202002L
#error "taskplace needs C++20: compile with -std=c++20 (MSVC: /std:c++20; CMake: link taskplace::taskplace, which asks for it)"
// A missing header is a fatal error: the compiler stops here rather than
// reporting every C++20 construct of the header that included this one.
#include <taskplace/detail/stop_here_without_cxx20>
#endif

// A function kept out of its callers, so that a fast path in front of it
// stays small (WakePlacer's settled-pair path).
// And one inlined into its one caller whatever its size (WakePlacer's
// full decision, into place() where there is no fast path).
// TASKPLACE_INLINE_LAMBDA, after a lambda's parameter list: the same for
// a lambda called in a loop (the LLC walk's per-CPU step).
#if defined(__GNUC__) || defined(__clang__)
#define TASKPLACE_NOINLINE __attribute__((noinline))
#define TASKPLACE_ALWAYS_INLINE inline __attribute__((always_inline))
#define TASKPLACE_INLINE_LAMBDA __attribute__((always_inline))
#else
#define TASKPLACE_NOINLINE
#define TASKPLACE_ALWAYS_INLINE inline
#define TASKPLACE_INLINE_LAMBDA
#endif
