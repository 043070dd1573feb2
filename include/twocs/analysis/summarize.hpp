// Turns a simulated timeline into the reported summary, and checks memory before simulating.
#pragma once

#include <twocs/analysis/summary.hpp>
#include <twocs/engine/timeline.hpp>
#include <twocs/hardware/cluster.hpp>
#include <twocs/lowering/task_graph.hpp>
#include <twocs/model/training_plan.hpp>
#include <twocs/model/transformer.hpp>

namespace twocs::analysis {

/// Peak device memory per stage against the device's capacity.
[[nodiscard]] MemorySummary summarize_memory(const model::TransformerConfig& model, const model::TrainingPlan& plan,
                                             const hardware::ClusterSpec& cluster);

/// Throws OutOfMemoryError, with a table of peak versus capacity per stage, when the plan does not fit.
void require_fit(const MemorySummary& memory);

/// The summary of a simulated iteration, with the memory summary already computed for it.
[[nodiscard]] Summary summarize(const lowering::TaskGraph& graph, const engine::Timeline& timeline,
                                const model::TransformerConfig& model, const model::TrainingPlan& plan,
                                const hardware::ClusterSpec& cluster, const MemorySummary& memory);
/// Sets what derives from the iteration time and the measured device's breakdown: comm_fraction,
/// exposed_comm_fraction and model_flops_per_device (summarize, and a replayed steady state's
/// longer iteration: steady_state.hpp). MFU is left to the caller, who knows the peak.
void derive_rates(Summary& s);
/// The same, computing the memory summary.
[[nodiscard]] Summary summarize(const lowering::TaskGraph& graph, const engine::Timeline& timeline,
                                const model::TransformerConfig& model, const model::TrainingPlan& plan,
                                const hardware::ClusterSpec& cluster);

} // namespace twocs::analysis
