// taskplace/topology/hwloc.hpp: a topology from hwloc (Portable Hardware
// Locality), for systems where sysfs is not the source of truth or where
// hwloc is already in use; also loads hwloc's synthetic descriptions.
//
// Kernel analogue: the same masks as SysfsTopology (hwloc reads them on
// Linux). Needs hwloc >= 2.0: link taskplace::hwloc, which CMake defines
// when pkg-config finds hwloc. Not included by taskplace.hpp.
//
//   taskplace::HwlocTopology t;                                     // this machine
//   auto s = taskplace::HwlocTopology::synthetic("pack:2 l3:1 core:4 pu:2");
#pragma once

#include "taskplace/detail/config.hpp"

#include <hwloc.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "taskplace/concepts.hpp"
#include "taskplace/topology/table.hpp"
#include "taskplace/types.hpp"

#if HWLOC_API_VERSION < 0x00020000
#error "taskplace/topology/hwloc.hpp needs hwloc 2.0 or newer"
#endif

namespace taskplace {

// The PUs hwloc reports as allowed (by default: the process's cpuset),
// densely numbered in ascending OS order, as SysfsTopology numbers them.
//   core: the PU's Core ancestor (none: the PU alone);
//   LLC:  the largest data or unified cache above the PU (none: its
//         package, then the whole machine);
//   node: the NUMA node whose cpuset holds the PU (none: one node);
//         with LlcView::scheduler (the default) an LLC spanning nodes
//         (Intel SNC) is cut at the node boundaries, as the kernel does;
//   cluster: the largest data or unified cache below the LLC, where one
//         such cache holds more than one core (an L2 shared by four
//         E-cores); else there are no clusters.
// Invariant: built from a TableTopology, so I1-I8 hold.
// The topology is a TableTopology (every Topology member, os_cpu and
// from_os_cpu come from it); this class only knows how to read one.
class HwlocTopology : public TableTopology {
 public:

  // Effects: discovers this machine with hwloc.
  // Throws: TopologyError if hwloc fails or reports no PU.
  explicit HwlocTopology(LlcView view = LlcView::scheduler) : TableTopology(load(nullptr, view)) {}

  // Effects: reads an already loaded hwloc topology (not owned, not kept).
  explicit HwlocTopology(hwloc_topology_t topo, LlcView view = LlcView::scheduler)
      : TableTopology(build(topo, view)) {}

  // Returns: the topology of an hwloc synthetic description, e.g.
  //   "pack:2 l3:1 core:4 pu:2" or "numa:2 pack:1 l3:2 core:4 pu:2".
  // Throws: TopologyError naming the description when hwloc rejects it.
  static HwlocTopology synthetic(const std::string& description, LlcView view = LlcView::scheduler) {
    return HwlocTopology(load(&description, view));
  }

  // Returns: the table this topology is, for code that wants its counts.
  const TableTopology& table() const noexcept { return *this; }

 private:
  explicit HwlocTopology(TableTopology t) : TableTopology(std::move(t)) {}

  // Owns an hwloc topology for the duration of a load.
  struct Handle {
    hwloc_topology_t topo = nullptr;
    ~Handle() {
      if (topo) hwloc_topology_destroy(topo);
    }
  };

  static TableTopology load(const std::string* synthetic_description, LlcView view) {
    Handle h;
    if (hwloc_topology_init(&h.topo) != 0) {
      h.topo = nullptr;
      throw TopologyError("hwloc: hwloc_topology_init failed");
    }
    if (synthetic_description &&
        hwloc_topology_set_synthetic(h.topo, synthetic_description->c_str()) != 0)
      throw TopologyError("hwloc: bad synthetic description \"" + *synthetic_description + "\"");
    if (hwloc_topology_load(h.topo) != 0) throw TopologyError("hwloc: hwloc_topology_load failed");
    return build(h.topo, view);
  }

  // A label per object: hwloc's global persistent index, unique in a
  // topology; kinds never share labels with each other's arrays.
  static std::uint32_t label_of(hwloc_obj_t o) { return static_cast<std::uint32_t>(o->gp_index); }

  static TableTopology build(hwloc_topology_t topo, LlcView view) {
    const int npu = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU);
    if (npu <= 0) throw TopologyError("hwloc: the topology has no PU");
    std::vector<hwloc_obj_t> pus;
    for (int i = 0; i < npu; ++i) pus.push_back(hwloc_get_obj_by_type(topo, HWLOC_OBJ_PU, static_cast<unsigned>(i)));
    std::sort(pus.begin(), pus.end(), [](hwloc_obj_t a, hwloc_obj_t b) { return a->os_index < b->os_index; });

    const int nnuma = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_NUMANODE);
    std::vector<std::uint32_t> core, cluster, llc, node;
    std::vector<CpuId> os;
    for (hwloc_obj_t pu : pus) {
      hwloc_obj_t c = hwloc_get_ancestor_obj_by_type(topo, HWLOC_OBJ_CORE, pu);
      core.push_back(label_of(c ? c : pu));

      // The largest cache holding data: the data/unified cache ancestor
      // nearest the root (instruction caches never count).
      hwloc_obj_t cache = nullptr;
      for (hwloc_obj_t a = pu->parent; a; a = a->parent)
        if (hwloc_obj_type_is_dcache(a->type)) cache = a;
      if (!cache) cache = hwloc_get_ancestor_obj_by_type(topo, HWLOC_OBJ_PACKAGE, pu);
      if (!cache) cache = hwloc_get_root_obj(topo);
      llc.push_back(label_of(cache));
      // The cluster: the largest data cache strictly below the LLC, else
      // the core; a private one (a core's own L2) makes every core its own
      // cluster, which is no cluster (TableTopology::has_clusters).
      hwloc_obj_t mid = nullptr;
      for (hwloc_obj_t a = pu->parent; a && a != cache; a = a->parent)
        if (hwloc_obj_type_is_dcache(a->type)) mid = a;
      cluster.push_back(mid ? label_of(mid) : core.back());

      std::uint32_t n = 0;
      for (int i = 0; i < nnuma; ++i) {
        hwloc_obj_t numa = hwloc_get_obj_by_type(topo, HWLOC_OBJ_NUMANODE, static_cast<unsigned>(i));
        if (numa->cpuset && hwloc_bitmap_isset(numa->cpuset, pu->os_index)) {
          n = label_of(numa);
          break;
        }
      }
      node.push_back(n);
      os.push_back(static_cast<CpuId>(pu->os_index));
    }
    if (view == LlcView::scheduler) llc = detail::split_llc_at_nodes(llc, node);
    try {
      return TableTopology::with_clusters(std::move(core), std::move(cluster), std::move(llc), std::move(node),
                                          std::move(os));
    } catch (const TopologyError& e) {
      throw TopologyError(std::string("hwloc (dense cpu numbers): ") + e.what());
    }
  }

};

static_assert(Topology<HwlocTopology>);

}  // namespace taskplace
