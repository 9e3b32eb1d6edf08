// tools/replay/main.cpp: taskplace-replay, the command line (usage in
// docs/replay.md).
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>
#include <string>
#include <string_view>

#include "replay.hpp"

namespace {

constexpr const char* usage =
    "usage: taskplace-replay [options] [TRACE]\n"
    "  TRACE is the text of `perf script` on a `perf sched record` trace (stdin when\n"
    "  absent or '-'), e.g. perf script --header -F comm,pid,tid,cpu,time,event,trace;\n"
    "  or a runtime's Chrome trace JSON (taskplace::kit::ChromeTrace; its first character\n"
    "  other than white space is '{'), replayed under several policy sets\n"
    "options:\n"
    "  --cpus N              the machine's CPU count (default: the header's, else the highest CPU + 1)\n"
    "  --llc-size N          CPUs per last-level cache (default: all)\n"
    "  --threads-per-core N  SMT siblings per core, numbered next to each other (default 1)\n"
    "  --sysfs ROOT          the topology from a sysfs tree instead (/sys/devices/system: this machine)\n"
    "  --sync never|always|infer   the WF_SYNC hint (default infer: the waker sleeps next)\n"
    "  --sync-window-us N    how soon the waker must sleep for infer (default 100)\n"
    "  --tool-pid PID        the recording perf process (default: found; 0: none)\n"
    "  --no-fork-inherit     forked tasks start with no flips\n"
    "  --initial-flips N     the flips of tasks alive before the trace began (default 0)\n"
    "  --nice-weights        weigh tasks by nice (default: 1024 each, as under autogroup)\n"
    "  --csv                 one CSV line per sched_waking instead of the table (perf traces)\n"
    "  --busy-window-us N    a runtime's trace: a CPU stays busy this long after a task ran or\n"
    "                        was placed there (default 50)\n";

[[noreturn]] void die(const std::string& msg) {
  std::cerr << "taskplace-replay: " << msg << "\n";
  std::exit(2);
}

std::uint32_t number(std::string_view opt, const char* v) {
  char* end = nullptr;
  const unsigned long n = std::strtoul(v, &end, 10);
  if (end == v || *end != '\0' || n > 0xffffffffUL) die(std::string(opt) + " needs a number, not '" + v + "'");
  return static_cast<std::uint32_t>(n);
}

}  // namespace

int main(int argc, char** argv) {
  using namespace taskplace::replay;
  Options o;
  bool csv = false;
  std::string path = "-";
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    auto value = [&]() -> const char* {
      if (i + 1 >= argc) die(std::string(a) + " needs a value");
      return argv[++i];
    };
    if (a == "--help" || a == "-h") {
      std::cout << usage;
      return 0;
    } else if (a == "--cpus") o.cpus = number(a, value());
    else if (a == "--llc-size") o.llc_size = number(a, value());
    else if (a == "--threads-per-core") o.threads_per_core = number(a, value());
    else if (a == "--sysfs") o.sysfs = value();
    else if (a == "--sync-window-us") o.sync_window_ns = std::int64_t{number(a, value())} * 1000;
    else if (a == "--tool-pid") o.tool_pid = static_cast<std::int32_t>(number(a, value()));
    else if (a == "--no-fork-inherit") o.inherit_at_fork = false;
    else if (a == "--initial-flips") o.initial_flips = number(a, value());
    else if (a == "--nice-weights") o.nice_weights = true;
    else if (a == "--csv") csv = true;
    else if (a == "--busy-window-us") o.busy_window_ns = std::int64_t{number(a, value())} * 1000;
    else if (a == "--sync") {
      const std::string_view v = value();
      if (v == "never") o.sync = SyncMode::never;
      else if (v == "always") o.sync = SyncMode::always;
      else if (v == "infer") o.sync = SyncMode::infer;
      else die("--sync takes never, always or infer");
    } else if (!a.empty() && a[0] == '-' && a != "-") die("unknown option " + std::string(a) + "\n" + usage);
    else path = std::string(a);
  }
  try {
    // The whole input, to tell the two formats apart by its first
    // character other than white space.
    std::string text;
    if (path == "-") {
      text.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
    } else {
      std::ifstream in(path, std::ios::binary);
      if (!in) die("cannot open " + path);
      text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    }
    if (starts_as_json(text)) {
      if (csv) die("--csv is for perf traces; a runtime's trace prints its table");
      print_runtime_table(std::cout, run_runtime(read_chrome_trace(text), o));
      return 0;
    }
    std::istringstream in(std::move(text));
    const Trace trace = read_trace(in);
    const Result r = run(trace, o);
    if (csv) print_csv(std::cout, r);
    else print_table(std::cout, r, summarize(r));
  } catch (const TraceError& e) {
    die(path + ": " + e.what());
  } catch (const std::exception& e) {
    die(e.what());
  }
  return 0;
}
