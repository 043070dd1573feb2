// Context parallelism (Megatron-Core with Transformer Engine; docs/simulation.md, "Context
// parallelism"): each sequence is cut into 2 cp chunks and rank r of the cp group holds chunks
// r and 2 cp - 1 - r, so under a causal mask every rank has the same attention work
// (transformer_engine/pytorch/attention/dot_product_attention/context_parallel.py,
// get_seq_chunk_ids_for_reordering_before_attn). Everything but attention is token-wise and
// runs on the rank's s / cp tokens (layer_dims.cpp); attention needs every key and value.
//
// ring (AttnFuncWithCPAndKVP2P; ring attention, Liu et al. 2023): cp steps; in step i < cp - 1
//   the rank sends its current K/V block to rank + 1 and receives the next from rank - 1 while
//   FlashAttention runs on the current block. With the load-balancing split each step's block
//   is half of an (s / cp) x (s / cp) tile (the diagonal step: both local chunks causally; an
//   earlier rank's block: both query chunks against its first chunk; a later rank's: the second
//   query chunk against both), so every step costs the same. Backward runs cp steps that hand
//   on K/V and the dK/dV accumulated so far: K/V alone in step 0, both in steps 1 .. cp - 2,
//   dK/dV alone in step cp - 1: 2 (cp - 1) blocks per rank.
// all_gather (AttnFuncWithCPAndKVAllGather; Llama 3, Dubey et al. 2024, section 3.3.2): K and V
//   are all-gathered over the cp group before attention, which then runs the rank's s / cp
//   queries against all s keys (s / 2 attended on average under the balanced causal split).
//   Backward all-gathers K and V again (only the local ones are saved) and reduce-scatters the
//   full-sequence dK and dV. Neither collective overlaps with compute.
// all_to_all (AttnFuncWithCPAndQKVOA2A; DeepSpeed-Ulysses, Jacobs et al. 2023): an all-to-all
//   trades the sequence split of Q, K and V for a head split, attention runs the whole sequence
//   on a / (t cp) heads, and a second all-to-all brings the output back. Backward all-to-alls the
//   output and its gradient, runs attention's backward and all-to-alls dQ, dK and dV back. The
//   all-to-alls block; the heads must divide by cp (Transformer Engine asserts it). The whole
//   sequence is local, so a sliding window applies as without context parallelism.
// Transformer Engine runs context parallelism only on its fused attention kernels, so the
// unfused path is refused (validate.cpp).
#include "context_attention.hpp"

#include <optional>

#include <twocs/units/numeric.hpp>

#include "fused_attention.hpp"
#include "op_builders.hpp"

namespace twocs::model::detail {
namespace {

using units::as_double;

bool causal(const LayerShape& shape) { return shape.model.attention_mask == AttentionMask::causal; }

/// The rank's s / cp queries against `keys` keys. MLA's per-head queries and keys are nope + rope
/// wide and its values v_head_dim (Transformer Engine's ring takes K and V of different head
/// dims: context_parallel.py, AttnFuncWithCPAndKVP2P, enable_mla).
AttentionShape cp_attention(const LayerShape& shape, const LayerDims& d, std::int64_t keys) {
  const auto& m = shape.model;
  return {shape.micro_batch * d.local_heads, m.seq_len / shape.context, keys, m.qk_head_dim(), causal(shape),
          m.mla ? m.v_head_dim() : 0};
}

/// One ring step: the rank's s / cp queries against one rank's s / cp keys, half of them
/// attended under the balanced causal split.
AttentionShape ring_step(const LayerShape& shape, const LayerDims& d) {
  return cp_attention(shape, d, shape.model.seq_len / shape.context);
}

/// All-gather: the rank's s / cp queries against the whole sequence.
AttentionShape gathered(const LayerShape& shape, const LayerDims& d) {
  return cp_attention(shape, d, shape.model.seq_len);
}

/// All-to-all: the whole sequence on a / (t cp) heads, at the layer's window.
AttentionShape head_split(const LayerShape& shape, const LayerDims& d) {
  AttentionShape a = cp_attention(shape, d, shape.model.seq_len);
  a.heads = shape.micro_batch * d.local_heads / shape.context;
  a.queries = shape.model.seq_len;
  a.window = shape.attention_window();
  return a;
}

/// Values of the rank's query heads for its s / cp tokens, `head_dim` per head.
double local_head_values(const LayerShape& shape, const LayerDims& d, std::int64_t head_dim) {
  return as_double(shape.micro_batch) * as_double(shape.model.seq_len / shape.context) * as_double(d.local_heads) *
         as_double(head_dim);
}

/// Bytes of the rank's Q, K and V (`qkv`) or output (`!qkv`) for its s / cp tokens.
units::Bytes local_tensors(const LayerShape& shape, const LayerDims& d, bool qkv) {
  const auto& m = shape.model;
  return qkv ? size_of(local_head_values(shape, d, m.qk_head_dim()), shape.dtype) + context_kv_block(shape)
             : size_of(local_head_values(shape, d, m.v_head_dim()), shape.dtype);
}

void add_head_split_forward(StepSequence& steps, const LayerShape& shape, const LayerDims& d, Pass pass) {
  steps.push_back(collective("attn.cp.qkv.all_to_all", Collective::all_to_all, CommGroup::context, pass,
                             local_tensors(shape, d, true)));
  steps.push_back(flash_forward("attn.flash", shape, head_split(shape, d), pass));
  steps.push_back(collective("attn.cp.out.all_to_all", Collective::all_to_all, CommGroup::context, pass,
                             local_tensors(shape, d, false)));
}

void add_head_split_backward(StepSequence& steps, const LayerShape& shape, const LayerDims& d) {
  steps.push_back(collective("attn.cp.out_grad.all_to_all", Collective::all_to_all, CommGroup::context, Pass::backward,
                             local_tensors(shape, d, false) * 2.0));
  add_flash_backward(steps, "attn.flash.bwd", shape, head_split(shape, d));
  steps.push_back(collective("attn.cp.dqkv.all_to_all", Collective::all_to_all, CommGroup::context, Pass::backward,
                             local_tensors(shape, d, true)));
}

CollectiveOp exchange(const char* name, Pass pass, units::Bytes size, int overlapped_ops) {
  return collective(name, Collective::ring_exchange, CommGroup::context, pass, size, overlapped_ops);
}

/// Under the balanced causal split, the share of a rank's queries that ring step i >= 1 attends,
/// averaged over the ranks: ranks r >= i attend both query chunks, the others the second only
/// (context_parallel.py, AttnFuncWithCPAndKVP2P: "i <= rank" selects the whole q); its keys are
/// the complement: half of them where the queries are whole. Step 0 and non-causal steps: all.
double ring_query_share(const LayerShape& shape, std::int64_t step) {
  if (step == 0 || !causal(shape)) return 1.0;
  return 1.0 - as_double(step) / (2.0 * as_double(shape.context));
}
double ring_key_share(const LayerShape& shape, std::int64_t step) {
  if (step == 0 || !causal(shape)) return 1.0;
  return 0.5 + as_double(step) / (2.0 * as_double(shape.context));
}

/// Transformer Engine merges the ring steps' partial outputs after the last step, one kernel per
/// step over that step's queries (context_parallel.py at d0067d0: flash_attn_fwd_out_correction_init,
/// out = out_step x exp(lse_step - lse), read and write; flash_attn_fwd_out_correction and its
/// second-half variant, out += out_step x exp(lse_step - lse), read both and write out). The
/// softmax statistics' corrections between steps, over heads x queries values, are not costed.
void add_ring_out_corrections(StepSequence& steps, const LayerShape& shape, const LayerDims& d, Pass pass) {
  const double outputs = local_head_values(shape, d, shape.model.v_head_dim());
  const double e = element_size(shape.dtype);
  for (std::int64_t i = 0; i < shape.context; ++i)
    steps.push_back(memory_bound("attn.cp.out_correction", OpKind::elementwise, pass, shape.dtype,
                                 outputs * ring_query_share(shape, i), i == 0 ? 2 * e : 3 * e, 2));
}

/// Backward, after each step's kernels: its dQ copied (step 0) or added into the rank's dQ, its
/// dK/dV into the block the ring hands on (context_parallel.py: dq.copy_ / dq.add_, the "dkv
/// correction"), over the step's queries and keys.
void add_ring_grad_corrections(StepSequence& steps, const LayerShape& shape, const LayerDims& d, std::int64_t step) {
  const double queries = local_head_values(shape, d, shape.model.qk_head_dim());
  const double keys = shape.model.context_kv_elements(shape.micro_batch, shape.tensor, shape.context);
  const double e = element_size(shape.dtype);
  const double per_element = step == 0 ? 2 * e : 3 * e;
  steps.push_back(memory_bound("attn.cp.dq_correction", OpKind::elementwise, Pass::backward, shape.dtype,
                               queries * ring_query_share(shape, step), per_element, step == 0 ? 0 : 1));
  steps.push_back(memory_bound("attn.cp.dkv_correction", OpKind::elementwise, Pass::backward, shape.dtype,
                               keys * ring_key_share(shape, step), per_element, step == 0 ? 0 : 1));
}

/// Transformer Engine's copies of a ring step's operands (context_parallel.py at d0067d0, the
/// FusedAttention path of AttnFuncWithCPAndKVP2P): under a causal mask, step i >= 1 attends the
/// first half of the received K/V on ranks r >= i ("lower-triangle": k_part, v_part
/// .contiguous()) and the second half of the rank's queries on the others ("upper-triangle":
/// q_part .contiguous(), in the backward also the output and its gradient); each copy reads and
/// writes the half. Averaged over the ranks, as the steps' kernels are; nothing without a causal
/// mask.
std::optional<ComputeOp> ring_step_copies(const LayerShape& shape, const LayerDims& d, std::int64_t step, Pass pass) {
  if (step == 0 || !causal(shape)) return std::nullopt;
  const double lower = 1.0 - as_double(step) / as_double(shape.context); // ranks r >= step
  const double e = element_size(shape.dtype);
  const double half_kv = context_kv_block(shape).value() / 2;
  double half_q = local_head_values(shape, d, shape.model.qk_head_dim()) * e / 2;
  if (pass == Pass::backward) half_q += 2 * local_head_values(shape, d, shape.model.v_head_dim()) * e / 2;
  const double bytes = lower * half_kv + (1 - lower) * half_q;
  return memory_bound(pass == Pass::backward ? "attn.cp.step_copy.bwd" : "attn.cp.step_copy", OpKind::elementwise, pass,
                      shape.dtype, bytes, 2.0, 0.0);
}

} // namespace

units::Bytes context_kv_block(const LayerShape& shape) {
  return size_of(shape.model.context_kv_elements(shape.micro_batch, shape.tensor, shape.context), shape.dtype);
}

void add_context_attention_forward(StepSequence& steps, const LayerShape& shape, const LayerDims& d, Pass pass) {
  const units::Bytes block = context_kv_block(shape);
  const double cp = as_double(shape.context);
  if (shape.context_comm == ContextComm::all_to_all) return add_head_split_forward(steps, shape, d, pass);
  if (shape.context_comm == ContextComm::all_gather) {
    steps.push_back(collective("attn.cp.kv.all_gather", Collective::all_gather, CommGroup::context, pass, block * cp));
    steps.push_back(flash_forward("attn.flash", shape, gathered(shape, d), pass));
    return;
  }
  const AttentionShape step = ring_step(shape, d);
  // K and V packed into the ring's buffer (p2p_comm_buffers[0] = torch.cat((k, v))): read and write.
  steps.push_back(memory_bound("attn.cp.kv.pack", OpKind::elementwise, pass, shape.dtype, block.value(), 2.0, 0.0));
  for (std::int64_t i = 0; i < shape.context; ++i) {
    if (auto copies = ring_step_copies(shape, d, i, pass)) steps.push_back(std::move(*copies));
    // The next block travels while this one is attended (overlapped with the one kernel after it).
    if (i + 1 < shape.context) steps.push_back(exchange("attn.cp.kv.ring_exchange", pass, block, 1));
    steps.push_back(flash_forward("attn.flash.cp_step", shape, step, pass));
  }
  add_ring_out_corrections(steps, shape, d, pass);
}

void add_context_attention_backward(StepSequence& steps, const LayerShape& shape, const LayerDims& d) {
  const units::Bytes block = context_kv_block(shape);
  const double cp = as_double(shape.context);
  if (shape.context_comm == ContextComm::all_to_all) return add_head_split_backward(steps, shape, d);
  if (shape.context_comm == ContextComm::all_gather) {
    steps.push_back(collective("attn.cp.kv.all_gather.bwd", Collective::all_gather, CommGroup::context, Pass::backward,
                               block * cp));
    add_flash_backward(steps, "attn.flash.bwd", shape, gathered(shape, d));
    steps.push_back(collective("attn.cp.dkv.reduce_scatter", Collective::reduce_scatter, CommGroup::context,
                               Pass::backward, block * cp));
    return;
  }
  const AttentionShape step = ring_step(shape, d);
  for (std::int64_t i = 0; i < shape.context; ++i) {
    // K/V alone first, dK/dV alone last, both in between; overlapped with the step's two kernels.
    const bool both = i > 0 && i + 1 < shape.context;
    if (auto copies = ring_step_copies(shape, d, i, Pass::backward)) steps.push_back(std::move(*copies));
    steps.push_back(exchange(i == 0                   ? "attn.cp.kv.ring_exchange.bwd"
                             : i + 1 == shape.context ? "attn.cp.dkv.ring_exchange"
                                                      : "attn.cp.kv_dkv.ring_exchange",
                             Pass::backward, both ? block * 2.0 : block, 2));
    add_flash_backward(steps, "attn.flash.bwd.cp_step", shape, step);
    add_ring_grad_corrections(steps, shape, d, i);
  }
}

} // namespace twocs::model::detail
