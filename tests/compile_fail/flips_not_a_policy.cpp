// expect: Traits::Flips must model taskplace::FlipPolicy
// A Flips member that is not a flip policy (no state, no record).
#include "taskplace/topology/uniform.hpp"
#include "taskplace/wake_placer.hpp"

struct BadFlips : taskplace::DefaultWakeTraits {
  using Flips = int;
};
template class taskplace::WakePlacer<taskplace::UniformTopology, BadFlips>;
