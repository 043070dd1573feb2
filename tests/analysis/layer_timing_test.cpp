// Per-layer timings of the 22B model of Korthikanti et al., "Reducing Activation Recomputation
// in Large Transformer Models" (MLSys 2023, arXiv 2205.05198), Table 4, reproduced end to end:
// one transformer layer (h = 6144, a = 64, s = 2048, b = 4, t = 8, fp16) forward and backward on
// the 8 tensor-parallel ranks of one DGX A100 node, costed by the kernel operator model with the
// parameters of platforms/dgx-a100-80gb.yaml (the same file every other run uses: no tuning
// here), its tensor-parallel collectives simulated on the node's NVSwitch. The layer goes
// through what `twocs run` runs: the iteration lowering of a one-layer model on one stage with
// one micro-batch; the layer's forward is the span of its forward tasks (kernels and
// collectives) on the timeline, its backward that of its recompute and backward tasks.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <string>
#include <utility>

#include <twocs/analysis/layer_timing.hpp>
#include <twocs/config/scenario_loader.hpp>
#include <twocs/cost/make_cost_model.hpp>

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

/// The 22B model of Table 4, one layer of it: h = 6144, a = 64, s = 2048.
model::TransformerConfig one_layer_of_22b() {
  model::TransformerConfig m;
  m.name = "22b";
  m.layers = 1;
  m.hidden = 6144;
  m.heads = 64;
  m.kv_heads = 64;
  m.ffn_hidden = 4 * 6144;
  m.vocab = 51200;
  m.seq_len = 2048;
  return m;
}

/// One micro-batch of b = 4 on t = 8, fp16, as Table 4 measured.
model::TrainingPlan table4_plan(const Mode& mode) {
  model::TrainingPlan plan;
  plan.global_batch = 4;
  plan.micro_batch = 4;
  plan.parallelism.tensor = 8;
  plan.parallelism.sequence = mode.sequence_parallel;
  plan.recompute = mode.recompute;
  plan.dtype = model::Dtype::fp16;
  plan.attention = model::AttentionKernel::unfused; // Megatron-LM of 2022, before FlashAttention
  return plan;
}

hardware::ClusterSpec a100_platform() {
  return config::parse_platform(
      config::read_input(std::filesystem::path(TWOCS_SOURCE_DIR) / "platforms" / "dgx-a100-80gb.yaml"));
}

/// Forward and backward of the layer in milliseconds, through analysis::time_one_layer.
std::pair<double, double> layer_times(const Mode& mode, const hardware::ClusterSpec& cluster,
                                      const cost::OperatorCostModel& cost) {
  const auto times = analysis::time_one_layer(one_layer_of_22b(), table4_plan(mode), cluster, cost);
  return {times.forward.value() * 1e3, times.backward.value() * 1e3};
}

double error(double simulated, double measured) { return (simulated - measured) / measured; }

} // namespace

TEST_CASE("one layer of the 22B model reproduces Korthikanti et al. Table 4 within 10% in all five modes") {
  const auto cluster = a100_platform();
  const auto cost = cost::make_cost_model(cluster.device);
  for (const Mode& mode : table4) {
    CAPTURE(mode.name);
    const auto [forward, backward] = layer_times(mode, cluster, *cost);
    const double total = forward + backward;
    MESSAGE(std::string(mode.name) << ": forward " << forward << " ms (" << 100 * error(forward, mode.forward_ms)
                                   << "%), backward " << backward << " ms (" << 100 * error(backward, mode.backward_ms)
                                   << "%), total " << total << " ms (" << 100 * error(total, mode.total_ms) << "%)");
    CHECK(std::fabs(error(forward, mode.forward_ms)) < 0.10);
    CHECK(std::fabs(error(backward, mode.backward_ms)) < 0.10);
    CHECK(std::fabs(error(total, mode.total_ms)) < 0.10);
  }
}
