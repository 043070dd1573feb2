// A collective claims one share of a link it shares with another collective, whatever the number
// of concurrent transfers its lowering uses (docs/network.md, "Concurrent collectives").
#include <doctest/doctest.h>

#include <vector>

#include "engine_test_support.hpp"

using namespace twocs;
using namespace twocs::engine::test;

namespace {

constexpr double size = 100e6;

/// `flows` transfers of size / flows each from `from` to `to`, all of collective `collective`.
std::vector<lowering::TaskId> add_collective(lowering::TaskGraph& graph, std::int32_t collective, int flows,
                                             lowering::DeviceId from, lowering::DeviceId to, bool tell_flows = true) {
  std::vector<lowering::TaskId> ids;
  for (int i = 0; i < flows; ++i) {
    lowering::Transfer transfer;
    transfer.bytes = units::bytes(size / flows);
    transfer.peer = to;
    transfer.collective = collective;
    transfer.group = model::CommGroup::data;
    ids.push_back(graph.add_transfer(from, {model::Pass::forward, -1, -1, graph.intern_label("share")}, transfer));
  }
  if (tell_flows) graph.on_collective_flows(collective, static_cast<std::uint32_t>(flows));
  return ids;
}

/// Two nodes of two devices behind one NIC each: devices 0 and 1 leave their node through it.
platform::Topology shared_nic(ClusterLinks& links) {
  links.nodes = 2;
  links.devices_per_node = 2;
  auto cluster = make_cluster(links);
  cluster.network.devices_per_nic = 2;
  return platform::build_topology(cluster, 4);
}

} // namespace

TEST_CASE("a collective of four flows alone takes the time its bytes and one latency take") {
  ClusterLinks links;
  const auto topology = shared_nic(links);
  const double nic = links.nic_bandwidth.value(), lat = links.network_latency.value();
  lowering::TaskGraph graph(4);
  const auto flows = add_collective(graph, 0, 4, 0, 2);
  const auto t = engine::simulate(graph, topology);
  for (const lowering::TaskId id : flows) CHECK(finish_of(t, id) == exactly(size / nic + lat));
}

TEST_CASE("a collective of four flows and one of one flow split a shared NIC evenly") {
  ClusterLinks links;
  const auto topology = shared_nic(links);
  const double nic = links.nic_bandwidth.value(), lat = links.network_latency.value();
  lowering::TaskGraph graph(4);
  const auto four = add_collective(graph, 0, 4, 0, 2);
  const auto one = add_collective(graph, 1, 1, 1, 3);
  const auto t = engine::simulate(graph, topology);
  // Each collective moves `size` at nic / 2: both end together.
  for (const lowering::TaskId id : four) CHECK(finish_of(t, id) == exactly(2 * size / nic + lat));
  CHECK(finish_of(t, one.front()) == exactly(2 * size / nic + lat));
}

TEST_CASE("without its flow count a collective of four flows takes four shares of five") {
  ClusterLinks links;
  const auto topology = shared_nic(links);
  const double nic = links.nic_bandwidth.value(), lat = links.network_latency.value();
  lowering::TaskGraph graph(4);
  const auto four = add_collective(graph, 0, 4, 0, 2, false);
  const auto one = add_collective(graph, 1, 1, 1, 3, false);
  const auto t = engine::simulate(graph, topology);
  // Five equal flows: the four of size / 4 end at 5 (size / 4) / nic; the one has moved a fifth
  // of that by then and the rest alone: 1.25 + (1 - 0.25) = 2 size / nic.
  for (const lowering::TaskId id : four) CHECK(finish_of(t, id) == exactly(1.25 * size / nic + lat));
  CHECK(finish_of(t, one.front()) == exactly(2 * size / nic + lat));
}

TEST_CASE("on routes without latency a collective's flow count still weighs its share") {
  ClusterLinks links;
  links.node_latency = units::seconds(0);
  links.network_latency = units::seconds(0);
  const auto topology = shared_nic(links);
  const double nic = links.nic_bandwidth.value();
  lowering::TaskGraph graph(4);
  const auto four = add_collective(graph, 0, 4, 0, 2);
  const auto one = add_collective(graph, 1, 1, 1, 3);
  const auto t = engine::simulate(graph, topology);
  for (const lowering::TaskId id : four) CHECK(finish_of(t, id) == exactly(2 * size / nic));
  CHECK(finish_of(t, one.front()) == exactly(2 * size / nic));
}
