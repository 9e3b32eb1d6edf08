// Consumer proof (hwloc): an installed taskplace's hwloc adapter compiles,
// links against hwloc and runs in a project that links taskplace::hwloc
// and asks for nothing else.
#include <taskplace/taskplace.hpp>
#include <taskplace/topology/hwloc.hpp>

static_assert(__cplusplus >= 202002L, "taskplace::hwloc must carry cxx_std_20");

int main() {
  // 2 packages x 1 L3 x 4 cores x 2 PUs: 16 CPUs, 8 per LLC.
  const auto t = taskplace::HwlocTopology::synthetic("pack:2 l3:1 core:4 pu:2");
  return t.cpu_count() == 16 && t.llc_size(0) == 8 ? 0 : 1;
}
