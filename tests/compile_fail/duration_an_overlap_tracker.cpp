// expect: Traits::Duration must model taskplace::DurationPolicy
// The overlap tracker given where the run-duration tracker goes.
#include "use.hpp"

struct BadDuration : taskplace::traits::SisCurrent<> {
  using Duration = taskplace::OverlapTracker;
};
void use() { compile_fail::place_once<BadDuration>(); }
