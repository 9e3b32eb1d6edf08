// expect: Traits::Wide must model taskplace::WideRule
// A wide rule written as a const member function: the placer calls
// Rule::wide(...) without an object, so the rule must be static.
#include "use.hpp"

struct MemberRule {
  bool wide(std::uint32_t, std::uint32_t, std::uint32_t) const noexcept { return false; }
};
struct BadWide : taskplace::DefaultWakeTraits {
  using Wide = MemberRule;
};
void use() { compile_fail::place_once<BadWide>(); }
