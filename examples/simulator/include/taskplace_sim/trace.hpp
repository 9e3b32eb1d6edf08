// taskplace_sim/trace.hpp: a Chrome / Perfetto trace-event JSON of a short
// window of a run: which task ran where (one track per CPU) and each
// wake-up with the placer's reasons.
//
// Open the file in https://ui.perfetto.dev or chrome://tracing.
//
//   taskplace_sim::Trace trace{Nanoseconds{100ms}, Nanoseconds{120ms}};
//   machine.set_trace(&trace); machine.run(...); trace.write(file);
#pragma once

#include <cstdint>
#include <cstdio>
#include <ostream>
#include <string>
#include <vector>

#include "taskplace/types.hpp"

namespace taskplace_sim {

using taskplace::CpuId;
using taskplace::Nanoseconds;

class Trace {
 public:
  Trace(Nanoseconds begin, Nanoseconds end) : begin_(begin), end_(end) {}

  bool in_window(Nanoseconds t) const noexcept { return t >= begin_ && t < end_; }

  // Effects: records that `task` ran on `cpu` over [from, to) (clipped).
  void slice(CpuId cpu, const std::string& task, Nanoseconds from, Nanoseconds to) {
    if (to <= begin_ || from >= end_ || to <= from) return;
    if (from < begin_) from = begin_;
    if (to > end_) to = end_;
    char buf[256];
    std::snprintf(buf, sizeof buf,
                  "{\"name\":\"%s\",\"ph\":\"X\",\"ts\":%.3f,\"dur\":%.3f,\"pid\":0,\"tid\":%u}",
                  task.c_str(), us(from), us(to - from), cpu);
    events_.emplace_back(buf);
  }

  // Effects: records a wake-up decision at `t`.
  void wake(Nanoseconds t, const std::string& wakee, CpuId from, CpuId to, const char* affine,
            const char* reason, bool wide, bool sync) {
    if (!in_window(t)) return;
    char buf[384];
    std::snprintf(buf, sizeof buf,
                  "{\"name\":\"wake %s\",\"ph\":\"i\",\"s\":\"t\",\"ts\":%.3f,\"pid\":0,\"tid\":%u,"
                  "\"args\":{\"from_cpu\":%u,\"affine\":\"%s\",\"reason\":\"%s\",\"wide\":%s,\"sync\":%s}}",
                  wakee.c_str(), us(t), to, from, affine, reason, wide ? "true" : "false",
                  sync ? "true" : "false");
    events_.emplace_back(buf);
  }

  // Effects: writes the JSON object; CPUs get named tracks.
  void write(std::ostream& os, CpuId cpus) const {
    os << "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n";
    bool first = true;
    for (CpuId c = 0; c < cpus; ++c) {
      os << (first ? "" : ",\n") << "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":0,\"tid\":" << c
         << ",\"args\":{\"name\":\"cpu " << c << "\"}}";
      first = false;
    }
    for (const auto& e : events_) os << ",\n" << e;
    os << "\n]}\n";
  }

  std::size_t size() const noexcept { return events_.size(); }

 private:
  static double us(Nanoseconds t) { return static_cast<double>(t.count()) / 1e3; }
  Nanoseconds begin_, end_;
  std::vector<std::string> events_;
};

}  // namespace taskplace_sim
