// Private: the small collectives and host synchronisations a framework runs around the
// optimizer step, and host time on the compute stream:
//   - fp16 overflow check: the inf/NaN flag all-reduced (max) over the model-parallel group and
//     read by the host (Megatron-LM optimizer.py, _unscale_main_grads_and_check_for_nan);
//   - gradient norm for clipping: the fp32 squared norm all-reduced (sum) over the model-parallel
//     group and read by the host (Megatron-LM clip_grads.py, clip_grad_norm_fp32: total_norm.item());
//   - sequence parallelism: LayerNorm weight/bias and row-parallel bias gradients all-reduced once
//     per iteration over the tensor group (Megatron-LM allreduce_layernorm_grads, Korthikanti et al.
//     2022, section 4.2.2);
//   - host overheads of model::HostPlan as kernels on the compute stream;
//   - FP8 delayed scaling: the amaxes of a model chunk's FP8 tensors all-reduced (max) over the
//     tensor x data x context ranks of its stage after each forward and each backward of the chunk
//     (reduce_fp8_amax).
// The model-parallel group (tensor x pipeline) is lowered as an all-reduce over the tensor group
// then one over the pipeline group: the same result, and a 4-byte message costs its latency.
#pragma once

#include <cstdint>

#include "iteration_context.hpp"

namespace twocs::lowering::detail {

/// The scalar all-reduce of `label` over the model-parallel group, then a host synchronisation.
void model_parallel_scalar_all_reduce(const IterationContext& context, DeviceLowering& device, std::uint32_t label);

/// The sequence-parallel LayerNorm and bias gradients of `device`'s stage, all-reduced over the tensor group.
void reduce_sequence_parallel_gradients(const IterationContext& context, DeviceLowering& device);

/// Transformer Engine's delayed scaling (FP8GlobalStateManager.reduce_and_update_fp8_tensors at
/// v1.11, fp8.py:314-385): when a chunk's fp8_autocast exits after its forward, and after the
/// backward of its first FP8 module (linear.py:345-350, 602), the amaxes of every FP8 tensor of the
/// chunk are concatenated and all-reduced (max, blocking: async_op=False) over Megatron-Core's
/// amax reduction group, tensor x data x context (parallel_state.py get_amax_reduction_group at
/// core_v0.9.0): 7 GEMMs' worth a layer (QKV, projection, fc1, fc2 and DotProductAttention's 3),
/// 3 fp32 amaxes each forward and 2 backward, 84 and 56 bytes. Megatron-LM with `fp8_recipe:
/// delayed` only; lowered on the tensor stream (its own communicator in the run).
void reduce_fp8_amax(const IterationContext& context, DeviceLowering& device, const model::ModelChunk& chunk,
                     model::Pass pass, std::int64_t micro_batch);

/// A host-time kernel of `duration` labelled `label` on the compute stream (none when 0).
void host_time(DeviceLowering& device, units::Seconds duration, std::uint32_t label, std::int64_t micro_batch);

} // namespace twocs::lowering::detail
