// expect: Traits::Settle replays CostGate's verdicts
// A traits set that replays settled pairs (SettledPair) with no CostGate
// to judge them (today's kernel's rules, which have no verdict to keep):
// WakePlacer refuses it.
#include "taskplace/topology/uniform.hpp"
#include "taskplace/wake_placer.hpp"

struct SettleWithoutGate : taskplace::DefaultWakeTraits {
  using Settle = taskplace::SettledPair<>;
};
template class taskplace::WakePlacer<taskplace::UniformTopology, SettleWithoutGate>;
