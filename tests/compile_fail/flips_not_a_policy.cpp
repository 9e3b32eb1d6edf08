// expect: Traits::Flips must model taskplace::FlipPolicy
// expect-also: FlipPolicy
// A Flips member that is not a flip policy (no state, no record).
#include "use.hpp"

struct BadFlips : taskplace::DefaultWakeTraits {
  using Flips = int;
};
void use() { compile_fail::place_once<BadFlips>(); }
