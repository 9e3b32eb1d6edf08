// Fuzz target: the replay tool's decoder and replay (tools/replay).
// Every text either throws TraceError, or decodes to events that replay
// (or are refused with std::invalid_argument: a machine too large, CPUs
// beyond the count) to one record per sched_waking, each placed CPU valid,
// and a summary and reports that count no more agreements than
// comparisons. Text that starts as JSON goes to the runtime-trace reader
// and its replay under every policy set instead.
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
  const std::string text(reinterpret_cast<const char*>(data), size);
  if (starts_as_json(text)) {
    // A runtime's trace: refused with TraceError (or a machine the replay
    // cannot describe), or replayed under every set, each wake-up once.
    ChromeTraceInput c;
    try {
      c = read_chrome_trace(text);
    } catch (const TraceError&) {
      return 0;
    }
    FUZZ_CHECK(!c.wakes.empty());
    RuntimeResult rr;
    try {
      rr = run_runtime(c, Options{});
    } catch (const std::invalid_argument&) {
      return 0;
    }
    // SisCurrent and CacheHot only with the runtime's runs and sleeps.
    FUZZ_CHECK(rr.sets.size() == policy_sets().size() - (c.tasks.empty() ? 3 : 0));
    for (const SetResult& s : rr.sets) FUZZ_CHECK(s.wakeups == c.wakes.size() && s.same_cpu <= s.wakeups);
    std::ostringstream out;
    print_runtime_table(out, rr);
    return 0;
  }
  std::istringstream in(text);
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
    if (w.category == Category::placed || w.category == Category::tool) {
      FUZZ_CHECK(w.placement.cpu < r.cpus);
      FUZZ_CHECK(w.others.size() + 1 == perf_policy_sets().size());
      for (const taskplace::Placement& p : w.others) FUZZ_CHECK(p.cpu < r.cpus);
    }
  const Summary s = summarize(r);
  FUZZ_CHECK(s.agree <= s.compared);
  FUZZ_CHECK(s.affine_agree <= s.affine_compared);
  std::ostringstream out;
  print_table(out, r, s);
  print_csv(out, r);
  return 0;
}
