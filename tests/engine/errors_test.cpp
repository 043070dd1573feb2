// A DAG that cannot drain is an internal error reported with the first task that never ran;
// the engine stays usable afterwards.
#include <doctest/doctest.h>

#include <stdexcept>
#include <string>

#include "engine_test_support.hpp"

using namespace twocs;
using namespace twocs::engine::test;
using namespace twocs::units::literals;

TEST_CASE("a dependency cycle throws SimulationError naming the first task that never ran") {
  const auto topology = make_topology({});
  lowering::TaskGraph graph(2);
  const auto ok = add_compute(graph, 0, 1_ms, "fine");
  const auto a = add_compute(graph, 0, 1_ms, "attn.qkv");
  const auto b = add_transfer(graph, 0, 1, 1_MB, "mlp.fc2.all_reduce");
  const auto c = add_compute(graph, 1, 1_ms, "downstream");
  graph.add_dependency(ok, a);
  graph.add_dependency(a, b);
  graph.add_dependency(b, a);
  graph.add_dependency(b, c); // waits on the cycle: never runs either
  REQUIRE_FALSE(graph.is_acyclic());
  std::string message;
  try {
    (void)engine::simulate(graph, topology);
  } catch (const engine::SimulationError& e) {
    message = e.what();
  }
  CHECK(message.find("3 of 4 tasks") != std::string::npos);
  CHECK(message.find(graph.display_name(a)) != std::string::npos);
}

TEST_CASE("a graph whose every task waits on another throws") {
  const auto topology = make_topology({});
  lowering::TaskGraph graph(1);
  const auto a = add_compute(graph, 0, 0_s);
  const auto b = add_compute(graph, 0, 0_s);
  graph.add_dependency(a, b);
  graph.add_dependency(b, a);
  CHECK_THROWS_AS((void)engine::simulate(graph, topology), engine::SimulationError);
}

TEST_CASE("a graph needing more devices than the topology is rejected") {
  const auto topology = make_topology({}); // 8 devices
  lowering::TaskGraph graph(9);
  add_compute(graph, 8, 1_ms);
  CHECK_THROWS_AS((void)engine::simulate(graph, topology), std::invalid_argument);
}

TEST_CASE("the engine works again after a failed simulation") {
  const auto topology = make_topology({});
  lowering::TaskGraph broken(1);
  const auto a = add_compute(broken, 0, 1_ms);
  const auto b = add_compute(broken, 0, 1_ms);
  broken.add_dependency(a, b);
  broken.add_dependency(b, a);
  CHECK_THROWS_AS((void)engine::simulate(broken, topology), engine::SimulationError);
  lowering::TaskGraph fine(2);
  const auto t = add_transfer(fine, 0, 1, 1_GB);
  const auto timeline = engine::simulate(fine, topology);
  CHECK(duration_of(timeline, t) == exactly(1e9 / 300e9 + 1e-6));
}
