// TaskGraph storage: kernels and transfers kept apart, identical kernels interned, dependencies
// in compressed rows that list each task's successors in the order they were added (and its
// predecessors in id order), whatever order reads and writes come in, and a footprint small
// enough for tens of millions of tasks.
#include <doctest/doctest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include <twocs/cost/roofline.hpp>
#include <twocs/lowering/lower_iteration.hpp>
#include <twocs/lowering/task_graph.hpp>

#include "support/scenarios.hpp"

using namespace twocs;
using namespace twocs::lowering;

namespace {

std::vector<TaskId> successors_of(const TaskGraph& g, TaskId id) {
  std::vector<TaskId> out;
  g.for_each_successor(id, [&](TaskId next) { out.push_back(next); });
  return out;
}

std::vector<TaskId> predecessors_of(const TaskGraph& g, TaskId id) {
  std::vector<TaskId> out;
  g.for_each_predecessor(id, [&](TaskId before) { out.push_back(before); });
  return out;
}

} // namespace

TEST_CASE("kernels and transfers keep their own fields, the stream follows from the kind") {
  TaskGraph g(3);
  const auto label = g.intern_label("k");
  const TaskId k = g.add_kernel(1, {model::Pass::backward, 2, 3, label},
                                {units::Seconds(1e-3), units::Flops(2e9), units::Bytes(4e6), true});
  const TaskId x = g.add_transfer(0, {model::Pass::forward, -1, 0, g.intern_label("x")},
                                  {units::Bytes(8e3), 2, 7, 1, model::CommGroup::data});
  CHECK_FALSE(g.task(k).is_transfer());
  CHECK(g.task(k).device == 1);
  CHECK(g.task(k).layer == 2);
  CHECK(g.task(k).micro_batch == 3);
  CHECK(g.kernel(k).flops.value() == 2e9);
  CHECK(g.kernel(k).model_flops);
  CHECK(g.stream(k) == Stream::compute);
  CHECK(g.task(x).is_transfer());
  CHECK(g.transfer(x).peer == 2);
  CHECK(g.transfer(x).collective == 7);
  CHECK(g.transfer(x).step == 1);
  CHECK(g.stream(x) == Stream::data_comm);
  CHECK(g.involves(x, 0));
  CHECK(g.involves(x, 2));
  CHECK_FALSE(g.involves(x, 1));
  CHECK(g.involves(k, 1));
  CHECK_FALSE(g.involves(k, 2));
  CHECK(g.display_name(x) == "x mb0 0->2");
  CHECK(g.label_of(k) == "k");
}

TEST_CASE("dependencies keep their order, with reads and writes interleaved and repeated edges kept") {
  TaskGraph g(1);
  for (int i = 0; i < 5; ++i) (void)g.add_kernel(0, {}, {});
  g.add_dependency(0, 3);
  g.add_dependency(0, 1);
  g.add_dependency(2, 1);
  CHECK(successors_of(g, 0) == std::vector<TaskId>{3, 1});
  CHECK(predecessors_of(g, 1) == std::vector<TaskId>{0, 2});
  // Added after a read: a new task and new dependencies, one of them repeated.
  const TaskId late = g.add_kernel(0, {}, {});
  CHECK(g.predecessor_count(late) == 0);
  g.add_dependency(0, late);
  g.add_dependency(4, 1);
  g.add_dependency(4, 1);
  CHECK(successors_of(g, 0) == std::vector<TaskId>{3, 1, late});
  CHECK(predecessors_of(g, 1) == std::vector<TaskId>{0, 2, 4, 4});
  CHECK(predecessors_of(g, late) == std::vector<TaskId>{0});
  CHECK(g.dependency_count() == 6);
  CHECK(g.is_acyclic());
  g.add_dependency(1, 0);
  CHECK_FALSE(g.is_acyclic());
}

TEST_CASE("predecessors come in increasing id order, successors in the order added") {
  TaskGraph g(1);
  for (int i = 0; i < 6; ++i) (void)g.add_kernel(0, {}, {});
  g.add_dependency(3, 5);
  g.add_dependency(1, 5);
  g.add_dependency(4, 5);
  g.add_dependency(1, 2);
  CHECK(predecessors_of(g, 5) == std::vector<TaskId>{1, 3, 4});
  CHECK(successors_of(g, 1) == std::vector<TaskId>{5, 2});
  CHECK(g.predecessor_count(2) == 1);
  // A task added after the rows were read starts with none, and the rows follow new edges.
  const TaskId late = g.add_kernel(0, {}, {});
  CHECK(g.predecessor_count(late) == 0);
  g.add_dependency(0, 5);
  CHECK(predecessors_of(g, 5) == std::vector<TaskId>{0, 1, 3, 4});
  // Rows read while the graph had no dependency at all follow the first one added.
  TaskGraph empty(1);
  for (int i = 0; i < 2; ++i) (void)empty.add_kernel(0, {}, {});
  CHECK(empty.predecessor_count(1) == 0);
  empty.add_dependency(0, 1);
  CHECK(predecessors_of(empty, 1) == std::vector<TaskId>{0});
}

TEST_CASE("identical kernels share one record, kernels that differ in any field keep their own") {
  const Kernel gemm{units::Seconds(2e-3), units::Flops(4e12), units::Bytes(1e8), true, 1.0F};
  Kernel other_clock = gemm;
  other_clock.clock_share = 0.5F;
  Kernel not_model = gemm;
  not_model.model_flops = false;
  constexpr std::size_t tasks = 3000;
  TaskGraph g(2);
  g.reserve(tasks);
  std::vector<TaskId> ids;
  for (std::size_t i = 0; i < tasks / 3; ++i) {
    ids.push_back(g.add_kernel(static_cast<DeviceId>(i % 2), {}, gemm));
    ids.push_back(g.add_kernel(0, {}, other_clock));
    ids.push_back(g.add_kernel(1, {}, not_model));
  }
  CHECK(g.kernel(ids[0]).clock_share == 1.0F);
  CHECK(g.kernel(ids[1]).clock_share == 0.5F);
  CHECK(g.kernel(ids[2]).model_flops == false);
  CHECK(g.kernel(ids[tasks - 3]).duration == gemm.duration);
  CHECK(g.kernel(ids[tasks - 3]).model_flops);
  CHECK(g.task(ids[3]).device == 1);
  // A record per kernel task would take sizeof(Kernel) more per task; interned, the three
  // records and their map are a few hundred bytes beside the tasks' own records.
  CHECK(g.heap_bytes() < tasks * sizeof(Task) + 1024);
  CHECK(g.heap_bytes() >= tasks * sizeof(Task) + 3 * sizeof(Kernel));
}

TEST_CASE("a lowered iteration takes under 52 bytes per task") {
  const auto model = testing::gpt(4, 1024, 16, 1024);
  const cost::RooflineCostModel cost(testing::a100());
  const auto g = lower_iteration(model, testing::plan_of(2, 2, 2, 8), cost);
  REQUIRE(g.size() > 5000);
  // 16 B per task (24 until 2026-12-05), 24 B per transfer (kernels interned), 4 B per successor
  // and 4 B of row starts, the predecessors built only when read; the Boost adjacency list it
  // replaced took about 330 B, the first compressed form (a record per kernel, both rows) under
  // 100 B.
  const double per_task = static_cast<double>(g.heap_bytes()) / static_cast<double>(g.size());
  CHECK(per_task < 52.0);
}

TEST_CASE("a task's 16-byte record keeps every field at the ends of its ranges") {
  static_assert(sizeof(Task) == 16);
  TaskGraph g(2);
  std::uint32_t last_label = 0;
  for (std::uint32_t i = 0; i < max_task_labels; ++i) last_label = g.intern_label("label " + std::to_string(i));
  CHECK(last_label == max_task_labels - 1);
  Transfer t;
  t.peer = 0;
  t.bytes = units::Bytes(8);
  const TaskId a = g.add_transfer(1, {model::Pass::optimizer, max_task_layer, 2'000'000'000, last_label}, t);
  const TaskId b = g.add_host_launch(0, {model::Pass::recompute, -1, -1, 0}, units::Seconds(1e-6));
  CHECK(g.task(a).kind == TaskKind::transfer);
  CHECK(g.task(a).pass == model::Pass::optimizer);
  CHECK(g.task(a).device == 1);
  CHECK(g.task(a).layer == max_task_layer);
  CHECK(g.task(a).micro_batch == 2'000'000'000);
  CHECK(g.task(a).label == last_label);
  CHECK(g.label_of(a) == "label 4095");
  CHECK(g.task(b).kind == TaskKind::host);
  CHECK(g.task(b).pass == model::Pass::recompute);
  CHECK(g.task(b).layer == -1);
  CHECK(g.task(b).micro_batch == -1);
  // Beyond the ranges: refused, not wrapped.
  CHECK_THROWS_AS(g.intern_label("one label too many"), std::length_error);
  CHECK_THROWS_AS(g.add_host_launch(0, {model::Pass::forward, max_task_layer + 1, 0, 0}, units::Seconds(0)),
                  std::length_error);
  CHECK_THROWS_AS(g.add_host_launch(0, {model::Pass::forward, -2, 0, 0}, units::Seconds(0)), std::length_error);
  CHECK_THROWS_AS(g.add_host_launch(0, {model::Pass::forward, 0, 0, max_task_labels}, units::Seconds(0)),
                  std::length_error);
}
