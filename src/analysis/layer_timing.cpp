#include <twocs/analysis/layer_timing.hpp>

#include <algorithm>
#include <limits>
#include <numeric>
#include <string_view>
#include <vector>

#include <twocs/engine/simulate.hpp>
#include <twocs/lowering/lower_iteration.hpp>
#include <twocs/platform/topology.hpp>

namespace twocs::analysis {

namespace {

/// A task of the MoE block: moe.* (router, permutation, exchanges, experts) or the FFN's mlp.*
/// (the shared experts), not mlp.norm, mlp.post_norm or mlp.residual, which belong to the layer.
bool in_moe_block(std::string_view label) {
  if (label.starts_with("moe.")) return true;
  if (!label.starts_with("mlp.")) return false;
  return !label.starts_with("mlp.norm") && !label.starts_with("mlp.post_norm") && !label.starts_with("mlp.residual");
}

} // namespace

LayerTimes layer_span(const lowering::TaskGraph& graph, const engine::Timeline& timeline, std::int32_t layer,
                      LayerPart part) {
  constexpr double never = std::numeric_limits<double>::infinity();
  // Per pass: each device's first start, and the last finish of any device.
  std::vector<double> first[2] = {std::vector<double>(graph.device_count(), never),
                                  std::vector<double>(graph.device_count(), never)};
  double finish[2] = {0, 0};
  for (lowering::TaskId id = 0; id < graph.size(); ++id) {
    const auto& task = graph.task(id);
    if (task.layer != layer || task.is_host()) continue; // the device's span, not the host's launches
    if (part == LayerPart::moe && !in_moe_block(graph.label(task.label))) continue;
    const int backward = task.pass == model::Pass::forward ? 0 : 1;
    double& device_first = first[backward][task.device];
    device_first = std::min(device_first, timeline.tasks[id].start.value());
    finish[backward] = std::max(finish[backward], timeline.tasks[id].finish.value());
  }
  // From the moment the last device begins the layer: a harness starts it on devices that a
  // barrier or the exchange before it has aligned, so the skew their speeds built up over the
  // embedding or the output layer before it is not the layer's time.
  const auto span = [&](int i) {
    double start = -never;
    for (const double t : first[i])
      if (t != never) start = std::max(start, t);
    return units::Seconds(start == -never ? 0.0 : finish[i] - start);
  };
  return {span(0), span(1)};
}

std::int64_t one_layer_replicas(const model::TrainingPlan& plan) {
  const std::int64_t stage = plan.parallelism.tensor * plan.parallelism.context;
  return plan.parallelism.expert / std::gcd(plan.parallelism.expert, stage);
}

LayerTimes time_one_layer(model::TransformerConfig model, model::TrainingPlan plan,
                          const hardware::ClusterSpec& cluster, const cost::OperatorCostModel& cost, LayerPart part) {
  model.layers = 1;
  plan.parallelism.pipeline = 1;
  plan.parallelism.virtual_stages = 1;
  plan.parallelism.stage_layers.clear();
  plan.parallelism.data = one_layer_replicas(plan);
  plan.global_batch = plan.micro_batch * plan.parallelism.data;
  // The layer alone, as the harnesses time it (Korthikanti et al.'s layer profile; Megatron-LM's
  // moe_perf/__main__.py runs a bare MoELayer, no DDP wrapper): no gradient reduction of the
  // replicas runs under its backward. Reduced after the backward, the embedding's, head's and
  // layer's gradients stay outside the span layer_span measures.
  plan.overlap.dp_grad_reduce = false;
  // One stage: the interleaved and dualpipe schedules are 1F1B (zb-h1 is 1F1B on its first stage).
  if (plan.pipeline_schedule == model::PipelineSchedule::interleaved_one_f_one_b ||
      plan.pipeline_schedule == model::PipelineSchedule::dualpipe)
    plan.pipeline_schedule = model::PipelineSchedule::one_f_one_b;
  // The harness's timed calls follow warm-up calls, so Transformer Engine's FP8 weights are cached
  // (extensions/transformer_engine.py: is_first_microbatch False after the first forward; only a
  // pipeline schedule's set_is_first_microbatch sets it back).
  lowering::LoweringOptions options;
  options.fp8_weights_cached = true;
  const auto graph = lowering::lower_iteration(model, plan, cost, options);
  const auto timeline = engine::simulate(graph, platform::build_topology(cluster, plan.world_size()));
  return layer_span(graph, timeline, 0, part);
}

} // namespace twocs::analysis
