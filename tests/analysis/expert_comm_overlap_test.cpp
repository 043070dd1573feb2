// Megatron-Core's combined 1F1B end to end (training.overlap.expert_comm): a forward and a
// backward of two micro-batches run layer by layer, each one's token exchanges under the other's
// kernels. The same kernels run; the iteration saves at most the expert communication it
// exposed; one more micro-batch's activations are held.
#include <doctest/doctest.h>

#include <map>
#include <string>
#include <tuple>
#include <vector>

#include <twocs/model/memory.hpp>

#include "support/iteration_run.hpp"
#include "support/scenarios.hpp"

using namespace twocs;

namespace {

/// Two MoE layers (8 experts, top 2) after `dense` dense ones, over an expert group of 4.
model::TransformerConfig moe_model(std::int64_t dense = 0) {
  auto m = testing::gpt(2 + dense, 1024, 16, 1024);
  m.ffn_kind = model::FfnKind::swiglu;
  m.moe = model::MoeConfig{8, 2, 1024, 0, dense, 0, 1.0};
  return m;
}

model::TrainingPlan expert_plan(bool merged, std::int64_t micro_batches = 4) {
  auto plan = testing::plan_of(1, 1, 4, micro_batches);
  plan.parallelism.expert = 4;
  plan.overlap.expert_comm = merged;
  return plan;
}

double kernel_time(const testing::IterationRun& run) {
  double t = 0;
  for (lowering::TaskId id = 0; id < run.graph.size(); ++id)
    if (!run.graph.task(id).is_transfer() && run.graph.task(id).device == 0) t += run.graph.kernel(id).duration.value();
  return t;
}

double exposed_expert(const testing::IterationRun& run) {
  return run.summary.exposed_comm_by_group[analysis::index(model::CommGroup::expert)].value();
}

/// Device 0's kernels in program order: (pass, layer, micro-batch, label).
using Kernel = std::tuple<model::Pass, std::int32_t, std::int32_t, std::string>;
std::vector<Kernel> kernels(const testing::IterationRun& run) {
  std::vector<Kernel> out;
  for (lowering::TaskId id = 0; id < run.graph.size(); ++id) {
    const auto& t = run.graph.task(id);
    if (!t.is_transfer() && t.device == 0) out.emplace_back(t.pass, t.layer, t.micro_batch, run.graph.label(t.label));
  }
  return out;
}

std::size_t position(const std::vector<Kernel>& ks, model::Pass pass, std::int32_t layer, std::int32_t micro_batch,
                     const std::string& label) {
  for (std::size_t i = 0; i < ks.size(); ++i)
    if (ks[i] == Kernel{pass, layer, micro_batch, label}) return i;
  FAIL("kernel not found: " << label);
  return 0;
}

} // namespace

TEST_CASE(
    "merged steps interleave a layer's forward with another micro-batch's backward, as Megatron-Core launches them") {
  const auto run = testing::simulate_iteration(moe_model(), expert_plan(true), 4);
  const auto ks = kernels(run);
  using model::Pass;
  // Micro-batch 1's forward of layer 0 merged with micro-batch 0's backward of layer 1:
  // combine_bwd | pre_dispatch_fwd | mlp_bwd -> mlp_bwd_dw -> mlp_fwd | pre_dispatch_bwd | combine tail.
  const auto at = [&](Pass p, std::int32_t layer, std::int32_t mb, const char* label) {
    return position(ks, p, layer, mb, label);
  };
  const std::size_t order[] = {at(Pass::backward, 1, 0, "moe.unpermute.bwd"),
                               at(Pass::forward, 0, 1, "attn.qkv"),
                               at(Pass::forward, 0, 1, "moe.permute"),
                               at(Pass::backward, 1, 0, "moe.experts.fc2.dgrad"),
                               at(Pass::backward, 1, 0, "moe.experts.fc1.dgrad"),
                               at(Pass::backward, 1, 0, "moe.experts.fc2.wgrad"),
                               at(Pass::backward, 1, 0, "moe.experts.fc1.wgrad"),
                               at(Pass::forward, 0, 1, "moe.experts.fc1"),
                               at(Pass::forward, 0, 1, "moe.experts.fc2"),
                               at(Pass::backward, 1, 0, "moe.permute.bwd"),
                               at(Pass::backward, 1, 0, "attn.qkv.dgrad"),
                               at(Pass::forward, 0, 1, "moe.unpermute")};
  for (std::size_t i = 1; i < std::size(order); ++i) CHECK(order[i - 1] < order[i]);
  // Micro-batch 0's forward ran alone before (one more warm-up forward).
  CHECK(at(Pass::forward, 1, 0, "moe.unpermute") < at(Pass::backward, 1, 0, "moe.unpermute.bwd"));
}

TEST_CASE("merged steps run the same kernels and hide expert communication, no more than was exposed") {
  for (const std::int64_t dense : {0, 1}) {
    CAPTURE(dense);
    const auto plain = testing::simulate_iteration(moe_model(dense), expert_plan(false), 4);
    const auto merged = testing::simulate_iteration(moe_model(dense), expert_plan(true), 4);
    std::map<std::string, int> plain_labels, merged_labels;
    for (const auto& k : kernels(plain)) ++plain_labels[std::get<3>(k)];
    for (const auto& k : kernels(merged)) ++merged_labels[std::get<3>(k)];
    CHECK(merged_labels == plain_labels);
    CHECK(kernel_time(merged) == doctest::Approx(kernel_time(plain)).epsilon(1e-12));
    const double saved = plain.summary.iteration_time.value() - merged.summary.iteration_time.value();
    CHECK(saved > 0);
    CHECK(saved <= exposed_expert(plain) * (1 + 1e-9));
    CHECK(exposed_expert(merged) < exposed_expert(plain));
  }
}

TEST_CASE("merged steps hold one more micro-batch's activations") {
  const auto m = moe_model();
  for (const auto attention : {model::AttentionKernel::fused, model::AttentionKernel::unfused}) {
    CAPTURE(model::to_string(attention));
    auto plain_plan = expert_plan(false);
    auto merged_plan = expert_plan(true);
    plain_plan.attention = merged_plan.attention = attention;
    const auto plain = model::estimate_memory(m, plain_plan);
    const auto merged = model::estimate_memory(m, merged_plan);
    CHECK(plain.stages.front().micro_batches_in_flight == 1);
    CHECK(merged.stages.front().micro_batches_in_flight == 2);
    // The layers' activations double; the output head's, held once per chunk, do not.
    const double held = plain.stages.front().breakdown.activations.value();
    CHECK(merged.stages.front().breakdown.activations.value() > held);
    CHECK(merged.stages.front().breakdown.activations.value() < 2 * held);
    // The unfused scores make the layers' share large enough to show the doubling plainly.
    if (attention == model::AttentionKernel::unfused)
      CHECK(merged.stages.front().breakdown.activations.value() > 1.5 * held);
  }
}

TEST_CASE("folding replicas stays exact with merged steps") {
  const auto full = testing::simulate_iteration(moe_model(), expert_plan(true), 4, false);
  const auto folded = testing::simulate_iteration(moe_model(), expert_plan(true), 4, true);
  CHECK(folded.graph.size() < full.graph.size());
  CHECK(folded.summary.iteration_time.value() == doctest::Approx(full.summary.iteration_time.value()).epsilon(1e-9));
}
