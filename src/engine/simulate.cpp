#include <twocs/engine/simulate.hpp>

#include <stdexcept>

#include <fmt/format.h>

#include "engine_session.hpp"
#include "frontier.hpp"
#include "platform_builder.hpp"

namespace twocs::engine {

Timeline simulate(const lowering::TaskGraph& graph, const platform::Topology& topology, const EngineOptions& options,
                  EngineStats* stats) {
  if (graph.device_count() > topology.devices)
    throw std::invalid_argument(fmt::format("engine::simulate: the task graph uses {} devices but the topology has {}",
                                            graph.device_count(), topology.devices));
  detail::EngineSession session(options);
  // Only the nodes whose devices the graph uses are built (platform_builder.hpp).
  // A folded run's devices that only carry their peers' traffic (lowering/peer_traffic.hpp) are
  // built but compute nothing: the run is folded where some device computes nothing.
  std::vector<bool> used(static_cast<std::size_t>(topology.devices), false);
  std::vector<bool> computing(used.size(), false);
  for (lowering::TaskId id = 0; id < graph.size(); ++id) {
    const lowering::Task& task = graph.task(id);
    used[static_cast<std::size_t>(task.device)] = true;
    if (task.is_transfer())
      used[static_cast<std::size_t>(graph.transfer(id).peer)] = true;
    else
      computing[static_cast<std::size_t>(task.device)] = true;
  }
  const auto hosts = detail::build_platform(topology, used);
  return detail::run_frontier(graph, hosts, session, topology.interference,
                              detail::device_slowdowns(topology, computing), stats, options);
}

} // namespace twocs::engine
