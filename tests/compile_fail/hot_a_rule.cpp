// expect: Traits::Hot must model taskplace::TaskHotPolicy
// A cache-hot rule given where the cache-hot test goes: the test is
// TaskHot<task_hot::AllLevels2007>.
#include "use.hpp"

struct BadHot : taskplace::DefaultBalanceTraits {
  using Hot = taskplace::task_hot::AllLevels2007;
};
void use() { compile_fail::balance_once<BadHot>(compile_fail::no_work); }
