// expect: has_idle_core must be callable as m.has_idle_core(c)
// A machine state whose has_idle_core answers nothing (void): without the
// check the placer would ignore it.
#include "use.hpp"

struct Machine : compile_fail::Machine {
  void has_idle_core(taskplace::CpuId) const {}
};
void use() { compile_fail::place_once<taskplace::DefaultWakeTraits>(Machine{}); }
