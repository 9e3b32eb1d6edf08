// expect: llc_utilization_pct must be callable as m.llc_utilization_pct(c)
// A machine state whose llc_utilization_pct is not const: without the
// check the placer would not see it and would scan the whole LLC.
#include "use.hpp"

struct Machine : compile_fail::Machine {
  std::uint32_t llc_utilization_pct(taskplace::CpuId) { return 50; }
};
void use() { compile_fail::place_once<taskplace::DefaultWakeTraits>(Machine{}); }
