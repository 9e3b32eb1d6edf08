// taskplace_sim/machine_spec.hpp: the simulated machine as a user names it
// on the command line: a preset, a shape (sockets x LLCs x cores x
// threads, SMT numbering, Sub-NUMA Clustering, LLC size) or a sysfs tree.
//
// Kernel analogue: what the scheduler sees (the sched-domain topology,
// with x86's split of the LLC at SNC node boundaries, match_llc() since
// v4.19) beside what the hardware is (the L3 the cores really share, the
// memory node a CPU's memory is on, the L3's size): the cost model reads
// the hardware, the placer and the balancers the scheduler's view.
//
//   taskplace_sim::MachineSpec m = taskplace_sim::parse_machine("2x1x56x2,snc2,llc=105M");
//   m.topology.llc_size(0);   // 56: the scheduler's LLC, one SNC node
//   m.hw.l3[0] == m.hw.l3[56] // true: the L3 they really share
#pragma once

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "taskplace/topology/sysfs.hpp"
#include "taskplace/topology/table.hpp"
#include "taskplace/types.hpp"

namespace taskplace_sim {

using taskplace::CpuId;

// A bad --machine value: the message names the value and what is wrong.
class MachineError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// The hardware the cost model reads. l3[c]: the last-level cache CPU c
// really shares (labels; equal label, same cache); mem_node[c]: its memory
// node; llc_bytes: the size of each such cache (0: unlimited, no capacity
// cost). Empty vectors: the topology's own LLC and node ids.
struct Hardware {
  std::vector<std::uint32_t> l3, mem_node;
  std::uint64_t llc_bytes = 0;
};

struct MachineSpec {
  std::string name;         // the preset's name, or the text it was parsed from
  std::string description;  // one line: what the machine is, and its source
  taskplace::TableTopology topology;
  Hardware hw;
};

namespace detail {

struct Shape {
  std::uint32_t sockets = 1, llcs = 1, cores = 1, threads = 1, snc = 1;
  bool smt_last = true;
  std::uint64_t llc_bytes = 32ull << 20;
};

[[noreturn]] inline void machine_fail(const std::string& text, const std::string& why) {
  throw MachineError("--machine '" + text + "': " + why);
}

inline std::uint64_t parse_count(const std::string& text, const std::string& part, const char* what) {
  if (part.empty() || part.size() > 9 || part.find_first_not_of("0123456789") != std::string::npos)
    machine_fail(text, std::string(what) + " must be a number from 1 to 999999999, got '" + part + "'");
  const std::uint64_t v = std::stoull(part);
  if (v == 0) machine_fail(text, std::string(what) + " must be >= 1, got 0");
  return v;
}

// "32M", "1536K", "105M", "2G", or bytes.
inline std::uint64_t parse_bytes(const std::string& text, const std::string& v) {
  if (v.empty()) machine_fail(text, "llc= needs a size such as 32M");
  std::string digits = v;
  std::uint64_t mult = 1;
  const char last = v.back();
  if (last == 'K' || last == 'k') mult = 1ull << 10;
  if (last == 'M' || last == 'm') mult = 1ull << 20;
  if (last == 'G' || last == 'g') mult = 1ull << 30;
  if (mult != 1) digits.pop_back();
  return parse_count(text, digits, "the LLC size") * mult;
}

// Effects: builds the machine of shape `s`: the scheduler's topology (LLCs
// split at SNC node boundaries, as the kernel splits them) and the hardware.
inline MachineSpec build_shape(const std::string& name, const std::string& description, const Shape& s) {
  const std::uint64_t cores_total = std::uint64_t{s.sockets} * s.llcs * s.cores;
  const std::uint64_t n = cores_total * s.threads;
  if (n > 65536) machine_fail(name, "at most 65536 CPUs, the shape gives " + std::to_string(n));
  const std::uint32_t cores_per_socket = s.llcs * s.cores;
  if (cores_per_socket % s.snc != 0)
    machine_fail(name, "snc" + std::to_string(s.snc) + " must divide the " + std::to_string(cores_per_socket) +
                           " cores of a socket");
  const std::uint32_t node_cores = cores_per_socket / s.snc;
  // An SNC node holds whole LLCs, or an LLC holds whole SNC nodes.
  if (s.llcs > 1 && s.snc > 1 && node_cores % s.cores != 0 && s.cores % node_cores != 0)
    machine_fail(name, "snc" + std::to_string(s.snc) + " would cut an LLC of " + std::to_string(s.cores) +
                           " cores into pieces of different nodes");
  std::vector<std::uint32_t> core(n), llc(n), node(n), l3(n), mem(n);
  for (std::uint64_t c = 0; c < n; ++c) {
    const std::uint64_t g = s.smt_last ? c % cores_total : c / s.threads;  // global core
    const auto hw_l3 = static_cast<std::uint32_t>(g / s.cores);
    const auto hw_node = static_cast<std::uint32_t>(g / node_cores);
    core[c] = static_cast<std::uint32_t>(g);
    l3[c] = hw_l3;
    mem[c] = hw_node;
    node[c] = hw_node;
    // The kernel's LLC: the L3, cut at node boundaries.
    llc[c] = static_cast<std::uint32_t>(g / std::min(s.cores, node_cores));
  }
  MachineSpec m{name, description, taskplace::TableTopology(core, llc, node), {}};
  m.hw.l3 = std::move(l3);
  m.hw.mem_node = std::move(mem);
  m.hw.llc_bytes = s.llc_bytes;
  return m;
}

}  // namespace detail

// A named machine: the seeds' boxes and a few others.
struct MachinePreset {
  const char* name;
  const char* shape;  // what parse_machine() reads
  const char* description;
};

inline const std::vector<MachinePreset>& machine_presets() {
  static const std::vector<MachinePreset> p{
      {"wang2013", "2x1x6x1,llc=12M",
       "Wang 2013's \"12 cpu X86 server\": 2 sockets x 6 cores (Westmere-EP class, 12 MB L3 each, no SMT); "
       "patch 2/2 swapped the node size for the LLC size with the same results, so node = LLC = 6 CPUs"},
      {"smith2008", "1x2x2x1,llc=4M",
       "Smith 2008's Intel Core 2 Quad Q6600: two dual-core dies, each with a 4 MB L2 (the LLC)"},
      {"low2013", "8x1x10x2,llc=30M",
       "Low 2013's \"8 socket (80 core)\" box with Hyper-Threading on (Westmere-EX class, 30 MB L3 per socket)"},
      {"fleming2017", "2x1x20x2,llc=50M",
       "Fleming 2017's \"80-cpu 2 NUMA node box\": 2 x 20 cores x 2 threads (Broadwell-EP class, 50 MB L3)"},
      {"chen2023", "2x1x56x2,llc=105M",
       "Chen 2023's Sapphire Rapids, \"112 CPUs/socket, 2 sockets\" (105 MB L3 per socket, SNC off)"},
      {"chen2023-snc2", "2x1x56x2,snc2,llc=105M",
       "the same Sapphire Rapids with Sub-NUMA Clustering in two nodes per socket"},
      {"epyc", "2x8x8x2,llc=32M", "AMD EPYC (Zen 3 class): 2 sockets x 8 CCDs x 8 cores x 2 threads, 32 MB L3 per CCD"},
      // The user-space comparison's machines (scenarios_userspace.hpp): SMT,
      // several LLCs, two nodes, at three sizes.
      {"rt16", "2x2x2x2,llc=8M", "16 CPUs: 2 nodes x 2 LLCs x 2 cores x 2 threads (8 MB L3 each)"},
      {"rt64", "2x2x8x2,llc=32M", "64 CPUs: 2 nodes x 2 LLCs x 8 cores x 2 threads (32 MB L3 each; a Zen 3 CCD class)"},
      {"rt256", "2x4x16x2,llc=32M", "256 CPUs: 2 nodes x 4 LLCs x 16 cores x 2 threads (32 MB L3 each)"},
      {"big4096", "8x4x64x2,llc=64M", "a 4096-CPU machine for speed checks: 8 sockets x 4 LLCs x 64 cores x 2 threads"},
  };
  return p;
}

// Returns: the machine `text` names:
//   a preset name (machine_presets());
//   a shape "SxLxCxT[,opt...]": S sockets (memory nodes), L LLCs per
//     socket, C cores per LLC, T threads per core; options smt_last (the
//     default: Linux on x86 numbers every core's first thread, then every
//     second one) or nested (siblings adjacent), sncN (Sub-NUMA Clustering:
//     N memory nodes per socket; the scheduler's LLC is cut at node
//     boundaries as the kernel cuts it, the cost model keeps the shared
//     L3), llc=SIZE (each L3's capacity, e.g. 32M; default 32M);
//   "sysfs:DIR" or an existing directory: a (fake) sysfs tree, DIR holding
//     cpu/ and node/ (taskplace::SysfsTopology, every online CPU); the LLC
//     size comes from cpu/cpu0/cache/index*/size of the highest level.
// Throws: MachineError naming the value and the problem.
inline MachineSpec parse_machine(const std::string& text) {
  for (const auto& p : machine_presets())
    if (text == p.name) {
      MachineSpec m = parse_machine(p.shape);
      m.name = p.name;
      m.description = p.description;
      return m;
    }
  namespace fs = std::filesystem;
  const bool sysfs = text.rfind("sysfs:", 0) == 0;
  if (text.empty()) detail::machine_fail(text, "empty; give a preset (--list), a shape such as 2x1x56x2, or sysfs:DIR");
  if (sysfs || (text.find('x') == std::string::npos && fs::is_directory(text))) {
    const fs::path dir = sysfs ? fs::path(text.substr(6)) : fs::path(text);
    if (!fs::is_directory(dir)) detail::machine_fail(text, "no such directory: " + dir.string());
    try {
      auto t = taskplace::SysfsTopology::all_online(dir);
      MachineSpec m{text, "sysfs tree " + dir.string(), t.table(), {}};
      m.hw.llc_bytes = 32ull << 20;
      // The highest data cache level's size, as cpu0 reports it.
      std::uint32_t best = 0;
      const fs::path cache = dir / "cpu" / "cpu0" / "cache";
      if (fs::is_directory(cache))
        for (const auto& e : fs::directory_iterator(cache)) {
          std::ifstream lv(e.path() / "level"), sz(e.path() / "size");
          std::uint32_t level = 0;
          std::string size;
          if (lv >> level && sz >> size && level > best) {
            best = level;
            m.hw.llc_bytes = detail::parse_bytes(text, size);
          }
        }
      return m;
    } catch (const MachineError&) {
      throw;
    } catch (const std::exception& e) {
      detail::machine_fail(text, e.what());
    }
  }
  detail::Shape s;
  std::string shape = text, opts;
  if (const auto comma = text.find(','); comma != std::string::npos) {
    shape = text.substr(0, comma);
    opts = text.substr(comma + 1);
  }
  std::vector<std::string> parts;
  for (std::size_t b = 0;;) {
    const auto x = shape.find('x', b);
    parts.push_back(shape.substr(b, x == std::string::npos ? std::string::npos : x - b));
    if (x == std::string::npos) break;
    b = x + 1;
  }
  if (parts.size() != 4)
    detail::machine_fail(text, "not a preset (see --list), and a shape has four numbers SOCKETSxLLCSxCORESxTHREADS, got " +
                                   std::to_string(parts.size()));
  s.sockets = static_cast<std::uint32_t>(detail::parse_count(text, parts[0], "sockets"));
  s.llcs = static_cast<std::uint32_t>(detail::parse_count(text, parts[1], "LLCs per socket"));
  s.cores = static_cast<std::uint32_t>(detail::parse_count(text, parts[2], "cores per LLC"));
  s.threads = static_cast<std::uint32_t>(detail::parse_count(text, parts[3], "threads per core"));
  for (std::size_t b = 0; !opts.empty() && b <= opts.size();) {
    const auto e = opts.find(',', b);
    const std::string o = opts.substr(b, e == std::string::npos ? std::string::npos : e - b);
    if (o == "smt_last") {
      s.smt_last = true;
    } else if (o == "nested") {
      s.smt_last = false;
    } else if (o.rfind("snc", 0) == 0) {
      s.snc = static_cast<std::uint32_t>(detail::parse_count(text, o.substr(3), "snc's node count"));
    } else if (o.rfind("llc=", 0) == 0) {
      s.llc_bytes = detail::parse_bytes(text, o.substr(4));
    } else {
      detail::machine_fail(text, "unknown option '" + o + "' (smt_last, nested, sncN, llc=SIZE)");
    }
    if (e == std::string::npos) break;
    b = e + 1;
  }
  return detail::build_shape(text, "shape " + text, s);
}

// Returns: every CPU in the order fork balancing fills an idle machine
// (the kernel's find_idlest_group / find_idlest_cpu: the idlest node, then
// its idlest core): one thread of each core first, nodes taking turns,
// then the second threads, and so on.
// Complexity: O(n log n).
inline std::vector<CpuId> spread_order(const MachineSpec& m) {
  const auto& t = m.topology;
  const CpuId n = t.cpu_count();
  struct Key {
    std::uint32_t thread, core_in_node, node;
    CpuId cpu;
  };
  std::vector<Key> keys;
  std::vector<std::uint32_t> core_rank(t.core_count(), ~0u), cores_seen(t.node_count(), 0);
  for (CpuId c = 0; c < n; ++c) {
    const std::uint32_t core = t.core_of(c), node = t.node_of(c);
    if (core_rank[core] == ~0u) core_rank[core] = cores_seen[node]++;
    std::uint32_t thread = 0;
    for (auto x : t.core_cpus(c)) {
      if (static_cast<CpuId>(x) == c) break;
      ++thread;
    }
    keys.push_back({thread, core_rank[core], node, c});
  }
  std::sort(keys.begin(), keys.end(), [](const Key& a, const Key& b) {
    if (a.thread != b.thread) return a.thread < b.thread;
    if (a.core_in_node != b.core_in_node) return a.core_in_node < b.core_in_node;
    return a.node < b.node;
  });
  std::vector<CpuId> out;
  for (const auto& k : keys) out.push_back(k.cpu);
  return out;
}

}  // namespace taskplace_sim
