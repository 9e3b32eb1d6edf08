// Consumer proof (views): an installed taskplace's range-v3 adapter compiles
// and runs in a project that links taskplace::views and asks for nothing
// else (range-v3 reaches it through taskplace::views' dependency).
#include <taskplace/taskplace.hpp>
#include <taskplace/topology/views.hpp>

static_assert(__cplusplus >= 202002L, "taskplace::views must carry cxx_std_20");

int main() {
  // Two nodes of one 20-core, 2-thread LLC each: 80 CPUs, 40 per LLC.
  const taskplace::UniformTopology box{2, 1, 20, 2};
  const auto all = taskplace::views::cpus(box);
  const auto llc = taskplace::views::llc_cpus(box, 0);
  return ranges::size(all) == 80 && ranges::size(llc) == 40 ? 0 : 1;
}
