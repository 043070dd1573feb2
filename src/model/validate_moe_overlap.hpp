// Private: the checks of Megatron-Core's MoE overlap options against the rest of the plan.
#pragma once

#include <twocs/model/training_plan.hpp>
#include <twocs/model/transformer.hpp>

namespace twocs::model::detail {

/// Throws InputError for a combination Megatron-Core refuses or twocs does not simulate.
void validate_moe_overlaps(const TransformerConfig& m, const TrainingPlan& plan);

} // namespace twocs::model::detail
