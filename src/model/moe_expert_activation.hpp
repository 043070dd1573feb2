// Private: the routed experts' activation and the routing-probability weighting Megatron-Core
// applies to its output (moe/experts.py, TEGroupedMLP.forward, bias_act_func).
#pragma once

#include <twocs/model/layer_ops.hpp>

namespace twocs::model::detail {

/// The experts' activation over `elements` values (rows x expert_ffn_hidden on the rank), with
/// the weighting by the routing probabilities (moe_expert_activation.cpp says which kernels).
void add_expert_activation_forward(StepSequence& steps, const LayerShape& shape, double elements, Pass pass);
/// Its backward, in autograd's order: the weighting's gradients, then the activation's.
void add_expert_activation_backward(StepSequence& steps, const LayerShape& shape, double elements);

} // namespace twocs::model::detail
