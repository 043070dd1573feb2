// What the workload asks of the plan search (`training.parallelism.search`, `--plan-search`):
// none keeps the stated tensor, pipeline and data degrees; `smallest` and `fastest` let
// twocs choose them (the planning layer, docs/input-formats.md).
#pragma once

#include <cstdint>
#include <string_view>

namespace twocs::config {

enum class PlanObjective {
  none,     // simulate the plan as written
  smallest, // the smallest tensor x pipeline degree whose plan fits in device memory
  fastest,  // the fastest simulated plan among the best few of the closed form
};

[[nodiscard]] constexpr std::string_view to_string(PlanObjective o) {
  return o == PlanObjective::smallest ? "smallest" : o == PlanObjective::fastest ? "fastest" : "none";
}

struct PlanSearchRequest {
  PlanObjective objective = PlanObjective::none;
  /// Plans simulated by `fastest`, the best of the closed form's ranking; a few keep a search to
  /// a few simulations (issue 11: "a search costs a few simulations, not hundreds").
  std::int64_t candidates = 4;
};

} // namespace twocs::config
