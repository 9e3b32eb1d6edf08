// taskplace/testing/violation.hpp: what a conformance check reports.
//
// Every check_* function of the conformance kit returns a
// std::vector<Violation>; an empty vector means the model conforms.
//
//   auto v = taskplace::testing::check_topology(my_topology);
//   for (const auto& x : v) std::cerr << x.cpu << ": " << x.rule << ": " << x.detail << '\n';
#pragma once

#include "taskplace/detail/config.hpp"

#include <string>

#include "taskplace/types.hpp"

namespace taskplace::testing {

// One broken invariant: the CPU it was seen on (no_cpu when it is not a
// property of a CPU), the requirement or invariant it breaks, and the
// offending values.
struct Violation {
  CpuId cpu;
  std::string rule;
  std::string detail;
};

}  // namespace taskplace::testing
