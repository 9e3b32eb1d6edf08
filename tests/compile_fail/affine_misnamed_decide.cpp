// expect: Traits::Affine must model taskplace::AffinePolicy
// expect-also: AffinePolicy
// An affine rule whose decide() is misspelt: refused with the member's
// name, before place() calls it.
#include "use.hpp"

struct PullAlways {
  template <taskplace::Topology T, taskplace::MachineState M>
  taskplace::AffineDecision decides(const taskplace::AffineInput<T, M>& in) const {
    return {in.waking, taskplace::AffineReason::forced_waking};
  }
};
struct BadAffine : taskplace::DefaultWakeTraits {
  using Affine = PullAlways;
};
void use() { compile_fail::place_once<BadAffine>(); }
