// expect: the machine state needs reservation(c)
// A placer with a cache-hot reservation and a machine state that does not
// hand out the reservation's per-CPU state (MachineState O3).
#include "use.hpp"

void use() { compile_fail::place_once<taskplace::traits::CacheHot<>>(); }
