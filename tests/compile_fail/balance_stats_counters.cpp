// expect: Traits::Stats must model taskplace::StatsPolicy
// One set of counters given where the family goes, in a balancer's traits.
#include "use.hpp"

struct BadStats : taskplace::DefaultBalanceTraits {
  using Stats = taskplace::AtomicStats::counters<taskplace::BalanceCounter>;
};
void use() { compile_fail::balance_once<BadStats>(compile_fail::no_work); }
