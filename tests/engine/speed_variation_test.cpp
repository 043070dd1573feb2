// Per-device speed variation (hardware/speed_variation.hpp): a device's kernels take its slowdown
// times as long; a synchronous step waits for the slowest device, so its expected cost grows with
// the group size.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>

#include "engine_test_support.hpp"

using namespace twocs;
using namespace twocs::engine::test;

TEST_CASE("each device's kernel takes its own seeded slowdown times as long") {
  auto topology = make_topology(ClusterLinks{});
  topology.speed_variation = {0.05, 7};
  const double d = 10e-3;
  lowering::TaskGraph graph(8);
  std::vector<lowering::TaskId> kernels;
  for (lowering::DeviceId dev = 0; dev < 8; ++dev) kernels.push_back(add_compute(graph, dev, units::seconds(d)));
  const auto timeline = engine::simulate(graph, topology);
  for (lowering::DeviceId dev = 0; dev < 8; ++dev)
    CHECK(finish_of(timeline, kernels[static_cast<std::size_t>(dev)]) ==
          exactly(d * hardware::speed_slowdown(topology.speed_variation, dev)));
  topology.speed_variation.spread = 0;
  CHECK(finish_of(engine::simulate(graph, topology), kernels[3]) == exactly(d));
}

TEST_CASE("slowdowns are lognormal with the given spread, deterministic, and their maximum grows with the group") {
  const hardware::SpeedVariation v{0.03, 11};
  CHECK(hardware::speed_slowdown(v, 5) == hardware::speed_slowdown(v, 5));
  CHECK(hardware::speed_slowdown({0.0, 11}, 5) == 1.0);
  const int n = 20000;
  double sum = 0, sum2 = 0;
  for (int d = 0; d < n; ++d) {
    const double z = std::log(hardware::speed_slowdown(v, d));
    sum += z;
    sum2 += z * z;
  }
  const double mean = sum / n;
  CHECK(std::fabs(mean) < 4 * 0.03 / std::sqrt(n)); // 4 standard errors
  CHECK(std::sqrt(sum2 / n - mean * mean) == doctest::Approx(0.03).epsilon(0.03));
  const auto slowest = [&](int size) {
    double m = 0;
    for (int d = 0; d < size; ++d) m = std::max(m, hardware::speed_slowdown(v, d));
    return m;
  };
  CHECK(slowest(8) <= slowest(64));
  CHECK(slowest(64) <= slowest(4096));
  // Expected maximum of 4096 standard normals is about 3.4 (Gumbel asymptote): exp(0.03 x 3.4) = 1.107.
  CHECK(slowest(4096) > std::exp(0.03 * 2.5));
}

TEST_CASE("only a kernel's clock share stretches: memory-bound time and overheads keep theirs") {
  auto topology = make_topology(ClusterLinks{});
  topology.speed_variation = {0.05, 7};
  const double d = 10e-3;
  lowering::TaskGraph graph(8); // a kernel on every device: an unfolded graph, each device its own draw
  const auto label = graph.intern_label("kernel");
  const float shares[] = {0.0F, 0.25F, 1.0F};
  for (lowering::DeviceId dev = 0; dev < 8; ++dev) {
    lowering::Kernel kernel;
    kernel.duration = units::seconds(d);
    kernel.clock_share = shares[dev % 3];
    graph.add_kernel(dev, {model::Pass::forward, -1, -1, label}, kernel);
  }
  const auto timeline = engine::simulate(graph, topology);
  for (lowering::TaskId id = 0; id < 8; ++id) {
    const double share = graph.kernel(id).clock_share;
    const double s = hardware::speed_slowdown(topology.speed_variation, graph.task(id).device);
    CHECK(finish_of(timeline, id) == exactly(d * (1 + (s - 1) * share)));
  }
}

TEST_CASE("the expected largest slowdown: closed forms for one and two devices, and it grows with the group") {
  const double s = 0.05;
  const hardware::SpeedVariation v{s, 3};
  // One lognormal: its mean exp(s^2 / 2). Two: E[exp(s max(Z1, Z2))] = 2 exp(s^2 / 2) Phi(s / sqrt 2).
  CHECK(hardware::expected_max_slowdown(v, 1) == doctest::Approx(std::exp(s * s / 2)).epsilon(1e-9));
  const double phi = 0.5 * std::erfc(-(s / std::sqrt(2.0)) / std::sqrt(2.0));
  CHECK(hardware::expected_max_slowdown(v, 2) == doctest::Approx(2 * std::exp(s * s / 2) * phi).epsilon(1e-9));
  CHECK(hardware::expected_max_slowdown({0.0, 3}, 4096) == 1.0);
  double before = 1;
  for (const std::int64_t n : {2, 64, 1024, 16384, 131072}) {
    const double m = hardware::expected_max_slowdown(v, n);
    CHECK(m > before);
    before = m;
  }
  // Against the drawn slowdowns: the mean over 200 disjoint groups of 64 of each group's largest.
  double sum = 0;
  for (int group = 0; group < 200; ++group) {
    double largest = 0;
    for (int d = 0; d < 64; ++d) largest = std::max(largest, hardware::speed_slowdown(v, group * 64 + d));
    sum += largest;
  }
  CHECK(sum / 200 == doctest::Approx(hardware::expected_max_slowdown(v, 64)).epsilon(0.005));
}

TEST_CASE("folded, every simulated device takes the expected largest slowdown of the topology, whatever the seed") {
  auto topology = make_topology(ClusterLinks{});
  const double d = 10e-3;
  lowering::TaskGraph graph(8);
  const auto kernel = add_compute(graph, 2, units::seconds(d)); // devices 0-1 and 3-7 unused: a folded graph
  for (const std::uint64_t seed : {1, 2}) {
    topology.speed_variation = {0.05, seed};
    CHECK(
        finish_of(engine::simulate(graph, topology), kernel) ==
        doctest::Approx(d * hardware::expected_max_slowdown(topology.speed_variation, topology.devices)).epsilon(1e-9));
  }
}

TEST_CASE(
    "a graph whose other devices only carry transfers is folded too: its computing device takes the expectation") {
  // A folded run's peers' traffic (lowering/peer_traffic.hpp) touches every device; only device 2
  // computes, so it stands for the others and takes the expected largest slowdown, not its draw.
  auto topology = make_topology(ClusterLinks{});
  const double d = 10e-3;
  lowering::TaskGraph graph(8);
  const auto kernel = add_compute(graph, 2, units::seconds(d));
  for (lowering::DeviceId from = 0; from < 8; ++from) add_transfer(graph, from, (from + 1) % 8, units::Bytes(1e6));
  topology.speed_variation = {0.05, 3};
  CHECK(finish_of(engine::simulate(graph, topology), kernel) ==
        doctest::Approx(d * hardware::expected_max_slowdown(topology.speed_variation, topology.devices)).epsilon(1e-9));
  CHECK(hardware::expected_max_slowdown(topology.speed_variation, topology.devices) !=
        doctest::Approx(hardware::speed_slowdown(topology.speed_variation, 2)));
}
