// Private: PyTorch FSDP2's buffers beyond the sharded state, for the memory estimate.
#pragma once

#include <cstdint>

#include <twocs/model/parameters.hpp>
#include <twocs/model/training_plan.hpp>

namespace twocs::model::detail {

/// The root module's parameters (`root_parameters`: embedding, final norm, output), unsharded
/// after forward; 0 unless framework fsdp with sharding full.
[[nodiscard]] double fsdp_root_unsharded_bytes(const TrainingPlan& plan, std::int64_t root_parameters,
                                               double weight_bytes);

/// One layer's all-gather output beside its unsharded parameters, and its unsharded gradients
/// with their reduce-scatter input; 0 unless framework fsdp with sharding full.
[[nodiscard]] double fsdp2_layer_buffer_bytes(const TrainingPlan& plan, const ParameterCounts& counts);

} // namespace twocs::model::detail
