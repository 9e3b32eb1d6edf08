// expect: Traits::Settle skips wake-ups and sleeps that Traits::Reservation must see
// The runtime set with SIS_CACHE's reservation added: a replay skips the
// wake-up's sleep sample and the wakee's run, which the reservation
// policy reads at every one; WakePlacer refuses the pair.
#include "taskplace/topology/uniform.hpp"
#include "taskplace/wake_placer.hpp"

struct SettleAndReserve : taskplace::traits::Runtime {
  using Reservation = taskplace::CacheHotReservation<>;
};
template class taskplace::WakePlacer<taskplace::UniformTopology, SettleAndReserve>;
