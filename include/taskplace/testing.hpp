// taskplace/testing.hpp: the conformance kit, in one include.
//
// Provides every check of the kit: check_topology (topology invariants),
// the flip / wide / factor checks, the newidle checks where shipped, the
// builders (table_from_string, restrict_to), the scripted machine state and
// check_placement, and the ManualClock. Each check returns a
// std::vector<Violation>, empty when the model conforms, so any test
// framework can use it. Kernel analogue: none (the kernel tests itself with
// benchmarks; this is the unit-level counterpart).
//
//   #include <taskplace/testing.hpp>
//   assert(taskplace::testing::check_topology(my_topology).empty());
#pragma once

#include "taskplace/detail/config.hpp"

#include "taskplace/clock.hpp"
#include "taskplace/testing/violation.hpp"
#include "taskplace/testing/builders.hpp"
#include "taskplace/testing/machine.hpp"
#include "taskplace/testing/topology_conformance.hpp"
#include "taskplace/testing/flip_conformance.hpp"
#if __has_include("taskplace/testing/idle_conformance.hpp")
#include "taskplace/testing/idle_conformance.hpp"
#endif
