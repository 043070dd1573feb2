#include "local_transport.hpp"

namespace twocs::sweep::detail {

LocalTransport::LocalTransport(const config::Study& study, const SweepOptions& options,
                               const std::set<std::size_t>& done, std::ostream& progress)
    : results_(options.output), progress_(progress, options.terminal, study.scenario_count(), done.size()) {
  for (std::size_t i = study.scenario_count(); i-- > 0;)
    if (!done.contains(i)) pending_.push_back(i); // popped from the back: lowest index first
}

std::optional<std::size_t> LocalTransport::take() {
  if (pending_.empty()) return std::nullopt;
  const std::size_t index = pending_.back();
  pending_.pop_back();
  return index;
}

void LocalTransport::finished(const FinishedScenario& scenario) {
  results_.append(scenario.row);
  ++ran_;
  if (scenario.status != "ok") ++failed_;
  progress_.finished(scenario.index, scenario.status, scenario.wall_time_s, scenario.reason);
}

} // namespace twocs::sweep::detail
