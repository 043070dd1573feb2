// Private: the checks of training.host.cuda_graphs and training.parallelism.sync_free_dispatch
// against the rest of the plan.
#pragma once

#include <twocs/model/training_plan.hpp>
#include <twocs/model/transformer.hpp>

namespace twocs::model::detail {

/// Throws InputError for a combination Megatron-Core refuses or that cannot run as a CUDA graph.
void validate_cuda_graphs(const TransformerConfig& m, const TrainingPlan& plan);

} // namespace twocs::model::detail
