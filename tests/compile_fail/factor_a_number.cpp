// expect: Traits::Factor must model taskplace::FactorPolicy
// A factor given as a number rather than a policy (FixedFactor<4> is the
// constant policy).
#include <type_traits>

#include "use.hpp"

struct BadFactor : taskplace::DefaultWakeTraits {
  using Factor = std::integral_constant<std::uint32_t, 4>;
};
void use() { compile_fail::place_once<BadFactor>(); }
