// Compile-time checks for the Topology, CpuRange and Clock concepts and the
// shipped topologies (taskplace/topology/{uniform,table,sysfs}.hpp). This
// file compiling is the test.
#include <array>
#include <cstdint>
#include <list>
#include <set>
#include <span>
#include <vector>

#include "taskplace/clock.hpp"
#include "taskplace/concepts.hpp"
#include "taskplace/topology/sysfs.hpp"
#include "taskplace/topology/table.hpp"
#include "taskplace/topology/uniform.hpp"

namespace taskplace_static_topology {

using namespace taskplace;

// --- CpuRange ----------------------------------------------------------------
static_assert(CpuRange<std::span<const CpuId>>);
static_assert(CpuRange<std::vector<CpuId>>);
static_assert(CpuRange<std::array<std::uint16_t, 4>>);  // converts to CpuId
static_assert(CpuRange<UniformTopology::cpu_range>);
static_assert(!CpuRange<std::list<CpuId>>);            // not random access
static_assert(!CpuRange<std::set<CpuId>>);
struct NotACpu {};
static_assert(!CpuRange<std::vector<NotACpu>>);         // elements not CpuIds
static_assert(!CpuRange<CpuId>);

// --- Topology ----------------------------------------------------------------
static_assert(Topology<UniformTopology>);
static_assert(Topology<TableTopology>);
static_assert(Topology<SysfsTopology>);

// A minimal user topology: one CPU.
struct OneCpu {
  std::uint32_t cpu_count() const { return 1; }
  std::uint32_t core_of(CpuId) const { return 0; }
  std::uint32_t llc_of(CpuId) const { return 0; }
  std::uint32_t node_of(CpuId) const { return 0; }
  std::uint32_t core_size(CpuId) const { return 1; }
  std::uint32_t llc_size(CpuId) const { return 1; }
  std::uint32_t node_size(CpuId) const { return 1; }
  std::array<CpuId, 1> core_cpus(CpuId) const { return {0}; }
  std::array<CpuId, 1> llc_cpus(CpuId) const { return {0}; }
  std::array<CpuId, 1> node_cpus(CpuId) const { return {0}; }
  std::uint32_t level_count(CpuId) const { return 0; }
  LevelKind level_kind(CpuId, std::uint32_t) const { return LevelKind::machine; }
  std::array<CpuId, 1> level_cpus(CpuId, std::uint32_t) const { return {0}; }
};
static_assert(Topology<OneCpu>);

struct ListRanges : OneCpu {  // llc_cpus is not random access
  std::list<CpuId> llc_cpus(CpuId) const { return {0}; }
};
struct IntKind : OneCpu {  // level_kind must be exactly LevelKind
  int level_kind(CpuId, std::uint32_t) const { return 0; }
};
struct NonConstCount : OneCpu {  // cpu_count() not callable on a const object
  std::uint32_t cpu_count() { return 1; }
};
struct NoLevels {  // lacks the level members entirely
  std::uint32_t cpu_count() const { return 1; }
};
static_assert(!Topology<ListRanges>);
static_assert(!Topology<IntKind>);
static_assert(!Topology<NonConstCount>);
static_assert(!Topology<NoLevels>);
static_assert(!Topology<int>);

// The presets are constant expressions with the seeds' sizes.
static_assert(presets::q6600_2008().llc_size(0) == 2);             // Smith 2008
static_assert(presets::westmere_12cpu_2013().llc_size(0) == 12);   // Wang 2013
static_assert(presets::sapphire_rapids_2x56x2().cpu_count() == 224);  // Chen 2023
static_assert(presets::eight_socket_80core().node_size(0) == 10);  // Low 2013
static_assert(presets::epyc_2x64x2().llc_size(255) == 16);

// --- Clock -------------------------------------------------------------------
static_assert(Clock<SteadyClock>);
static_assert(Clock<CoarseClock>);
static_assert(Clock<ManualClock>);
struct MillisClock {  // wrong unit
  std::chrono::milliseconds now() const { return {}; }
};
struct MutableClock {  // now() not const
  Nanoseconds now() { return {}; }
};
static_assert(!Clock<MillisClock>);
static_assert(!Clock<MutableClock>);
static_assert(!Clock<int>);

}  // namespace taskplace_static_topology
