// One pass of one layer on every rank of one tensor-parallel group: devices 0 .. t-1 each run
// `steps` (kernels on the compute stream, collectives over the group on the tensor stream, with
// the waits of lower_iteration). For per-layer timings: simulating the graph gives the layer's
// forward or backward time including its tensor-parallel communication (Korthikanti et al. 2022,
// Table 4; tests/analysis/layer_timing_test.cpp).
#pragma once

#include <cstdint>

#include <twocs/cost/operator_cost_model.hpp>
#include <twocs/lowering/task_graph.hpp>
#include <twocs/model/operator.hpp>

namespace twocs::lowering {

/// `steps` may hold only tensor-group collectives; `tensor` >= 1 devices run them.
[[nodiscard]] TaskGraph lower_tensor_group(const model::StepSequence& steps, std::int64_t tensor,
                                           const cost::OperatorCostModel& cost);

} // namespace twocs::lowering
