// Fuzz target: the replay tool's decoder and replay (tools/replay).
// Every text either throws TraceError, or decodes to events that replay
// (or are refused with std::invalid_argument: a machine too large, CPUs
// beyond the count) to one record per sched_waking, each placed CPU valid,
// and a summary and reports that count no more agreements than
// comparisons.
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <stdexcept>
#include <string>

#include "fuzz_support.hpp"
#include "perf_trace.hpp"
#include "replay.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace taskplace::replay;
  std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
  Trace t;
  try {
    t = read_trace(in);
  } catch (const TraceError&) {
    return 0;  // the defined outcome for bad text
  }
  FUZZ_CHECK(!t.events.empty());
  std::size_t wakings = 0;
  for (const Event& e : t.events) wakings += e.kind == EventKind::waking;
  Result r;
  try {
    r = run(t, Options{});
  } catch (const std::invalid_argument&) {
    return 0;
  }
  FUZZ_CHECK(r.wakeups.size() == wakings);
  for (const WakeRecord& w : r.wakeups)
    if (w.category == Category::placed || w.category == Category::tool) FUZZ_CHECK(w.placement.cpu < r.cpus);
  const Summary s = summarize(r);
  FUZZ_CHECK(s.agree <= s.compared);
  FUZZ_CHECK(s.affine_agree <= s.affine_compared);
  std::ostringstream out;
  print_table(out, r, s);
  print_csv(out, r);
  return 0;
}
