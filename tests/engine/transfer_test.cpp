// Point-to-point transfers on an idle or lightly loaded network, against closed forms
// (time = latency + size / bandwidth, bandwidth shared evenly by the flows on a link).
#include <doctest/doctest.h>

#include "engine_test_support.hpp"

using namespace twocs;
using namespace twocs::engine::test;
using namespace twocs::units::literals;

namespace {
const ClusterLinks links{}; // 2 nodes x 4 devices; 300 GB/s + 1 us in a node, 25 GB/s + 5 us between
const double nvlink = links.node_bandwidth.value();
const double node_latency = links.node_latency.value();
const double nic = links.nic_bandwidth.value();
const double net_latency = links.network_latency.value();
} // namespace

TEST_CASE("an intra-node transfer takes S / B_node + L_node") {
  const auto topology = make_topology(links);
  lowering::TaskGraph graph(8);
  const double s = 1e9;
  const auto id = add_transfer(graph, 1, 3, units::bytes(s));
  const auto timeline = engine::simulate(graph, topology);
  CHECK(duration_of(timeline, id) == exactly(s / nvlink + node_latency));
}

TEST_CASE("an inter-node transfer takes S / B_nic + L_net") {
  const auto topology = make_topology(links);
  lowering::TaskGraph graph(8);
  const double s = 256e6;
  const auto id = add_transfer(graph, 2, 6, units::bytes(s));
  const auto timeline = engine::simulate(graph, topology);
  CHECK(duration_of(timeline, id) == exactly(s / nic + net_latency));
}

TEST_CASE("a payload is rounded to whole bytes, a tiny one costs the route latency") {
  const auto topology = make_topology(links);
  lowering::TaskGraph graph(8);
  const auto intra = add_transfer(graph, 0, 1, 1_B);
  const auto inter = add_transfer(graph, 0, 4, 1_B);
  const auto timeline = engine::simulate(graph, topology);
  CHECK(duration_of(timeline, intra) == exactly(1 / nvlink + node_latency));
  CHECK(duration_of(timeline, inter) == exactly(1 / nic + net_latency));
  CHECK(topology.route_latency(0, 1).value() == exactly(node_latency));
  CHECK(topology.route_latency(0, 4).value() == exactly(net_latency));
}

TEST_CASE("two transfers from one device to two other nodes share its NIC") {
  auto four_nodes = links;
  four_nodes.nodes = 3;
  const auto topology = make_topology(four_nodes);
  lowering::TaskGraph graph(12);
  const double s = 100e6;
  const auto a = add_transfer(graph, 0, 4, units::bytes(s));
  const auto b = add_transfer(graph, 0, 8, units::bytes(s));
  const auto timeline = engine::simulate(graph, topology);
  // Both flows cross the sender's NIC: each gets half its bandwidth for the whole transfer.
  CHECK(duration_of(timeline, a) == exactly(2 * s / nic + net_latency));
  CHECK(duration_of(timeline, b) == exactly(2 * s / nic + net_latency));
}

TEST_CASE("transfers into two devices of one node from two sources do not contend") {
  const auto topology = make_topology(links);
  lowering::TaskGraph graph(8);
  const double s = 100e6;
  // Device 0 -> 4 and device 1 -> 5: distinct NICs at both ends, and the leaf links carry the
  // aggregate of the node's NICs.
  const auto a = add_transfer(graph, 0, 4, units::bytes(s));
  const auto b = add_transfer(graph, 1, 5, units::bytes(s));
  const auto timeline = engine::simulate(graph, topology);
  CHECK(duration_of(timeline, a) == exactly(s / nic + net_latency));
  CHECK(duration_of(timeline, b) == exactly(s / nic + net_latency));
}

TEST_CASE("every device of a node can use its NIC at full rate at once") {
  const auto topology = make_topology(links);
  lowering::TaskGraph graph(8);
  const double s = 50e6;
  for (lowering::DeviceId d = 0; d < 4; ++d) add_transfer(graph, d, d + 4, units::bytes(s));
  const auto timeline = engine::simulate(graph, topology);
  for (lowering::TaskId id = 0; id < 4; ++id) CHECK(duration_of(timeline, id) == exactly(s / nic + net_latency));
}

TEST_CASE("two transfers into one device share its link down") {
  const auto topology = make_topology(links);
  lowering::TaskGraph graph(8);
  const double s = 300e6;
  const auto a = add_transfer(graph, 0, 2, units::bytes(s));
  const auto b = add_transfer(graph, 1, 2, units::bytes(s));
  const auto c = add_transfer(graph, 2, 3, units::bytes(s)); // the other direction is independent
  const auto timeline = engine::simulate(graph, topology);
  CHECK(duration_of(timeline, a) == exactly(2 * s / nvlink + node_latency));
  CHECK(duration_of(timeline, b) == exactly(2 * s / nvlink + node_latency));
  CHECK(duration_of(timeline, c) == exactly(s / nvlink + node_latency));
}

TEST_CASE("a platform without latency still shares links fairly") {
  // CM02 weighs bandwidth shares by route latency; zero latency must not starve any flow.
  auto no_latency = links;
  no_latency.node_latency = 0_s;
  no_latency.network_latency = 0_s;
  const auto topology = make_topology(no_latency);
  lowering::TaskGraph graph(8);
  const double s = 100e6;
  const auto a = add_transfer(graph, 0, 4, units::bytes(s));
  const auto b = add_transfer(graph, 0, 5, units::bytes(s));
  const auto c = add_transfer(graph, 1, 2, units::bytes(s));
  const auto timeline = engine::simulate(graph, topology);
  CHECK(duration_of(timeline, a) == exactly(2 * s / nic));
  CHECK(duration_of(timeline, b) == exactly(2 * s / nic));
  CHECK(duration_of(timeline, c) == exactly(s / nvlink));
}

TEST_CASE("a transfer waits for its predecessor and overlaps compute on other streams") {
  const auto topology = make_topology(links);
  lowering::TaskGraph graph(8);
  const double s = 25e6; // 1 ms on the NIC
  const auto produce = add_compute(graph, 0, 2_ms);
  const auto send = add_transfer(graph, 0, 4, units::bytes(s));
  const auto overlap = add_compute(graph, 0, 3_ms);
  const auto consume = add_compute(graph, 4, 1_ms);
  graph.add_dependency(produce, send);
  graph.add_dependency(produce, overlap);
  graph.add_dependency(send, consume);
  const auto timeline = engine::simulate(graph, topology);
  const double arrival = 2e-3 + s / nic + net_latency;
  CHECK(start_of(timeline, send) == exactly(2e-3));
  CHECK(finish_of(timeline, send) == exactly(arrival));
  CHECK(finish_of(timeline, overlap) == exactly(5e-3)); // a transfer does not slow the host
  CHECK(finish_of(timeline, consume) == exactly(arrival + 1e-3));
}

TEST_CASE("a fraction of a byte moves one byte and pays the route's latency, and no bytes at all cost nothing") {
  const auto topology = make_topology(ClusterLinks{});
  lowering::TaskGraph graph(2);
  const auto tiny = add_transfer(graph, 0, 1, units::Bytes(0.2));
  const auto none = add_transfer(graph, 1, 0, units::Bytes(0));
  const auto timeline = engine::simulate(graph, topology);
  const double one_byte = 1.0 / ClusterLinks{}.node_bandwidth.value();
  CHECK(finish_of(timeline, tiny) == doctest::Approx(topology.route_latency(0, 1).value() + one_byte).epsilon(1e-6));
  CHECK(finish_of(timeline, none) == 0.0);
}
