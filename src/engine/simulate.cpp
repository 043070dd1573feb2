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
  const auto hosts = detail::build_platform(topology);
  return detail::run_frontier(graph, hosts, session, topology.interference, stats);
}

} // namespace twocs::engine
