// Determinism of sweeps: the same study gives the same rows (wall times aside) whatever the
// number of scenarios run at once (--jobs), and rows are in scenario order at the end; one
// scenario run twice in fresh processes writes the same files.
#include <doctest/doctest.h>

#include "sweep/sweep_fixture.hpp"

using namespace twocs::test;

TEST_CASE("a sweep with --jobs 1 and with --jobs 3 writes the same rows, wall times aside") {
  const StudyFolder folder("jobs");
  for (const char* jobs : {"1", "3"})
    REQUIRE(wait_exit(start_program({TWOCS_PROGRAM, "sweep", folder.study(), "--jobs", jobs, "--output",
                                     folder.csv(std::string("jobs") + jobs + ".csv")})) == 0);
  const auto one = without_wall_times(read_results(folder.csv("jobs1.csv")));
  const auto three = without_wall_times(read_results(folder.csv("jobs3.csv")));
  REQUIRE(one.rows.size() == tiny_scenarios);
  CHECK(one.columns == three.columns);
  CHECK(one.rows == three.rows);
  for (std::size_t i = 0; i < tiny_scenarios; ++i) CHECK(one.rows[i].front() == std::to_string(i));
  // The measured columns are filled: blanking them is what makes the rows comparable.
  const auto raw = read_results(folder.csv("jobs1.csv"));
  CHECK(!raw.rows.front()[raw.column("scenario_wall_time_s")].empty());
}

TEST_CASE("twocs run twice in fresh processes writes byte-identical trace and DAG, and JSON but wall_time_s") {
  const StudyFolder folder("run-twice");
  std::vector<std::string> texts;
  for (const char* tag : {"a", "b"}) {
    const std::string base = (folder.root / tag).string();
    REQUIRE(wait_exit(start_program({TWOCS_PROGRAM, "run", "--workload", (folder.root / "w.yaml").string(), "--set",
                                     "cluster.nodes=1", "--quiet", "--json", base + ".json", "--trace",
                                     base + ".trace.json", "--dag", base + ".dag.json"})) == 0);
    std::string json = file_text(base + ".json");
    const std::size_t wall = json.find("\"wall_time_s\"");
    REQUIRE(wall != std::string::npos);
    json.erase(wall, json.find_first_of(",}", wall) - wall); // the one measured field
    texts.push_back(json + file_text(base + ".trace.json") + file_text(base + ".dag.json"));
  }
  CHECK(texts[0].size() > 1000);
  CHECK(texts[0] == texts[1]);
}
