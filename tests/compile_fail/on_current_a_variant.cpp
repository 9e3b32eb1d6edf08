// expect: Traits::OnCurrent must model taskplace::OnCurrentRule
// A SIS_CURRENT variant given where the rule goes: the rule is
// WakeOnCurrent<sis_current::MigrationCost2023> (or traits::SisCurrent<>).
#include "use.hpp"

struct BadOnCurrent : taskplace::DefaultWakeTraits {
  using Duration = taskplace::DurationTracker;
  using OnCurrent = taskplace::sis_current::MigrationCost2023;
};
void use() { compile_fail::place_once<BadOnCurrent>(); }
