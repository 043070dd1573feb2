// The coarse (streaming) ring lowering: one transfer per ring link carrying what all the steps
// put on it, standing for their latencies (collective_lowering.hpp).
#include <doctest/doctest.h>

#include <twocs/lowering/collective.hpp>
#include <twocs/lowering/collective_lowering.hpp>
#include <twocs/lowering/collective_policy.hpp>
#include <twocs/lowering/task_graph.hpp>

using namespace twocs;
using namespace twocs::lowering;

namespace {

CollectiveSpec coarse_spec(model::Collective kind, double bytes, TaskGraph& graph) {
  CollectiveSpec spec;
  spec.kind = kind;
  spec.group = model::CommGroup::data;
  spec.size = units::Bytes(bytes);
  spec.label = graph.intern_label("test.coarse");
  spec.shape.coarse = true;
  return spec;
}

std::vector<DeviceId> first(int n) {
  std::vector<DeviceId> devices;
  for (int i = 0; i < n; ++i) devices.push_back(i);
  return devices;
}

} // namespace

TEST_CASE("the flag's words, and which collectives have a coarse form") {
  CHECK(collective_lowering_from_string("coarse") == CollectiveLowering::coarse);
  CHECK(collective_lowering_from_string("auto") == CollectiveLowering::automatic);
  CHECK(to_string(CollectiveLowering::step) == "step");
  CHECK_FALSE(collective_lowering_from_string("fast").has_value());
  CHECK(coarse_possible(CollectiveKind::all_reduce, Algorithm::ring, 3));
  CHECK(coarse_possible(CollectiveKind::all_gather, Algorithm::ring, 64));
  CHECK_FALSE(coarse_possible(CollectiveKind::all_reduce, Algorithm::ring, 2));
  CHECK_FALSE(coarse_possible(CollectiveKind::all_reduce, Algorithm::tree, 8));
  CHECK_FALSE(coarse_possible(CollectiveKind::all_to_all, Algorithm::ring, 8));
  CHECK_FALSE(coarse_possible(CollectiveKind::send_recv, Algorithm::ring, 8));
  // auto: from coarse_from_ranks ranks on.
  CHECK_FALSE(lowers_coarse(CollectiveLowering::automatic, CollectiveKind::all_reduce, Algorithm::ring, 4));
  CHECK(lowers_coarse(CollectiveLowering::automatic, CollectiveKind::all_reduce, Algorithm::ring, 8));
  CHECK(lowers_coarse(CollectiveLowering::coarse, CollectiveKind::all_reduce, Algorithm::ring, 4));
  CHECK_FALSE(lowers_coarse(CollectiveLowering::step, CollectiveKind::all_reduce, Algorithm::ring, 64));
}

TEST_CASE("the policy marks rings coarse with or without a network") {
  CollectivePolicy policy;
  policy.lowering = CollectiveLowering::coarse;
  const auto devices = first(8);
  CHECK(choose_collective(policy, model::CommGroup::data, CollectiveKind::all_reduce, units::Bytes(1e6), devices)
            .shape.coarse);
  CHECK_FALSE(
      choose_collective(policy, model::CommGroup::pipeline, CollectiveKind::send_recv, units::Bytes(1e6), first(2))
          .shape.coarse);
  policy.lowering = CollectiveLowering::step;
  CHECK_FALSE(choose_collective(policy, model::CommGroup::data, CollectiveKind::all_reduce, units::Bytes(1e6), devices)
                  .shape.coarse);
}

TEST_CASE("coarse all-reduce: one transfer per link of 2 (n - 1) / n S paying 2 (n - 1) latencies, then the end") {
  for (int n : {3, 8, 40}) {
    CAPTURE(n);
    const double s = 1.2e9;
    TaskGraph graph(n);
    CollectiveInstance ring(graph, coarse_spec(model::Collective::all_reduce, s, graph), first(n), 0);
    REQUIRE(graph.size() == static_cast<std::size_t>(n + 1));
    for (TaskId id = 0; id < static_cast<TaskId>(n); ++id) {
      const Transfer& x = graph.transfer(id);
      CHECK(graph.task(id).device == static_cast<DeviceId>(id));
      CHECK(x.peer == static_cast<DeviceId>((id + 1) % n));
      CHECK(x.bytes.value() == doctest::Approx(2.0 * (n - 1) / n * s).epsilon(1e-12));
      CHECK(x.latency_steps == 2 * (n - 1));
      CHECK(graph.predecessor_count(id) == 0);
    }
    // The end costs nothing and waits for every link.
    const auto end = static_cast<TaskId>(n);
    CHECK(graph.transfer(end).bytes.value() == 0);
    CHECK(graph.predecessor_count(end) == static_cast<std::size_t>(n));
    // Member i enters by its own stream and its predecessor's, and leaves by the end.
    for (int i = 0; i < n; ++i) {
      const TaskId entry = graph.add_kernel(i, {}, {});
      const auto exits = ring.join(graph, i, std::span<const TaskId>(&entry, 1));
      REQUIRE(exits.size() == 1);
      CHECK(exits.front() == end);
    }
    CHECK(graph.predecessor_count(0) == 2);
    CHECK(graph.is_acyclic());
  }
}

TEST_CASE("coarse reduce-scatter and all-gather carry (n - 1) / n S over n - 1 latencies") {
  for (auto kind : {model::Collective::reduce_scatter, model::Collective::all_gather}) {
    TaskGraph graph(8);
    CollectiveInstance ring(graph, coarse_spec(kind, 8000, graph), first(8), 0);
    REQUIRE(graph.size() == 9);
    CHECK(graph.transfer(0).bytes.value() == doctest::Approx(7000.0));
    CHECK(graph.transfer(0).latency_steps == 7);
  }
}

TEST_CASE("folded, the coarse ring is the member's stream and its predecessor's") {
  TaskGraph graph(8);
  CollectiveInstance ring(graph, coarse_spec(model::Collective::all_reduce, 8000, graph), first(8), 0, DeviceId{3});
  REQUIRE(graph.size() == 2);
  CHECK(graph.task(0).device == 3);
  CHECK(graph.transfer(0).peer == 4);
  CHECK(graph.task(1).device == 2);
  CHECK(graph.transfer(1).peer == 3);
  for (TaskId id : {0u, 1u}) {
    CHECK(graph.transfer(id).bytes.value() == doctest::Approx(14000.0));
    CHECK(graph.transfer(id).latency_steps == 14);
  }
  const TaskId entry = graph.add_kernel(3, {}, {});
  const auto exits = ring.join(graph, 3, std::span<const TaskId>(&entry, 1));
  CHECK(exits == std::vector<TaskId>{0, 1});
  CHECK(ring.all_joined());
}

TEST_CASE("a schedule's coarse ring: per channel one message per link, steps x chunks latencies, one end") {
  ScheduleShape shape;
  shape.ranks = 16;
  shape.ranks_per_node = 8;
  shape.channels = 2;
  shape.coarse = true;
  const auto s = make_schedule(Algorithm::ring, CollectiveKind::all_reduce, units::Bytes(3.2e9), shape);
  REQUIRE(s.messages.size() == 33); // 2 channels x 16 links, and the ring's end
  for (std::size_t i = 0; i < 32; ++i) {
    const auto& m = s.messages[i];
    CHECK(m.bytes.value() == doctest::Approx(2.0 * 15 / 16 * 3.2e9 / 2));
    CHECK(m.latency_steps == 30);
    CHECK(m.after.empty());
  }
  // Every rank leaves by the zero-byte end, which waits for every link of every channel.
  REQUIRE(s.common_exit == 32u);
  CHECK(s.messages[32].bytes.value() == 0);
  CHECK(s.messages[32].after.size() == 32);
  shape.coarse = false;
  CHECK(make_schedule(Algorithm::ring, CollectiveKind::all_reduce, units::Bytes(3.2e9), shape).messages.size() ==
        2u * 30 * 16);
}

TEST_CASE("folded, a wide tree is entered and left through one gate each, so two in a row join with two dependencies") {
  // Lowered whole over 64 ranks, a tree all-reduce has many first and last messages; the next
  // collective on the stream must wait for all of the last ones. Through the gates (transfers of
  // no bytes) that is first + last dependencies, not first x last.
  constexpr int n = 64;
  TaskGraph graph(n);
  const auto tree_spec = [&] {
    CollectiveSpec spec = coarse_spec(model::Collective::all_reduce, 64.0e6, graph);
    spec.algorithm = Algorithm::tree;
    spec.shape.ranks_per_node = 8;
    return spec;
  };
  CollectiveInstance one(graph, tree_spec(), first(n), 0, DeviceId{0});
  CollectiveInstance two(graph, tree_spec(), first(n), 1, DeviceId{0});
  const TaskId entry = graph.add_kernel(0, {}, {});
  const auto after_one = one.join(graph, 0, std::span<const TaskId>(&entry, 1));
  REQUIRE(after_one.size() == 1);
  CHECK(graph.task(after_one[0]).is_transfer());
  CHECK(graph.transfer(after_one[0]).bytes.value() == 0);
  const std::size_t before = graph.dependency_count();
  const auto after_two = two.join(graph, 0, after_one);
  CHECK(graph.dependency_count() - before == 1); // the gate out of one into the gate of two
  CHECK(after_two.size() == 1);
}
