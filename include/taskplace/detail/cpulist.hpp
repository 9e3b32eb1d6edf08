// taskplace/detail/cpulist.hpp: the Linux "cpulist" format, parsed and
// printed ("0-3,8,10-11").
//
// Kernel analogue: bitmap_parselist() / the %*pbl printk format that every
// sysfs *_list file (cpu/online, thread_siblings_list, shared_cpu_list,
// node/nodeN/cpulist) is written with. A pure function over
// std::string_view, so that it can be fuzzed on its own.
//
//   std::vector<CpuId> cpus = taskplace::detail::parse_cpulist("0-3,8\n");
//   std::string s = taskplace::detail::format_cpulist(cpus);  // "0-3,8"
#pragma once

#include "taskplace/detail/config.hpp"

#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "taskplace/types.hpp"

namespace taskplace::detail {

// The largest CPU number a cpulist may name. The kernel's NR_CPUS tops out
// at 8192 today; 2^20 - 1 leaves room while keeping a hostile "0-4000000000"
// from allocating gigabytes.
inline constexpr CpuId cpulist_max_cpu = (1u << 20) - 1;

// Thrown by parse_cpulist; the message says what is wrong and where.
class CpulistError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

namespace cpulist_impl {

constexpr bool is_space(char ch) noexcept {
  return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r' || ch == '\v' || ch == '\f';
}
constexpr bool is_digit(char ch) noexcept { return ch >= '0' && ch <= '9'; }

inline std::string quoted(std::string_view text) {
  std::string out = "\"";
  for (char ch : text.substr(0, 64)) {
    if (ch == '\n') out += "\\n";
    else if (static_cast<unsigned char>(ch) < 0x20 || static_cast<unsigned char>(ch) >= 0x7f) out += '?';
    else out += ch;
  }
  if (text.size() > 64) out += "...";
  return out + "\"";
}

struct Cursor {
  std::string_view text;
  std::size_t pos = 0;

  void skip_space() noexcept {
    while (pos < text.size() && is_space(text[pos])) ++pos;
  }
  bool done() const noexcept { return pos >= text.size(); }

  [[noreturn]] void fail(const std::string& what) const {
    throw CpulistError("bad cpulist " + quoted(text) + ": " + what + " at offset " +
                       std::to_string(pos));
  }

  // Reads one decimal number; rejects signs, and values past cpulist_max_cpu
  // (without overflowing while reading them).
  CpuId number() {
    if (done()) fail("expected a CPU number, found the end");
    if (!is_digit(text[pos])) fail(std::string("expected a CPU number, found '") + text[pos] + "'");
    std::uint64_t v = 0;
    const std::size_t start = pos;
    while (pos < text.size() && is_digit(text[pos])) {
      v = v * 10 + static_cast<std::uint64_t>(text[pos] - '0');
      if (v > cpulist_max_cpu) {
        while (pos < text.size() && is_digit(text[pos])) ++pos;
        throw CpulistError("bad cpulist " + quoted(text) + ": CPU number " +
                           std::string(text.substr(start, pos - start)) + " exceeds " +
                           std::to_string(cpulist_max_cpu));
      }
      ++pos;
    }
    return static_cast<CpuId>(v);
  }
};

}  // namespace cpulist_impl

// Effects: parses a cpulist: comma-separated items, each "N" or "N-M" with
//   N <= M, whitespace (including newlines) allowed around every token; an
//   empty or all-blank text is the empty list (a CPU-less NUMA node's
//   cpulist). Overlapping items are merged.
// Returns: the CPUs, ascending and distinct.
// Throws: CpulistError naming the text and offset for anything else: junk,
//   a sign, an empty item ("0,,1", trailing ","), a reversed range ("5-3"),
//   a number above cpulist_max_cpu, the stride form "0-7:2/4" (sysfs never
//   writes it).
// Complexity: O(text size + largest CPU / 64). Thread-safety: pure.
inline std::vector<CpuId> parse_cpulist(std::string_view text) {
  cpulist_impl::Cursor cur{text};
  std::vector<std::uint64_t> bits;
  auto set = [&bits](CpuId c) {
    const std::size_t word = c / 64;
    if (word >= bits.size()) bits.resize(word + 1, 0);
    bits[word] |= std::uint64_t{1} << (c % 64);
  };
  cur.skip_space();
  if (cur.done()) return {};
  for (;;) {
    cur.skip_space();
    const CpuId lo = cur.number();
    CpuId hi = lo;
    cur.skip_space();
    if (!cur.done() && text[cur.pos] == '-') {
      ++cur.pos;
      cur.skip_space();
      hi = cur.number();
      if (hi < lo)
        cur.fail("reversed range " + std::to_string(lo) + "-" + std::to_string(hi));
      cur.skip_space();
    }
    if (!cur.done() && text[cur.pos] == ':') cur.fail("stride ranges (N-M:s/g) are not supported");
    for (CpuId c = lo;; ++c) {  // bounded: hi <= cpulist_max_cpu
      set(c);
      if (c == hi) break;
    }
    if (cur.done()) break;
    if (text[cur.pos] != ',')
      cur.fail(std::string("expected ',' or the end, found '") + text[cur.pos] + "'");
    ++cur.pos;
    cur.skip_space();
    if (cur.done()) cur.fail("empty item after ','");
  }
  std::vector<CpuId> out;
  for (std::size_t w = 0; w < bits.size(); ++w)
    for (unsigned b = 0; b < 64; ++b)
      if (bits[w] >> b & 1u) out.push_back(static_cast<CpuId>(w * 64 + b));
  return out;
}

// Returns: `cpus` (ascending, distinct) in cpulist form, every run of two
//   or more consecutive CPUs as "N-M", as the kernel prints it ("0-1,4");
//   "" for none.
// Precondition: cpus ascending and distinct (otherwise the text still
//   parses, but not back to the same list).
// Complexity: O(size). Thread-safety: pure.
inline std::string format_cpulist(std::span<const CpuId> cpus) {
  std::string out;
  for (std::size_t i = 0; i < cpus.size();) {
    std::size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += std::to_string(cpus[i]);
    if (j > i) out += '-' + std::to_string(cpus[j]);
    i = j + 1;
  }
  return out;
}

}  // namespace taskplace::detail
