// expect: WakeAffine2008
// expect-also: SyncAffineVariant
// A 2008 variant that says whether to honour the hint but not whether the
// pull needs the balance test: the concept refuses it.
#include "taskplace/placer/wake_affine.hpp"

struct HalfVariant {
  static constexpr bool honour_sync = true;
};
taskplace::WakeAffine2008<HalfVariant> rule;
