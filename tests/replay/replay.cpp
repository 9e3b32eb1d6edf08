// Tests for tools/replay (taskplace-replay): the decoder of `perf script`
// text, the machine state and decisions it replays, and the stored traces
// of tests/data/traces, whose flips and wide verdicts are recounted here
// from the trace text alone and whose agreement with the kernel is held at
// the figures of tests/data/traces/agreement.txt.
#include <catch2/catch.hpp>

#include <cstdio>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "perf_trace.hpp"
#include "replay.hpp"

using namespace taskplace::replay;
using taskplace::AffineReason;
using taskplace::WakeReason;

namespace {

Trace read(const std::string& text) {
  std::istringstream in(text);
  return read_trace(in);
}

// A line as `perf script -F comm,pid,tid,cpu,time,event,trace` prints it.
std::string line(const std::string& comm, int tid, int cpu, const std::string& time, const std::string& event,
                 const std::string& fields) {
  char head[128];
  std::snprintf(head, sizeof head, "%16s %6d/%-6d [%03d] %s: %20s: ", comm.c_str(), tid, tid, cpu, time.c_str(),
                event.c_str());
  return head + fields + "\n";
}
std::string waking(const std::string& comm, int tid, int cpu, const std::string& t, const std::string& wakee, int pid,
                   int prio, int target) {
  return line(comm, tid, cpu, t, "sched:sched_waking",
              "comm=" + wakee + " pid=" + std::to_string(pid) + " prio=" + std::to_string(prio) +
                  " target_cpu=" + std::to_string(target));
}
std::string wakeup(const std::string& comm, int tid, int cpu, const std::string& t, const std::string& wakee, int pid,
                   int target) {
  return line(comm, tid, cpu, t, "sched:sched_wakeup",
              "comm=" + wakee + " pid=" + std::to_string(pid) + " prio=120 target_cpu=" + std::to_string(target));
}
std::string sw(const std::string& comm, int tid, int cpu, const std::string& t, const std::string& state,
               const std::string& next, int next_pid) {
  return line(comm, tid, cpu, t, "sched:sched_switch",
              "prev_comm=" + comm + " prev_pid=" + std::to_string(tid) + " prev_prio=120 prev_state=" + state +
                  " ==> next_comm=" + next + " next_pid=" + std::to_string(next_pid) + " next_prio=120");
}

std::string error_of(const std::string& text) {
  try {
    (void)read(text);
  } catch (const TraceError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("the decoder reads each scheduler event's columns and fields", "[replay][decoder]") {
  const Trace t = read(
      "# nrcpus online : 4\n"
      "     Web Content  4242/4243  [002] 100.000001:       sched:sched_waking: comm=Web Worker pid=77 prio=120 "
      "target_cpu=001\n"
      "         swapper     0/0     [001] 100.000002:       sched:sched_wakeup: comm=Web Worker pid=77 prio=120 "
      "target_cpu=002\n"
      "            perf 10/10 [003] 100.000003: sched:sched_migrate_task: comm=x pid=5 prio=139 orig_cpu=3 "
      "dest_cpu=0\n"
      "            bash 20 [000] 100.000000004: sched:sched_process_fork: comm=bash pid=20 child_comm=bash "
      "child_pid=21\n"
      "         swapper     0/0     [001] 100.000005:       sched:sched_switch: prev_comm=swapper/1 prev_pid=0 "
      "prev_prio=120 prev_state=R ==> next_comm=Web Worker next_pid=77 next_prio=120\n");
  REQUIRE(t.events.size() == 5);
  CHECK(t.header.nr_cpus_online == 4);
  const Event& w = t.events[0];
  CHECK(w.kind == EventKind::waking);
  CHECK(w.line == 2);
  CHECK(w.comm == "Web Content");  // a comm with a space
  CHECK(w.tid == 4243);            // the tid, not the pid, is the running task
  CHECK(w.cpu == 2);
  CHECK(w.time_ns == 100'000'001'000);
  CHECK(w.task_comm == "Web Worker");
  CHECK(w.pid == 77);
  CHECK(w.prio == 120);
  CHECK(w.target_cpu == 1);
  CHECK(t.events[1].tid == 0);
  CHECK(t.events[1].target_cpu == 2);
  CHECK(t.events[2].kind == EventKind::migrate);
  CHECK(t.events[2].orig_cpu == 3);
  CHECK(t.events[2].target_cpu == 0);
  CHECK(t.events[2].prio == 139);
  const Event& f = t.events[3];  // perf's default columns (tid only) and a time in ns
  CHECK(f.kind == EventKind::fork);
  CHECK(f.tid == 20);
  CHECK(f.time_ns == 100'000'000'004);
  CHECK(f.prev_pid == 20);
  CHECK(f.pid == 21);
  const Event& s = t.events[4];
  CHECK(s.kind == EventKind::switch_to);
  CHECK(s.prev_comm == "swapper/1");
  CHECK(s.prev_pid == 0);
  CHECK(s.prev_state == "R");
  CHECK(s.prev_runnable());
  CHECK(s.task_comm == "Web Worker");
  CHECK(s.pid == 77);
}

TEST_CASE("the decoder skips what it does not know", "[replay][decoder]") {
  const Trace t = read(
      "# ========\n"
      "\n"
      "some text perf printed\n"
      "            perf 27754/27754 [000] 43605.803550: sched:sched_stat_runtime: comm=perf pid=27754 "
      "runtime=40277 [ns]\n"
      "            perf 27754/27754 [000] 43605.803556: irq:irq_handler_entry: irq=24 name=nvme\n" +
      waking("perf", 1, 0, "43605.803560", "a", 2, 120, 0));
  CHECK(t.events.size() == 1);
  CHECK(t.lines == 6);
  CHECK(t.skipped_lines == 5);
}

TEST_CASE("malformed lines of the scheduler events are errors naming the line", "[replay][decoder]") {
  const std::string good = waking("perf", 1, 0, "1.000001", "a", 2, 120, 0);
  CHECK(error_of(good + "            perf 1/1 [000] 1.000002: sched:sched_switch: prev_comm=perf prev_pid=1 "
                        "prev_prio=120 prev_state=S ==> next_comm=a\n") ==
        "line 2: sched_switch: field next_pid is missing");
  CHECK(error_of(good + "            perf 1/1 [000] 1.000002: sched:sched_waking: comm=a pid=x2 prio=120 "
                        "target_cpu=0\n") == "line 2: sched_waking: field pid is not a number ('x2')");
  CHECK(error_of("perf sched:sched_wakeup: comm=a pid=2 prio=120 target_cpu=0\n") ==
        "line 1: sched_wakeup without perf's columns (expected 'comm pid/tid [cpu] seconds.fraction: event: "
        "fields')");
  CHECK(error_of("            perf x/y [000] 1.000002: sched:sched_waking: comm=a pid=2 prio=120 target_cpu=0\n") ==
        "line 1: sched_waking: the pid/tid column is not a number ('x/y')");
  CHECK(error_of("            perf 1/1 [000] 1.0000000001: sched:sched_waking: comm=a pid=2 prio=120 "
                 "target_cpu=0\n") == "line 1: sched_waking: bad timestamp '1.0000000001'");
  CHECK(error_of("").rfind("no scheduler events in 0 lines", 0) == 0);
  CHECK(error_of("# only a header\nfree text\n").rfind("no scheduler events in 2 lines", 0) == 0);
}

TEST_CASE("the replay decides on the machine the switch events leave", "[replay][machine]") {
  // Four CPUs, one LLC. CPU 0 runs A (10), CPU 1 runs B (11); CPUs 2 and 3
  // go idle; C (12) last ran on CPU 2, D (13) on CPU 1.
  std::string text = sw("C", 12, 2, "5.000000", "S", "swapper/2", 0) +  // C sleeps, CPU 2 idle
                     sw("D", 13, 1, "5.000001", "S", "B", 11) +          // D sleeps, CPU 1 runs B
                     sw("E", 14, 3, "5.000002", "S", "swapper/3", 0) +  // CPU 3 idle
                     sw("F", 15, 0, "5.000003", "S", "A", 10) +          // CPU 0 runs A
                     // 1. A wakes C: the waking CPU is busy, prev (2) idle:
                     // wake_affine_idle() keeps prev, and select_idle_sibling()
                     // takes the idle target.
                     waking("A", 10, 0, "5.000010", "C", 12, 120, 2) + wakeup("A", 10, 0, "5.000011", "C", 12, 2) +
                     sw("swapper/2", 0, 2, "5.000012", "R", "C", 12) +
                     // 2. A wakes D: waking (0) and prev (1) busy; whichever
                     // the load test picks, the LLC scan from it finds CPU 3,
                     // the only idle CPU (select_idle_cpu()).
                     waking("A", 10, 0, "5.000020", "D", 13, 120, 1) + wakeup("A", 10, 0, "5.000021", "D", 13, 3) +
                     // 3. B is preempted (still queued) and woken: the kernel's
                     // ttwu_runnable(), no placement.
                     sw("B", 11, 1, "5.000030", "R+", "G", 16) + waking("A", 10, 0, "5.000031", "B", 11, 120, 1) +
                     // 4. An RT wakee and a per-CPU kernel thread: no fair placement.
                     waking("A", 10, 0, "5.000040", "irq/24-nvme", 30, 49, 0) +
                     waking("A", 10, 0, "5.000041", "ksoftirqd/1", 31, 120, 1);
  Options o;
  o.cpus = 4;
  o.sync = SyncMode::never;
  const Result r = run(read(text), o);
  REQUIRE(r.wakeups.size() == 5);
  const WakeRecord& c = r.wakeups[0];
  CHECK(c.category == Category::placed);
  CHECK(c.waker_tid == 10);
  CHECK(c.prev_cpu == 2);
  CHECK(c.placement.affine == AffineReason::prev_idle);
  CHECK(c.placement.reason == WakeReason::idle_target);
  CHECK(c.placement.cpu == 2);
  CHECK(c.kernel_cpu == 2);
  const WakeRecord& d = r.wakeups[1];
  CHECK(d.category == Category::placed);
  CHECK(d.placement.reason == WakeReason::idle_scan);
  CHECK(d.placement.cpu == 3);
  CHECK(d.kernel_cpu == 3);
  CHECK(r.wakeups[2].category == Category::queued);
  CHECK(r.wakeups[3].category == Category::not_fair);
  CHECK(r.wakeups[4].category == Category::pinned);
  const Summary s = summarize(r);
  CHECK(s.compared == 2);
  CHECK(s.agree == 2);
  CHECK(s.by_category[static_cast<int>(Category::queued)] == 1);
}

TEST_CASE("the replay infers sync, finds perf, and copies flips at fork", "[replay][machine]") {
  std::string text =
      // perf (1) forks the workload (2), which becomes perf-exec.
      line("perf", 1, 0, "7.000000", "sched:sched_process_fork", "comm=perf pid=1 child_comm=perf child_pid=2") +
      waking("perf", 1, 0, "7.000001", "perf-exec", 2, 120, 1) +
      // W (3) wakes X (4) and Y (5): two flips; then forks Z (6).
      sw("swapper/1", 0, 1, "7.000002", "R", "W", 3) + waking("W", 3, 1, "7.000003", "X", 4, 120, 0) +
      waking("W", 3, 1, "7.000004", "Y", 5, 120, 0) +
      line("W", 3, 1, "7.000005", "sched:sched_process_fork", "comm=W pid=3 child_comm=Z child_pid=6") +
      // Z wakes X at once and sleeps 10 us later: sync, and Z's count goes on
      // from W's 2 (Y was W's last wakee, X is new: 3).
      waking("Z", 6, 1, "7.000010", "X", 4, 120, 0) + sw("Z", 6, 1, "7.000020", "S", "swapper/1", 0);
  Options o;
  o.cpus = 2;
  const Result r = run(read(text), o);
  REQUIRE(r.wakeups.size() == 4);
  CHECK(r.tool_pid == 1);
  CHECK(r.wakeups[0].category == Category::tool);
  CHECK(r.wakeups[2].waker_flips == 2);
  CHECK_FALSE(r.wakeups[2].sync);
  CHECK(r.wakeups[3].waker_tid == 6);
  CHECK(r.wakeups[3].sync);
  CHECK(r.wakeups[3].waker_flips == 3);
  o.inherit_at_fork = false;
  o.sync = SyncMode::never;
  const Result fresh = run(read(text), o);
  CHECK(fresh.wakeups[3].waker_flips == 1);
  CHECK_FALSE(fresh.wakeups[3].sync);
}

#ifdef TASKPLACE_XZ
namespace {

std::string decompress(const std::string& path) {
  const std::string cmd = std::string(TASKPLACE_XZ) + " -dc '" + path + "'";
  FILE* p = popen(cmd.c_str(), "r");
  REQUIRE(p != nullptr);
  std::string out;
  char buf[1 << 16];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
  REQUIRE(pclose(p) == 0);
  return out;
}

struct Minimum {
  std::string trace;
  std::size_t compared, min_agree, affine_compared, min_affine_agree;
};

std::vector<Minimum> minima() {
  std::ifstream in(std::string(TASKPLACE_TEST_DATA) + "/traces/agreement.txt");
  REQUIRE(in);
  std::vector<Minimum> out;
  for (std::string l; std::getline(in, l);) {
    if (l.empty() || l[0] == '#') continue;
    std::istringstream s(l);
    Minimum m;
    REQUIRE(s >> m.trace >> m.compared >> m.min_agree >> m.affine_compared >> m.min_affine_agree);
    out.push_back(m);
  }
  return out;
}

// The kernel's record_wakee(), written out again from its definition
// (kernel/sched/fair.c): once a second the count halves, then waking a
// task other than the last one counts one flip. A forked child starts with
// a copy of its parent's fields.
struct Flips {
  std::int64_t last = -1;
  std::uint32_t count = 0;
  std::int64_t stamp = 0;
};

}  // namespace

TEST_CASE("the stored traces: flips and wide verdicts recounted from the text, agreement held",
          "[replay][traces]") {
  const std::regex waking_re(
      R"(^\s*(.*\S)\s+(\d+)/(\d+)\s+\[(\d+)\]\s+(\d+)\.(\d+):\s+sched:sched_waking:\s+comm=(.*) pid=(\d+) prio=(-?\d+) target_cpu=(\d+)\s*$)");
  const std::regex fork_re(R"(sched:sched_process_fork:\s+comm=.* pid=(\d+) child_comm=.* child_pid=(\d+))");
  const std::regex pinned_re(R"(^[^/]+/[0-9])");
  const auto all = minima();
  REQUIRE(all.size() >= 2);
  for (const Minimum& m : all) {
    INFO(m.trace);
    const std::string text = decompress(std::string(TASKPLACE_TEST_DATA) + "/traces/" + m.trace);
    const Result r = run(read(text), Options{});
    const std::uint32_t factor = r.cpus;  // one LLC of every CPU: the wide rule's factor

    std::map<std::int64_t, Flips> flips;
    std::istringstream lines(text);
    std::size_t n = 0, next = 0, checked = 0, wide = 0, mismatches = 0;
    for (std::string l; std::getline(lines, l);) {
      ++n;
      std::smatch g;
      if (l.find("sched:sched_process_fork:") != std::string::npos && std::regex_search(l, g, fork_re)) {
        flips[std::stoll(g[2])] = flips[std::stoll(g[1])];
        continue;
      }
      if (l.find("sched:sched_waking:") == std::string::npos) continue;
      REQUIRE(std::regex_match(l, g, waking_re));
      REQUIRE(next < r.wakeups.size());
      const WakeRecord& w = r.wakeups[next++];
      const std::int64_t waker = std::stoll(g[3]), wakee = std::stoll(g[8]), cpu = std::stoll(g[4]);
      const int prio = std::stoi(g[9]);
      const std::string frac = g[6];
      const std::int64_t t = std::stoll(g[5]) * 1'000'000'000 + std::stoll(frac + std::string(9 - frac.size(), '0'));
      REQUIRE(w.line == n);
      REQUIRE(w.waker_tid == waker);
      REQUIRE(w.wakee_tid == wakee);
      REQUIRE(w.waking_cpu == cpu);
      REQUIRE(w.prev_cpu == std::stoul(g[10]));
      if (prio < 100 || prio > 139) {
        REQUIRE(w.category == Category::not_fair);
        continue;
      }
      if (std::regex_search(std::string(g[7]), pinned_re)) {
        REQUIRE(w.category == Category::pinned);
        continue;
      }
      if (w.category != Category::placed && w.category != Category::tool) continue;  // queued: no record_wakee
      Flips& f = flips[waker == 0 ? -1 - cpu : waker];
      if (t > f.stamp && t - f.stamp > 1'000'000'000) {
        f.count /= 2;
        f.stamp = t;
      }
      if (f.last != wakee) {
        f.last = wakee;
        ++f.count;
      }
      const std::uint32_t e = flips[wakee].count;
      const std::uint32_t lo = std::min(f.count, e), hi = std::max(f.count, e);
      const bool expect_wide = lo >= factor && hi >= std::uint64_t{factor} * lo;  // kernel wake_wide()
      mismatches += w.waker_flips != f.count || w.wakee_flips != e || w.placement.wide != expect_wide;
      wide += expect_wide;
      ++checked;
    }
    CHECK(next == r.wakeups.size());
    CHECK(mismatches == 0);
    CHECK(checked > 0);
    CHECK(wide > 0);        // the verdicts checked include both answers
    CHECK(wide < checked);

    const Summary s = summarize(r);
    CHECK(s.compared == m.compared);
    CHECK(s.agree >= m.min_agree);
    CHECK(s.affine_compared == m.affine_compared);
    CHECK(s.affine_agree >= m.min_affine_agree);

    // The multi-set table: the kernel's row, then each set over the same
    // compared wake-ups; Current's row is the agreement above, and the
    // rows of AlwaysAffine and PrevCpu follow from their rules alone (the
    // waking CPU, the previous CPU: the kernel's choice counted where it
    // is that CPU).
    REQUIRE(s.sets.size() == perf_policy_sets().size() + 1);
    std::size_t on_waking = 0, on_prev = 0, pulls = 0;
    for (const WakeRecord& w : r.wakeups) {
      if (w.category != Category::placed || w.kernel_cpu == taskplace::no_cpu) continue;
      REQUIRE(w.others.size() == perf_policy_sets().size() - 1);
      on_waking += w.kernel_cpu == w.waking_cpu;
      on_prev += w.kernel_cpu == w.prev_cpu;
      pulls += w.waking_cpu != w.prev_cpu;
    }
    for (const SetResult& x : s.sets) CHECK(x.wakeups == s.compared);
    CHECK(s.sets[0].same_cpu == s.compared);
    CHECK(s.sets[1].name == "traits::Current");
    CHECK(s.sets[1].same_cpu == s.agree);
    CHECK(s.sets[1].wide == s.wide);
    CHECK(s.sets[4].name == "traits::AlwaysAffine");
    CHECK(s.sets[4].same_cpu == on_waking);
    CHECK(s.sets[4].affine == pulls);
    CHECK(s.sets[5].name == "traits::PrevCpu");
    CHECK(s.sets[5].same_cpu == on_prev);
    CHECK(s.sets[5].affine == 0);
  }
}
#endif
