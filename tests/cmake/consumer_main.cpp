// Consumer proof, shared by the add_subdirectory, find_package and fetch_content
// projects: the umbrella header compiles and runs in a project that only links
// taskplace::taskplace and sets no standard of its own.
#include <taskplace/taskplace.hpp>

#include <chrono>

// cxx_std_20 reaches the consumer through the target, not through flags.
static_assert(__cplusplus >= 202002L, "taskplace::taskplace must carry cxx_std_20");
static_assert(taskplace::Topology<taskplace::UniformTopology>);

int main() {
  using namespace std::chrono_literals;
  // Two nodes of one 20-core, 2-thread LLC each: the Fleming 2017 box, 80 CPUs.
  const taskplace::UniformTopology box{2, 1, 20, 2};
  taskplace::ManualClock clock{taskplace::Nanoseconds{0}};
  clock.advance(500us);
  const bool ok = box.llc_size(0) == 40 && clock.now() == taskplace::Nanoseconds{500'000};
  return ok ? 0 : 1;
}
