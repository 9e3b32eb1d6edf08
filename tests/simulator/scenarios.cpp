// Tests of taskplace_sim/scenarios.hpp and table.hpp: every scenario runs
// (quick), renders, and reproduces its seed's direction where the docs say
// it does.
#include <catch2/catch.hpp>

#include <sstream>
#include <string>

#include "taskplace_sim/scenarios.hpp"

using namespace taskplace_sim;

TEST_CASE("the pipe scenario shows same-CPU ping-pong beating spreading", "[simulator][scenarios][pipe]") {
  Options o;
  o.quick = true;
  const Table t = run_scenario("pipe", o);
  REQUIRE(t.v.size() == 3);
  // Smith 2008: same CPU beats spreading the pair.
  CHECK(t.v[0][0] > 1.5 * t.v[0][2]);
  // Current spreads the pair over an idle prev, as today's kernel does;
  // SIS_CURRENT's proposal keeps it once the flips decayed (its column is
  // measured after a flip period): the same-CPU rate at every pair count.
  for (std::size_t i = 0; i < t.v.size(); ++i) {
    INFO("pairs " << t.x[i]);
    CHECK(t.v[i][1] == Approx(t.v[i][2]).epsilon(0.02));
    CHECK(t.v[i][3] == Approx(t.v[i][0]).epsilon(0.02));
  }
}

TEST_CASE("pgbench-2008: always-affine collapses at high client counts", "[simulator][scenarios][pgbench]") {
  // The full-size run (4 CPUs, a fraction of a second): the quick one's
  // 80 ms windows are too short for which clients the stacking catches to
  // average out at 15-50 clients.
  Options o;
  const Table t = run_scenario("pgbench-2008", o);
  REQUIRE(t.x.size() == 11);
  REQUIRE(t.x[6] == "15");
  REQUIRE(t.x.back() == "50");
  // Smith 2008: affine-always collapses above ~8 clients (0.62x of 2.6.22
  // on the X2, about 1/3 on the Q6600); the table's verdict reads the
  // mean over 15-50 clients.
  double affine = 0, current = 0;
  for (std::size_t i = 6; i < t.x.size(); ++i) {
    affine += t.v[i][0];
    current += t.v[i][1];
  }
  CHECK(affine < 0.8 * current);
}

TEST_CASE("pgbench-2008-sync: the unchecked sync rule collapses where the balanced fix and sync-off do not", "[simulator][scenarios][pgbench]") {
  Options o;
  o.quick = true;
  const Table t = run_scenario("pgbench-2008-sync", o);
  REQUIRE(t.x.size() == 11);
  REQUIRE(t.x[2] == "4");
  REQUIRE(t.x[6] == "15");
  REQUIRE(t.configs.size() == 3);
  REQUIRE(t.seed_headers.size() == 3);
  auto mean = [&](std::size_t col, std::size_t from, std::size_t to) {
    double s = 0;
    for (std::size_t i = from; i < to; ++i) s += t.v[i][col];
    return s / static_cast<double>(to - from);
  };
  // Columns: unchecked (stock 2.6.26-git), balanced (Mike Galbraith's fix),
  // sync off (sched_features 863). Smith 2008, Greg Smith's Q6600 table of
  // May 26 2008 and Mike's numbers: at 4-10 clients .26.git reads 0.48x
  // of the fix and 0.42x of f=863. The simulator gives 0.39-0.45x and
  // 0.31-0.34x over seeds 1-16 in quick mode (full-length runs:
  // 0.35-0.39x and 0.28-0.31x, docs/simulator.md, pgbench-2008-sync).
  CHECK(mean(1, 2, 6) > 1.8 * mean(0, 2, 6));
  CHECK(mean(2, 2, 6) > 2.0 * mean(0, 2, 6));
  // At 15-50 clients the seed has .26.git at 0.47x of f=863; the
  // simulator 0.57-0.72x (quick, seeds 1-16; full-length 0.54-0.70x). The fix's own gain there is
  // not reproduced (the model's fix collapses too), so it is not asserted.
  CHECK(mean(2, 6, 11) > 1.2 * mean(0, 6, 11));
}

TEST_CASE("the demo's verdicts at reduced size: the experiments the model reproduces", "[simulator][scenarios][verdicts]") {
  // Quick mode: shorter runs, two seeds; docs/simulator.md has the
  // full-size table. Each check reads the verdict the demo prints.
  Options o;
  o.quick = true;
  SECTION("Wang 2013 pgbench: smart beats base at 16-32 clients at every seed, flat at 1-4") {
    const Table t = run_scenario("pgbench", o);
    REQUIRE(t.summaries.size() == 1);
    INFO(t.summaries[0].sim);
    CHECK((t.verdict.rfind("reproduced", 0) == 0 || t.verdict.rfind("direction only (size", 0) == 0));
    // Columns: always-affine, base-3.10, smart-3.12, current; rows 1, 2, 4
    // clients flat (within 5%), as in the source.
    for (std::size_t i = 0; i < 3; ++i) CHECK(t.v[i][2] == Approx(t.v[i][1]).epsilon(0.05));
  }
  SECTION("Smith 2008: affine-always collapses") {
    const Table t = run_scenario("pgbench-2008", o);
    INFO(t.summaries[0].sim);
    CHECK(t.verdict == "reproduced (direction and size)");
  }
  SECTION("pipe: the same CPU beats spreading") {
    const Table t = run_scenario("pipe", o);
    CHECK(t.verdict.rfind("reproduced", 0) == 0);
  }
  SECTION("Fleming 2017 hackbench: master-only's runs vary far less") {
    const Table t = run_scenario("hackbench", o);
    REQUIRE(t.summaries.size() == 3);
    INFO(t.summaries[1].sim);
    CHECK(t.summaries[1].verdict == "reproduced (direction and size)");
    // Rows Min, Amean, Stddev, CoeffVar, Max; the mean falls too.
    CHECK(t.v[1][1] < t.v[1][0]);
  }
}

TEST_CASE("netperf UDP_RR stays flat while every pair has CPUs of its own, on any machine", "[simulator][scenarios][netperf]") {
  // A 32-CPU machine: 8 and 16 pairs (a quarter and half of the CPUs), as
  // 56 and 112 on the source's 224: no CPU runs two tasks, the reservation
  // has nothing to protect, and the RFC equals today's kernel.
  Options o;
  o.quick = true;
  o.seeds = 1;
  o.machine = parse_machine("2x1x8x2");
  const Table t = run_scenario("netperf-udp-rr", o);
  REQUIRE(t.x.size() == 4);
  CHECK(t.x[0] == "8");
  CHECK(t.v[0][1] == Approx(t.v[0][0]).epsilon(0.01));
  CHECK(t.v[1][1] == Approx(t.v[1][0]).epsilon(0.01));
  CHECK(t.machine == "2x1x8x2");
}

TEST_CASE("every scenario runs on a machine other than its source's", "[simulator][scenarios]") {
  Options o;
  o.quick = true;
  o.seeds = 1;
  o.machine = parse_machine("1x2x2x2");
  for (const auto& n : {"pgbench", "pipe", "mixed"}) {
    INFO(n);
    const Table t = run_scenario(n, o);
    CHECK(t.machine == "1x2x2x2");
    CHECK(!t.v.empty());
  }
}

TEST_CASE("a scenario's table renders identically for the same seed", "[simulator][scenarios]") {
  Options o;
  o.quick = true;
  o.seed = 4;
  auto render = [&] {
    std::ostringstream os;
    const Table t = run_scenario("mixed", o);
    write_text(os, t);
    write_csv(os, t);
    return os.str();
  };
  const std::string a = render();
  CHECK(a == render());
  CHECK(a.find("scenario,metric,current") != std::string::npos);
}

TEST_CASE("an unknown scenario name is rejected with the list of known ones", "[simulator][scenarios]") {
  Options o;
  CHECK_THROWS_WITH(run_scenario("nope", o), Catch::Contains("pgbench") && Catch::Contains("nope"));
}
