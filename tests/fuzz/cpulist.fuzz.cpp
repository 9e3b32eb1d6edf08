// Fuzz target: detail::parse_cpulist / format_cpulist.
// Every text either throws CpulistError or parses to an ascending, distinct
// list of CPUs <= cpulist_max_cpu whose printed form parses back to itself.
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "fuzz_support.hpp"
#include "taskplace/detail/cpulist.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace taskplace;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  std::vector<CpuId> cpus;
  try {
    cpus = detail::parse_cpulist(text);
  } catch (const detail::CpulistError&) {
    return 0;  // the defined outcome for bad text
  }
  for (std::size_t i = 0; i < cpus.size(); ++i) {
    FUZZ_CHECK(cpus[i] <= detail::cpulist_max_cpu);
    if (i > 0) FUZZ_CHECK(cpus[i - 1] < cpus[i]);
  }
  const std::string printed = detail::format_cpulist(cpus);
  std::vector<CpuId> again;
  try {
    again = detail::parse_cpulist(printed);
  } catch (const detail::CpulistError&) {
    fuzz::fail("format_cpulist printed a text parse_cpulist rejects", __FILE__, __LINE__);
  }
  FUZZ_CHECK(again == cpus);
  return 0;
}
