// expect: Traits::Overlap must model taskplace::OverlapPolicy
// The run-duration tracker given where the overlap tracker goes.
#include "use.hpp"

struct BadOverlap : taskplace::traits::Linux2008<> {
  using Overlap = taskplace::DurationTracker;
};
void use() { compile_fail::place_once<BadOverlap>(); }
