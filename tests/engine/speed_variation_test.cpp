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
