#include "moe_fp8.hpp"

#include <twocs/units/numeric.hpp>

#include "host_work.hpp"
#include "memory_bound_costs.hpp"
#include "op_builders.hpp"

namespace twocs::model::detail {

using units::as_double;

/// Transformer Engine's quantization of a grouped GEMM's input to FP8 (GroupedLinear: the input
/// and, in backward, the output gradient, each split per expert, rowwise for the GEMM and
/// columnwise for the weight gradient): over the local experts' rows x `width` values. Delayed
/// scaling runs one fused multi-tensor cast-transpose kernel; the other recipes one kernel per
/// expert (pytorch/csrc/extensions/cast.cpp at d0067d0, multi_tensor_quantize_impl: "Currently
/// only have fused kernel for FP8 delayed scaling"). None without FP8.
void add_expert_quantize(StepSequence& steps, const LayerShape& shape, ExpertRows rows, std::string name, Pass pass,
                         std::int64_t width) {
  if (!shape.fp8_linear) return;
  ComputeOp op = fp8_quantize_both(std::move(name), pass, rows.total() * as_double(width));
  if (shape.fp8_recipe != TrainingPlan::Fp8Recipe::delayed) op.host_launches = kernels_host_work(rows.local_experts);
  steps.push_back(std::move(op));
}

/// Transformer Engine's FP8 padding of the experts' rows (Megatron-Core TEGroupedMLP with the
/// all-to-all dispatcher under any FP8 recipe and no router padding, experts.py at d98e8a6:
/// fp8_padding / fp8_unpadding; TE pytorch/module/fp8_padding.py, common/util/padding.cu): each
/// expert's rows are copied into a buffer padded to the recipe's alignment (16 rows) before fc1
/// and copied back after fc2; the routing probabilities (fp32) likewise; backward, the reverse.
/// One memory-bound kernel each: read the rows, write them (the pad rows, under 16 per expert, are
/// left out). None with DeepEP (it pads in its fused permutation, unless fused_permute_pad is off:
/// Megatron-Core before 554ce49), HybridEP (its own permutation pads) or without FP8.
void add_fp8_padding(StepSequence& steps, const LayerShape& shape, ExpertRows rows, std::string name, Pass pass,
                     bool probabilities) {
  const bool experts_pad = shape.expert_dispatcher == ExpertDispatcher::all_to_all ||
                           (shape.expert_dispatcher == ExpertDispatcher::deepep && !shape.fused_permute_pad);
  if (!shape.fp8_linear || !experts_pad) return;
  const double width = probabilities ? 1.0 : as_double(shape.model.hidden);
  const double element_bytes = probabilities ? 2 * 4.0 : kernel_bytes::permute(shape.dtype); // fp32 probs
  steps.push_back(
      memory_bound(std::move(name), OpKind::elementwise, pass, shape.dtype, rows.total() * width, element_bytes, 0));
}

/// DeepEP's fused permute-and-pad in FP8, after its dispatch (moe_kernels::deepep_fp8_permute_*):
/// 4 host synchronisations, each draining the device's queue (steps without work, as the
/// dispatch's), with the path's small kernels issued among them, and the memsets of the padded
/// buffers (permutation.py: the permuted rows in BF16 and the fp32 probabilities, written once);
/// backward, one memset of the padded gradient (permutation.py:724-735). HybridEP pads inside
/// its own permutation without a synchronisation; BF16 and the all-to-all dispatcher have none, nor
/// DeepEP before Megatron-Core fused its padding (fused_permute_pad off).
void add_deepep_fp8_permute(StepSequence& steps, const LayerShape& shape, ExpertRows rows, Pass pass) {
  if (!shape.fp8_linear || shape.expert_dispatcher != ExpertDispatcher::deepep || shape.expert <= 1 ||
      !shape.fused_permute_pad)
    return;
  const double hidden = as_double(shape.model.hidden);
  if (pass == Pass::backward) {
    steps.push_back(memory_bound("moe.permute.fp8_pad.bwd", OpKind::elementwise, pass, shape.dtype,
                                 rows.total() * hidden, element_size(shape.dtype), 0));
    return;
  }
  const std::int64_t syncs = moe_kernels::deepep_fp8_permute_syncs, kernels = moe_kernels::deepep_fp8_permute_kernels;
  for (std::int64_t i = 0; i < syncs; ++i) {
    ComputeOp wait = host_sync("moe.permute.fp8_sync", pass, shape.dtype);
    wait.host_launches = kernels_host_work(kernels / syncs + (i < kernels % syncs ? 1 : 0)); // 4, 3, 3, 3
    steps.push_back(std::move(wait));
  }
  steps.push_back(memory_bound("moe.permute.fp8_pad", OpKind::elementwise, pass, shape.dtype, rows.total(),
                               hidden * element_size(shape.dtype) + 4, 0));
}

} // namespace twocs::model::detail
