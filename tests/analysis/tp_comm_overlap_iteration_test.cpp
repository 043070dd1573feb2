// training.overlap.tp_comm simulated: the chunked all-gather + GEMM of Transformer Engine's
// userbuffers takes the closed form of a pipeline of t steps, g + (t - 1) max(g, x), with g a
// GEMM chunk's time and x one shard's exchange, whether the GEMM or the link is the slower; the
// pipelined GEMM + reduce-scatter runs its GEMM chunks back to back with only the last chunk's
// reduce-scatter exposed; and the iteration gets faster than with the blocking collectives.
#include <doctest/doctest.h>

#include <algorithm>
#include <vector>

#include <twocs/cost/roofline.hpp>
#include <twocs/engine/simulate.hpp>
#include <twocs/lowering/lower_iteration.hpp>
#include <twocs/model/validate.hpp>
#include <twocs/platform/topology.hpp>

#include "support/scenarios.hpp"

using namespace twocs;

namespace {

constexpr std::int64_t tensor = 4;

struct Simulated {
  lowering::TaskGraph graph;
  engine::Timeline timeline;
};

Simulated simulate(model::TpCommOverlap overlap, units::ByteRate nvlink,
                   model::Framework framework = model::Framework::megatron_lm) {
  const auto m = testing::gpt(1, 4096, 32, 4096);
  auto plan = testing::plan_of(tensor, 1, 1, 1);
  plan.parallelism.sequence = true;
  plan.attention = model::AttentionKernel::fused;
  plan.overlap.tp_comm = overlap;
  plan.framework = framework;
  model::validate(m, plan);
  testing::Links links;
  links.node_bandwidth = nvlink;
  const auto cluster = testing::cluster_of(1, tensor, links);
  const cost::RooflineCostModel cost(cluster.device);
  Simulated s{lowering::lower_iteration(m, plan, cost, {}), {}};
  s.timeline = engine::simulate(s.graph, platform::build_topology(cluster, plan.world_size()));
  return s;
}

/// Device 0's forward tasks of layer 0 labelled `label`, in start order.
std::vector<lowering::TaskId> forward_tasks(const Simulated& s, const std::string& label, bool transfers) {
  std::vector<lowering::TaskId> ids;
  for (lowering::TaskId id = 0; id < s.graph.size(); ++id) {
    const auto& task = s.graph.task(id);
    if (task.device == 0 && task.layer == 0 && task.pass == model::Pass::forward && task.is_transfer() == transfers &&
        (transfers || task.is_kernel()) && s.graph.label_of(id) == label)
      ids.push_back(id);
  }
  std::sort(ids.begin(), ids.end(),
            [&](auto a, auto b) { return s.timeline.tasks[a].start.value() < s.timeline.tasks[b].start.value(); });
  return ids;
}

double start(const Simulated& s, lowering::TaskId id) { return s.timeline.tasks[id].start.value(); }
double finish(const Simulated& s, lowering::TaskId id) { return s.timeline.tasks[id].finish.value(); }

/// The all-gather + GEMM of QKV against its closed form.
void check_ring_exchange(units::ByteRate nvlink) {
  const auto s = simulate(model::TpCommOverlap::transformer_engine, nvlink);
  const auto chunks = forward_tasks(s, "attn.qkv", false);
  const auto exchanges = forward_tasks(s, "attn.qkv.ring_exchange", true);
  REQUIRE(chunks.size() == tensor);
  REQUIRE(exchanges.size() == tensor - 1);
  const double g = s.graph.kernel(chunks[0]).duration.value();
  for (auto id : chunks) CHECK(s.graph.kernel(id).duration.value() == doctest::Approx(g));
  // x: one shard of b s h / t BF16 values over one NVLink, plus at most the route's latency.
  const double shard = 4096.0 * 4096 * 2 / tensor;
  const double x = finish(s, exchanges[0]) - start(s, exchanges[0]);
  CHECK(x >= shard / nvlink.value());
  CHECK(x <= shard / nvlink.value() + 10e-6);
  const double span = finish(s, chunks.back()) - start(s, chunks.front());
  CHECK(span == doctest::Approx(g + (tensor - 1) * std::max(g, x)).epsilon(1e-6));
}

} // namespace

TEST_CASE("tp_comm: transformer_engine's all-gather + GEMM takes g + (t - 1) max(g, x), compute-bound") {
  check_ring_exchange(units::ByteRate(300e9)); // x = 28 us < g
}

TEST_CASE("tp_comm: transformer_engine's all-gather + GEMM takes g + (t - 1) max(g, x), link-bound") {
  check_ring_exchange(units::ByteRate(20e9)); // x = 420 us > g
}

TEST_CASE("tp_comm: transformer_engine's GEMM + reduce-scatter runs its 4 chunks back to back and exposes only the "
          "last chunk's reduce-scatter") {
  const auto s = simulate(model::TpCommOverlap::transformer_engine, units::ByteRate(300e9));
  const auto chunks = forward_tasks(s, "mlp.fc2", false);
  const auto scatters = forward_tasks(s, "mlp.fc2.reduce_scatter", true);
  REQUIRE(chunks.size() == 4);
  REQUIRE(scatters.size() == 4 * (tensor - 1)); // a ring of t - 1 steps per chunk
  double g = 0;
  for (std::size_t i = 0; i < chunks.size(); ++i) {
    g += s.graph.kernel(chunks[i]).duration.value();
    if (i > 0) CHECK(start(s, chunks[i]) == doctest::Approx(finish(s, chunks[i - 1])).epsilon(1e-9));
  }
  // The last reduce-scatter starts when the last chunk ends and is all that follows it.
  const auto last = std::vector<lowering::TaskId>(scatters.end() - (tensor - 1), scatters.end());
  CHECK(start(s, last.front()) == doctest::Approx(finish(s, chunks.back())).epsilon(1e-9));
  const double r = finish(s, last.back()) - start(s, last.front());
  CHECK(finish(s, last.back()) - start(s, chunks.front()) == doctest::Approx(g + r).epsilon(1e-9));
}

TEST_CASE("tp_comm: both overlaps shorten the iteration against blocking collectives on the same link") {
  const auto none = simulate(model::TpCommOverlap::none, units::ByteRate(100e9)).timeline.makespan.value();
  const auto te = simulate(model::TpCommOverlap::transformer_engine, units::ByteRate(100e9)).timeline.makespan.value();
  CHECK(te < none);
  // async TP is torchtitan's, under FSDP2.
  const auto fsdp = model::Framework::fsdp;
  const auto fsdp_none = simulate(model::TpCommOverlap::none, units::ByteRate(100e9), fsdp).timeline.makespan.value();
  const auto async = simulate(model::TpCommOverlap::async_tp, units::ByteRate(100e9), fsdp).timeline.makespan.value();
  CHECK(async < fsdp_none);
}
