#include <twocs/planning/plan_search.hpp>

#include <algorithm>

#include <fmt/format.h>

#include <twocs/error.hpp>
#include <twocs/units/format.hpp>

namespace twocs::planning {
namespace {

[[noreturn]] void throw_nothing_divides(const CandidateSet& set, const hardware::ClusterSpec& cluster) {
  throw InputError(
      fmt::format("plan search: none of the {} plans over the cluster's {} devices is valid; the first, {}",
                  set.considered, cluster.device_count(), set.first_invalid),
      "training.parallelism.search",
      "a search spreads the plan over every device of the cluster: change cluster.nodes or training.global_batch "
      "so that tensor x pipeline x data divides them, or give the plan yourself (search: none)");
}

[[noreturn]] void throw_nothing_fits(const CandidateSet& set, const hardware::ClusterSpec& cluster) {
  throw OutOfMemoryError(fmt::format(
      "plan search: none of the {} valid plans over {} devices fits in device memory; the smallest peak is {} per "
      "device ({}) against a capacity of {}\n  fix: add devices (cluster.nodes), shard the optimizer "
      "(training.optimizer.sharding: full) or use devices with more memory",
      set.valid, cluster.device_count(), units::to_string(set.least_memory_peak), describe(set.least_memory_plan),
      units::to_string(cluster.device.memory)));
}

Candidate smallest_of(const std::vector<Candidate>& fitting) {
  std::int64_t least = fitting.front().model_parallel();
  for (const Candidate& c : fitting) least = std::min(least, c.model_parallel());
  std::vector<Candidate> smallest;
  for (const Candidate& c : fitting)
    if (c.model_parallel() == least) smallest.push_back(c);
  return ranked(std::move(smallest)).front();
}

void simulate_best(SearchResult& result, const std::vector<Candidate>& order, std::int64_t candidates,
                   const Simulate& simulate) {
  const std::size_t count = std::min(order.size(), static_cast<std::size_t>(std::max<std::int64_t>(candidates, 1)));
  const Simulated* best = nullptr;
  for (std::size_t i = 0; i < count; ++i) {
    Simulated s{order[i], std::nullopt, {}};
    s.time = simulate(s.candidate.plan, s.why_not);
    result.simulated.push_back(std::move(s));
  }
  for (const Simulated& s : result.simulated)
    if (s.time && (!best || *s.time < *best->time)) best = &s;
  if (!best)
    throw InputError(fmt::format("plan search: none of the {} best plans could be simulated; the first: {}", count,
                                 result.simulated.front().why_not),
                     "training.parallelism.search",
                     "raise --plan-candidates, the task limits (--max-tasks, --memory-budget), or fold (--fold on)");
  result.chosen = best->candidate;
}

} // namespace

std::vector<Candidate> ranked(std::vector<Candidate> fitting) {
  std::stable_sort(fitting.begin(), fitting.end(), [](const Candidate& a, const Candidate& b) {
    if (a.estimate != b.estimate) return a.estimate < b.estimate;
    return a.model_parallel() < b.model_parallel();
  });
  return fitting;
}

SearchResult search_plan(const model::TransformerConfig& model, const model::TrainingPlan& base,
                         const hardware::ClusterSpec& cluster, const cost::OperatorCostModel& cost, Objective objective,
                         std::int64_t candidates, const Simulate& simulate) {
  CandidateSet set = enumerate_candidates(model, base, cluster, cost);
  if (set.valid == 0) throw_nothing_divides(set, cluster);
  if (set.fitting.empty()) throw_nothing_fits(set, cluster);
  SearchResult result;
  result.objective = objective;
  result.considered = set.considered;
  result.valid = set.valid;
  result.fitting = static_cast<std::int64_t>(set.fitting.size());
  if (objective == Objective::smallest)
    result.chosen = smallest_of(set.fitting);
  else
    simulate_best(result, ranked(std::move(set.fitting)), candidates, simulate);
  return result;
}

} // namespace twocs::planning
