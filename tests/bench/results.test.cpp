// The benchmarks' results writer (bench/results.hpp): a record survives the
// line a child process prints, read back by key; a CSV row puts each value
// under its column, quoted as RFC 4180 says; what cannot be read back is
// refused, not guessed.
#include <catch2/catch.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "../../bench/results.hpp"

using bench_results::Csv;
using bench_results::parse_line;
using bench_results::Record;

TEST_CASE("a record's line reads back field by field", "[bench][results]") {
  Record r;
  r.set("workload", "pgbench/8")
      .set("runtime", "Current hot")
      .set("ops_per_s", 1234567.891, 1)
      .set("reps", 7)
      .set("ops", std::uint64_t{18446744073709551615u})
      .set_missing("migrations")
      .set("odd", "a \"quoted\" \\ = value");
  const std::string line = r.line("RESULT");
  CHECK(line.rfind("RESULT workload=pgbench/8 runtime=\"Current hot\" ops_per_s=1234567.9 reps=7 ", 0) == 0);
  const auto back = parse_line(line + "\n", "RESULT");
  REQUIRE(back);
  CHECK(back->fields() == r.fields());
  REQUIRE(back->get("migrations") != nullptr);
  CHECK(back->get("migrations")->empty());
  CHECK(back->get("steals") == nullptr);
}

TEST_CASE("setting a key again keeps its place", "[bench][results]") {
  Record r;
  r.set("a", "1").set("b", "2").set("a", "3");
  REQUIRE(r.fields().size() == 2);
  CHECK(r.fields()[0] == std::pair<std::string, std::string>{"a", "3"});
}

TEST_CASE("lines that are not a record are refused", "[bench][results]") {
  CHECK_FALSE(parse_line("FIBER seconds=1", "RESULT"));
  CHECK_FALSE(parse_line("RESULTS seconds=1", "RESULT"));
  CHECK_FALSE(parse_line("RESULT 0.5 100 1.0 2.0", "RESULT"));  // positional: no keys
  CHECK_FALSE(parse_line("RESULT a=\"unterminated", "RESULT"));
  CHECK_FALSE(parse_line("RESULT =1", "RESULT"));
  const auto empty = parse_line("RESULT", "RESULT");
  REQUIRE(empty);
  CHECK(empty->fields().empty());
}

TEST_CASE("a CSV row puts each value under its column", "[bench][results]") {
  const auto path = (std::filesystem::temp_directory_path() / "taskplace_results_test.csv").string();
  {
    Csv csv{path, {"workload", "runtime", "ops_per_s", "migrations"}};
    Record r;
    r.set("runtime", "a, \"b\"").set("workload", "pipe").set("ops_per_s", 2.5, 2);
    csv.write(r);
    Record extra;
    extra.set("steals", 3);
    CHECK_THROWS_AS(csv.write(extra), std::logic_error);
  }
  std::ifstream in{path};
  std::stringstream text;
  text << in.rdbuf();
  CHECK(text.str() == "workload,runtime,ops_per_s,migrations\npipe,\"a, \"\"b\"\"\",2.50,\n");
  std::filesystem::remove(path);
}

TEST_CASE("a CSV without a path writes nothing and still checks its columns", "[bench][results]") {
  Csv csv{"", {"a"}};
  Record r;
  r.set("a", 1);
  CHECK_NOTHROW(csv.write(r));
  r.set("b", 2);
  CHECK_THROWS_AS(csv.write(r), std::logic_error);
  CHECK_THROWS_AS((Csv{"/nonexistent-dir/x.csv", {"a"}}), std::runtime_error);
}
