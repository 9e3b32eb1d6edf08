// expect: pull must model taskplace::NewidlePull
// A pull that forgets to say whether it got work.
#include "use.hpp"

void use() {
  compile_fail::balance_once<taskplace::DefaultBalanceTraits>(
      [](std::uint32_t, taskplace::LevelKind, auto) {});
}
