// expect: Traits::Hook must model taskplace::DecisionHook<H, WakeEvent>
// A balancer's hook given to the placer: it takes a BalanceEvent, the
// placer calls it with a WakeEvent.
#include "use.hpp"

struct BalanceHook {
  void operator()(const taskplace::BalanceEvent&) const noexcept {}
};
struct BadHook : taskplace::DefaultWakeTraits {
  using Hook = BalanceHook;
};
void use() { compile_fail::place_once<BadHook>(); }
