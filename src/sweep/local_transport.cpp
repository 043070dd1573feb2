#include "local_transport.hpp"

#include <fmt/format.h>

#include <twocs/error.hpp>

namespace twocs::sweep::detail {

LocalTransport::LocalTransport(const config::Study& study, const SweepOptions& options,
                               const std::set<std::size_t>& done, std::ostream& progress)
    : options_(options), total_(study.scenario_count()), already_done_(done.size()), results_(options.output),
      progress_(progress, options.terminal, study.scenario_count(), done.size()) {
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
  if (scenario.stopped_by != 0) {
    left_out_.push_back({scenario.index, scenario.stopped_by});
    progress_.left_out(scenario.index, scenario.stopped_by);
    return;
  }
  if (const std::error_code error = results_.append(scenario.row)) {
    InputError stop(fmt::format("cannot add scenario {}'s row to '{}': {}; the sweep stopped, {} of {} scenarios "
                                "are in it",
                                scenario.index, options_.output.string(), error.message(), already_done_ + ran_,
                                total_),
                    {}, "free space on its disk (or make it writable again), then rerun the same command to resume");
    stop.set_location({options_.output.string()});
    throw stop;
  }
  ++ran_;
  if (scenario.status != "ok") ++failed_;
  progress_.finished(scenario.index, scenario.status, scenario.wall_time_s, scenario.reason);
}

} // namespace twocs::sweep::detail
