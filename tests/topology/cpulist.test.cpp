// Tests for taskplace/detail/cpulist.hpp: the sysfs cpulist parser.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "taskplace/detail/cpulist.hpp"

using taskplace::CpuId;
using taskplace::detail::CpulistError;
using taskplace::detail::format_cpulist;
using taskplace::detail::parse_cpulist;
using V = std::vector<CpuId>;

TEST_CASE("a cpulist of singles and ranges parses to ascending CPUs", "[cpulist]") {
  CHECK(parse_cpulist("0-3,8,10-11") == V{0, 1, 2, 3, 8, 10, 11});
  CHECK(parse_cpulist("0\n") == V{0});            // sysfs files end in a newline
  CHECK(parse_cpulist(" 4 - 5 ,\t7 \r\n") == V{4, 5, 7});
  CHECK(parse_cpulist("") == V{});                 // a CPU-less node's cpulist
  CHECK(parse_cpulist("\n") == V{});
  CHECK(parse_cpulist("3-3") == V{3});
  CHECK(parse_cpulist("8,0-1,1-2") == V{0, 1, 2, 8});  // out of order, overlapping: merged
  CHECK(parse_cpulist("1048575").back() == taskplace::detail::cpulist_max_cpu);
}

TEST_CASE("a malformed cpulist is rejected with a clear error", "[cpulist]") {
  CHECK_THROWS_AS(parse_cpulist("abc"), CpulistError);
  CHECK_THROWS_WITH(parse_cpulist("0-3x"), Catch::Contains("expected ',' or the end, found 'x'"));
  CHECK_THROWS_WITH(parse_cpulist("5-3"), Catch::Contains("reversed range 5-3"));
  CHECK_THROWS_WITH(parse_cpulist("0,,1"), Catch::Contains("expected a CPU number"));
  CHECK_THROWS_WITH(parse_cpulist("0-3,"), Catch::Contains("empty item"));
  CHECK_THROWS_WITH(parse_cpulist("-1"), Catch::Contains("expected a CPU number, found '-'"));
  CHECK_THROWS_WITH(parse_cpulist("+1"), Catch::Contains("found '+'"));
  CHECK_THROWS_WITH(parse_cpulist("0-"), Catch::Contains("found the end"));
  CHECK_THROWS_WITH(parse_cpulist("1 2"), Catch::Contains("found '2'"));
  CHECK_THROWS_WITH(parse_cpulist("0-7:2/4"), Catch::Contains("stride"));
  // Huge values: no wrap-around, no giant allocation.
  CHECK_THROWS_WITH(parse_cpulist("1048576"), Catch::Contains("exceeds 1048575"));
  CHECK_THROWS_WITH(parse_cpulist("0-4294967296"), Catch::Contains("CPU number 4294967296 exceeds"));
  CHECK_THROWS_WITH(parse_cpulist("99999999999999999999999"), Catch::Contains("exceeds"));
  // The message quotes the text, with a newline shown as \n.
  CHECK_THROWS_WITH(parse_cpulist("0;1\n"), Catch::Contains("\"0;1\\n\""));
}

TEST_CASE("format_cpulist prints what parse_cpulist reads back", "[cpulist]") {
  CHECK(format_cpulist(V{0, 1, 2, 3, 8, 10, 11}) == "0-3,8,10-11");
  CHECK(format_cpulist(V{0, 1, 4}) == "0-1,4");  // a pair is printed as a range, as the kernel does
  CHECK(format_cpulist(V{}) == "");
  for (const char* text : {"0", "0-1023", "1,3,5-6,100-200,4000"}) {
    CAPTURE(text);
    const V cpus = parse_cpulist(text);
    CHECK(format_cpulist(cpus) == text);
    CHECK(parse_cpulist(format_cpulist(cpus)) == cpus);
  }
}
