// taskplace/topology/sysfs.hpp: the running machine's topology, read from
// Linux sysfs (or from a copy of it), restricted to the CPUs the process
// may run on.
//
// Kernel analogue: the masks the scheduler builds its domains from, as
// sysfs exports them (drivers/base/topology.c, cacheinfo.c, node.c): the
// SMT siblings, the cluster (the CLS domain's mask), the CPUs sharing the
// last-level cache (sd_llc), the NUMA node. Follows the layout of Linux
// 5.x/6.x (core_cpus_list since v5.4, thread_siblings_list before;
// cluster_cpus_list since v5.16).
//
//   taskplace::SysfsTopology t;                       // /sys, this process's affinity
//   taskplace::SysfsTopology fake{"tests/data/sysfs/vm2", {0, 1}};
#pragma once

#include "taskplace/detail/config.hpp"

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#if defined(__linux__)
#include <sched.h>
#endif
#if defined(__unix__) || defined(__APPLE__)
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#endif

#include "taskplace/concepts.hpp"
#include "taskplace/detail/cpulist.hpp"
#include "taskplace/topology/table.hpp"
#include "taskplace/types.hpp"

namespace taskplace {

namespace detail {

// The longest file SysfsTopology reads. The longest cpulist a kernel
// writes (NR_CPUS = 8192, every other CPU: "0,2,4,...") is about 20 KiB;
// a file past this bound is no sysfs file (a /dev/zero linked in), and
// reading it whole would exhaust memory.
inline constexpr std::size_t sysfs_max_file_bytes = std::size_t{1} << 20;

// What a path names, symbolic links followed.
enum class SysfsKind : std::uint8_t { absent, file, directory, other };

// Returns: the kind of `path` (absent when it, or a directory on the way,
// does not exist). Throws: SysfsError naming it when it cannot be
// resolved otherwise: a symbolic link loop ("Too many levels of symbolic
// links"), a permission denied.
inline SysfsKind sysfs_kind(const std::filesystem::path& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (ec && ec != std::errc::no_such_file_or_directory && ec != std::errc::not_a_directory)
    throw SysfsError(path.string(), "cannot be resolved: " + ec.message());
  switch (st.type()) {
    case fs::file_type::regular: return SysfsKind::file;
    case fs::file_type::directory: return SysfsKind::directory;
    case fs::file_type::not_found:
    case fs::file_type::none: return SysfsKind::absent;
    default: return SysfsKind::other;
  }
}

inline bool sysfs_exists(const std::filesystem::path& path) {
  return sysfs_kind(path) != SysfsKind::absent;
}

// Throws: SysfsError naming `path`, which is of kind k and should be a
// regular file.
[[noreturn]] inline void sysfs_not_a_file(const std::filesystem::path& path, SysfsKind k) {
  if (k == SysfsKind::absent) throw SysfsError(path.string(), "cannot open: no such file");
  if (k == SysfsKind::directory) throw SysfsError(path.string(), "is a directory, not a file");
  throw SysfsError(path.string(),
                   "is not a regular file (a FIFO, socket or device); only regular files are read");
}

// Returns: the whole file, at most sysfs_max_file_bytes. Only a regular
// file is opened (a FIFO, a device or a directory is refused before), and
// it is opened non-blocking, so that one swapped in after the check
// cannot block either. Throws: SysfsError naming the file when it is
// missing, not a regular file, longer than the bound, or cannot be read.
inline std::string sysfs_read(const std::filesystem::path& file) {
  const SysfsKind k = sysfs_kind(file);
  if (k != SysfsKind::file) sysfs_not_a_file(file, k);
  const std::string name = file.string();
  const auto too_long = [&] {
    return SysfsError(name, "longer than " + std::to_string(sysfs_max_file_bytes) +
                                " bytes (files are read up to that size)");
  };
  std::string out;
#if defined(__unix__) || defined(__APPLE__)
  const auto os_error = [&](const char* what) {
    return SysfsError(name, what + std::error_code(errno, std::generic_category()).message());
  };
  const int fd = ::open(name.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) throw os_error("cannot open: ");
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) throw os_error("cannot stat: ");
  if (!S_ISREG(st.st_mode))
    sysfs_not_a_file(file, S_ISDIR(st.st_mode) ? SysfsKind::directory : SysfsKind::other);
  char buf[4096];
  for (;;) {
    const ::ssize_t got = ::read(fd, buf, sizeof buf);
    if (got < 0) {
      if (errno == EINTR) continue;
      throw os_error("read error: ");
    }
    if (got == 0) break;
    if (out.size() + static_cast<std::size_t>(got) > sysfs_max_file_bytes) throw too_long();
    out.append(buf, static_cast<std::size_t>(got));
  }
#else
  std::ifstream in(file, std::ios::binary);
  if (!in) throw SysfsError(name, "cannot open");
  char buf[4096];
  while (in.read(buf, sizeof buf) || in.gcount() > 0) {
    if (out.size() + static_cast<std::size_t>(in.gcount()) > sysfs_max_file_bytes) throw too_long();
    out.append(buf, static_cast<std::size_t>(in.gcount()));
  }
  if (in.bad()) throw SysfsError(name, "read error");
#endif
  return out;
}

// Returns: the entries of `dir`, sorted. Throws: SysfsError naming the
// directory when it cannot be listed.
inline std::vector<std::filesystem::path> sysfs_list(const std::filesystem::path& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  std::vector<fs::path> out;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    out.push_back(it->path());
  if (ec) throw SysfsError(dir.string(), "cannot be listed: " + ec.message());
  std::sort(out.begin(), out.end());
  return out;
}

// Returns: the cpulist in `file`. Throws: SysfsError naming the file.
inline std::vector<CpuId> sysfs_cpulist(const std::filesystem::path& file) {
  const std::string text = sysfs_read(file);
  try {
    return parse_cpulist(text);
  } catch (const CpulistError& e) {
    throw SysfsError(file.string(), e.what());
  }
}

// Returns: the file's text without surrounding whitespace.
inline std::string sysfs_word(const std::filesystem::path& file) {
  const std::string text = sysfs_read(file);
  const auto b = text.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return {};
  return text.substr(b, text.find_last_not_of(" \t\r\n") - b + 1);
}

// Returns: the process's allowed OS CPUs (sched_getaffinity), ascending;
// nullopt off Linux or when the call fails (then nothing is restricted).
inline std::optional<std::vector<CpuId>> sysfs_affinity() {
#if defined(__linux__)
  for (std::size_t ncpu = 1024; ncpu <= (std::size_t{1} << 20); ncpu *= 2) {
    cpu_set_t* set = CPU_ALLOC(ncpu);
    if (set == nullptr) return std::nullopt;
    const std::size_t bytes = CPU_ALLOC_SIZE(ncpu);
    CPU_ZERO_S(bytes, set);
    if (::sched_getaffinity(0, bytes, set) == 0) {
      std::vector<CpuId> out;
      for (std::size_t c = 0; c < ncpu; ++c)
        if (CPU_ISSET_S(c, bytes, set)) out.push_back(static_cast<CpuId>(c));
      CPU_FREE(set);
      return out;
    }
    CPU_FREE(set);  // EINVAL: the kernel's mask is larger; try a larger one
  }
#endif
  return std::nullopt;
}

}  // namespace detail

// Topology from sysfs: CPU `cpu/online`, intersected with the allowed set,
// densely numbered 0..n-1 in OS order.
//   core: cpu/cpuN/topology/core_cpus_list (thread_siblings_list before
//         v5.4);
//   cluster: cpu/cpuN/topology/cluster_cpus_list (v5.16+), when present;
//         a CPU without it is a cluster of its own core (and the other
//         CPUs' lists leave it out). A cluster bigger
//         than the core and smaller than the LLC is a balance level (see
//         TableTopology::with_clusters); one equal to the core, as x86
//         parts with a private L2 per core report, is not;
//   LLC:  the cpu/cpuN/cache/indexK of the highest level whose type is
//         Unified or Data (L3, or L2 on a machine without L3); a CPU with
//         no cache information falls back to its package
//         (topology/package_cpus_list, then core_siblings_list), which is
//         what x86 does when CPUID reports no caches;
//   node: node/online and node/nodeN/cpulist; no node directory = one node.
//   With LlcView::scheduler (the default) an LLC that spans nodes (Intel
//   SNC) is cut at the node boundaries, as the kernel schedules it;
//   LlcView::hardware keeps the caches' own lists.
// Invariant: the CPUs are those online and allowed; the topology those CPUs
// see (masks are intersected, so an offline sibling makes a 1-thread core).
// Hostile trees: only regular files are read (checked before the open,
// which is non-blocking, so a FIFO never blocks), at most
// detail::sysfs_max_file_bytes each; a symbolic link loop, a directory or
// device where a file belongs, a file too long, all are a SysfsError
// naming the path. Files that contradict each other (two CPUs of one core,
// cluster or LLC listing different CPUs; a CPU in two nodes) are a
// TopologyError naming both files; an empty node/online a SysfsError.
// Nothing else is repaired: the kernel writes the files of one group from
// one mask, so a tree that disagrees is not one it wrote.
// docs/reliability.md lists every case.
// The topology is a TableTopology (every Topology member, os_cpu and
// from_os_cpu come from it); this class only knows how to read one.
class SysfsTopology : public TableTopology {
 public:

  static constexpr const char* default_root = "/sys/devices/system";

  // Effects: reads `root` (the directory holding cpu/ and node/), keeping
  //   the online CPUs this process may run on (sched_getaffinity).
  // Throws: SysfsError naming the file when one is missing, malformed, no
  //   regular file (a directory, a FIFO, a device, a symbolic link loop)
  //   or longer than detail::sysfs_max_file_bytes; TopologyError when no
  //   CPU is left or the files contradict each other (naming both files).
  // Complexity: O(CPUs x cache levels) file reads.
  explicit SysfsTopology(const std::filesystem::path& root = default_root,
                         LlcView view = LlcView::scheduler)
      : SysfsTopology(root, detail::sysfs_affinity(), view) {}

  // Effects: as above, keeping the online CPUs among `allowed_os_cpus`
  //   (OS numbers; those not online are ignored).
  SysfsTopology(const std::filesystem::path& root, std::vector<CpuId> allowed_os_cpus,
                LlcView view = LlcView::scheduler)
      : SysfsTopology(root, std::optional<std::vector<CpuId>>(std::move(allowed_os_cpus)), view) {}

  // Effects: as above, keeping every online CPU, whatever the affinity.
  static SysfsTopology all_online(const std::filesystem::path& root = default_root,
                                  LlcView view = LlcView::scheduler) {
    return SysfsTopology(root, std::optional<std::vector<CpuId>>{}, view);
  }

  // Returns: the table this topology is, for code that wants its counts.
  const TableTopology& table() const noexcept { return *this; }

 private:
  SysfsTopology(const std::filesystem::path& root, std::optional<std::vector<CpuId>> allowed, LlcView view)
      : TableTopology(read(root, allowed, view)) {}

  // The usable CPUs one file lists (its own CPU among them), and the file.
  struct Listed {
    std::vector<CpuId> cpus;  // OS numbers, ascending, only usable ones
    std::filesystem::path file;
  };

  static TableTopology read(const std::filesystem::path& root,
                            const std::optional<std::vector<CpuId>>& allowed, LlcView view) {
    try {
      return read_tree(root, allowed, view);
    } catch (const std::filesystem::filesystem_error& e) {
      // Every file-system call below reports through SysfsError already;
      // this keeps the documented type should one be missed.
      throw SysfsError(e.path1().string(), e.code().message());
    }
  }

  static TableTopology read_tree(const std::filesystem::path& root,
                                 const std::optional<std::vector<CpuId>>& allowed, LlcView view) {
    namespace fs = std::filesystem;
    const fs::path cpu_dir = root / "cpu";
    const std::vector<CpuId> online = detail::sysfs_cpulist(cpu_dir / "online");
    std::vector<CpuId> ok;
    if (allowed) {
      ok = *allowed;
      std::sort(ok.begin(), ok.end());
    }
    std::vector<CpuId> cpus;  // OS numbers, ascending
    for (CpuId os : online)
      if (!allowed || std::binary_search(ok.begin(), ok.end(), os)) cpus.push_back(os);
    if (cpus.empty())
      throw TopologyError("sysfs " + root.string() + ": no usable CPU (online " +
                          detail::format_cpulist(online) + ", none of them allowed)");
    const auto usable = [&cpus](CpuId os) { return std::binary_search(cpus.begin(), cpus.end(), os); };

    // Node of each usable OS CPU: the node whose cpulist names it.
    struct NodeOf {
      CpuId os;
      std::uint32_t node;
      fs::path file;
    };
    std::vector<NodeOf> node_of_os;  // sorted by os
    const fs::path node_dir = root / "node";
    const fs::path node_online = node_dir / "online";
    const bool numa = detail::sysfs_exists(node_online);
    if (numa) {
      const std::vector<CpuId> nodes = detail::sysfs_cpulist(node_online);
      // The kernel keeps a node online at all times (node 0 on a machine
      // without NUMA); an empty list is no tree it wrote.
      if (nodes.empty())
        throw SysfsError(node_online.string(), "lists no node (a kernel has at least one node online)");
      for (CpuId n : nodes) {
        const fs::path file = node_dir / ("node" + std::to_string(n)) / "cpulist";
        for (CpuId os : detail::sysfs_cpulist(file))
          if (usable(os)) node_of_os.push_back({os, n, file});
      }
      std::sort(node_of_os.begin(), node_of_os.end(),
                [](const NodeOf& a, const NodeOf& b) { return a.os < b.os; });
      // A CPU is in one node (the kernel's cpu_to_node()).
      for (std::size_t i = 1; i < node_of_os.size(); ++i)
        if (node_of_os[i].os == node_of_os[i - 1].os)
          throw TopologyError("sysfs " + root.string() + ": cpu" + std::to_string(node_of_os[i].os) +
                              " is in two nodes: " + node_of_os[i - 1].file.string() + " and " +
                              node_of_os[i].file.string() + " both list it (a CPU is in one node)");
    }

    // No cluster file (before v5.16): the CPU's cluster is its core
    // (clusters that are the cores are no clusters). A tree where only
    // some CPUs have one is repaired that way: the others' lists leave the
    // CPUs without it out (a kernel writes the file for every CPU or none).
    std::vector<CpuId> clustered;  // usable CPUs with a cluster file, ascending
    for (CpuId os : cpus)
      if (detail::sysfs_exists(cpu_dir / ("cpu" + std::to_string(os)) / "topology" / "cluster_cpus_list"))
        clustered.push_back(os);
    std::vector<Listed> core, cluster, llc;
    std::vector<std::uint32_t> node;
    for (CpuId os : cpus) {
      const fs::path dir = cpu_dir / ("cpu" + std::to_string(os));
      const fs::path core_file = first_existing(dir / "topology", {"core_cpus_list", "thread_siblings_list"});
      core.push_back(listed(core_file, os, cpus));
      const fs::path cluster_file = dir / "topology" / "cluster_cpus_list";
      const bool has_cluster = std::binary_search(clustered.begin(), clustered.end(), os);
      cluster.push_back(has_cluster ? listed(cluster_file, os, clustered) : core.back());
      llc.push_back(listed(llc_file(dir), os, cpus));
      if (!numa) {
        node.push_back(0);
      } else {
        auto it = std::lower_bound(node_of_os.begin(), node_of_os.end(), os,
                                   [](const NodeOf& a, CpuId b) { return a.os < b; });
        if (it == node_of_os.end() || it->os != os)
          throw SysfsError(node_online.string(),
                           "cpu" + std::to_string(os) + " is in no online node's cpulist");
        node.push_back(it->node);
      }
    }
    check_agreement(root, cpus, core, "core");
    check_agreement(root, cpus, cluster, "cluster");
    check_agreement(root, cpus, llc, "last-level cache");
    std::vector<std::uint32_t> llc_labels = labels(llc);
    if (view == LlcView::scheduler) llc_labels = detail::split_llc_at_nodes(llc_labels, node);
    try {
      return TableTopology::with_clusters(labels(core), labels(cluster), std::move(llc_labels), std::move(node),
                                          cpus);
    } catch (const TopologyError& e) {
      throw TopologyError("sysfs " + root.string() + " (dense cpu numbers): " + e.what());
    }
  }

  static std::filesystem::path first_existing(const std::filesystem::path& dir,
                                              std::initializer_list<const char*> names) {
    for (const char* n : names)
      if (detail::sysfs_exists(dir / n)) return dir / n;
    return dir / *names.begin();  // reading it reports the missing file
  }

  // Returns: the CPUs `file` lists that are among `cpus` (ascending).
  // Throws: SysfsError when the file does not list `os` itself.
  static Listed listed(const std::filesystem::path& file, CpuId os, const std::vector<CpuId>& cpus) {
    const std::vector<CpuId> list = detail::sysfs_cpulist(file);
    if (!std::binary_search(list.begin(), list.end(), os))
      throw SysfsError(file.string(), "does not contain cpu" + std::to_string(os) + " itself");
    Listed out{{}, file};
    std::set_intersection(list.begin(), list.end(), cpus.begin(), cpus.end(), std::back_inserter(out.cpus));
    return out;
  }

  // Every CPU a file lists must list the same CPUs: the kernel writes the
  // files of one core (cluster, cache) from one mask, so files that
  // disagree are no tree it wrote, and no partition of the CPUs can be
  // read from them (the kernel itself refuses masks that partly overlap:
  // topology_span_sane()). Compared among the usable CPUs, as the groups
  // are. Each group is checked against its lowest CPU's list: equal lists,
  // and every member's list starts at that CPU, make the lists a partition.
  // Throws: TopologyError naming the two files that disagree.
  static void check_agreement(const std::filesystem::path& root, const std::vector<CpuId>& cpus,
                              const std::vector<Listed>& lists, const char* what) {
    const auto at = [&](CpuId os) -> const Listed& {
      return lists[static_cast<std::size_t>(std::lower_bound(cpus.begin(), cpus.end(), os) - cpus.begin())];
    };
    const auto fail = [&](const Listed& a, const Listed& b) {
      return TopologyError("sysfs " + root.string() + ": " + a.file.string() + " lists " +
                           detail::format_cpulist(a.cpus) + " but " + b.file.string() + " lists " +
                           detail::format_cpulist(b.cpus) + " (usable CPUs): the CPUs of one " + what +
                           " must list the same CPUs");
    };
    for (const Listed& l : lists) {
      const Listed& lowest = at(l.cpus.front());
      if (lowest.cpus != l.cpus) throw fail(lowest, l);
      for (CpuId m : l.cpus)
        if (at(m).cpus.front() != l.cpus.front()) throw fail(l, at(m));
    }
  }

  // A group's label is its lowest usable OS CPU (equal for every member,
  // check_agreement made sure).
  static std::vector<std::uint32_t> labels(const std::vector<Listed>& lists) {
    std::vector<std::uint32_t> out;
    out.reserve(lists.size());
    for (const Listed& l : lists) out.push_back(l.cpus.front());
    return out;
  }

  // Returns: the file listing the CPUs that share `dir`'s last-level
  // cache: among cache/index*, the shared_cpu_list of the highest level
  // that holds data (type Unified or Data; instruction caches never
  // count); with no cache information (some VMs, some arm64 firmware),
  // the package's list. Throws: SysfsError naming the entry when cache/ or
  // an index* entry is not a directory, or a type or level file is
  // missing, not a regular file or malformed.
  static std::filesystem::path llc_file(const std::filesystem::path& dir) {
    namespace fs = std::filesystem;
    const fs::path cache = dir / "cache";
    std::optional<fs::path> best;
    unsigned long best_level = 0;
    const detail::SysfsKind cache_kind = detail::sysfs_kind(cache);
    if (cache_kind != detail::SysfsKind::absent && cache_kind != detail::SysfsKind::directory)
      throw SysfsError(cache.string(), "is not a directory");
    if (cache_kind == detail::SysfsKind::directory) {
      for (const fs::path& entry : detail::sysfs_list(cache)) {
        if (entry.filename().string().rfind("index", 0) != 0) continue;
        if (detail::sysfs_kind(entry) != detail::SysfsKind::directory)
          throw SysfsError(entry.string(), "is not a directory (or a link to none)");
        const std::string type = detail::sysfs_word(entry / "type");
        if (type != "Unified" && type != "Data") continue;
        const fs::path level_file = entry / "level";
        const std::string level = detail::sysfs_word(level_file);
        if (level.empty() || level.size() > 2 || level.find_first_not_of("0123456789") != std::string::npos)
          throw SysfsError(level_file.string(), "expected a cache level number, found \"" + level + "\"");
        const unsigned long lv = std::stoul(level);
        if (!best || lv > best_level) {
          best = entry / "shared_cpu_list";
          best_level = lv;
        }
      }
    }
    if (best) return *best;
    return first_existing(dir / "topology", {"package_cpus_list", "core_siblings_list"});
  }
};

static_assert(Topology<SysfsTopology>);

}  // namespace taskplace
