// ODR check: both units must agree on one definition of an inline variable
// from the headers, and the program must link and run.
#include <cstdint>
#include <cstdio>

const std::uint32_t* odr_unit_a() noexcept;
const std::uint32_t* odr_unit_b() noexcept;

int main() {
  const std::uint32_t* a = odr_unit_a();
  const std::uint32_t* b = odr_unit_b();
  if (a != b) {
    std::fputs("taskplace::max_levels has two addresses across translation units\n", stderr);
    return 1;
  }
  return 0;
}
