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
  CHECK(t.v.back()[0] < 0.8 * t.v.back()[1]);
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

TEST_CASE("aim7: the per-level cost limit beats the 2009 gate under load, and is flat with few users", "[simulator][scenarios][aim7]") {
  Options o;
  o.quick = true;
  const Table t = run_scenario("aim7", o);
  REQUIRE(t.x.size() == 2);
  REQUIRE(t.x.back() == "1000");
  // Low 2013: +12.2% at 1100-2000 users, about flat at 10-100. Columns:
  // no-limit, gate-2009, per-level-2013 (docs/simulator.md, aim7).
  CHECK(t.v.back()[2] > 1.05 * t.v.back()[1]);
  CHECK(t.v.front()[2] > 0.99 * t.v.front()[1]);
  CHECK(t.v.front()[2] < 1.01 * t.v.front()[1]);
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
    write_svg(os, t);
    return os.str();
  };
  const std::string a = render();
  CHECK(a == render());
  CHECK(a.find("<svg") != std::string::npos);
  CHECK(a.find("scenario,metric,current") != std::string::npos);
}

TEST_CASE("an unknown scenario name is rejected with the list of known ones", "[simulator][scenarios]") {
  Options o;
  CHECK_THROWS_WITH(run_scenario("nope", o), Catch::Contains("pgbench") && Catch::Contains("nope"));
}
