// How a training run stores and gathers the weights of its linear layers: 16-bit weights, FP8
// training's cached FP8 copies of them, or FP8 primary weights (docs/memory-model.md, "FP8
// weights").
#pragma once

#include <cstdint>

#include <twocs/model/operator.hpp>
#include <twocs/model/training_plan.hpp>

namespace twocs::model {

/// Bytes per element of the model weights as the framework keeps them: 16 bits in mixed
/// precision (fp8 training included), 4 in fp32.
[[nodiscard]] double weight_element_size(const TrainingPlan& plan);

/// Bytes a device holds per weight of a linear layer it keeps whole (not sharded by ZeRO-3 or
/// FSDP): the 16-bit weight, plus under FP8 training in Megatron-LM the FP8 copy and its
/// transpose Transformer Engine caches between micro-batches, or with FP8 primary weights the
/// FP8 weight and its transpose only.
[[nodiscard]] double resident_linear_weight_bytes(const TrainingPlan& plan);

/// Bytes per element of a linear layer's weight as a sharded optimizer or FSDP gathers it (and,
/// under full sharding, holds its shard): 1 with FP8 primary weights, else the weight element.
[[nodiscard]] double gathered_linear_weight_bytes(const TrainingPlan& plan);

/// Bytes of `parameters` weights as gathered, `linear` of them linear layers' (at
/// gathered_linear_weight_bytes), the rest at the weight element.
[[nodiscard]] double gathered_weight_bytes(const TrainingPlan& plan, std::int64_t parameters, std::int64_t linear);

/// Whether the linear layers quantize their 16-bit weights to FP8 once a step: FP8 training under
/// Transformer Engine (framework megatron_lm) without FP8 primary weights. Its modules quantize
/// a weight in their forward when `is_first_microbatch` is True or None and keep the FP8 copy
/// and its transpose for the step's later micro-batches (transformer_engine/pytorch/module/
/// linear.py and grouped_linear.py, `cache_weight`/`update_workspace`; Megatron-Core passes True
/// on each chunk's first micro-batch, a bare module call passes None: every call quantizes).
[[nodiscard]] bool quantizes_weights_per_step(const TrainingPlan& plan);

/// `forward` as it runs on a layer's first micro-batch of the step: each FP8 linear GEMM (and
/// each grouped experts' GEMM, one weight per local expert) preceded by its weight's
/// quantization, `NAME.weight.fp8_quantize` (docs/simulation.md, "FP8"); `forward` itself where
/// quantizes_weights_per_step is false.
[[nodiscard]] StepSequence first_micro_batch_forward(const StepSequence& forward, const TrainingPlan& plan);

/// Whether the linear layers cast their 16-bit weights to FP8 at every use: torchao's Float8Linear
/// (framework fsdp, torchtitan's Float8) without FSDP's float8 all-gather (`fp8_params`). Its
/// forward casts the weight with a dynamic tensorwise scale each call, and the backward's
/// grad-input GEMM copies the FP8 weight to the column-major layout torch._scaled_mm takes
/// (torchao/float8/float8_linear.py forward_fp8_matmul and float8_ops.py preprocess_addmm at
/// 4f8021f2a, 2024-12-04: `b_data.t().contiguous().t()`).
[[nodiscard]] bool casts_weights_every_pass(const TrainingPlan& plan);

/// Whether the backward's grad-input GEMMs copy the FP8 weight column-major first: torchao's
/// Float8Linear (framework fsdp), with or without FSDP's float8 all-gather, whose gathered weight
/// (a row-major Float8Tensor, fsdp_utils.py fsdp_post_all_gather) meets the same
/// preprocess_addmm (torchao 03c850afa, 2025-06-13, the code of the June 2025 benchmarks, as at
/// 4f8021f2a).
[[nodiscard]] bool copies_fp8_weights_for_dgrad(const TrainingPlan& plan);

/// `steps` with torchao's weight casts: before each FP8 GEMM of a forward or recomputed forward,
/// `NAME.weight.fp8_amax` (read 2 bytes a weight) and `NAME.weight.fp8_cast` (read 2, write 1)
/// where casts_weights_every_pass; before each FP8 dgrad GEMM, `NAME.weight.fp8_transpose` (read
/// 1, write 1) where copies_fp8_weights_for_dgrad. `steps` itself where neither holds.
[[nodiscard]] StepSequence with_float8_weight_casts(const StepSequence& steps, const TrainingPlan& plan);

} // namespace twocs::model
