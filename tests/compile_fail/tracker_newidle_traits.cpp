// expect: Traits::Tracker must model taskplace::NewidleTracker
// expect-also: NewidleTracker
// A newidle traits set given where the tracker goes: the tracker is
// NewidleCostTracker<newidle::Gate2009> (or traits::Balance<newidle::Gate2009>).
#include "use.hpp"

struct BadTracker : taskplace::DefaultBalanceTraits {
  using Tracker = taskplace::newidle::Gate2009;
};
void use() { compile_fail::balance_once<BadTracker>(compile_fail::no_work); }
