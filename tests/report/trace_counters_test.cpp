// Counter tracks of the traces against closed forms: a hand-built two-device node whose link
// utilisation and memory in use follow from the tasks' times alone.
#include <twocs/report/trace_counters.hpp>

#include <vector>

#include <doctest/doctest.h>

#include "report/report_fixtures.hpp"

using twocs::lowering::Stream;
using twocs::lowering::TaskKind;
using twocs::model::Pass;
using twocs::report::CounterSample;
using twocs::report::CounterTrack;
using twocs::report::TraceFilter;
using twocs::testing::TinyRun;
using twocs::units::Seconds;

namespace {

/// Two devices behind one node switch, each link 100 GB/s each way with `latency` per link.
twocs::platform::Topology two_device_node(double latency) {
  twocs::platform::Topology t;
  t.devices = 2;
  t.devices_per_node = 2;
  t.nodes = 1;
  t.device_link = {twocs::units::bytes_per_second(100e9), Seconds(latency)};
  t.nic_link = t.device_link;
  return t;
}

/// A transfer 0 -> 1 of `bytes` timed [start, finish], in collective `collective`.
void transfer(TinyRun& run, double bytes, double start, double finish, int collective = 0) {
  twocs::testing::add(run, {TaskKind::transfer, Stream::tensor_comm, Pass::forward, 0, 1, 0, 0, collective, 0,
                            "attn.out.all_reduce", 0, 0, bytes, start, finish});
}

void kernel(TinyRun& run, Pass pass, int micro_batch, double start, double finish, int device = 0) {
  twocs::testing::add(run, {TaskKind::compute, Stream::compute, pass, device, -1, 0, micro_batch, -1, -1, "mlp.fc1",
                            finish - start, 1e9, 1e6, start, finish});
}

std::vector<std::pair<double, double>> points(const CounterTrack& track) {
  std::vector<std::pair<double, double>> out;
  for (const CounterSample& s : track.samples) out.emplace_back(s.time.value(), s.value);
  return out;
}

using Points = std::vector<std::pair<double, double>>;

} // namespace

TEST_SUITE("trace counters") {
  TEST_CASE("link utilisation: each transfer adds its bytes over its streaming time to every link of its route") {
    TinyRun run{twocs::lowering::TaskGraph(2), {}};
    transfer(run, 1e9, 0.0, 0.02);                // 1 GB in 20 ms: 50 GB/s, half of a 100 GB/s link
    transfer(run, 5e8, 0.01, 0.03);               // 0.5 GB in 20 ms: 25 GB/s
    kernel(run, Pass::forward, 0, 0.03, 0.04, 1); // device 1 is simulated: its own link is shown
    const auto tracks = twocs::report::link_utilisation_tracks(run.graph, run.timeline, two_device_node(0), {});
    REQUIRE(tracks.size() == 2); // device 0's link up to the switch, the switch's down to device 1
    CHECK(tracks[0].name == "device 0 -> node switch");
    CHECK(tracks[1].name == "node switch -> device 1");
    for (const auto& t : tracks) {
      CHECK(t.unit == twocs::report::CounterUnit::percent);
      CHECK_FALSE(t.device.has_value());
      CHECK(points(t) == Points{{0.0, 50.0}, {0.01, 75.0}, {0.02, 25.0}, {0.03, 0.0}});
    }
  }

  TEST_CASE("link utilisation: a transfer streams only after the route latencies it pays") {
    TinyRun run{twocs::lowering::TaskGraph(2), {}};
    // Switch route: two links of 1 ms each, so the bytes move from 2 ms to the finish at 12 ms.
    transfer(run, 1e9, 0.0, 0.012);
    kernel(run, Pass::forward, 0, 0.012, 0.02, 1);
    const auto tracks = twocs::report::link_utilisation_tracks(run.graph, run.timeline, two_device_node(1e-3), {});
    REQUIRE(tracks.size() == 2);
    CHECK(points(tracks[0]) == Points{{0.0, 0.0}, {0.002, 100.0}, {0.012, 0.0}}); // 1 GB / 10 ms = 100 GB/s
  }

  TEST_CASE("link utilisation: a folded mirror's own link is left out, its simulated peer's shown") {
    TinyRun run{twocs::lowering::TaskGraph(2), {}};
    transfer(run, 1e9, 0.0, 0.02); // device 1 runs no task: folding mirrors it
    const auto tracks = twocs::report::link_utilisation_tracks(run.graph, run.timeline, two_device_node(0), {});
    REQUIRE(tracks.size() == 1);
    CHECK(tracks[0].name == "device 0 -> node switch");
  }

  TEST_CASE("link utilisation: a device filter keeps the links its transfers cross, with all their traffic") {
    TinyRun run{twocs::lowering::TaskGraph(3), {}};
    auto node = two_device_node(0);
    node.devices = node.devices_per_node = 3;
    transfer(run, 1e9, 0.0, 0.02); // 0 -> 1: 50% of each link it crosses
    twocs::testing::add(run, {TaskKind::transfer, Stream::tensor_comm, Pass::forward, 2, 1, 0, 0, 1, 0,
                              "attn.out.all_reduce", 0, 0, 1e9, 0.0, 0.02}); // 2 -> 1: 50% more into device 1
    kernel(run, Pass::forward, 0, 0.02, 0.03, 1);
    TraceFilter device_0;
    device_0.devices = std::vector<twocs::lowering::DeviceId>{0};
    const auto tracks = twocs::report::link_utilisation_tracks(run.graph, run.timeline, node, device_0);
    REQUIRE(tracks.size() == 2); // not device 2's own link: none of device 0's transfers crosses it
    CHECK(tracks[0].name == "device 0 -> node switch");
    CHECK(tracks[1].name == "node switch -> device 1");
    CHECK(points(tracks[1]) == Points{{0.0, 100.0}, {0.02, 0.0}});
  }

  TEST_CASE("link names: a mesh's pair links and a ring's neighbour links name both devices") {
    auto t = two_device_node(0);
    t.devices = t.devices_per_node = 4;
    t.node_topology = twocs::hardware::NodeTopology::mesh; // pairs (0,1) (0,2) (0,3) (1,2) (1,3) (2,3)
    CHECK(twocs::report::link_name(t, 4, true) == "device 1 -> device 3");
    CHECK(twocs::report::link_name(t, 4, false) == "device 3 -> device 1");
    CHECK(twocs::report::link_name(t, 5, true) == "device 2 -> device 3");
    t.node_topology = twocs::hardware::NodeTopology::ring;
    CHECK(twocs::report::link_name(t, 3, true) == "device 3 -> device 0");
  }

  TEST_CASE("memory in use: resident state plus each micro-batch's activations from forward to backward") {
    TinyRun run{twocs::lowering::TaskGraph(2), {}};
    kernel(run, Pass::forward, 0, 0, 1);  // micro-batch 0 allocates at 0
    kernel(run, Pass::forward, 1, 1, 2);  // micro-batch 1 at 1
    kernel(run, Pass::backward, 0, 2, 3); // micro-batch 0 frees at 3
    kernel(run, Pass::backward, 1, 3, 4); // micro-batch 1 at 4
    const std::vector<twocs::report::DeviceMemory> memory{{twocs::units::bytes(1000), twocs::units::bytes(10)},
                                                          {twocs::units::bytes(1000), twocs::units::bytes(10)}};
    const auto tracks = twocs::report::memory_tracks(run.graph, run.timeline, memory, {});
    REQUIRE(tracks.size() == 1); // device 1 runs no task
    CHECK(tracks[0].device == 0);
    CHECK(points(tracks[0]) == Points{{0, 1010}, {1, 1020}, {3, 1010}, {4, 1000}});
    TraceFilter window;
    window.from = Seconds(1.5);
    window.until = Seconds(3.5);
    const auto windowed = twocs::report::memory_tracks(run.graph, run.timeline, memory, window);
    CHECK(points(windowed.at(0)) == Points{{1.5, 1020}, {3, 1010}});
  }
}
