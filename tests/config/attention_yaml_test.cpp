// training.attention: unfused (default) | fused, read strictly like every other choice.
#include <doctest/doctest.h>

#include <twocs/config/scenario_loader.hpp>

#include "config/input_error_capture.hpp"

using namespace twocs;
using test::where;

TEST_CASE("training.attention defaults to unfused and reads fused") {
  CHECK(config::parse_workload({"w.yaml", test::small_workload}).plan.attention == model::AttentionKernel::unfused);
  const auto fused = config::parse_workload({"w.yaml", test::small_workload + "  attention: fused\n"});
  CHECK(fused.plan.attention == model::AttentionKernel::fused);
  const auto set = config::parse_workload({"w.yaml", test::small_workload}, {"training.attention=fused"});
  CHECK(set.plan.attention == model::AttentionKernel::fused);
  CHECK(model::to_string(set.plan.attention) == "fused");
}

TEST_CASE("a misspelt attention kernel is located and corrected") {
  const auto e = test::workload_error(test::small_workload + "  attention: fuse\n");
  CHECK(where(e) == "w.yaml:14:14");
  CHECK(e.problem() == "training.attention cannot be 'fuse'; allowed values: unfused, fused");
  CHECK(e.fix() == "did you mean 'fused'?");
}
