// The routed networks' keys: routing, rails, tori, dragonflies, and what a wrong value says.
#include <doctest/doctest.h>

#include <twocs/config/scenario_loader.hpp>

#include "config/input_error_capture.hpp"

using namespace twocs;

TEST_CASE("rail, ECMP, torus and dragonfly keys are read") {
  const auto rail = config::parse_platform({"p.yaml", test::small_platform},
                                           {"cluster.network.topology=rail-fat-tree", "cluster.network.routing=ecmp",
                                            "cluster.network.ecmp_seed=7", "cluster.network.cross_rail=spine",
                                            "cluster.network.fabric_bandwidth=50GB/s"});
  CHECK(rail.network.topology == hardware::NetworkTopology::rail_fat_tree);
  CHECK(rail.network.routing == hardware::Routing::ecmp);
  CHECK(rail.network.ecmp_seed == 7);
  CHECK(rail.network.cross_rail == hardware::CrossRail::spine);
  CHECK(rail.network.fabric_bandwidth.value() == doctest::Approx(50e9));
  const auto torus =
      config::parse_platform({"p.yaml", test::small_platform}, {"cluster.nodes=16", "cluster.network.topology=torus",
                                                                "cluster.network.torus_dimensions=[4, 2, 2]"});
  CHECK(torus.network.torus_dimensions == std::vector<std::int64_t>{4, 2, 2});
  const auto fly = config::parse_platform(
      {"p.yaml", test::small_platform}, {"cluster.network.topology=dragonfly", "cluster.network.switches_per_group=4"});
  CHECK(fly.network.switches_per_group == 4);
}

TEST_CASE("a torus that does not hold the cluster's nodes, a dragonfly without groups, ECMP off a tree") {
  const auto torus = test::platform_error(
      test::small_platform, {"cluster.network.topology=torus", "cluster.network.torus_dimensions=[4, 4]"});
  CHECK(torus.problem().find("cluster's 2 nodes") != std::string::npos);
  CHECK(torus.fix().find("product") != std::string::npos);
  const auto fly = test::platform_error(test::small_platform, {"cluster.network.topology=dragonfly"});
  CHECK(fly.problem().find("switches_per_group") != std::string::npos);
  const auto ecmp = test::platform_error(
      test::small_platform,
      {"cluster.network.topology=torus", "cluster.network.torus_dimensions=[2]", "cluster.network.routing=ecmp"});
  CHECK(ecmp.problem().find("ecmp needs a fat tree") != std::string::npos);
  const auto bad = test::platform_error(test::small_platform, {"cluster.network.routing=adaptive"});
  CHECK(bad.problem().find("ideal") != std::string::npos);
}

TEST_CASE("in-network channels: read, NCCL's Hopper 16 by default, outside [1, 64] refused") {
  const auto plain = config::parse_platform({"p.yaml", test::small_platform}, {});
  CHECK(plain.node.in_network_channels == 16);
  const auto blackwell =
      config::parse_platform({"p.yaml", test::small_platform}, {"node.interconnect.in_network_efficiency=0.74",
                                                                "node.interconnect.in_network_channels=24"});
  CHECK(blackwell.node.in_network_channels == 24);
  const auto many = test::platform_error(test::small_platform, {"node.interconnect.in_network_channels=65"});
  CHECK(many.problem().find("in_network_channels") != std::string::npos);
  const auto none = test::platform_error(test::small_platform, {"node.interconnect.in_network_channels=0"});
  CHECK(none.problem().find("in_network_channels") != std::string::npos);
}
