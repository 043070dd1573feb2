// Model FLOPs of one training iteration: the matrix work of forward and backward over all
// devices, without recomputation (the numerator of MFU, Chowdhery et al. 2022, appendix B).
#pragma once

#include <twocs/model/training_plan.hpp>
#include <twocs/model/transformer.hpp>
#include <twocs/units/quantity.hpp>

namespace twocs::model {

/// Summed from the operator lists; for a GPT with f = 4h and no grouped-query attention it
/// equals 72 B s l h^2 (1 + s / 6h + V / 12 l h) (Narayanan et al. SC'21, Eq. 3 without the
/// recomputation term).
[[nodiscard]] units::Flops model_flops_per_iteration(const TransformerConfig& model, const TrainingPlan& plan);

} // namespace twocs::model
