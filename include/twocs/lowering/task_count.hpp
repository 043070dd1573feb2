// How many tasks an iteration lowers to, estimated without building the DAG, so that the
// command line can refuse plans too large to simulate before spending memory on them.
#pragma once

#include <cstdint>

#include <twocs/lowering/lower_iteration.hpp>
#include <twocs/model/training_plan.hpp>
#include <twocs/model/transformer.hpp>

namespace twocs::lowering {

/// Kernels and transfers over all devices: exact for the layers and their tensor-parallel
/// collectives, which dominate; pipeline, data-parallel and optimizer tasks are bounded from above.
[[nodiscard]] std::uint64_t estimate_task_count(const model::TransformerConfig& model, const model::TrainingPlan& plan,
                                                const LoweringOptions& options = {});

} // namespace twocs::lowering
