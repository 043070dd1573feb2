// --memory-budget: a plan whose simulation would need more host memory than the budget is
// refused before it is lowered, with the numbers and the fix; within the budget it runs.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "cli/cli_capture.hpp"

using twocs::test::contains;
using twocs::test::run_command_line;

TEST_CASE("a plan over the memory budget is refused with the estimate and the fix") {
  // The default scenario lowers to about 217,000 tasks unfolded with every ring step a transfer:
  // 64 MiB + 100 B each is about 85 MiB.
  const auto r =
      run_command_line({"run", "--fold", "off", "--collective-lowering", "step", "--memory-budget", "80MiB"});
  CHECK(r.code == 2);
  // Located at training.global_batch, which sets the micro-batches (the embedded default's line 14).
  CHECK(contains(r.err, "default.yaml>:14:17: error: training.global_batch: this plan lowers to about "));
  CHECK(contains(r.err, " tasks and needs about "));
  CHECK(contains(r.err, "more than the 80 MiB given by --memory-budget"));
  CHECK(contains(r.err, "fix: fold replicas (--fold on)"));
  CHECK(r.out.empty());
}

TEST_CASE("a plan within the memory budget runs") {
  CHECK(run_command_line({"run", "--quiet", "--fold", "off", "--memory-budget", "4GiB"}).code == 0);
}

TEST_CASE("a malformed memory budget is bad input") {
  const auto bare = run_command_line({"run", "--memory-budget", "8"});
  CHECK(bare.code == 2);
  CHECK(contains(bare.err, "error: --memory-budget '8'"));
  const auto zero = run_command_line({"run", "--memory-budget", "0GiB"});
  CHECK(zero.code == 2);
  CHECK(contains(zero.err, "must be positive"));
}
