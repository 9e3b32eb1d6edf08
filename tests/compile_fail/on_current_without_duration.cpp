// expect: Traits::OnCurrent reads the tasks' run durations
// A traits set that applies SIS_CURRENT's rule (WakeOnCurrent) but measures
// no run durations (Duration left as NoDuration): WakePlacer refuses it,
// since every duration would read 0, which no rule counts as short, and the
// rule would never fire.
#include "taskplace/topology/uniform.hpp"
#include "taskplace/wake_placer.hpp"

struct RuleWithoutDurations : taskplace::DefaultWakeTraits {
  using OnCurrent = taskplace::WakeOnCurrent<>;
};
template class taskplace::WakePlacer<taskplace::UniformTopology, RuleWithoutDurations>;
