// A mixture-of-experts FFN per rank and micro-batch, as Megatron-Core runs it with the
// all-to-all token dispatcher (megatron/core/transformer/moe: router.py, token_dispatcher.py,
// experts.py GroupedMLP; Shazeer et al. 2017; Fedus et al. 2022; DeepSeek-AI 2024):
//   router GEMM h -> E, softmax and top-k; permute the tokens by expert; grouped fc1, the
//   activation weighted by the routing probabilities and fc2 over the rank's E / ep experts;
//   unpermute; shared experts as a dense tensor-parallel MLP of width shared x expert_ffn_hidden.
// Experts are not tensor-split (expert-tensor-parallel size 1, as the Megatron-Core MoE model
// zoo runs Qwen3 and DeepSeek-V3): each rank routes its b s / t sequence-parallel tokens.
// Expert parallelism (ep > 1): the rank holds E / ep experts; the permuted tokens go to their
// experts' ranks in an all-to-all over the expert-parallel group (dispatch) and come back in a
// second one (combine), each a buffer of T k h elements per rank (token_dispatcher.py,
// MoEAlltoAllTokenDispatcher); backward runs both again in reverse.
// Overlaps (training.overlap): shared_experts runs the shared experts' halves while the
// exchanges are in flight (--moe-shared-expert-overlap); expert_wgrad delays the experts' weight
// gradients until the dispatch's backward is in flight (--overlap-dispatch-backward-with-experts-wgrad).
#include "moe_layer.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <variant>

#include <twocs/units/numeric.hpp>

#include "host_work.hpp"
#include "layer_graph.hpp"
#include "memory_bound_costs.hpp"
#include "moe_dispatch_metadata.hpp"
#include "moe_expert_activation.hpp"
#include "moe_fp8.hpp"
#include "op_builders.hpp"

namespace twocs::model::detail {
namespace {

using units::as_double;

struct MoeDims {
  std::int64_t tokens = 0;        // T: tokens entering the layer on this rank
  std::int64_t local_experts = 0; // E / ep
  std::int64_t expert_rows = 0;   // rows of each grouped GEMM: the busiest expert's tokens
  double mean_rows = 0;           // T k / E: the balanced load, for model FLOPs
  double skew = 1;                // the busiest expert's tokens over mean_rows (load_imbalance, capped)
  std::int64_t fc1_columns = 0;   // 2 f_e for SwiGLU (gate and up), f_e otherwise
  double routed = 0;              // T k: token copies after permutation
};

MoeDims moe_dims(const LayerShape& shape) {
  const auto& m = shape.model;
  const auto& moe = *m.moe;
  MoeDims d;
  d.tokens = moe_tokens(shape);
  d.local_experts = moe.experts / std::max<std::int64_t>(shape.expert, 1);
  d.mean_rows = as_double(d.tokens) * as_double(moe.top_k) * as_double(std::max<std::int64_t>(shape.expert, 1)) /
                as_double(moe.experts);
  const double busiest = busiest_expert_tokens(shape);
  d.expert_rows = static_cast<std::int64_t>(std::ceil(busiest));
  d.skew = busiest / d.mean_rows;
  d.fc1_columns = m.ffn_kind == FfnKind::swiglu ? 2 * moe.expert_ffn_hidden : moe.expert_ffn_hidden;
  d.routed = as_double(d.tokens) * as_double(moe.top_k);
  return d;
}

ExpertRows expert_rows(const MoeDims& d) { return {d.expert_rows, d.local_experts}; }

/// A grouped GEMM over the local experts at the busiest expert's rows; the load above the mean
/// is not model work (masked_share), so model FLOPs stay T k / E per expert.
ComputeOp grouped(ComputeOp op, const MoeDims& d) {
  if (d.expert_rows > 0) op.masked_share = std::max(0.0, 1.0 - d.mean_rows / as_double(d.expert_rows));
  return op;
}

/// Transformer Engine's GroupedLinear (Megatron-Core TEGroupedMLP, --moe-grouped-gemm) runs one
/// cuBLAS GEMM per local expert, GEMM i on compute stream i mod 4 (transformer_engine/pytorch/
/// csrc/extensions/gemm.cpp, te_general_grouped_gemm: "For now, we only have multi-stream cublas
/// backend"; common/gemm/cublaslt_gemm.cpp, nvte_multi_stream_cublas_gemm; common/util/
/// multi_stream.cpp, nvte_get_num_compute_streams: 4). Its host issues each expert's GEMM
/// (descriptors, a heuristic query and cublasLtMatmul per GEMM, cublaslt_gemm.cu at d0067d0,
/// multi_stream_cublas_gemm): one kernel per local expert (host_work.hpp).
constexpr std::int64_t grouped_linear_streams = 4;

ComputeOp grouped_gemm(std::string name, Pass pass, Dtype dtype, GemmShape shape, const MoeDims& d) {
  shape.streams = grouped_linear_streams;
  ComputeOp op = batched_gemm(std::move(name), pass, dtype, shape);
  op.kind = OpKind::gemm;
  op.host_launches = kernels_host_work(d.local_experts);
  return grouped(std::move(op), d);
}

/// The dispatch or combine all-to-all of the routed tokens over the expert-parallel group: T k h
/// elements, one copy per routed expert (all-to-all dispatcher), or each token once per rank
/// and node that holds one of its experts (DeepEP; TokenRouting).
void add_all_to_all(StepSequence& steps, const LayerShape& shape, const MoeDims& d, const char* name, Pass pass,
                    int overlapped_ops) {
  if (shape.expert <= 1) return;
  // The busiest rank receives its experts' skewed load (MoeDims::skew): every rank is costed as
  // that one, as the expert GEMMs are, and the collective ends when it has its tokens.
  CollectiveOp op = collective(name, Collective::all_to_all, CommGroup::expert, pass,
                               size_of(d.routed * d.skew * as_double(shape.model.hidden), shape.dtype), overlapped_ops);
  if (is_flex(shape.expert_dispatcher))
    op.routing = TokenRouting{size_of(as_double(d.tokens) * as_double(shape.model.hidden), shape.dtype),
                              shape.model.moe->experts, shape.model.moe->top_k, d.skew};
  steps.push_back(std::move(op));
}

/// The all-to-all dispatcher's second permutation (token_dispatcher.py at cf39a4d,
/// MoEAlltoAllTokenDispatcher dispatch_postprocess and combine_preprocess: sort_chunks_by_idxs,
/// one fused kernel with --moe-permute-fusion): with more than one local expert the received rows
/// arrive grouped by source rank and are sorted by local expert before fc1 (with their fp32
/// probabilities) and back after fc2; autograd runs the inverse sort of each in backward. Each
/// reads and writes every row the rank received (without expert parallelism too, where the order
/// it restores is the permutation's). DeepEP and HybridEP receive them sorted.
void add_chunk_sort(StepSequence& steps, const LayerShape& shape, const MoeDims& d, const char* name, Pass pass,
                    bool after_experts) {
  const std::int64_t kernels = moe_kernels::chunk_sort(shape.expert_dispatcher, pass, after_experts);
  if (kernels == 0 || d.local_experts <= 1) return; // sort_chunks_by_idxs runs for num_local_experts > 1
  const double h = as_double(shape.model.hidden);
  const bool probabilities = !after_experts && pass != Pass::backward;
  const double bytes = kernel_bytes::permute(shape.dtype) + (probabilities ? 2 * 4.0 / h : 0.0); // fp32 probs per row
  ComputeOp sort = memory_bound(name, OpKind::elementwise, pass, shape.dtype,
                                as_double(d.expert_rows) * as_double(d.local_experts) * h, bytes, 0);
  sort.kernels = static_cast<std::int32_t>(kernels);
  sort.host_launches = kernels_host_work(kernels);
  steps.push_back(std::move(sort));
}

LayerShape shared_expert_shape(const LayerShape& shape) {
  LayerShape s = shape;
  s.moe_ffn = false;
  s.shared_experts = true;
  s.model.ffn_hidden = shape.model.moe->shared_experts * shape.model.moe->expert_ffn_hidden;
  return s;
}

/// Compute kernels in `steps`: how many a collective issued before them lets run before its
/// result is needed (CollectiveOp::overlapped_ops).
int compute_ops(const StepSequence& steps, std::size_t from = 0) {
  return static_cast<int>(std::count_if(steps.begin() + static_cast<std::ptrdiff_t>(from), steps.end(),
                                        [](const Step& s) { return std::holds_alternative<ComputeOp>(s); }));
}

void append(StepSequence& steps, const StepSequence& more) { steps.insert(steps.end(), more.begin(), more.end()); }

/// The shared experts' kernels that Megatron-Core's --moe-shared-expert-overlap runs on their own
/// stream while the token exchanges are in flight (shared_experts.py, SharedExpertMLP; the
/// dispatchers in token_dispatcher.py): forward, fc1 and the activation under the dispatch and
/// fc2 under the combine; backward, fc2's gradients under the combine's and the activation's
/// and fc1's under the dispatch's. Empty without the overlap or without shared experts.
struct SharedExpertHalves {
  StepSequence under_dispatch;
  StepSequence under_combine;
  /// The sequence-parallel all-gather that opens them, issued on the shared stream before the
  /// MoE layer's own kernels: forward, fc1's input (pre_forward_comm, in dispatch_preprocess
  /// before the permutation); backward, fc2's output gradient (the reduce-scatter's backward,
  /// first by its sequence number).
  std::optional<CollectiveOp> gather;
};

/// Moves a leading collective of `half` (the all-gather under sequence parallelism) to `gather`.
void take_gather(StepSequence& half, std::optional<CollectiveOp>& gather) {
  if (half.empty() || !std::holds_alternative<CollectiveOp>(half.front())) return;
  gather = std::get<CollectiveOp>(half.front());
  half.erase(half.begin());
}

/// Issues the halves' all-gather; returns where, for release_gather.
std::optional<std::size_t> issue_gather(StepSequence& steps, const SharedExpertHalves& halves) {
  if (!halves.gather) return std::nullopt;
  steps.push_back(*halves.gather);
  return steps.size() - 1;
}

/// Lets the kernels issued since the all-gather run before its result is needed.
void release_gather(StepSequence& steps, std::optional<std::size_t> at) {
  if (at) std::get<CollectiveOp>(steps[*at]).overlapped_ops = compute_ops(steps, *at + 1);
}

SharedExpertHalves shared_experts_forward(const LayerShape& shape, Pass pass) {
  SharedExpertHalves halves;
  if (!shape.shared_expert_overlap || shape.model.moe->shared_experts == 0) return halves;
  const LayerShape shared = shared_expert_shape(shape);
  add_dense_ffn_fc1_forward(halves.under_dispatch, shared, pass);
  add_dense_ffn_fc2_forward(halves.under_combine, shared, pass);
  take_gather(halves.under_dispatch, halves.gather);
  // Its reduce-scatter (or all-reduce) runs on the shared stream too: the unpermutation does not
  // wait for it, only the sum of the two outputs (post_forward_comm, then get_output).
  if (auto* leave = std::get_if<CollectiveOp>(&halves.under_combine.back())) leave->overlapped_ops = 1;
  return halves;
}

SharedExpertHalves shared_experts_backward(const LayerShape& shape) {
  SharedExpertHalves halves;
  if (!shape.shared_expert_overlap || shape.model.moe->shared_experts == 0) return halves;
  const LayerShape shared = shared_expert_shape(shape);
  add_dense_ffn_fc1_backward(halves.under_dispatch, shared);
  add_dense_ffn_fc2_backward(halves.under_combine, shared);
  take_gather(halves.under_combine, halves.gather);
  return halves;
}

/// Whether the moe_preprocess graph holds the permutation (and the count exchange): with the
/// all-to-all dispatcher, unless it drops tokens, whose preprocessing copies counts to the host
/// (transformer_config.py: "moe_preprocess cuda graph is not supported when there are DtoH copies
/// and synchronizations in the preprocess step"); DeepEP permutes after its dispatch
/// (token_dispatcher.py, _DeepepManager.get_permuted_hidden_states).
bool preprocess_in_graph(const LayerShape& shape) {
  return shape.expert_dispatcher == ExpertDispatcher::all_to_all && !(shape.model.moe->capacity_factor > 0);
}

/// The experts' activation values on the rank: the busiest expert's rows on each local expert.
double activation_elements(const LayerShape& shape, const MoeDims& d) {
  return as_double(d.expert_rows) * as_double(shape.model.moe->expert_ffn_hidden) * as_double(d.local_experts);
}

} // namespace

std::int64_t moe_tokens(const LayerShape& shape) {
  // Under context parallelism each rank routes the tokens of its s / cp slice.
  const std::int64_t tokens = shape.micro_batch * shape.model.seq_len / std::max<std::int64_t>(shape.context, 1);
  return shape.sequence_parallel ? tokens / shape.tensor : tokens;
}

double busiest_expert_tokens(const LayerShape& shape) {
  const auto& moe = *shape.model.moe;
  // Each expert receives the tokens of all ep ranks: T k ep / E on average.
  const double ep = as_double(std::max<std::int64_t>(shape.expert, 1));
  const double mean = as_double(moe_tokens(shape)) * as_double(moe.top_k) * ep / as_double(moe.experts);
  // With every expert on the rank (ep = 1) the rank's total load is fixed: skew moves tokens
  // between its experts, not onto it.
  const double skewed = shape.expert > 1 ? mean * moe.load_imbalance : mean;
  return moe.capacity_factor > 0 ? std::min(skewed, mean * moe.capacity_factor) : skewed;
}

void add_moe_activation_forward(StepSequence& steps, const LayerShape& shape, Pass pass) {
  const std::size_t from = steps.size();
  add_expert_activation_forward(steps, shape, activation_elements(shape, moe_dims(shape)), pass);
  for (auto it = steps.begin() + static_cast<std::ptrdiff_t>(from); it != steps.end(); ++it)
    std::get<ComputeOp>(*it).graph = LayerGraph::excluded; // the experts' rows follow the token counts
}

void add_moe_forward(StepSequence& steps, const LayerShape& shape, Pass pass) {
  const auto& m = shape.model;
  const auto& moe = *m.moe;
  const MoeDims d = moe_dims(shape);
  const ExpertRows rows = expert_rows(d);
  const auto with_pass = pass_setter(pass);
  const SharedExpertHalves shared = shared_experts_forward(shape, pass);
  // Without the overlap the shared experts run before the router (transformer_config.py,
  // moe_shared_expert_intermediate_size; moe_layer.py, shared_experts_compute).
  if (!shape.shared_expert_overlap) add_shared_experts_forward(steps, shape, pass);
  // Router logits T x E, then softmax and top-k over them (router.py, TopKRouter); the host
  // issues the router's other kernels (scores, auxiliary loss, token counts) with the top-k.
  steps.push_back(with_pass(linear_forward("moe.router", shape.dtype, d.tokens, m.hidden, moe.experts)));
  ComputeOp topk =
      memory_bound("moe.router.topk", OpKind::softmax, pass, shape.dtype, as_double(d.tokens) * as_double(moe.experts),
                   kernel_bytes::softmax_forward(shape.dtype), kernel_flops::softmax_forward);
  topk.host_launches = kernels_host_work(moe_kernels::router_forward);
  steps.push_back(std::move(topk));
  const auto gather = issue_gather(steps, shared);
  const std::size_t permute_at = steps.size();
  // Permute: gather each token's k copies into expert order (read h, write h per copy); its host
  // also issues the dispatcher's preprocessing (moe_kernels).
  ComputeOp permute = memory_bound("moe.permute", OpKind::elementwise, pass, shape.dtype,
                                   d.routed * as_double(m.hidden), kernel_bytes::permute(shape.dtype), 0);
  permute.host_launches =
      kernels_host_work(moe_kernels::permute_forward + moe_kernels::dispatch_preprocess(shape.expert_dispatcher));
  steps.push_back(std::move(permute));
  add_count_exchange(steps, shape, pass);
  add_hybridep_preprocess(steps, shape, d.tokens, pass);
  // The router's and preprocessing's graph ends here (moe_layer.py, MoELayer.preprocess).
  const std::size_t eager_from = preprocess_in_graph(shape) ? steps.size() : permute_at;
  add_dispatch_host_sync(steps, shape, pass);
  add_all_to_all(steps, shape, d, "moe.dispatch.all_to_all", pass, compute_ops(shared.under_dispatch));
  add_deepep_fp8_permute(steps, shape, rows, pass);
  release_gather(steps, gather);
  append(steps, shared.under_dispatch);
  const GemmShape fc1{d.expert_rows, d.fc1_columns, m.hidden, d.local_experts};
  add_chunk_sort(steps, shape, d, "moe.dispatch.sort_chunks", pass, false);
  add_fp8_padding(steps, shape, rows, "moe.experts.fp8_pad", pass, false);
  add_fp8_padding(steps, shape, rows, "moe.experts.probs.fp8_pad", pass, true);
  add_expert_quantize(steps, shape, rows, "moe.experts.fc1.fp8_quantize", pass, m.hidden);
  steps.push_back(grouped_gemm("moe.experts.fc1", pass, shape.linear_dtype(), fc1, d));
  add_expert_activation_forward(steps, shape, activation_elements(shape, d), pass);
  add_expert_quantize(steps, shape, rows, "moe.experts.fc2.fp8_quantize", pass, moe.expert_ffn_hidden);
  const GemmShape fc2{d.expert_rows, m.hidden, moe.expert_ffn_hidden, d.local_experts};
  steps.push_back(grouped_gemm("moe.experts.fc2", pass, shape.linear_dtype(), fc2, d));
  add_fp8_padding(steps, shape, rows, "moe.experts.fp8_unpad", pass, false);
  add_chunk_sort(steps, shape, d, "moe.combine.unsort_chunks", pass, true);
  add_all_to_all(steps, shape, d, "moe.combine.all_to_all", pass, compute_ops(shared.under_combine));
  append(steps, shared.under_combine);
  // Unpermute: the sum of the k copies (weighted in the experts) back into token order.
  steps.push_back(memory_bound("moe.unpermute", OpKind::elementwise, pass, shape.dtype, d.routed * as_double(m.hidden),
                               kernel_bytes::permute(shape.dtype), 2));
  exclude_from_graphs(steps, eager_from, steps.size());
}

void add_shared_experts_forward(StepSequence& steps, const LayerShape& shape, Pass pass) {
  if (shape.model.moe->shared_experts > 0) add_dense_ffn_forward(steps, shared_expert_shape(shape), pass);
}

namespace {

/// The router's backward: top-k and the auxiliary loss's gradients, then the router GEMM's.
void add_router_backward(StepSequence& steps, const LayerShape& shape, const MoeDims& d) {
  const auto& moe = *shape.model.moe;
  const Pass bwd = Pass::backward;
  ComputeOp topk = memory_bound("moe.router.topk.bwd", OpKind::softmax, bwd, shape.dtype,
                                as_double(d.tokens) * as_double(moe.experts),
                                kernel_bytes::softmax_backward(shape.dtype), kernel_flops::softmax_backward);
  topk.host_launches = kernels_host_work(moe_kernels::router_backward);
  steps.push_back(std::move(topk));
  const std::int64_t h = shape.model.hidden;
  for (ComputeOp router : {linear_input_grad("moe.router.dgrad", shape.dtype, d.tokens, h, moe.experts),
                           linear_weight_grad("moe.router.wgrad", shape.dtype, d.tokens, h, moe.experts, 0)}) {
    router.host_launches = kernels_host_work(1 + moe_kernels::router_gemm_casts);
    steps.push_back(std::move(router));
  }
}

} // namespace

void add_moe_backward(StepSequence& steps, const LayerShape& shape) {
  const auto& m = shape.model;
  const auto& moe = *m.moe;
  const MoeDims d = moe_dims(shape);
  const ExpertRows rows = expert_rows(d);
  const Pass bwd = Pass::backward;
  const SharedExpertHalves shared = shared_experts_backward(shape);
  const std::size_t eager_from = steps.size(); // up to the permutation's gradient (layer_graph.hpp)
  const auto gather = issue_gather(steps, shared);
  steps.push_back(memory_bound("moe.unpermute.bwd", OpKind::elementwise, bwd, shape.dtype,
                               d.routed * as_double(m.hidden), kernel_bytes::permute(shape.dtype), 2));
  add_all_to_all(steps, shape, d, "moe.combine.bwd.all_to_all", bwd, compute_ops(shared.under_combine));
  release_gather(steps, gather);
  append(steps, shared.under_combine);
  const std::int64_t f = moe.expert_ffn_hidden;
  const std::int64_t E = d.local_experts;
  // fc2: dX = dY W^T and dW = X^T dY per expert, each with the forward's FLOPs.
  StepSequence delayed_wgrad; // under the dispatch's backward all-to-all (expert_wgrad_overlap)
  StepSequence& wgrad = shape.expert_wgrad_overlap ? delayed_wgrad : steps;
  add_chunk_sort(steps, shape, d, "moe.combine.unsort_chunks.bwd", bwd, true);
  add_fp8_padding(steps, shape, rows, "moe.experts.fp8_unpad.bwd", bwd, false);
  add_expert_quantize(steps, shape, rows, "moe.experts.fc2.grad.fp8_quantize", bwd, m.hidden);
  steps.push_back(grouped_gemm("moe.experts.fc2.dgrad", bwd, shape.linear_dtype(), {d.expert_rows, f, m.hidden, E}, d));
  ComputeOp fc2w = grouped_gemm("moe.experts.fc2.wgrad", bwd, shape.linear_dtype(), {f, m.hidden, d.expert_rows, E}, d);
  fc2w.grad_params = E * f * m.hidden;
  fc2w.expert_grads = true;
  wgrad.push_back(std::move(fc2w));
  add_expert_activation_backward(steps, shape, activation_elements(shape, d));
  add_fp8_padding(steps, shape, rows, "moe.experts.probs.fp8_pad.bwd", bwd, true);
  add_expert_quantize(steps, shape, rows, "moe.experts.fc1.grad.fp8_quantize", bwd, d.fc1_columns);
  steps.push_back(
      grouped_gemm("moe.experts.fc1.dgrad", bwd, shape.linear_dtype(), {d.expert_rows, m.hidden, d.fc1_columns, E}, d));
  add_fp8_padding(steps, shape, rows, "moe.experts.fp8_pad.bwd", bwd, false);
  ComputeOp fc1w =
      grouped_gemm("moe.experts.fc1.wgrad", bwd, shape.linear_dtype(), {m.hidden, d.fc1_columns, d.expert_rows, E}, d);
  fc1w.grad_params = E * m.hidden * d.fc1_columns;
  fc1w.expert_grads = true;
  wgrad.push_back(std::move(fc1w));
  // Megatron-Core launches the shared fc1's backward right after the dispatch's (its autograd
  // sequence number, shared_experts.py), then the delayed wgrad (moe_layer.py,
  // _RegisterDelayedWgradForExperts); both run while the all-to-all is in flight.
  add_chunk_sort(steps, shape, d, "moe.dispatch.sort_chunks.bwd", bwd, false);
  StepSequence under_dispatch = shared.under_dispatch;
  append(under_dispatch, delayed_wgrad);
  add_deepep_fp8_permute(steps, shape, rows, bwd);
  add_all_to_all(steps, shape, d, "moe.dispatch.bwd.all_to_all", bwd, compute_ops(under_dispatch));
  append(steps, under_dispatch);
  steps.push_back(memory_bound("moe.permute.bwd", OpKind::elementwise, bwd, shape.dtype, d.routed * as_double(m.hidden),
                               kernel_bytes::permute(shape.dtype), 1));
  exclude_from_graphs(steps, eager_from, steps.size() - (preprocess_in_graph(shape) ? 1 : 0));
  add_router_backward(steps, shape, d);
  // Autograd reaches the shared experts after the router, computed before it in the forward.
  if (moe.shared_experts > 0 && !shape.shared_expert_overlap) add_dense_ffn_backward(steps, shared_expert_shape(shape));
}

} // namespace twocs::model::detail
