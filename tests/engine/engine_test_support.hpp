// Helpers shared by the engine tests: a cluster described by its links only, and tasks built
// by hand. Closed forms are computed in each test, not here.
#pragma once

#include <cstdint>
#include <string_view>

#include <doctest/doctest.h>

#include <twocs/engine/simulate.hpp>
#include <twocs/hardware/cluster.hpp>
#include <twocs/lowering/task_graph.hpp>
#include <twocs/platform/topology.hpp>
#include <twocs/units/quantity.hpp>

namespace twocs::engine::test {

struct ClusterLinks {
  std::int64_t nodes = 2;
  std::int64_t devices_per_node = 4;
  units::ByteRate node_bandwidth = units::bytes_per_second(300e9);
  units::Seconds node_latency = units::seconds(1e-6);
  units::ByteRate nic_bandwidth = units::bytes_per_second(25e9);
  units::Seconds network_latency = units::seconds(5e-6);
  hardware::NetworkTopology network = hardware::NetworkTopology::fat_tree;
  double oversubscription = 1.0;
  std::int64_t nodes_per_switch = 32;
};

inline hardware::ClusterSpec make_cluster(const ClusterLinks& c) {
  hardware::ClusterSpec cluster;
  cluster.name = "test-cluster";
  cluster.nodes = c.nodes;
  cluster.node.devices = c.devices_per_node;
  cluster.node.interconnect = {c.node_bandwidth, c.node_latency};
  cluster.network.topology = c.network;
  cluster.network.link = {c.nic_bandwidth, c.network_latency};
  cluster.network.oversubscription = c.oversubscription;
  cluster.network.nodes_per_switch = c.nodes_per_switch;
  return cluster;
}

/// The topology of every device of the cluster.
inline platform::Topology make_topology(const ClusterLinks& c) {
  const auto cluster = make_cluster(c);
  return platform::build_topology(cluster, cluster.device_count());
}

inline lowering::TaskId add_compute(lowering::TaskGraph& graph, lowering::DeviceId device, units::Seconds duration,
                                    std::string_view label = "compute") {
  lowering::Kernel kernel;
  kernel.duration = duration;
  return graph.add_kernel(device, {model::Pass::forward, -1, -1, graph.intern_label(label)}, kernel);
}

/// A kernel of `seconds` that does no FLOPs and moves no bytes.
inline lowering::Kernel kernel_of(double seconds) {
  return {units::Seconds(seconds), units::Flops(0), units::Bytes(0), false};
}

inline lowering::TaskId add_transfer(lowering::TaskGraph& graph, lowering::DeviceId from, lowering::DeviceId to,
                                     units::Bytes bytes, std::string_view label = "transfer") {
  lowering::Transfer transfer;
  transfer.bytes = bytes;
  transfer.peer = to;
  transfer.group = model::CommGroup::data;
  return graph.add_transfer(from, {model::Pass::forward, -1, -1, graph.intern_label(label)}, transfer);
}

inline double start_of(const Timeline& t, lowering::TaskId id) { return t.tasks.at(id).start.value(); }
inline double finish_of(const Timeline& t, lowering::TaskId id) { return t.tasks.at(id).finish.value(); }
inline double duration_of(const Timeline& t, lowering::TaskId id) {
  return (t.tasks.at(id).finish - t.tasks.at(id).start).value();
}

/// Closed-form checks: SimGrid is exact up to rounding of doubles, so results must agree to a
/// relative 1e-9 (doctest's Approx alone adds an absolute 1e-9 s, too loose for microseconds).
inline constexpr double exact = 1e-9;
inline doctest::Approx exactly(double expected) { return doctest::Approx(expected).epsilon(exact).scale(0); }

} // namespace twocs::engine::test
