#include "op_builders.hpp"

#include "layer_dims.hpp"
#include "memory_bound_costs.hpp"

#include <twocs/model/layer_ops.hpp>
#include <twocs/units/numeric.hpp>

#include <string>
#include <utility>

namespace twocs::model::detail {
namespace {

ComputeOp gemm_op(std::string name, OpKind kind, Pass pass, Dtype dtype, GemmShape shape) {
  ComputeOp op;
  op.name = std::move(name);
  op.kind = kind;
  op.pass = pass;
  op.dtype = dtype;
  op.gemm = shape;
  op.flops = shape.flops();
  op.bytes = shape.operand_bytes(dtype);
  // An FP8 GEMM reads FP8 inputs and writes a BF16 output (Transformer Engine's fp8_gemm).
  if (dtype == Dtype::fp8) {
    const auto e = [](std::int64_t v) { return static_cast<double>(v); };
    op.bytes = units::Bytes(e(shape.batch) * (e(shape.m) * e(shape.k) + e(shape.k) * e(shape.n)) * 1.0 +
                            e(shape.batch) * e(shape.m) * e(shape.n) * 2.0);
  }
  return op;
}

} // namespace

ComputeOp linear_forward(std::string name, Dtype dtype, std::int64_t tokens, std::int64_t in, std::int64_t out) {
  return gemm_op(std::move(name), OpKind::gemm, Pass::forward, dtype, GemmShape{tokens, out, in, 1});
}

ComputeOp linear_input_grad(std::string name, Dtype dtype, std::int64_t tokens, std::int64_t in, std::int64_t out) {
  return gemm_op(std::move(name), OpKind::gemm, Pass::backward, dtype, GemmShape{tokens, in, out, 1});
}

ComputeOp linear_weight_grad(std::string name, Dtype dtype, std::int64_t tokens, std::int64_t in, std::int64_t out,
                             std::int64_t bias) {
  ComputeOp op = gemm_op(std::move(name), OpKind::gemm, Pass::backward, dtype, GemmShape{in, out, tokens, 1});
  op.grad_params = in * out + bias;
  return op;
}

ComputeOp batched_gemm(std::string name, Pass pass, Dtype dtype, GemmShape shape) {
  return gemm_op(std::move(name), OpKind::batched_gemm, pass, dtype, shape);
}

ComputeOp memory_bound(std::string name, OpKind kind, Pass pass, Dtype dtype, double elements, double bytes_per_element,
                       double flops_per_element) {
  ComputeOp op;
  op.name = std::move(name);
  op.kind = kind;
  op.pass = pass;
  op.dtype = dtype;
  op.flops = units::Flops(elements * flops_per_element);
  op.bytes = units::Bytes(elements * bytes_per_element);
  return op;
}

ComputeOp host_sync(std::string name, Pass pass, Dtype dtype) {
  ComputeOp wait = memory_bound(std::move(name), OpKind::elementwise, pass, dtype, 0, 0, 0);
  wait.host_waits = true;
  return wait;
}

ComputeOp ffn_activation_forward(const std::string& prefix, FfnKind kind, KernelFusion kernels, Pass pass, Dtype dtype,
                                 double elements) {
  if (kind == FfnKind::gelu)
    return memory_bound(prefix + ".gelu", OpKind::elementwise, pass, dtype, elements, kernel_bytes::gelu_forward(dtype),
                        kernel_flops::gelu);
  // One compiled kernel as NeMo runs it (nemo/collections/nlp/modules/common/megatron/utils.py at
  // v2.0.0: squared_relu under @jit_fuser = torch.compile): read x, write y, as GeLU.
  if (kind == FfnKind::squared_relu)
    return memory_bound(prefix + ".squared_relu", OpKind::elementwise, pass, dtype, elements,
                        kernels == KernelFusion::eager ? kernel_bytes::eager::squared_relu_forward
                                                       : kernel_bytes::gelu_forward(dtype),
                        kernel_flops::squared_relu);
  const double bytes =
      kernels == KernelFusion::eager ? kernel_bytes::eager::swiglu_forward : kernel_bytes::swiglu_forward(dtype);
  return memory_bound(prefix + ".swiglu", OpKind::elementwise, pass, dtype, elements, bytes, kernel_flops::swiglu);
}

ComputeOp ffn_activation_backward(const std::string& prefix, FfnKind kind, KernelFusion kernels, Dtype dtype,
                                  double elements) {
  if (kind == FfnKind::gelu)
    return memory_bound(prefix + ".gelu.bwd", OpKind::elementwise, Pass::backward, dtype, elements,
                        kernel_bytes::gelu_backward(dtype), kernel_flops::gelu_backward);
  if (kind == FfnKind::squared_relu) // compiled: read dy and x, write dx, as GeLU's backward
    return memory_bound(prefix + ".squared_relu.bwd", OpKind::elementwise, Pass::backward, dtype, elements,
                        kernels == KernelFusion::eager ? kernel_bytes::eager::squared_relu_backward
                                                       : kernel_bytes::gelu_backward(dtype),
                        kernel_flops::squared_relu_backward);
  const double bytes =
      kernels == KernelFusion::eager ? kernel_bytes::eager::swiglu_backward : kernel_bytes::swiglu_backward(dtype);
  return memory_bound(prefix + ".swiglu.bwd", OpKind::elementwise, Pass::backward, dtype, elements, bytes,
                      kernel_flops::swiglu_backward);
}

double norm_bytes(NormKind norm, KernelFusion kernels, Dtype dtype, bool backward) {
  if (kernels == KernelFusion::eager && norm == NormKind::rmsnorm)
    return backward ? kernel_bytes::eager::rmsnorm_backward : kernel_bytes::eager::rmsnorm_forward;
  return backward ? kernel_bytes::norm_backward(dtype) : kernel_bytes::norm_forward(dtype);
}

std::optional<ComputeOp> eager_repeat_kv(const LayerShape& shape, const LayerDims& d, Pass pass) {
  const auto& m = shape.model;
  if (shape.kernels != KernelFusion::eager || m.kv_heads >= m.heads) return std::nullopt;
  // K and V at every query head: write 2 bytes each, read the kv_heads-wide source (or the reverse).
  const double elements = 2.0 * static_cast<double>(d.tokens) * static_cast<double>(d.attention_local);
  const double share = static_cast<double>(m.kv_heads) / static_cast<double>(m.heads);
  return memory_bound("attn.repeat_kv", OpKind::elementwise, pass, shape.dtype, elements,
                      kernel_bytes::eager::repeat_kv_write * (1.0 + share), pass == Pass::backward ? 1.0 : 0.0);
}

double rope_bytes(KernelFusion kernels, Dtype dtype) {
  return kernels == KernelFusion::eager ? kernel_bytes::eager::rope : kernel_bytes::rope(dtype);
}

ComputeOp fp8_cast(std::string name, Pass pass, double elements) {
  return memory_bound(std::move(name), OpKind::elementwise, pass, Dtype::bf16, elements, 3.0, 1.0);
}

ComputeOp fp8_amax(std::string name, Pass pass, double elements) {
  return memory_bound(std::move(name), OpKind::elementwise, pass, Dtype::bf16, elements, 2.0, 1.0);
}

ComputeOp fp8_quantize_both(std::string name, Pass pass, double elements) {
  return memory_bound(std::move(name), OpKind::elementwise, pass, Dtype::bf16, elements, 4.0, 1.0);
}

ComputeOp masked(ComputeOp op, const LayerDims& d) {
  op.masked_share = d.masked_share;
  return op;
}

std::int64_t norm_parameters(const TransformerConfig& m) {
  return m.norm == NormKind::rmsnorm ? m.hidden : 2 * m.hidden;
}

ComputeOp norm_forward(const LayerShape& shape, const LayerDims& d, std::string name, Pass pass) {
  return memory_bound(std::move(name), OpKind::normalization, pass, shape.dtype, d.norm_elements,
                      norm_bytes(shape.model.norm, shape.kernels, shape.dtype, false),
                      kernel_flops::norm_forward_of(shape.model.norm));
}

ComputeOp norm_backward(const LayerShape& shape, const LayerDims& d, std::string name) {
  ComputeOp op =
      memory_bound(std::move(name), OpKind::normalization, Pass::backward, shape.dtype, d.norm_elements,
                   norm_bytes(shape.model.norm, shape.kernels, shape.dtype, true), kernel_flops::norm_backward);
  op.grad_params = norm_parameters(shape.model); // scale (and shift)
  return op;
}

void add_qk_norms(StepSequence& steps, const LayerShape& shape, const LayerDims& d, Pass pass) {
  if (!shape.model.qk_norm) return;
  const bool backward = pass == Pass::backward;
  const double per_head = units::as_double(d.tokens) * units::as_double(shape.model.head_dim());
  for (const auto& [name, heads] :
       {std::pair{"attn.q_norm", d.local_heads}, std::pair{"attn.k_norm", d.kv_local_heads}}) {
    // Megatron-Core runs them as two TENorm calls over head_dim (attention.py, q_layernorm, k_layernorm).
    ComputeOp op = memory_bound(backward ? std::string(name) + ".bwd" : std::string(name), OpKind::normalization, pass,
                                shape.dtype, per_head * units::as_double(heads),
                                norm_bytes(NormKind::rmsnorm, shape.kernels, shape.dtype, backward),
                                backward ? kernel_flops::norm_backward : kernel_flops::rms_norm_forward);
    if (backward) op.grad_params = shape.model.head_dim(); // one scale per head dimension, shared by the heads
    steps.push_back(std::move(op));
  }
}

CollectiveOp collective(std::string name, Collective kind, CommGroup group, Pass pass, units::Bytes size,
                        int overlapped_ops) {
  CollectiveOp op;
  op.name = std::move(name);
  op.kind = kind;
  op.group = group;
  op.pass = pass;
  op.size = size;
  op.overlapped_ops = overlapped_ops;
  return op;
}

} // namespace twocs::model::detail
