// Megatron-Core weights each routed copy by its routing probability after the experts'
// activation (moe/experts.py at cf39a4d, TEGroupedMLP.forward, bias_act_func). Gated experts
// have fused kernels that weight inside the activation (weighted_bias_swiglu_impl,
// weighted_bias_quick_geglu_impl, with --bias-swiglu-fusion, on by default in Megatron-LM's
// arguments.py): one kernel each way, the activation's own costs. Non-gated experts have none
// (bias_act_func raises with the fusion on for them), so they run the unfused path:
//   y = activation_func(x); z = y * permuted_probs; z = z.to(original_dtype)
// with fp32 probabilities (--moe-router-dtype fp32, as the moe_perf harness and the model zoo
// run it; DeepEP and HybridEP take float32 probabilities only, token_dispatcher.py), so the
// product is an fp32 tensor and the cast a pass of its own; autograd runs each in reverse.
#include "moe_expert_activation.hpp"

#include "host_work.hpp"
#include "memory_bound_costs.hpp"
#include "op_builders.hpp"

namespace twocs::model::detail {
namespace {

constexpr double fp32 = 4; // bytes of an fp32 value: the probabilities and their product

/// Whether the probabilities are applied by the unfused path above.
bool unfused_weighting(const LayerShape& shape) { return !is_gated(shape.model.ffn_kind); }

} // namespace

void add_expert_activation_forward(StepSequence& steps, const LayerShape& shape, double elements, Pass pass) {
  const auto& m = shape.model;
  steps.push_back(ffn_activation_forward("moe.experts", m.ffn_kind, shape.kernels, pass, shape.dtype, elements));
  if (!unfused_weighting(shape)) return;
  const double y = element_size(shape.dtype);
  // y * probs: read y, write the fp32 product (the probabilities, one per row, are negligible).
  steps.push_back(
      memory_bound("moe.experts.probs_weight", OpKind::elementwise, pass, shape.dtype, elements, y + fp32, 1));
  // .to(original_dtype): read the fp32 product, write y's dtype.
  steps.push_back(
      memory_bound("moe.experts.probs_cast", OpKind::elementwise, pass, shape.dtype, elements, fp32 + y, 0));
}

void add_expert_activation_backward(StepSequence& steps, const LayerShape& shape, double elements) {
  const auto& m = shape.model;
  const Pass bwd = Pass::backward;
  if (unfused_weighting(shape)) {
    const double y = element_size(shape.dtype);
    // ToCopyBackward: the 16-bit gradient cast to fp32.
    steps.push_back(
        memory_bound("moe.experts.probs_cast.bwd", OpKind::elementwise, bwd, shape.dtype, elements, y + fp32, 0));
    // MulBackward0 (torch/csrc/autograd/FunctionsManual.cpp, mul_tensor_backward): y's gradient
    // g x probs in fp32 (read g, write) and its cast to y's dtype (autograd's validate_outputs:
    // read, write); the probabilities' gradient g x y in fp32 (read both, write) and its sum over
    // the row (sum_to_size: read). Four kernels.
    ComputeOp weight = memory_bound("moe.experts.probs_weight.bwd", OpKind::elementwise, bwd, shape.dtype, elements,
                                    (fp32 + fp32) + (fp32 + y) + (fp32 + y + fp32) + fp32, 3);
    weight.kernels = 4;
    weight.host_launches = kernels_host_work(weight.kernels);
    steps.push_back(std::move(weight));
  }
  steps.push_back(ffn_activation_backward("moe.experts", m.ffn_kind, shape.kernels, shape.dtype, elements));
}

} // namespace twocs::model::detail
