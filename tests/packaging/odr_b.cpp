// One of two translation units that include every header: linking them
// together fails if a header defines a non-inline function or variable.
#include "all_headers.hpp"

#include <cstdint>

// Returns: an address of an inline variable as this unit sees it; the
// other unit must see the same one.
const std::uint32_t* odr_unit_b() noexcept { return &taskplace::max_levels; }
