// The plan search of one scenario (`twocs run --plan-search`, `training.parallelism.search`):
// `smallest` picks the smallest tensor x pipeline degree that fits in device memory (the
// closed form breaks ties, nothing is simulated); `fastest` ranks every fitting plan by the
// closed form and simulates only the best few. The simulation is the caller's (a callback), so
// this layer stays pure and the caller's run options (folding, task limits) apply.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <twocs/planning/candidates.hpp>

namespace twocs::planning {

enum class Objective { smallest, fastest };

/// The simulated iteration time of a plan, or nullopt with `why_not` set when it cannot be
/// simulated (too many tasks for the limits in force).
using Simulate = std::function<std::optional<units::Seconds>(const model::TrainingPlan&, std::string& why_not)>;

struct Simulated {
  Candidate candidate;
  std::optional<units::Seconds> time; // nullopt: not simulated (why_not says why)
  std::string why_not;
};

struct SearchResult {
  Objective objective = Objective::smallest;
  Candidate chosen;
  std::vector<Simulated> simulated; // `fastest`: the candidates it simulated, in closed-form order
  std::int64_t considered = 0;
  std::int64_t valid = 0;
  std::int64_t fitting = 0;
};

/// Throws InputError when no plan divides the model and the cluster (or none of the simulated
/// candidates could run), OutOfMemoryError when none fits in device memory.
[[nodiscard]] SearchResult search_plan(const model::TransformerConfig& model, const model::TrainingPlan& base,
                                       const hardware::ClusterSpec& cluster, const cost::OperatorCostModel& cost,
                                       Objective objective, std::int64_t candidates, const Simulate& simulate);

/// The candidates in the order `fastest` simulates them: closed-form estimate, then smaller
/// model-parallel degree, then enumeration order (deterministic).
[[nodiscard]] std::vector<Candidate> ranked(std::vector<Candidate> fitting);

} // namespace twocs::planning
