// taskplace/taskplace.hpp: the umbrella header, every public header of the
// library except the optional adapters that need other packages
// (taskplace/topology/views.hpp needs range-v3, taskplace/topology/hwloc.hpp
// needs hwloc), the TSC clock (taskplace/tsc_clock.hpp: it includes the
// compiler's <cpuid.h>, kept out of this header's consumers) and the
// testing kit (taskplace/testing.hpp).
//
//   #include <taskplace/taskplace.hpp>
//   taskplace::WakePlacer<taskplace::UniformTopology> placer{topology};
#pragma once

#include "taskplace/detail/config.hpp"

#include "taskplace/clock.hpp"
#include "taskplace/concepts.hpp"
#include "taskplace/fwd.hpp"
#include "taskplace/idle_balancer.hpp"
#include "taskplace/placer/llc_utilization.hpp"
#include "taskplace/placer/select_idle_sibling.hpp"
#include "taskplace/placer/wake_affine.hpp"
#include "taskplace/placer/cost_gate.hpp"
#include "taskplace/placer/wake_on_current.hpp"
#include "taskplace/policy/cache_hot_reservation.hpp"
#include "taskplace/policy/duration_tracker.hpp"
#include "taskplace/policy/flip_counter.hpp"
#include "taskplace/policy/llc_factor.hpp"
#include "taskplace/policy/newidle_cost_tracker.hpp"
#include "taskplace/policy/newidle_success_rate.hpp"
#include "taskplace/policy/overlap_tracker.hpp"
#include "taskplace/policy/settled_pair.hpp"
#include "taskplace/policy/task_hot.hpp"
#include "taskplace/policy/wide_detector.hpp"
#include "taskplace/stats.hpp"
#include "taskplace/topology/sysfs.hpp"
#include "taskplace/topology/table.hpp"
#include "taskplace/topology/uniform.hpp"
#include "taskplace/tunables.hpp"
#include "taskplace/types.hpp"
#include "taskplace/wake_placer.hpp"
