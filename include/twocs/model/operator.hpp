// The operators of a training iteration as seen by one device: compute kernels with their
// FLOPs and memory traffic, and the collectives between them. A layer is a sequence of steps.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <twocs/model/cuda_graphs.hpp>
#include <twocs/model/dtype.hpp>
#include <twocs/units/quantity.hpp>

namespace twocs::model {

enum class OpKind {
  gemm,          // dense matrix multiply (a linear layer or its gradients)
  batched_gemm,  // attention scores Q.K^T and attention over values, per head
  elementwise,   // bias, GeLU/SwiGLU, dropout, residual add, casts
  normalization, // LayerNorm / RMSNorm
  softmax,       // attention softmax (with scale and mask), cross-entropy
  embedding,     // table lookup or its scatter-add gradient
  optimizer,     // the parameter update
  // A fused attention kernel (FlashAttention, cuDNN's fused attention): its own kind, so that a
  // platform's measured table can carry the kernel's benchmarked times (docs/operator-models.md).
  flash_forward,  // the forward kernel: S = Q.K^T, online softmax, O = P.V
  flash_backward, // the backward kernel: S recomputed, then dV, dP, dQ, dK
};

/// Whether `k` is one of the fused attention kernels.
[[nodiscard]] constexpr bool is_fused_attention(OpKind k) {
  return k == OpKind::flash_forward || k == OpKind::flash_backward;
}

[[nodiscard]] std::string_view to_string(OpKind k);

/// Which part of the iteration a step belongs to.
enum class Pass : std::uint8_t { forward, backward, recompute, optimizer };

[[nodiscard]] std::string_view to_string(Pass p);

/// C[m x n] = A[m x k] . B[k x n], `batch` times.
struct GemmShape {
  std::int64_t m = 0;
  std::int64_t n = 0;
  std::int64_t k = 0;
  std::int64_t batch = 1;
  /// 0: the batch is one kernel (a batched or grouped GEMM). Otherwise each batch entry is a
  /// kernel of its own, issued round-robin over this many streams, so that at most this many
  /// share the device at once (Transformer Engine's multi-stream GEMMs, gemm_timing.hpp).
  std::int64_t streams = 0;

  /// Bytes of HBM traffic when A, B and C are each read or written once per batch entry: the
  /// compulsory traffic of the roofline model (Williams et al. 2009).
  [[nodiscard]] units::Bytes operand_bytes(Dtype dtype) const {
    const auto d = [](std::int64_t v) { return static_cast<double>(v); };
    return size_of(d(batch) * (d(m) * d(k) + d(k) * d(n) + d(m) * d(n)), dtype);
  }

  /// 2mnk multiply-adds counted as two FLOPs each (the convention of Narayanan et al. SC'21, Eq. 3).
  [[nodiscard]] units::Flops flops() const {
    return units::Flops(2.0 * static_cast<double>(batch) * static_cast<double>(m) * static_cast<double>(n) *
                        static_cast<double>(k));
  }
};

/// One fused attention kernel call on the axes of FlashAttention's benchmark
/// (benchmarks/benchmark_flash_attention.py: batch x heads, sequence, head dimension, causal):
/// `heads` (batch x heads) times `queries` rows against `keys` keys of `head_dim`; under a causal
/// mask a query visits keys / 2 on average (Dao, FlashAttention-2, ICLR 2024, section 3.1.1).
struct AttentionShape {
  std::int64_t heads = 0;
  std::int64_t queries = 0;
  std::int64_t keys = 0;
  std::int64_t head_dim = 0; // of queries and keys (MLA: nope + rope)
  bool causal = false;
  std::int64_t v_head_dim = 0; // of values and the output when it differs (MLA); 0: head_dim
  std::int64_t window = 0;     // causal sliding window, keys per query at most; 0: none

  /// Keys each query visits on average: s / 2 causal; with a window W < s, min(i + 1, W) for
  /// query i, W (2 s - W) / (2 s) on average (the W^2 / 2 triangle, then W per query).
  [[nodiscard]] std::int64_t attended() const {
    if (!causal) return keys;
    if (window > 0 && window < keys) return window * (2 * keys - window) / (2 * keys);
    return keys / 2;
  }
  [[nodiscard]] std::int64_t v_dim() const { return v_head_dim > 0 ? v_head_dim : head_dim; }
  friend bool operator==(const AttentionShape&, const AttentionShape&) = default;
};

struct ComputeOp {
  std::string name; // e.g. "attn.qkv", "mlp.fc1.wgrad"
  OpKind kind = OpKind::elementwise;
  Pass pass = Pass::forward;
  Dtype dtype = Dtype::bf16;
  std::optional<GemmShape> gemm; // set for gemm, batched_gemm and the fused attention kinds
  /// The kernel call a fused attention step belongs to (flash_forward, flash_backward).
  std::optional<AttentionShape> attention;
  units::Flops flops; // arithmetic work
  units::Bytes bytes; // HBM traffic: bytes read plus bytes written
  /// Parameters whose gradient is final once this op ran (weight-gradient GEMMs, norm and bias
  /// gradients); drives data-parallel gradient bucketing.
  std::int64_t grad_params = 0;
  /// The gradients above are routed experts' weights, reduced over the expert-data-parallel
  /// group (Megatron-Core's expert_data_parallel_group) instead of the data-parallel group.
  bool expert_grads = false;
  /// The host waits for this op before it launches anything more: it copies a result back to the
  /// CPU (the token counts a variable-size expert dispatch must know, token_dispatcher.py).
  bool host_waits = false;
  /// The host's work to issue this op, in launches (node.host_launch_time): 1 for one framework
  /// call that runs one kernel; an op that issues several kernels costs more (host_work.hpp).
  double host_launches = 1;
  /// Kernels the device runs back to back for a memory-bound op, each paying its launch overhead:
  /// 1, or more where a kernel comes with one-thread bookkeeping kernels (an FP8 quantization's
  /// amax zeroing and scale computation under current scaling, fp8_quantize.hpp).
  std::int32_t kernels = 1;
  /// Whether the per-layer CUDA graphs hold it (training.host.cuda_graphs: partial).
  LayerGraph graph = LayerGraph::eager;
  /// This GEMM is one of `gemm_chunks` row chunks of one linear layer's GEMM, issued over several
  /// streams so that each chunk's last wave of tiles fills with the next chunk's (Transformer
  /// Engine's chunked overlaps, PyTorch's async TP: training.overlap.tp_comm). 1: a GEMM of its own.
  std::int64_t gemm_chunks = 1;
  /// SMs withheld from this GEMM for a communication kernel that runs beside it (Transformer
  /// Engine's `set_sm_margin`: training.overlap.tp_comm_sm_margin); 0: it may use every SM.
  std::int64_t sm_margin = 0;
  /// Share of `flops` spent on masked attention scores that a causal model does not need (the
  /// unfused kernels compute them anyway); excluded from model FLOPs.
  double masked_share = 0;
  /// True when the op is matrix work that counts towards model FLOPs (MFU).
  [[nodiscard]] bool is_model_flop() const { return gemm.has_value() && pass != Pass::recompute; }
  /// The model FLOPs of this op: its matrix work less the masked share.
  [[nodiscard]] units::Flops model_flops() const {
    return is_model_flop() ? flops * (1.0 - masked_share) : units::Flops{};
  }
};

/// The whole GEMM that `chunk` (one of chunk.gemm_chunks equal row chunks) is part of.
[[nodiscard]] inline ComputeOp whole_gemm(const ComputeOp& chunk) {
  ComputeOp whole = chunk;
  const double n = static_cast<double>(chunk.gemm_chunks);
  if (whole.gemm) whole.gemm->m *= chunk.gemm_chunks;
  whole.flops = chunk.flops * n;
  whole.bytes = chunk.bytes * n;
  whole.gemm_chunks = 1;
  return whole;
}

/// all_to_all: every member sends a distinct 1/n of its buffer to every other (MoE token
/// dispatch and combine; Lepikhin et al. 2021, GShard).
/// ring_exchange: every member sends its whole buffer to its successor in the group and receives
/// its predecessor's, one step (ring attention's K/V hand-over: Liu et al. 2023; Transformer
/// Engine's AttnFuncWithCPAndKVP2P, send to rank + 1, receive from rank - 1).
enum class Collective { all_reduce, reduce_scatter, all_gather, send_recv, all_to_all, ring_exchange };

[[nodiscard]] std::string_view to_string(Collective c);

/// The group of devices a collective runs over, by parallelism dimension.
/// expert: the expert-parallel group, carved out of data parallelism (Megatron-Core).
/// context: the context-parallel group, the ranks that split one sequence (Megatron-Core's cp group).
enum class CommGroup : std::uint8_t { tensor, pipeline, data, expert, context };

inline constexpr CommGroup all_comm_groups[] = {CommGroup::tensor, CommGroup::pipeline, CommGroup::data,
                                                CommGroup::expert, CommGroup::context};
inline constexpr std::size_t comm_group_count = 5;

[[nodiscard]] std::string_view to_string(CommGroup g);

/// Tokens routed to experts spread evenly over an all-to-all's group, each sent once to every
/// rank (and over the network once to every node) that holds one of its top-k experts, as
/// DeepEP's dispatch and combine do (lowering: forwarded_dispatch_schedule).
struct TokenRouting {
  units::Bytes tokens;      // every token of the rank once: T h bytes
  std::int64_t experts = 0; // routed experts over the whole group
  std::int64_t top_k = 0;   // distinct experts per token
  /// The busiest rank's load over the even one (model.moe.load_imbalance, capped by the
  /// capacity factor): a rank and a node receive this many times their even share of tokens,
  /// at most every token.
  double load_imbalance = 1.0;
};

/// The probability that a token's top_k distinct experts, drawn evenly from `experts`, include
/// one of `held` of them: 1 - C(experts - held, top_k) / C(experts, top_k).
[[nodiscard]] double routed_share(std::int64_t experts, std::int64_t top_k, std::int64_t held);

/// What one rank of `ranks` (in nodes of `ranks_per_node`) sends of `routing` as DeepEP does: to
/// each rank of its node, every token that reaches that rank, from each of the `nodes` nodes
/// (its own and those forwarded); to each other node's same-index rank, every token that
/// reaches that node.
struct DispatchShares {
  std::int64_t nodes = 1;
  units::Bytes to_each_rank; // N T h p_rank
  units::Bytes to_each_node; // T h p_node
};
[[nodiscard]] DispatchShares dispatch_shares(const TokenRouting& routing, std::int64_t ranks,
                                             std::int64_t ranks_per_node);

struct CollectiveOp {
  std::string name; // e.g. "attn.out.all_reduce"
  Collective kind = Collective::all_reduce;
  CommGroup group = CommGroup::tensor;
  Pass pass = Pass::forward;
  /// The buffer per device: the all-reduce input, the reduce-scatter input, the all-gather output.
  units::Bytes size;
  /// Compute ops after this one that may run before its result is needed (0 = blocking).
  int overlapped_ops = 0;
  /// An all-to-all that sends each token once per destination rank and node (DeepEP) instead of
  /// `size` split evenly over the group.
  std::optional<TokenRouting> routing;
  /// Whether the per-layer CUDA graphs hold it (training.host.cuda_graphs: partial).
  LayerGraph graph = LayerGraph::eager;
};

using Step = std::variant<ComputeOp, CollectiveOp>;
using StepSequence = std::vector<Step>;

} // namespace twocs::model
