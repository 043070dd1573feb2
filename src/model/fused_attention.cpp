// FlashAttention (Dao, Fu, Ermon, Rudra, Re, "FlashAttention: Fast and Memory-Efficient Exact
// Attention with IO-Awareness", NeurIPS 2022; Dao, "FlashAttention-2", ICLR 2024): the attention
// core of each head as one kernel that tiles Q, K and V through on-chip memory, so the s x s
// scores and probabilities never reach HBM.
//   FLOPs: the same two GEMMs as the unfused path forward, 4 b s^2 h / t (Dao et al. 2022,
//     section 3.1); backward recomputes S = Q.K^T from the saved softmax statistics and runs the
//     four gradient GEMMs (dV, dP, dQ, dK): 5 x 2 b s^2 h / t (Algorithm 4). The recomputed
//     GEMM is its own step with pass `recompute`, so it does not count as model FLOPs.
//   HBM traffic: every operand once: Q, K, V read and O written, plus the fp32 softmax
//     statistics per row. The query blocks of one head re-read K and V (Algorithm 1; Theorem 2
//     counts Theta(N^2 d^2 / M) accesses to HBM without a cache), but they run side by side and a
//     head's K and V, 2 s d e bytes (1 MiB at s = 4096, d = 128), stay in the L2 cache (40 MB on
//     A100, 50 MB on H100), so HBM sees them once; no s x s matrix is ever written. Backward
//     reads Q, K, V, O, dO and the statistics once and writes dQ (accumulated in fp32, then
//     converted), dK and dV.
// Dropout is applied inside the kernel from a regenerated random mask (section 3.1).
// The steps carry their own kinds (flash_forward, flash_backward) and the kernel call's
// AttentionShape, so that a platform's measured flash-attention times replace the formula.
#include "fused_attention.hpp"

#include <twocs/model/flash_attention.hpp>
#include <twocs/units/numeric.hpp>

#include "op_builders.hpp"

namespace twocs::model {
namespace {

using units::as_double;

ComputeOp as_kernel(ComputeOp op, OpKind kind, const AttentionShape& a) {
  op.kind = kind;
  op.attention = a;
  return op;
}

} // namespace

ComputeOp flash_forward_kernel(std::string name, const AttentionShape& a, Dtype dtype, Pass pass) {
  const double e = element_size(dtype);
  const double dh = as_double(a.head_dim + a.v_dim()) / 2; // MLA: Q, K 192 wide, V, O 128
  const double q = as_double(a.queries) * dh;              // one head's Q or O
  const double kv = as_double(a.keys) * dh;                // one head's K or V
  // Q.K^T and P.V: two GEMMs of 2 s^2 d per head, as one GEMM of k = 2d (d_qk + d_v with MLA).
  ComputeOp op =
      detail::batched_gemm(std::move(name), pass, dtype, {a.queries, a.attended(), a.head_dim + a.v_dim(), a.heads});
  // Read Q, K, V and write O once; write the fp32 log-sum-exp of each row.
  op.bytes = units::Bytes(as_double(a.heads) * (2 * e * q + 2 * e * kv + 4 * as_double(a.queries)));
  return as_kernel(std::move(op), OpKind::flash_forward, a);
}

std::vector<ComputeOp> flash_backward_kernel(const std::string& name, const AttentionShape& a, Dtype dtype) {
  const double e = element_size(dtype);
  const double dh = as_double(a.head_dim + a.v_dim()) / 2; // MLA: mean of the qk and v widths
  const double q = as_double(a.queries) * dh;
  const double kv = as_double(a.keys) * dh;
  // S = Q.K^T recomputed from Q, K and the saved statistics (Dao et al. 2022, Algorithm 4, line 11).
  ComputeOp recompute =
      detail::batched_gemm(name + ".recompute", Pass::recompute, dtype, {a.queries, a.attended(), a.head_dim, a.heads});
  recompute.bytes = units::Bytes(0); // its operands are counted with the kernel below
  // dV = P^T.dO, dP = dO.V^T, dQ = dS.K, dK = dS^T.Q: four GEMMs of 2 s^2 d per head.
  // MLA: dV, dP over v_head_dim and dQ, dK over qk_head_dim: as one GEMM of k = qk + v, 2 per head.
  ComputeOp op =
      a.v_dim() != a.head_dim
          ? detail::batched_gemm(name, Pass::backward, dtype,
                                 {a.queries, a.attended(), a.head_dim + a.v_dim(), 2 * a.heads})
          : detail::batched_gemm(name, Pass::backward, dtype, {a.queries, a.attended(), a.head_dim, 4 * a.heads});
  // Read Q, O, dO and K, V; write dK, dV and dQ, the latter accumulated in fp32 (written, read
  // back) and converted; read the statistics, write and read D = rowsum(dO * O), fp32 per row.
  op.bytes = units::Bytes(as_double(a.heads) * (4 * e * q + 4 * e * kv + 8 * q + 12 * as_double(a.queries)));
  return {as_kernel(std::move(recompute), OpKind::flash_backward, a),
          as_kernel(std::move(op), OpKind::flash_backward, a)};
}

std::vector<ComputeOp> flash_kernel_steps(OpKind kind, const AttentionShape& a, Dtype dtype) {
  if (kind == OpKind::flash_forward) return {flash_forward_kernel("attn.flash", a, dtype, Pass::forward)};
  return flash_backward_kernel("attn.flash.bwd", a, dtype);
}

namespace detail {

AttentionShape flash_geometry(const LayerShape& shape, const LayerDims& d) {
  const auto& m = shape.model;
  return {shape.micro_batch * d.local_heads,
          m.seq_len,
          m.seq_len,
          m.qk_head_dim(),
          m.attention_mask == AttentionMask::causal,
          m.mla ? m.v_head_dim() : 0,
          shape.attention_window()};
}

ComputeOp flash_forward(std::string name, const LayerShape& shape, const AttentionShape& a, Pass pass) {
  return flash_forward_kernel(std::move(name), a, shape.dtype, pass);
}

void add_flash_backward(StepSequence& steps, const std::string& name, const LayerShape& shape,
                        const AttentionShape& a) {
  for (ComputeOp& op : flash_backward_kernel(name, a, shape.dtype)) steps.push_back(std::move(op));
}

void add_fused_attention_forward(StepSequence& steps, const LayerShape& shape, const LayerDims& d, Pass pass) {
  steps.push_back(flash_forward("attn.flash", shape, flash_geometry(shape, d), pass));
}

void add_fused_attention_backward(StepSequence& steps, const LayerShape& shape, const LayerDims& d) {
  add_flash_backward(steps, "attn.flash.bwd", shape, flash_geometry(shape, d));
}

} // namespace detail
} // namespace twocs::model
