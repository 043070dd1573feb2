// The time of one transformer layer, forward and backward, as `twocs run` simulates it: the
// per-layer check against published layer timings (Korthikanti et al. 2022, Table 4) and
// `twocs validate`'s layer rows both go through here, so they test what users run.
#pragma once

#include <cstdint>

#include <twocs/cost/operator_cost_model.hpp>
#include <twocs/engine/timeline.hpp>
#include <twocs/hardware/cluster.hpp>
#include <twocs/lowering/task_graph.hpp>
#include <twocs/model/training_plan.hpp>
#include <twocs/model/transformer.hpp>

namespace twocs::analysis {

/// Which of a layer's tasks are timed: all of them, or the mixture-of-experts block's (the
/// router, dispatch, experts, combine and shared experts: tasks named moe.* and the FFN's mlp.*,
/// not its norm or residual add), as Megatron-LM's moe_perf tests time MoELayer alone
/// (tests/functional_tests/test_cases/common/moe_perf/__main__.py).
enum class LayerPart { layer, moe };

struct LayerTimes {
  units::Seconds forward;  // span of the layer's forward kernels and collectives
  units::Seconds backward; // span of its recompute and backward kernels and collectives
};

/// The spans of `layer`'s tasks on a simulated timeline, forward and recompute plus backward: each
/// from the moment the last device begins it to the end of its last task on any device.
[[nodiscard]] LayerTimes layer_span(const lowering::TaskGraph& graph, const engine::Timeline& timeline,
                                    std::int32_t layer, LayerPart part = LayerPart::layer);

/// The data-parallel replicas time_one_layer simulates: the fewest whose ranks the expert group
/// spans (it is carved out of tensor x context x data), 1 without expert parallelism.
[[nodiscard]] std::int64_t one_layer_replicas(const model::TrainingPlan& plan);

/// One layer of `model` under `plan`'s tensor and sequence parallelism, recomputation and dtype,
/// for one micro-batch on one pipeline stage and one data-parallel replica: the iteration
/// lowering of a one-layer model, simulated on `cluster`, measured with layer_span. With expert
/// parallelism, as many data-parallel replicas as the expert group needs, each with its own
/// micro-batch (moe_perf runs EP 8 on 8 GPUs with 4,096 tokens each), whose gradients are reduced
/// after the backward: no reduction runs under the layer, as in a harness that times it alone.
[[nodiscard]] LayerTimes time_one_layer(model::TransformerConfig model, model::TrainingPlan plan,
                                        const hardware::ClusterSpec& cluster, const cost::OperatorCostModel& cost,
                                        LayerPart part = LayerPart::layer);

} // namespace twocs::analysis
