// The host launching a device's work (lowering/device_program.hpp, TaskKind::host): each launch
// takes the host's launch time, in program order, and the work waits for its launch. Closed
// forms: N kernels of d launched at h each finish at N h + d when the host is the slower (h > d)
// and at h + N d when the device is; a host synchronisation costs one launch more.
#include <doctest/doctest.h>

#include <optional>

#include <twocs/analysis/breakdown.hpp>
#include <twocs/cost/roofline.hpp>
#include <twocs/lowering/device_program.hpp>
#include <twocs/lowering/lower_iteration.hpp>
#include <twocs/model/validate.hpp>

#include "engine/engine_test_support.hpp"
#include "support/scenarios.hpp"

using namespace twocs;
using namespace twocs::engine::test;
using lowering::CollectiveRegistry;
using lowering::DeviceProgram;
using lowering::TaskGraph;
using lowering::TaskId;

namespace {

std::size_t count_host(const TaskGraph& graph) {
  std::size_t n = 0;
  for (TaskId id = 0; id < graph.size(); ++id) n += graph.task(id).is_host() ? 1 : 0;
  return n;
}

/// One device whose host launches at `launch_time`, with its graph.
struct HostedDevice {
  explicit HostedDevice(double launch_time) : program(graph, registry, 0, units::Seconds(launch_time)) {}
  /// Appends `n` kernels of `d` seconds; returns them in order.
  std::vector<TaskId> kernels(int n, double d) {
    std::vector<TaskId> ids;
    ids.reserve(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) ids.push_back(program.compute({}, kernel_of(d)));
    return ids;
  }
  [[nodiscard]] engine::Timeline simulate() const { return engine::simulate(graph, make_topology({})); }

  TaskGraph graph{1};
  CollectiveRegistry registry{graph};
  DeviceProgram program;
};

} // namespace

TEST_CASE("a host slower than its kernels holds the device back: N launches, then the last kernel") {
  const double h = 10e-6, d = 2e-6;
  const int n = 10;
  HostedDevice device(h);
  const auto kernels = device.kernels(n, d);
  const TaskGraph& graph = device.graph;
  CHECK(count_host(graph) == static_cast<std::size_t>(n));
  const auto timeline = device.simulate();
  for (int i = 0; i < n; ++i)
    CHECK(start_of(timeline, kernels[static_cast<std::size_t>(i)]) == doctest::Approx((i + 1) * h));
  CHECK(timeline.makespan.value() == doctest::Approx(n * h + d));
  // The device computed for n d of it; waiting for its host it was idle.
  const auto busy = analysis::measure_device(graph, timeline, 0, timeline.makespan);
  CHECK(busy.breakdown.compute.value() == doctest::Approx(n * d));
  CHECK(busy.breakdown.idle.value() == doctest::Approx(n * h + d - n * d));
  // Kernel 1 waits h for its launch, each later one h - d after its predecessor: h + (n - 1)(h - d).
  CHECK(analysis::host_wait(graph, timeline, 0).value() == doctest::Approx(h + (n - 1) * (h - d)));
}

TEST_CASE("a host faster than its kernels runs ahead: one launch, then the kernels back to back") {
  const double h = 10e-6, d = 1e-3;
  const int n = 6;
  HostedDevice device(h);
  (void)device.kernels(n, d);
  const auto timeline = device.simulate();
  CHECK(timeline.makespan.value() == doctest::Approx(h + n * d));
  CHECK(analysis::host_wait(device.graph, timeline, 0).value() == doctest::Approx(h)); // the first launch only
}

TEST_CASE("an op whose code issues several kernels takes its host that many launches: N L h + d when host-bound") {
  const double h = 10e-6, d = 2e-6, launches = 4.3;
  const int n = 5;
  HostedDevice device(h);
  std::vector<TaskId> ids;
  for (int i = 0; i < n; ++i) ids.push_back(device.program.compute({}, kernel_of(d), launches));
  const auto timeline = device.simulate();
  for (int i = 0; i < n; ++i)
    CHECK(start_of(timeline, ids[static_cast<std::size_t>(i)]) == doctest::Approx((i + 1) * launches * h));
  CHECK(timeline.makespan.value() == doctest::Approx(n * launches * h + d));
  CHECK(count_host(device.graph) == static_cast<std::size_t>(n)); // one host task per op, longer
}

TEST_CASE("a host synchronisation loses the host's lead: the device waits one launch more") {
  const double h = 10e-6, d = 1e-3;
  HostedDevice device(h);
  (void)device.kernels(3, d);
  device.program.synchronize_host();
  (void)device.kernels(3, d);
  CHECK(device.simulate().makespan.value() == doctest::Approx(2 * h + 6 * d));
}

TEST_CASE("the host waits for one kernel it reads back, and launches the next after it") {
  const double h = 10e-6, d = 1e-3;
  HostedDevice device(h);
  const TaskId counts = device.kernels(2, d).back();
  device.program.host_waits_for(counts);
  const TaskId after = device.kernels(1, d).front();
  const auto timeline = device.simulate();
  CHECK(start_of(timeline, after) == doctest::Approx(h + 2 * d + h));
  CHECK(timeline.makespan.value() == doctest::Approx(2 * h + 3 * d));
}

TEST_CASE("a collective waits for its launch, and a zero launch time adds no host task") {
  const double h = 10e-6;
  TaskGraph graph(2);
  CollectiveRegistry registry(graph);
  DeviceProgram a(graph, registry, 0, units::Seconds(h)), b(graph, registry, 1, units::Seconds(h));
  lowering::CollectiveSpec spec;
  spec.group = model::CommGroup::data;
  spec.size = units::Bytes(1e6);
  for (DeviceProgram* p : {&a, &b}) {
    for (int i = 0; i < 4; ++i) (void)p->compute({}, kernel_of(1e-6));
    p->collective(spec, {0, 1}, lowering::CollectiveWait{});
  }
  const auto timeline = engine::simulate(graph, make_topology({}));
  for (TaskId id = 0; id < graph.size(); ++id)
    if (graph.task(id).is_transfer()) CHECK(start_of(timeline, id) >= doctest::Approx(5 * h));

  TaskGraph plain(1);
  CollectiveRegistry plain_registry(plain);
  DeviceProgram off(plain, plain_registry, 0);
  (void)off.compute({}, kernel_of(1e-6));
  off.synchronize_host();
  (void)off.compute({}, kernel_of(1e-6));
  CHECK(count_host(plain) == 0);
  CHECK_FALSE(plain.has_host_tasks());
  CHECK(engine::simulate(plain, make_topology({})).makespan.value() == doctest::Approx(2e-6));
}

TEST_CASE("an expert dispatch waits on the host for the token counts: its launch follows their read-back") {
  auto m = testing::gpt(2, 1024, 16, 1024);
  m.ffn_kind = model::FfnKind::swiglu;
  m.moe = model::MoeConfig{8, 2, 1024, 0, 0, 0, 1.0};
  auto plan = testing::plan_of(1, 1, 4, 2);
  plan.parallelism.expert = 4;
  plan.host.launch_time = units::Seconds(13.5e-6);
  model::validate(m, plan);
  const auto cluster = testing::cluster_of(1, 4);
  const cost::RooflineCostModel cost(cluster.device);
  const auto graph = lowering::lower_iteration(m, plan, cost);
  const auto timeline = engine::simulate(graph, platform::build_topology(cluster, plan.world_size()));
  // On device 0, in program order: each host_sync kernel, then the host's next launch (the
  // dispatch all-to-all's), which may only start once the kernel has finished.
  int checked = 0;
  std::optional<TaskId> sync;
  for (TaskId id = 0; id < graph.size(); ++id) {
    const auto& task = graph.task(id);
    if (task.device != 0) continue;
    if (task.is_kernel() && graph.label_of(id) == "moe.dispatch.host_sync") sync = id;
    if (sync && task.is_host() && id > *sync) {
      CHECK(graph.label_of(id) == "moe.dispatch.all_to_all");
      CHECK(start_of(timeline, id) >= doctest::Approx(timeline.tasks[*sync].finish.value()));
      ++checked;
      sync.reset();
    }
  }
  CHECK(checked == 4); // 2 layers, forward only (the backward knows its counts), 2 micro-batches
  plan.host.launch_time.reset();
  const auto without = lowering::lower_iteration(m, plan, cost);
  CHECK(without.size() < graph.size());
  CHECK_FALSE(without.has_host_tasks());
}
