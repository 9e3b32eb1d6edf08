// expect: Traits::Search must model taskplace::SearchPolicy
// expect-also: SearchPolicy
// A search that is enabled but whose search() is misspelt: refused with the
// member's name, before place() calls it.
#include "use.hpp"

struct TargetOnly {
  static constexpr bool enabled = true;
  template <class Input>
  taskplace::SearchResult find(const Input& in) const {
    return {in.target, taskplace::WakeReason::target_busy};
  }
};
struct BadSearch : taskplace::DefaultWakeTraits {
  using Search = TargetOnly;
};
void use() { compile_fail::place_once<BadSearch>(); }
