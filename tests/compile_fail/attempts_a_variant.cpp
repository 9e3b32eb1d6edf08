// expect: Traits::Attempts must model taskplace::NewidleAttemptPolicy
// A success-rate variant given where the attempt policy goes: the policy is
// NewidleSuccessRate<success_rate::ProportionalRate2026>.
#include "use.hpp"

struct BadAttempts : taskplace::DefaultBalanceTraits {
  using Attempts = taskplace::success_rate::ProportionalRate2026;
};
void use() { compile_fail::balance_once<BadAttempts>(compile_fail::no_work); }
