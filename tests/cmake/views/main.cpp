// Consumer proof (views): an installed taskplace's range-v3 adapter compiles
// in a project that links taskplace::views and asks for nothing else.
#include <taskplace/taskplace.hpp>
#include <taskplace/topology/views.hpp>

#include <range/v3/view/iota.hpp>

static_assert(__cplusplus >= 202002L, "taskplace::views must carry cxx_std_20");

int main() {
  // range-v3 reached the consumer through taskplace::views' dependency.
  int sum = 0;
  for (int i : ranges::views::iota(0, 4)) sum += i;
  return sum == 6 ? 0 : 1;
}
