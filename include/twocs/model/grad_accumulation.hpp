// Gradient accumulation across micro-batches: the pass over HBM that adds one micro-batch's
// weight gradients into the gradients accumulated for the iteration, as each framework runs it
// (docs/simulation.md, "Gradient accumulation").
#pragma once

#include <cstdint>

#include <twocs/model/operator.hpp>
#include <twocs/model/training_plan.hpp>

namespace twocs::model {

/// What one micro-batch's accumulation costs: HBM bytes per parameter of the chunk, and
/// whether the first micro-batch of the iteration pays it too (0 bytes: no separate pass).
struct GradAccumulationPass {
  double bytes_per_parameter = 0;
  bool first_micro_batch = false;
};

/// The plan's accumulation pass:
/// - Megatron-LM with `grad_accumulation_fusion` (`--gradient-accumulation-fusion`, the default
///   since 2022): the weight-gradient GEMM adds into the fp32 main gradient itself, no pass;
/// - DeepSpeed's BF16 optimizer (bf16 under `megatron-deepspeed`): after every micro-batch's
///   backward, each bf16 gradient is cast to fp32 and added to the fp32 gradient
///   (`update_hp_grads`): 2 + 4 bytes for the cast, 4 + 4 + 4 for the add;
/// - 16-bit training with fp32 main gradients (Megatron-LM without the fusion): a hook adds each
///   16-bit gradient into the fp32 main gradient after every micro-batch: e + 4 + 4 bytes;
/// - otherwise autograd accumulates into the parameter's gradient in place from the second
///   micro-batch on: read both, write one, 3 e bytes.
[[nodiscard]] GradAccumulationPass grad_accumulation_pass(const TrainingPlan& plan);

/// The pass as a memory-bound kernel over `parameters` gradients (empty when there is none).
[[nodiscard]] StepSequence grad_accumulation_steps(std::int64_t parameters, const TrainingPlan& plan);

} // namespace twocs::model
