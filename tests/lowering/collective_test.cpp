#include <doctest/doctest.h>

#include <set>

#include <twocs/lowering/collective.hpp>
#include <twocs/lowering/device_program.hpp>
#include <twocs/lowering/task_graph.hpp>

using namespace twocs;
using namespace twocs::lowering;

namespace {

CollectiveSpec spec_of(model::Collective kind, double bytes, TaskGraph& graph) {
  CollectiveSpec spec;
  spec.kind = kind;
  spec.group = model::CommGroup::tensor;
  spec.size = units::Bytes(bytes);
  spec.label = graph.intern_label("test.collective");
  return spec;
}

} // namespace

TEST_CASE("ring plans: 2(n-1) steps of S/n for all-reduce, n-1 for reduce-scatter and all-gather") {
  const units::Bytes s(1200);
  CHECK(ring_plan(model::Collective::all_reduce, 4, s).steps == 6);
  CHECK(ring_plan(model::Collective::all_reduce, 4, s).chunk == units::Bytes(300));
  CHECK(ring_plan(model::Collective::reduce_scatter, 4, s).steps == 3);
  CHECK(ring_plan(model::Collective::all_gather, 3, s).chunk == units::Bytes(400));
  CHECK(ring_plan(model::Collective::all_reduce, 1, s).steps == 0);
  CHECK(ring_plan(model::Collective::send_recv, 2, s).chunk == s);
}

TEST_CASE("a ring all-reduce is n transfers per step, each forwarding what arrived in the step before") {
  for (int n : {2, 3, 8}) {
    CAPTURE(n);
    TaskGraph graph(n);
    std::vector<DeviceId> devices;
    for (int i = 0; i < n; ++i) devices.push_back(i);
    CollectiveInstance ring(graph, spec_of(model::Collective::all_reduce, 8000, graph), devices, 0);
    CHECK(graph.size() == static_cast<std::size_t>(2 * (n - 1) * n));
    for (TaskId id = 0; id < graph.size(); ++id) {
      const Task& t = graph.task(id);
      REQUIRE(t.is_transfer());
      const Transfer& x = graph.transfer(id);
      CHECK(x.peer == (t.device + 1) % n);
      CHECK(x.bytes.value() == doctest::Approx(8000.0 / n));
      CHECK(graph.stream(id) == Stream::tensor_comm);
      CHECK(graph.predecessor_count(id) == (x.step == 0 ? 0u : 2u));
      // Step k from device i forwards what came from i - 1 in step k - 1, after i's own send of step k - 1.
      std::set<std::pair<int, DeviceId>> expected, actual;
      if (x.step > 0) expected = {{x.step - 1, (t.device + n - 1) % n}, {x.step - 1, t.device}};
      graph.for_each_predecessor(id, [&](TaskId p) { actual.insert({graph.transfer(p).step, graph.task(p).device}); });
      CHECK(actual == expected);
    }
    // Everyone joins with an entry task: step 0 then waits for both ends.
    std::vector<TaskId> entries;
    for (int i = 0; i < n; ++i) {
      entries.push_back(graph.add_kernel(i, {}, {}));
    }
    for (int i = 0; i < n; ++i) {
      const auto done = ring.join(graph, i, std::span<const TaskId>(&entries[static_cast<std::size_t>(i)], 1));
      CHECK(done.size() == 2); // its last send and its last receive
      for (TaskId d : done) CHECK(graph.transfer(d).step == 2 * (n - 1) - 1);
    }
    CHECK(ring.all_joined());
    CHECK(graph.is_acyclic());
    for (TaskId id = 0; id < static_cast<TaskId>(2 * (n - 1) * n); ++id)
      if (graph.transfer(id).step == 0) CHECK(graph.predecessor_count(id) == 2u);
  }
}

TEST_CASE("device programs chain their compute kernels and wait for collectives where told") {
  TaskGraph graph(2);
  CollectiveRegistry registry(graph);
  DeviceProgram a(graph, registry, 0), b(graph, registry, 1);
  const auto spec = spec_of(model::Collective::all_reduce, 1000, graph);
  std::vector<TaskId> after_a, after_b;
  for (auto* program : {&a, &b}) {
    program->compute({}, {});
    program->collective(spec, {0, 1}, CollectiveWait{1, false}); // overlaps one kernel
    const TaskId overlapped = program->compute({}, {});
    const TaskId waiting = program->compute({}, {});
    (program == &a ? after_a : after_b) = {overlapped, waiting};
  }
  CHECK(registry.pending() == 0);
  CHECK(graph.is_acyclic());
  // The overlapped kernel depends only on its predecessor kernel; the next one also on the collective.
  CHECK(graph.predecessor_count(after_a[0]) == 1);
  CHECK(graph.predecessor_count(after_a[1]) == 3); // previous kernel + last send + last receive
}

TEST_CASE("NCCL's rings across nodes: one channel per NIC, each leaving every node through another rank") {
  // 16 ranks on two nodes of 8 (one NIC per device): 8 channels, channel c's ring visits node 0 as
  // c, c+1, ..., 7, 0, ..., c-1 and node 1 likewise, so every rank sends across nodes in exactly
  // one channel and receives across nodes in exactly one.
  ScheduleShape shape;
  shape.ranks = 16;
  shape.ranks_per_node = 8;
  shape.channels = 8;
  std::vector<int> sends_across(16, 0), receives_across(16, 0);
  for (int c = 0; c < 8; ++c) {
    const auto order = ring_order(shape, c);
    CHECK(order[0] == c);
    CHECK(order[8] == 8 + c);
    for (int p = 0; p < 16; ++p) {
      const int from = order[static_cast<std::size_t>(p)], to = order[static_cast<std::size_t>((p + 1) % 16)];
      if (from / 8 != to / 8) {
        ++sends_across[static_cast<std::size_t>(from)];
        ++receives_across[static_cast<std::size_t>(to)];
      }
    }
  }
  for (int r = 0; r < 16; ++r) {
    CHECK(sends_across[static_cast<std::size_t>(r)] == 1);
    CHECK(receives_across[static_cast<std::size_t>(r)] == 1);
  }
}

TEST_CASE("folded, a multi-channel ring is the member's side of every channel's ring") {
  TaskGraph graph(16);
  auto spec = spec_of(model::Collective::all_reduce, 16000, graph);
  spec.shape.ranks_per_node = 8;
  spec.shape.channels = 8;
  std::vector<DeviceId> devices;
  for (int i = 0; i < 16; ++i) devices.push_back(i);
  const DeviceId member = 3;
  CollectiveInstance ring(graph, spec, devices, 0, member);
  // Per channel and step a send and a receive: 8 x 30 x 2.
  REQUIRE(graph.size() == 8u * 30 * 2);
  int across = 0;
  for (TaskId id = 0; id < graph.size(); ++id) {
    const Task& t = graph.task(id);
    const Transfer& x = graph.transfer(id);
    CHECK((t.device == member || x.peer == member));
    CHECK(x.bytes.value() == doctest::Approx(16000.0 / 16 / 8)); // S / n per step, split over 8 channels
    if (x.step == 0 && t.device / 8 != x.peer / 8) ++across;
  }
  CHECK(across == 2); // it leaves its node in one channel and enters it in another
  const TaskId entry = graph.add_kernel(member, {}, {});
  const auto exits = ring.join(graph, member, std::span<const TaskId>(&entry, 1));
  CHECK(exits.size() == 16); // the last send and receive of every channel
  CHECK(ring.all_joined());
  CHECK(graph.is_acyclic());
}
