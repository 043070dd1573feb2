// Private: a transformer layer cut where Megatron-Core's combined 1F1B interleaves one micro-
// batch's forward with another's backward (training.overlap.expert_comm; megatron/core/models/
// common/model_chunk_schedule_plan.py, TransformerLayerSchedulePlan: pre_dispatch_computation,
// moe_dispatch, mlp, moe_combine; models/gpt/fine_grained_callables.py).
#pragma once

#include "prepared_steps.hpp"

namespace twocs::lowering::detail {

struct LayerCuts {
  // Forward.
  PreparedSequence pre_dispatch; // attention, pre-MLP norm, shared experts, router, permutation
  PreparedSequence dispatch;     // the dispatch all-to-all (empty: a dense layer, or ep = 1)
  PreparedSequence experts;      // the routed experts, between the exchanges
  PreparedSequence combine;      // the combine all-to-all
  PreparedSequence post_combine; // unpermutation and residual, once the combine is back
  // Backward.
  PreparedSequence combine_input_grad;    // residual and unpermutation, before the combine's backward
  PreparedSequence combine_backward;      // its all-to-all
  PreparedSequence experts_backward;      // the experts' input gradients, after their recomputation
  PreparedSequence experts_wgrad;         // their weight gradients, delayed (--delay-wgrad-compute)
  PreparedSequence dispatch_backward;     // its all-to-all
  PreparedSequence pre_dispatch_backward; // the rest of the backward, after its recomputation
};

/// Cuts `layer` at its expert-parallel all-to-alls. A layer without them (dense, or ep = 1) is
/// all pre_dispatch forward and pre_dispatch_backward backward.
[[nodiscard]] LayerCuts cut_layer(const PreparedLayer& layer);

} // namespace twocs::lowering::detail
