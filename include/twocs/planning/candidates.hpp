// The plans a search chooses among: tensor, context, pipeline and data degrees whose product is the
// cluster's device count, with virtual stages, micro-batch size and recomputation, each checked
// as a written plan would be (model::validate, hardware::validate_fit) and against device
// memory (the memory model of `twocs run`). Pure: no simulation, no I/O.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <twocs/cost/operator_cost_model.hpp>
#include <twocs/hardware/cluster.hpp>
#include <twocs/model/training_plan.hpp>
#include <twocs/model/transformer.hpp>
#include <twocs/units/quantity.hpp>

namespace twocs::planning {

struct Candidate {
  model::TrainingPlan plan;
  units::Bytes peak_memory;   // the largest stage's peak per device
  units::Seconds estimate;    // closed-form iteration time (estimate.hpp)
  units::Seconds lower_bound; // max(compute, communication): no plan runs faster
  /// Devices that split one model replica's work: t x cp x p (context parallelism exchanges keys
  /// and values every layer, as tensor parallelism exchanges activations).
  [[nodiscard]] std::int64_t model_parallel() const {
    return plan.parallelism.tensor * plan.parallelism.context * plan.parallelism.pipeline;
  }
};

struct CandidateSet {
  std::vector<Candidate> fitting; // valid plans that fit in device memory, in enumeration order
  std::int64_t considered = 0;    // combinations of degrees, micro-batch and recomputation tried
  std::int64_t valid = 0;         // of those, plans that divide the model and the cluster
  std::string first_invalid;      // why the first invalid plan was refused (for "none divides")
  /// The valid plan with the smallest memory peak, for "none fits" (meaningless when valid = 0).
  model::TrainingPlan least_memory_plan;
  units::Bytes least_memory_peak;
};

/// Every plan of `base` (its batch, dtype, optimizer, overlap, framework kept) over the cluster's
/// devices: tensor degrees up to the devices of a node (tensor parallelism inside a node,
/// Narayanan et al. SC'21, section 3.3), pipeline degrees up to the layer count, context degrees
/// 1, 2, 4 and 8 (with fused attention only), virtual stages
/// 1, 2 and 4 (interleaved 1F1B unless `base` runs GPipe or Megatron-DeepSpeed), micro-batches
/// 1, 2, 4, 8 and base's, recomputation none, selective and full.
[[nodiscard]] CandidateSet enumerate_candidates(const model::TransformerConfig& model, const model::TrainingPlan& base,
                                                const hardware::ClusterSpec& cluster,
                                                const cost::OperatorCostModel& cost);

/// "t 8 x p 4 x d 2, v 2, b 1, recompute selective".
[[nodiscard]] std::string describe(const model::TrainingPlan& plan);

} // namespace twocs::planning
