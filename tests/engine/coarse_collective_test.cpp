// Coarse ring collectives (lowering/collective_lowering.hpp) simulated: on an idle network they
// take the step-by-step ring's closed form, computed here from the links; their transfers pay
// the steps' latencies before the bytes move.
#include <doctest/doctest.h>

#include <numeric>

#include <twocs/lowering/collective.hpp>
#include <twocs/lowering/collective_algorithm_lowering.hpp>

#include "engine_test_support.hpp"

using namespace twocs;
using namespace twocs::engine::test;
using lowering::Algorithm;
using lowering::CollectiveKind;

namespace {

/// The makespan of a ring of `kind` over the first `n` devices, lowered as `twocs run` does.
double simulate_ring(const platform::Topology& topology, model::Collective kind, double size, int n, bool coarse) {
  lowering::TaskGraph graph(n);
  lowering::CollectiveSpec spec;
  spec.kind = kind;
  spec.group = model::CommGroup::data;
  spec.size = units::Bytes(size);
  spec.shape.coarse = coarse;
  std::vector<lowering::DeviceId> devices(static_cast<std::size_t>(n));
  std::iota(devices.begin(), devices.end(), 0);
  lowering::CollectiveInstance ring(graph, spec, devices, 0);
  for (int i = 0; i < n; ++i) {
    const auto entry = add_compute(graph, i, units::seconds(1e-3));
    (void)ring.join(graph, i, std::span<const lowering::TaskId>(&entry, 1));
  }
  return engine::simulate(graph, topology).makespan.value();
}

/// The makespan of a collbench-style ring schedule over the first `n` devices.
double simulate_schedule(const platform::Topology& topology, double size, lowering::ScheduleShape shape) {
  const auto schedule = lowering::make_schedule(Algorithm::ring, CollectiveKind::all_reduce, units::Bytes(size), shape);
  lowering::TaskGraph graph(shape.ranks);
  std::vector<lowering::DeviceId> devices(static_cast<std::size_t>(shape.ranks));
  std::iota(devices.begin(), devices.end(), 0);
  (void)lowering::add_schedule(graph, schedule, devices, lowering::TaskTag{}, lowering::Transfer{});
  return engine::simulate(graph, topology).makespan.value();
}

} // namespace

TEST_CASE("coarse all-reduce within a node: 1 ms of compute, then 2 (n - 1) (S / (n B) + L)") {
  ClusterLinks links;
  links.nodes = 1;
  links.devices_per_node = 8;
  const auto topology = make_topology(links);
  const double b = links.node_bandwidth.value(), l = links.node_latency.value();
  for (double s : {1e3, 64e6, 1e9}) {
    CAPTURE(s);
    const double closed_form = 1e-3 + 14 * (s / 8 / b + l);
    CHECK(simulate_ring(topology, model::Collective::all_reduce, s, 8, true) == exactly(closed_form));
    CHECK(simulate_ring(topology, model::Collective::all_reduce, s, 8, false) == exactly(closed_form));
    CHECK(simulate_ring(topology, model::Collective::all_gather, s, 8, true) == exactly(1e-3 + 7 * (s / 8 / b + l)));
  }
}

TEST_CASE("coarse all-reduce across nodes: the slowest link's latency and bandwidth set the pace") {
  // One device per node: every ring link is a NIC route (two NIC links, a fat-tree hop each way).
  ClusterLinks links;
  links.nodes = 6;
  links.devices_per_node = 1;
  const auto topology = make_topology(links);
  const double s = 600e6;
  const double step = simulate_ring(topology, model::Collective::all_reduce, s, 6, false);
  CHECK(simulate_ring(topology, model::Collective::all_reduce, s, 6, true) == exactly(step));
  // Two devices per node in one ring: fast node links beside slow NIC links; every member leaves
  // with the slowest, as in the step-by-step ring.
  links.nodes = 3;
  links.devices_per_node = 2;
  const auto mixed = make_topology(links);
  const double nic = links.nic_bandwidth.value();
  const double step_mixed = simulate_ring(mixed, model::Collective::all_reduce, s, 6, false);
  const double coarse_mixed = simulate_ring(mixed, model::Collective::all_reduce, s, 6, true);
  CHECK(coarse_mixed == doctest::Approx(step_mixed).epsilon(0.01));
  CHECK(coarse_mixed > 1e-3 + 10.0 / 6 * s / nic);
}

TEST_CASE("collbench sizes 64 MiB to 4 GiB: coarse within 1% of step by step, across nodes with channels") {
  ClusterLinks links;
  links.nodes = 4;
  links.devices_per_node = 8;
  const auto topology = make_topology(links);
  lowering::ScheduleShape shape;
  shape.ranks = 32;
  shape.ranks_per_node = 8;
  shape.channels = 8;
  for (double s = 64.0 * (1 << 20); s <= 4.0 * (1 << 30); s *= 4) {
    CAPTURE(s);
    shape.coarse = false;
    const double step = simulate_schedule(topology, s, shape);
    shape.coarse = true;
    CHECK(simulate_schedule(topology, s, shape) == doctest::Approx(step).epsilon(0.01));
  }
}
