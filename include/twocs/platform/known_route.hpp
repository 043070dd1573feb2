// The links of a route that the topology names, whatever the network: for traces' link counters
// (report/trace_counters.hpp). Pure: nothing here depends on SimGrid.
#pragma once

#include <cstdint>
#include <vector>

#include <twocs/platform/topology.hpp>

namespace twocs::platform {

/// The links from device `a` to device `b` (a != b) that `topology` names: on a routed network
/// the whole route (flow 0, as the engine routes it); on SimGrid's fat tree the node links within a
/// node, or the sender's and receiver's NIC links without the fat tree between them (SimGrid
/// routes that part itself). Link indices as in Topology::link_model().
[[nodiscard]] std::vector<Hop> known_route(const Topology& topology, std::int64_t a, std::int64_t b);

} // namespace twocs::platform
