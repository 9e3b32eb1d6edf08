// bench/results.hpp: how the benchmarks write their results. One Record per
// result (a run of a workload on a runtime), named fields in the order they
// were set; written as a row of a CSV file whose header names the columns,
// or as one `PREFIX key=value ...` line that a parent process (or
// scripts/bench) reads back by key, never by position.
//
//   bench_results::Record r;
//   r.set("workload", "pipe").set("ops_per_s", 1.25e6, 1).set_missing("migrations");
//   bench_results::Csv csv{"pool.csv", {"workload", "ops_per_s", "migrations"}};
//   csv.write(r);                                 // pipe,1250000.0,
//   std::puts(r.line("RESULT").c_str());          // RESULT workload=pipe ops_per_s=1250000.0 migrations=
//   auto back = bench_results::parse_line(text, "RESULT");   // back->get("ops_per_s")
//
// A missing value (a runtime that does not count something) is an empty
// field. In a line, a value with a space, '"', '\' or '=' is double-quoted
// with '"' and '\' escaped by '\' (so Python's shlex.split reads it too); in
// a CSV, a value with ',', '"' or a line break is quoted as RFC 4180 says.
// docs/benchmarks.md says which columns each benchmark writes.
#pragma once

#include <algorithm>
#include <concepts>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace bench_results {

class Record {
 public:
  // Effects: sets `key` to `value`, replacing an earlier value of `key`
  // (the field keeps its first position). Returns: *this.
  Record& set(std::string_view key, std::string_view value) {
    for (auto& [k, v] : fields_)
      if (k == key) {
        v = value;
        return *this;
      }
    fields_.emplace_back(std::string{key}, std::string{value});
    return *this;
  }
  Record& set(std::string_view key, const char* value) { return set(key, std::string_view{value}); }
  Record& set(std::string_view key, const std::string& value) { return set(key, std::string_view{value}); }
  // Effects: `value` in fixed notation with `decimals` digits after the point.
  Record& set(std::string_view key, double value, int decimals) {
    char b[64];
    std::snprintf(b, sizeof b, "%.*f", decimals, value);
    return set(key, std::string_view{b});
  }
  template <std::integral T>
    requires(!std::same_as<T, bool> && !std::same_as<T, char>)
  Record& set(std::string_view key, T value) {
    return set(key, std::string_view{std::to_string(value)});
  }
  // Effects: `key` present with no value (the runtime does not say).
  Record& set_missing(std::string_view key) { return set(key, std::string_view{}); }

  // Returns: the value of `key`, nullptr when it was never set.
  const std::string* get(std::string_view key) const {
    for (const auto& [k, v] : fields_)
      if (k == key) return &v;
    return nullptr;
  }
  const std::vector<std::pair<std::string, std::string>>& fields() const { return fields_; }

  // Returns: `prefix key=value ...`, no line break.
  std::string line(std::string_view prefix) const {
    std::string out{prefix};
    for (const auto& [k, v] : fields_) {
      out += ' ';
      out += k;
      out += '=';
      if (v.find_first_of(" \t\"\\=") == std::string::npos) {
        out += v;
        continue;
      }
      out += '"';
      for (char c : v) {
        if (c == '"' || c == '\\') out += '\\';
        out += c;
      }
      out += '"';
    }
    return out;
  }

 private:
  std::vector<std::pair<std::string, std::string>> fields_;
};

// Returns: the record a line written by Record::line(prefix) holds (a
// trailing line break is ignored); std::nullopt when the line does not
// start with `prefix` and a space, or is malformed (a field without '=',
// an unterminated quote).
inline std::optional<Record> parse_line(std::string_view text, std::string_view prefix) {
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.remove_suffix(1);
  if (text.substr(0, prefix.size()) != prefix) return std::nullopt;
  text.remove_prefix(prefix.size());
  if (!text.empty() && text.front() != ' ') return std::nullopt;
  Record r;
  std::size_t i = 0;
  while (i < text.size()) {
    if (text[i] == ' ') {
      ++i;
      continue;
    }
    const std::size_t eq = text.find('=', i);
    if (eq == std::string_view::npos || text.substr(i, eq - i).find(' ') != std::string_view::npos)
      return std::nullopt;
    const std::string_view key = text.substr(i, eq - i);
    if (key.empty()) return std::nullopt;
    i = eq + 1;
    std::string value;
    if (i < text.size() && text[i] == '"') {
      ++i;
      bool closed = false;
      while (i < text.size()) {
        const char c = text[i++];
        if (c == '"') {
          closed = true;
          break;
        }
        if (c == '\\') {
          if (i == text.size()) return std::nullopt;
          value += text[i++];
        } else {
          value += c;
        }
      }
      if (!closed) return std::nullopt;
    } else {
      const std::size_t end = std::min(text.find(' ', i), text.size());
      value = text.substr(i, end - i);
      i = end;
    }
    r.set(key, std::string_view{value});
  }
  return r;
}

// A CSV file: the header line at construction, then one row per write().
// An empty path writes nothing (every write() is then a no-op).
// Thread-safety: one writer.
class Csv {
 public:
  // Throws: std::runtime_error when `path` cannot be opened for writing.
  Csv(const std::string& path, std::vector<std::string> columns) : columns_(std::move(columns)) {
    if (path.empty()) return;
    f_ = std::fopen(path.c_str(), "w");
    if (f_ == nullptr) throw std::runtime_error("cannot write " + path);
    std::string header;
    for (const auto& c : columns_) header += (header.empty() ? "" : ",") + field(c);
    std::fprintf(f_, "%s\n", header.c_str());
    std::fflush(f_);
  }
  Csv(const Csv&) = delete;
  Csv& operator=(const Csv&) = delete;
  ~Csv() {
    if (f_ != nullptr) std::fclose(f_);
  }

  // Effects: one row, the record's values in the header's order; a column
  // the record lacks is empty. Flushed, so that a run killed later keeps
  // the rows before it.
  // Throws: std::logic_error when the record has a field the header lacks
  // (a value that would be lost).
  void write(const Record& r) {
    for (const auto& [k, v] : r.fields()) {
      bool known = false;
      for (const auto& c : columns_) known = known || c == k;
      if (!known) throw std::logic_error("bench_results::Csv: no column '" + k + "'");
    }
    if (f_ == nullptr) return;
    std::string row;
    for (std::size_t i = 0; i < columns_.size(); ++i) {
      if (i > 0) row += ',';
      if (const std::string* v = r.get(columns_[i])) row += field(*v);
    }
    std::fprintf(f_, "%s\n", row.c_str());
    std::fflush(f_);
  }

  // Returns: `v` as a CSV field (quoted when it holds ',', '"' or a line break).
  static std::string field(const std::string& v) {
    if (v.find_first_of(",\"\r\n") == std::string::npos) return v;
    std::string out = "\"";
    for (char c : v) {
      if (c == '"') out += '"';
      out += c;
    }
    return out + '"';
  }

 private:
  std::vector<std::string> columns_;
  std::FILE* f_ = nullptr;
};

}  // namespace bench_results
