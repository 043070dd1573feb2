// The fused attention kernels (training.attention: fused) as the model emits them, for one
// kernel call: the layer builds its attention steps from these, and a measured table
// (docs/operator-models.md, "Measured tables take precedence") prices a benchmarked kernel with
// the same steps, so that its measured-over-formula ratio applies to the layer's kernels.
#pragma once

#include <string>
#include <vector>

#include <twocs/model/dtype.hpp>
#include <twocs/model/operator.hpp>

namespace twocs::model {

/// The forward kernel `name` (kind flash_forward; pass forward, or recompute under selective
/// recomputation): Q.K^T and P.V as one batched GEMM of k = 2 d over the attended keys; Q, K, V
/// read and O written once, plus the fp32 log-sum-exp of each row.
[[nodiscard]] ComputeOp flash_forward_kernel(std::string name, const AttentionShape& a, Dtype dtype, Pass pass);

/// The backward kernel as two steps of kind flash_backward: `name`.recompute (S = Q.K^T again,
/// pass recompute, no model FLOPs) and `name` (dV, dP, dQ, dK, pass backward).
[[nodiscard]] std::vector<ComputeOp> flash_backward_kernel(const std::string& name, const AttentionShape& a,
                                                           Dtype dtype);

/// The steps of one kernel of fused-attention kind `kind` (its forward in pass forward).
[[nodiscard]] std::vector<ComputeOp> flash_kernel_steps(OpKind kind, const AttentionShape& a, Dtype dtype);

} // namespace twocs::model
