// Two sweeps started on one CSV: the second is refused at once (exit 2) with the first one's
// process id and what to do, and the first finishes undisturbed. A lock file left by a sweep
// killed with SIGKILL does not lock anything (src/sweep/results_lock.cpp).
#include <doctest/doctest.h>

#include <twocs/error.hpp>

#include "sweep/results_lock.hpp"
#include "sweep/sweep_fixture.hpp"

using namespace twocs::test;
using twocs::sweep::detail::ResultsLock;

TEST_CASE("a CSV locked by one sweep cannot be locked by another, and is free once it ends") {
  const StudyFolder folder("lock-unit");
  {
    const ResultsLock first(folder.csv());
    CHECK(file_text(folder.csv("out.csv.lock")) == std::to_string(getpid()) + "\n");
    try {
      const ResultsLock second(folder.csv());
      FAIL("a second lock was granted");
    } catch (const twocs::InputError& e) {
      CHECK(contains(e.message(), "out.csv: error: '" + folder.csv().string() +
                                      "' is being written by another twocs sweep (process " + std::to_string(getpid()) +
                                      ")"));
      CHECK(contains(e.fix(), "give this one another --output"));
    }
  }
  CHECK_FALSE(fs::exists(folder.csv("out.csv.lock")));
  std::ofstream(folder.csv("out.csv.lock")) << "123456789\n"; // left by a sweep killed with SIGKILL
  const ResultsLock again(folder.csv());
  CHECK(file_text(folder.csv("out.csv.lock")) == std::to_string(getpid()) + "\n");
}

TEST_CASE("a lock file that cannot be created is an error that names its folder") {
  CHECK_THROWS_AS(ResultsLock("/nonexistent-twocs-folder/out.csv"), twocs::InputError);
}

TEST_CASE("a second sweep on the same CSV is refused with exit 2 and the first completes") {
  const StudyFolder folder("two-sweeps");
  const pid_t reference_sweep = start_uninterrupted(folder);
  const pid_t first = start_sweep(folder, folder.root / "first.log");
  wait_for_rows(folder.csv(), 1);
  const fs::path log = folder.root / "second.log";
  CHECK(wait_exit_within(start_sweep(folder, log)) == 2);
  const std::string message = file_text(log);
  CHECK_MESSAGE(contains(message, "is being written by another twocs sweep (process " + std::to_string(first) + ")"),
                message);
  CHECK_MESSAGE(contains(message, "fix: wait for that sweep to end"), message);
  REQUIRE(wait_exit_within(first) == 0);
  CHECK(without_wall_times(read_results(folder.csv())).rows == uninterrupted_rows(folder, reference_sweep).rows);
  CHECK_FALSE(fs::exists(folder.csv("out.csv.lock")));
}
