// Private helpers that build ComputeOps and CollectiveOps with their FLOPs and bytes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <twocs/model/layer_ops.hpp>
#include <twocs/model/operator.hpp>
#include <twocs/model/transformer.hpp>

namespace twocs::model::detail {

/// Y[tokens x out] = X[tokens x in] . W[in x out]. HBM traffic counts each operand once
/// (compulsory traffic of the roofline model, Williams et al. 2009).
ComputeOp linear_forward(std::string name, Dtype dtype, std::int64_t tokens, std::int64_t in, std::int64_t out);
/// dX[tokens x in] = dY[tokens x out] . W^T: same FLOPs as the forward (Narayanan et al. SC'21, section 5.1).
ComputeOp linear_input_grad(std::string name, Dtype dtype, std::int64_t tokens, std::int64_t in, std::int64_t out);
/// dW[in x out] = X^T . dY; finalises the gradient of in*out weights plus `bias` bias entries.
ComputeOp linear_weight_grad(std::string name, Dtype dtype, std::int64_t tokens, std::int64_t in, std::int64_t out,
                             std::int64_t bias);

ComputeOp batched_gemm(std::string name, Pass pass, Dtype dtype, GemmShape shape);

/// A function that moves a step (ComputeOp or CollectiveOp) into `pass`: a layer's forward steps
/// built once and emitted again as its recomputation.
[[nodiscard]] inline auto pass_setter(Pass pass) {
  return [pass](auto step) {
    step.pass = pass;
    return step;
  };
}

/// A device-to-host synchronisation: the host waits until the device's queue has drained before
/// it issues the next kernel, so that kernel starts one launch later (ComputeOp::host_waits); a
/// step without work, costed at the device's fixed per-kernel overhead.
ComputeOp host_sync(std::string name, Pass pass, Dtype dtype);

/// A memory-bound kernel over `elements` values: `bytes_per_element` of HBM traffic and
/// `flops_per_element` of arithmetic each.
ComputeOp memory_bound(std::string name, OpKind kind, Pass pass, Dtype dtype, double elements, double bytes_per_element,
                       double flops_per_element);

/// The FFN's activation over `elements` values of the FFN width: SwiGLU (gate x up, named
/// `prefix`.swiglu) or GeLU (`prefix`.gelu), forward; with `.bwd` and the backward's costs.
/// Under eager kernels SwiGLU is silu and a product, each its own kernel (kernel_bytes::eager).
ComputeOp ffn_activation_forward(const std::string& prefix, FfnKind kind, KernelFusion kernels, Pass pass, Dtype dtype,
                                 double elements);
ComputeOp ffn_activation_backward(const std::string& prefix, FfnKind kind, KernelFusion kernels, Dtype dtype,
                                  double elements);

/// Bytes per element of a norm's forward or backward: one fused kernel, or PyTorch eager's
/// RMSNorm (LayerNorm is one kernel, F.layer_norm, either way).
double norm_bytes(NormKind norm, KernelFusion kernels, Dtype dtype, bool backward);
/// Eager grouped-query attention copies K and V to every query head before the attention kernel
/// (torchtitan repeat_kv: expand + reshape) and sums the copies' gradients back: one kernel over
/// the repeated K and V, forward or backward. None when fused or without grouped-query attention.
std::optional<ComputeOp> eager_repeat_kv(const LayerShape& shape, const struct LayerDims& d, Pass pass);

/// Bytes per element of the rotary embeddings, forward or backward.
double rope_bytes(KernelFusion kernels, Dtype dtype);

/// Transformer Engine's cast of `elements` BF16 values to FP8 with the amax of the tensor
/// (cast_transpose / quantize kernels): read 2 bytes, write 1 per element; the amax reduction
/// is fused into it (transformer_engine/common/transpose/cast_transpose.cu).
ComputeOp fp8_cast(std::string name, Pass pass, double elements);
/// A current-scaling quantizer's amax pass over `elements` BF16 values before its cast (Transformer
/// Engine's Float8CurrentScalingQuantizer, torchao's hp_tensor_to_float8_dynamic): read 2 bytes an
/// element.
ComputeOp fp8_amax(std::string name, Pass pass, double elements);
/// Transformer Engine's quantization of `elements` BF16 values to FP8 both rowwise and columnwise
/// (transposed, for the weight gradient's GEMM): read 2 bytes, write 1 for each copy.
ComputeOp fp8_quantize_both(std::string name, Pass pass, double elements);

/// `op` with the masked share of a causal attention GEMM (`d.masked_share`, no model FLOPs).
ComputeOp masked(ComputeOp op, const struct LayerDims& d);

/// Parameters of one norm: scale and shift for LayerNorm, scale only for RMSNorm.
[[nodiscard]] std::int64_t norm_parameters(const TransformerConfig& m);

/// The model's norm over the layer's b s h (/ t under sequence parallelism) values, forward in
/// `pass`, or backward, finalising its scale (and shift).
ComputeOp norm_forward(const LayerShape& shape, const struct LayerDims& d, std::string name, Pass pass);
ComputeOp norm_backward(const LayerShape& shape, const struct LayerDims& d, std::string name);
/// QK-norm (model.qk_norm): the RMSNorms of each head's queries and of each key head, forward
/// (before rotary embeddings) or backward; none without qk_norm.
void add_qk_norms(StepSequence& steps, const LayerShape& shape, const struct LayerDims& d, Pass pass);

CollectiveOp collective(std::string name, Collective kind, CommGroup group, Pass pass, units::Bytes size,
                        int overlapped_ops = 0);

} // namespace twocs::model::detail
