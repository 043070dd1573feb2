// Private: the tensor-parallel collectives around Megatron-LM's parallel linear layers
// (Shoeybi et al. 2019, Fig. 3 "f" and "g"; Korthikanti et al. 2022, Fig. 5 with sequence
// parallelism), shared by the transformer layer, the embedding and the output head.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include <twocs/model/layer_ops.hpp>

#include "layer_dims.hpp"

namespace twocs::model::detail {

/// Entering a tensor-parallel region ("f"): identity forward, so only under sequence
/// parallelism is there a collective, the all-gather of the sharded activation.
[[nodiscard]] CollectiveOp enter_region_forward(const LayerDims& d, const std::string& name);

/// Leaving a tensor-parallel region ("g") forward: all-reduce of the partial sums, or
/// reduce-scatter under sequence parallelism; nothing with one rank.
[[nodiscard]] std::optional<CollectiveOp> leave_region_forward(const LayerShape& shape, const LayerDims& d,
                                                               const std::string& name);

/// A linear layer's GEMM over `tokens` rows: its forward or its input gradient.
using RowGemm = std::function<ComputeOp(std::int64_t tokens)>;

/// The all-gathered buffer of a sequence-sharded linear input on one rank: FP8 when the GEMMs read
/// FP8, as every framework casts the shard before it gathers: Transformer Engine with and without
/// userbuffers (fp8_buf, initialize_ub; v1.10 layernorm_linear.py:124-157, the norm's FP8 output
/// gathered, and base.py:760-783, the output gradient cast then gathered; v2.x linear.py:378-412 at
/// d0067d0, "All-gather is not supported with FP8 column-wise data"), and DTensor's tensor
/// parallelism (torchao float8_tensor_parallel.py: Float8ColwiseParallel and
/// PrepareFloat8ModuleInput cast the input, Float8RowwiseParallel the output gradient);
/// `d.activation` otherwise.
[[nodiscard]] units::Bytes gathered_activation(const LayerShape& shape, const LayerDims& d);

/// Whether a column-parallel layer's input (and a row-parallel layer's output gradient) is
/// all-gathered in FP8: under sequence parallelism, where gathered_activation is FP8.
[[nodiscard]] bool gathers_fp8(const LayerShape& shape);

/// DTensor's re-layout of a sequence-parallel collective's buffer (`LayerShape::dtensor_tp`):
/// PyTorch's functional collectives gather and scatter along dim 0 of the buffer, so a
/// sequence-dim (dim 1) all-gather copies its output, torch.cat(torch.chunk(out, t), dim=1), and a
/// sequence-dim reduce-scatter copies its input, torch.cat(torch.chunk(in, t, dim=1))
/// (torch/distributed/_functional_collectives.py; torchtitan parallelize_llama.py:171-173 at
/// 9dec370 and pytorch/torchtitan#437, which measured the two copies at 0.18 ms of a 3 ms FFN).
/// `NAME.chunk_cat` reads and writes `bytes` once; nothing where the layout needs no copy: an
/// all-gather of one micro-batch row (PyTorch's _maybe_view_chunk_cat returns a view) and every
/// plan outside DTensor's sequence parallelism. For the collectives async TP leaves unfused only:
/// its fused kernels write their chunks in place.
[[nodiscard]] std::optional<ComputeOp> dtensor_layout_copy(const LayerShape& shape, const std::string& name, Pass pass,
                                                           units::Bytes bytes, bool gathered);

/// `enter_region_forward` for a linear layer's input: its all-gather moves `gathered_activation`.
[[nodiscard]] CollectiveOp enter_gathered_region(const LayerShape& shape, const LayerDims& d, const std::string& name);

/// The GEMM of a column-parallel layer forward (QKV, fc1) or of a row-parallel layer's input
/// gradient (attention output, fc2), after the all-gather of its sequence-sharded input under
/// sequence parallelism, as training.overlap.tp_comm runs the two (tp_comm_overlap.cpp).
/// Every step is in `pass`; the collectives are named `name`.all_gather or `name`.ring_exchange.
void add_gathered_gemm(StepSequence& steps, const LayerShape& shape, const LayerDims& d, const std::string& name,
                       Pass pass, const RowGemm& gemm);

/// The GEMM of a row-parallel layer forward (attention output, fc2), then the reduce-scatter
/// (sequence parallelism) or all-reduce of its partial sums, as training.overlap.tp_comm runs them.
/// Under Transformer Engine's userbuffers the GEMM's chunks leave `sm_margin` SMs to the
/// communication kernel (TpSmMargin); 0 elsewhere.
void add_scattered_gemm(StepSequence& steps, const LayerShape& shape, const LayerDims& d, const std::string& name,
                        Pass pass, const RowGemm& gemm, std::int64_t sm_margin);

/// Backward of a column-parallel linear layer (QKV, fc1, logits): dgrad, the input-gradient
/// collective (overlapped with wgrad when asynchronous), wgrad. Under sequence parallelism the
/// layer's input is kept sharded and all-gathered again for wgrad, overlapped with dgrad (Megatron-LM,
/// LinearWithGradAccumulationAndAsyncCommunication); DTensor's autograd keeps the gathered input
/// instead (LayerShape::dtensor_tp), so nothing is gathered.
/// `grad_params_override` >= 0 replaces the gradients wgrad reports as final; `before_wgrad` runs
/// just before wgrad (the FP8 transpose of the input it reads, fp8_transpose_for_wgrad).
void add_column_parallel_backward(StepSequence& steps, const LayerShape& shape, const LayerDims& d,
                                  const std::string& name, std::int64_t in, std::int64_t out, std::int64_t bias,
                                  std::int64_t grad_params_override = -1,
                                  std::optional<ComputeOp> before_wgrad = std::nullopt);

} // namespace twocs::model::detail
