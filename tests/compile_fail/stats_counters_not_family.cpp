// expect: Traits::Stats must model taskplace::StatsPolicy
// One set of counters given where the family goes. g++ 12 refused this
// with an access error, clang 14 accepted it (it reads the set's injected
// class name as its own counters<...>): both must refuse it, alike.
#include "use.hpp"

struct BadStats : taskplace::DefaultWakeTraits {
  using Stats = taskplace::PlainStats::counters<taskplace::WakeCounter>;
};
void use() { compile_fail::place_once<BadStats>(); }
