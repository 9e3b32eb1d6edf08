// expect: Traits::Reservation must model taskplace::ReservationPolicy
// A SIS_CACHE variant given where the reservation policy goes: the policy
// is CacheHotReservation<sis_cache::HalveLong2023> (or traits::CacheHot<>).
#include "use.hpp"

struct BadReservation : taskplace::DefaultWakeTraits {
  using Reservation = taskplace::sis_cache::HalveLong2023;
};
void use() { compile_fail::place_once<BadReservation>(); }
