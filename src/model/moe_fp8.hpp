// Private: FP8 around a Megatron-Core MoE layer's experts (Transformer Engine): the experts'
// quantizations, the all-to-all dispatcher's padding copies and DeepEP's fused permute-and-pad
// with its host synchronisations (docs/simulation.md, "FP8"). Each adds nothing without FP8.
#pragma once

#include <cstdint>
#include <string>

#include <twocs/model/layer_ops.hpp>

namespace twocs::model::detail {

/// The experts' rows on the rank: the busiest expert's rows on each of its local experts.
struct ExpertRows {
  std::int64_t per_expert = 0;
  std::int64_t local_experts = 0;
  [[nodiscard]] double total() const { return static_cast<double>(per_expert) * static_cast<double>(local_experts); }
};

void add_expert_quantize(StepSequence& steps, const LayerShape& shape, ExpertRows rows, std::string name, Pass pass,
                         std::int64_t width);
void add_fp8_padding(StepSequence& steps, const LayerShape& shape, ExpertRows rows, std::string name, Pass pass,
                     bool probabilities);
void add_deepep_fp8_permute(StepSequence& steps, const LayerShape& shape, ExpertRows rows, Pass pass);

} // namespace twocs::model::detail
