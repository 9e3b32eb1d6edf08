// expect: Traits::Hook must model taskplace::DecisionHook<H, BalanceEvent>
// A placer's hook given to the balancer: it takes a WakeEvent, the
// balancer calls it with a BalanceEvent.
#include "use.hpp"

struct WakeHook {
  void operator()(const taskplace::WakeEvent&) const noexcept {}
};
struct BadHook : taskplace::DefaultBalanceTraits {
  using Hook = WakeHook;
};
void use() { compile_fail::balance_once<BadHook>(compile_fail::no_work); }
