// Per-layer timings of the 22B model of Korthikanti et al., "Reducing Activation Recomputation
// in Large Transformer Models" (MLSys 2023, arXiv 2205.05198), Table 4, reproduced end to end:
// one transformer layer (h = 6144, a = 64, s = 2048, b = 4, t = 8, fp16) forward and backward on
// the 8 tensor-parallel ranks of one DGX A100 node, costed by the kernel operator model with the
// parameters of platforms/dgx-a100-80gb.yaml (the same file every other run uses: no tuning
// here), its tensor-parallel collectives simulated on the node's NVSwitch. Measured values:
// /work/shared/validation/published-runs.yaml, `layer_timings`.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <string>

#include <twocs/cost/make_cost_model.hpp>
#include <twocs/engine/simulate.hpp>
#include <twocs/config/scenario_loader.hpp>
#include <twocs/lowering/tensor_group.hpp>
#include <twocs/model/layer_ops.hpp>
#include <twocs/platform/topology.hpp>

using namespace twocs;

namespace {

struct Mode {
  const char* name;
  bool sequence_parallel;
  model::Recompute recompute;
  double forward_ms, backward_ms, total_ms; // Korthikanti et al. 2022, Table 4
};

constexpr Mode table4[] = {
    {"no_recompute", false, model::Recompute::none, 7.7, 11.9, 19.6},
    {"sequence_parallel", true, model::Recompute::none, 7.2, 11.8, 19.0},
    {"full_recompute", false, model::Recompute::full, 7.7, 19.5, 27.2},
    {"selective_recompute", false, model::Recompute::selective, 7.7, 13.2, 20.9},
    {"selective_and_sequence_parallel", true, model::Recompute::selective, 7.2, 13.1, 20.3},
};

model::LayerShape layer_22b(bool sequence_parallel) {
  model::LayerShape shape;
  shape.model.name = "22b";
  shape.model.layers = 48;
  shape.model.hidden = 6144;
  shape.model.heads = 64;
  shape.model.kv_heads = 64;
  shape.model.ffn_hidden = 4 * 6144;
  shape.model.vocab = 51200;
  shape.model.seq_len = 2048;
  shape.micro_batch = 4;
  shape.tensor = 8;
  shape.sequence_parallel = sequence_parallel;
  shape.dtype = model::Dtype::fp16;
  return shape;
}

hardware::ClusterSpec a100_platform() {
  return config::parse_platform(
      config::read_input(std::filesystem::path(TWOCS_SOURCE_DIR) / "platforms" / "dgx-a100-80gb.yaml"));
}

/// Simulated time of `steps` on the 8 ranks of one node, in ms.
double simulate_ms(const model::StepSequence& steps, const hardware::ClusterSpec& cluster,
                   const cost::OperatorCostModel& cost) {
  const auto graph = lowering::lower_tensor_group(steps, 8, cost);
  return engine::simulate(graph, platform::build_topology(cluster, 8)).makespan.value() * 1e3;
}

double error(double simulated, double measured) { return (simulated - measured) / measured; }

} // namespace

TEST_CASE("one layer of the 22B model reproduces Korthikanti et al. Table 4 within 10% in all five modes") {
  const auto cluster = a100_platform();
  const auto cost = cost::make_cost_model(cluster.device);
  for (const Mode& mode : table4) {
    CAPTURE(mode.name);
    const auto shape = layer_22b(mode.sequence_parallel);
    const double forward = simulate_ms(model::transformer_layer_forward(shape), cluster, *cost);
    model::StepSequence backward_steps = model::transformer_layer_recompute(shape, mode.recompute);
    const auto backward_only = model::transformer_layer_backward(shape);
    backward_steps.insert(backward_steps.end(), backward_only.begin(), backward_only.end());
    const double backward = simulate_ms(backward_steps, cluster, *cost);
    const double total = forward + backward;
    MESSAGE(std::string(mode.name) << ": forward " << forward << " ms (" << 100 * error(forward, mode.forward_ms)
                                   << "%), backward " << backward << " ms (" << 100 * error(backward, mode.backward_ms)
                                   << "%), total " << total << " ms (" << 100 * error(total, mode.total_ms) << "%)");
    CHECK(std::fabs(error(forward, mode.forward_ms)) < 0.10);
    CHECK(std::fabs(error(backward, mode.backward_ms)) < 0.10);
    CHECK(std::fabs(error(total, mode.total_ms)) < 0.10);
  }
}
