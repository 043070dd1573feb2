// End-to-end checks of the simulator against closed forms computed here, independently of the
// code under test: lowering -> platform -> SimGrid engine -> analysis.
#include <doctest/doctest.h>

#include <cmath>

#include <twocs/analysis/breakdown.hpp>
#include <twocs/analysis/summarize.hpp>
#include <twocs/cost/roofline.hpp>
#include <twocs/engine/simulate.hpp>
#include <twocs/lowering/collective.hpp>
#include <twocs/lowering/lower_iteration.hpp>
#include <twocs/platform/topology.hpp>

#include "support/scenarios.hpp"

using namespace twocs;

namespace {

using testing::cluster_of;
using testing::plan_of;

model::TransformerConfig gpt_small() { return testing::gpt(4, 1024, 16, 1024); }

testing::Links links(double node_bandwidth, double node_latency, double nic_bandwidth = 25e9,
                     double nic_latency = 5e-6) {
  return {units::ByteRate(node_bandwidth), units::Seconds(node_latency), units::ByteRate(nic_bandwidth),
          units::Seconds(nic_latency)};
}

struct Run {
  lowering::TaskGraph graph;
  engine::Timeline timeline;
  analysis::Summary summary;
};

Run simulate(const model::TransformerConfig& m, const model::TrainingPlan& plan, const hardware::ClusterSpec& c) {
  const cost::RooflineCostModel cost(c.device);
  Run run{lowering::lower_iteration(m, plan, cost), {}, {}};
  run.timeline = engine::simulate(run.graph, platform::build_topology(c, plan.world_size()));
  run.summary = analysis::summarize(run.graph, run.timeline, m, plan, c);
  return run;
}

} // namespace

TEST_CASE("a ring all-reduce on an idle switch takes 2(n-1)/n S/B + 2(n-1) L") {
  const double B = 300e9, L = 2e-6;
  for (int n : {2, 4, 8}) {
    for (double S : {1e6, 64e6, 1e9}) {
      CAPTURE(n);
      CAPTURE(S);
      lowering::TaskGraph graph(n);
      lowering::CollectiveSpec spec;
      spec.size = units::Bytes(S);
      spec.label = graph.intern_label("all_reduce");
      std::vector<lowering::DeviceId> devices;
      for (int i = 0; i < n; ++i) devices.push_back(i);
      lowering::CollectiveInstance ring(graph, spec, devices, 0);
      for (int i = 0; i < n; ++i) (void)ring.join(graph, i, {});
      const auto timeline = engine::simulate(graph, platform::build_topology(cluster_of(1, n, links(B, L)), n));
      const double expected = 2.0 * (n - 1) / n * S / B + 2.0 * (n - 1) * L;
      CHECK(timeline.makespan.value() == doctest::Approx(expected).epsilon(1e-3));
    }
  }
}

TEST_CASE("compute + exposed communication + idle adds up to the iteration time") {
  for (auto [t, d] : {std::pair{1, 1}, std::pair{4, 1}, std::pair{2, 4}, std::pair{8, 2}}) {
    CAPTURE(t);
    CAPTURE(d);
    const auto run = simulate(gpt_small(), plan_of(t, 1, d, 2), cluster_of(2, 8));
    const auto& b = run.summary.breakdown;
    CHECK((b.compute + b.exposed_comm + b.idle).value() ==
          doctest::Approx(run.summary.iteration_time.value()).epsilon(1e-12));
    CHECK(b.overlapped_comm <= b.compute);
    CHECK(b.idle.value() >= -1e-12);
    const auto& by = run.summary.exposed_comm_by_group;
    CHECK((by[0] + by[1] + by[2]).value() == doctest::Approx(b.exposed_comm.value()).epsilon(1e-9));
    CHECK(run.summary.exposed_comm_fraction == doctest::Approx(b.exposed_comm / run.summary.iteration_time));
  }
}

TEST_CASE("with two data-parallel replicas, overlapping the gradient reduction hides data-parallel communication") {
  // A slow network makes the gradient all-reduce long enough to matter.
  const auto cluster = cluster_of(2, 1, links(300e9, 2e-6, 5e9));
  auto plan = plan_of(1, 1, 2, 2);
  plan.overlap.dp_grad_reduce = false;
  const auto after = simulate(gpt_small(), plan, cluster);
  plan.overlap.dp_grad_reduce = true;
  plan.overlap.bucket_size = units::Bytes(25e6);
  const auto during = simulate(gpt_small(), plan, cluster);
  const auto data = analysis::index(model::CommGroup::data);
  CHECK(during.summary.exposed_comm_by_group[data] < after.summary.exposed_comm_by_group[data]);
  CHECK(during.summary.iteration_time <= after.summary.iteration_time);
  CHECK(during.summary.breakdown.overlapped_comm > after.summary.breakdown.overlapped_comm);
  // The same bytes cross the network either way.
  const auto dp_bytes = [](const Run& r) {
    double total = 0;
    for (lowering::TaskId id = 0; id < r.graph.size(); ++id)
      if (r.graph.task(id).is_transfer() && r.graph.transfer(id).group == model::CommGroup::data)
        total += r.graph.transfer(id).bytes.value();
    return total;
  };
  CHECK(dp_bytes(during) == doctest::Approx(dp_bytes(after)));
}

TEST_CASE("tensor-parallel communication time follows the ring closed form as the degree changes") {
  const double B = 300e9, L = 2e-6;
  const auto m = gpt_small();
  const double b = 1, s = 1024, h = 1024;
  const double activation = b * s * h * 2; // bf16 all-reduce buffer
  const double per_token_fp32 = b * s * 4; // the cross-entropy's small all-reduces
  for (int t : {2, 4, 8}) {
    CAPTURE(t);
    const auto run = simulate(m, plan_of(t, 1, 1, 1), cluster_of(1, 8, links(B, L)));
    const auto ring = [&](double S) { return 2.0 * (t - 1) / t * S / B + 2.0 * (t - 1) * L; };
    // Per micro-batch: 2 forward + 2 backward all-reduces per layer, one for the embedding, one
    // for the logits' input gradient and three small ones in the vocabulary-parallel cross-entropy.
    const double per_micro_batch = (4.0 * 4 + 1 + 1) * ring(activation) + 3 * ring(per_token_fp32);
    // Per step: the optimizer's gradient norm, one fp32 scalar over the model-parallel groups.
    const double expected = 1 * per_micro_batch + ring(4.0);
    const auto tensor = analysis::index(model::CommGroup::tensor);
    // Relative (scale 0): doctest's default scale would make 1e-3 an absolute 1 ms here.
    CHECK(run.summary.comm_busy_by_group[tensor].value() == doctest::Approx(expected).epsilon(1e-3).scale(0));
  }
}

TEST_CASE("one device alone only computes: no communication, no idle time, MFU from the kernels") {
  // A full attention mask: the unfused kernels' FLOPs are then all model FLOPs (a causal mask
  // leaves half of the scores' work out of the model FLOPs; tests/model/modern_layers_test.cpp).
  auto model = gpt_small();
  model.attention_mask = model::AttentionMask::full;
  const auto run = simulate(model, plan_of(1, 1, 1, 1), cluster_of(1, 1));
  CHECK(run.summary.comm_busy.value() == 0);
  CHECK(run.summary.breakdown.idle.value() == doctest::Approx(0).epsilon(1e-12));
  double busy = 0;
  for (lowering::TaskId id = 0; id < run.graph.size(); ++id)
    if (!run.graph.task(id).is_transfer()) busy += run.graph.kernel(id).duration.value();
  CHECK(run.summary.iteration_time.value() == doctest::Approx(busy).epsilon(1e-9));
  // MFU: the GEMM FLOPs of forward and backward over the time at peak. With one device every
  // model FLOP is in this DAG.
  double model_flops = 0;
  for (lowering::TaskId id = 0; id < run.graph.size(); ++id)
    if (!run.graph.task(id).is_transfer() && run.graph.kernel(id).model_flops)
      model_flops += run.graph.kernel(id).flops.value();
  CHECK(run.summary.model_flops.value() == doctest::Approx(model_flops).epsilon(1e-12));
  CHECK(run.summary.mfu == doctest::Approx(model_flops / (busy * 312e12)).epsilon(1e-9));
}
