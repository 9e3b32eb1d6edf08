// expect: reads the tasks' average overlap
// A traits set whose affine rule reads overlaps (WakeAffine2008) but that
// measures none: WakePlacer refuses it, since every overlap would read as
// unknown and the 2008 rule would never take its sync pull.
#include "taskplace/topology/uniform.hpp"
#include "taskplace/wake_placer.hpp"

struct NoTracker : taskplace::traits::Linux2008<> {
  using Overlap = taskplace::NoOverlap;
};
template class taskplace::WakePlacer<taskplace::UniformTopology, NoTracker>;
