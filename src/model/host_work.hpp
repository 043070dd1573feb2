// The host's work to issue an op that runs several kernels, in launches of node.host_launch_time
// (ComputeOp::host_launches; docs/simulation.md, "Host launches"). One launch is the host time of
// one nn.Linear forward (one framework call running one kernel); each further kernel the op's
// code issues costs a measured share of that.
#pragma once

#include <algorithm>
#include <cstdint>

#include <twocs/model/operator.hpp>
#include <twocs/model/training_plan.hpp>

namespace twocs::model::detail {

/// Host time of each further kernel of an op over that of one nn.Linear forward, measured on one
/// host (platforms/measured/host-launch.csv: scripts/te_gemm_host.cu and scripts/profile_more.py
/// host, 2026-12-04): a GEMM as Transformer Engine's multi-stream loop issues it (descriptors,
/// heuristic query, cublasLtMatmul) 9.85 us, and the eager PyTorch calls of a router (add, empty,
/// softmax, topk, sum, index_select) 9.2 us on average, against 17.17 us for the nn.Linear
/// forward: 0.57 and 0.54.
constexpr double further_kernel_share = 0.55;

/// Host launches of an op whose code issues `kernels` kernels.
[[nodiscard]] inline double kernels_host_work(std::int64_t kernels) {
  return 1.0 + further_kernel_share * static_cast<double>(std::max<std::int64_t>(kernels - 1, 0));
}

/// Kernels of one Megatron-Core MoE layer beyond its GEMMs, per micro-batch, read from the code
/// (Megatron-LM at d98e8a6 with Transformer Engine at d0067d0; --moe-router-fusion,
/// --moe-permute-fusion, aux_loss, an fp32 router, --enable-experimental as the model zoo and the
/// moe_perf harness run it; file:line in docs/simulation.md, "Host launches"), each placed on the
/// twocs op nearest to where it runs. The router GEMM and the grouped GEMMs count themselves.
namespace moe_kernels {
/// Router forward beside its GEMM: fused top-k, aux-loss scores, token counts, the fused aux loss
/// (2 and a memset), its logging (2).
constexpr std::int64_t router_forward = 8;
/// Router backward beside its GEMMs: top-k, scores and aux loss (1 each), the aux-loss scaler (2),
/// the sum of the logits' two gradients (1).
constexpr std::int64_t router_backward = 6;
/// The router GEMM's backward: 2 fp32 casts around each GEMM (moe_utils.py, router_gating_linear).
constexpr std::int64_t router_gemm_casts = 2;
/// All-to-all dispatcher preprocessing: 6 counting kernels and 4 copies of the splits to the host;
/// DeepEP's: the compiled dispatch_preprocess (2), get_dispatch_layout (1), the fused multi-hot (1);
/// HybridEP's: its dispatch's two one-thread kernels (update_expected_value and device_sync,
/// hybrid_ep_backend.cuh:5717-5747 at 94a9f8f) and Megatron's own counted as DeepEP's (not read).
[[nodiscard]] inline std::int64_t dispatch_preprocess(ExpertDispatcher d) {
  return d == ExpertDispatcher::all_to_all ? 10 : d == ExpertDispatcher::deepep ? 4 : 6;
}
/// HybridEP's metadata preprocessing beside its scan kernel: the scratch memsets (2, one for the
/// fused permutation) and the padding of the per-expert counts (executor.cu:58-181 at 94a9f8f).
constexpr std::int64_t hybridep_preprocess = 3;
/// DeepEP's fused permute-and-pad in FP8 (Transformer Engine permutation.py:963-1023 at d0067d0,
/// called from token_dispatcher.py:1445-1454): about 13 small eager kernels around 4 host
/// synchronisations (a copy from pageable host memory, torch.equal, .sum().item(), and
/// experts.py:897's tokens_per_expert.tolist()).
constexpr std::int64_t deepep_fp8_permute_syncs = 4;
constexpr std::int64_t deepep_fp8_permute_kernels = 13;
/// The fused permutation: three row-id-map kernels and the permute.
constexpr std::int64_t permute_forward = 4;
/// The all-to-all dispatcher's sort of the received chunks by local expert before fc1 (2) and
/// back after fc2 (3 with the index copy), one each in backward; DeepEP receives them sorted.
[[nodiscard]] inline std::int64_t chunk_sort(ExpertDispatcher d, Pass pass, bool after_experts) {
  if (is_flex(d)) return 0;
  if (pass == Pass::backward) return 1;
  return after_experts ? 3 : 2;
}
} // namespace moe_kernels

} // namespace twocs::model::detail
