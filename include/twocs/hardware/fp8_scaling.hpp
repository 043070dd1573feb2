// Which of a platform's measured FP8 GEMM rows a workload runs on: those of its FP8 recipe's
// scaling (training.fp8_recipe; docs/operator-models.md, "Measured tables take precedence").
// Block-scaled FP8 GEMMs run other kernels than per-tensor scaled ones (cuBLASLt's block scaling:
// 12% slower at the median of training shapes on a GH100, platforms/measured/README.md).
#pragma once

#include <twocs/hardware/device.hpp>
#include <twocs/model/training_plan.hpp>

namespace twocs::hardware {

/// The scaling of the GEMM rows a recipe runs: blockwise for blockwise, else tensorwise.
[[nodiscard]] Fp8Scaling scaling_of(model::TrainingPlan::Fp8Recipe recipe);

/// Keeps of the device's FP8 GEMM rows those of `scaling` where it has any; where it has none,
/// all of them stand in (the per-tensor rows price a blockwise recipe on a platform that measured
/// no blockwise GEMM, as before the recipe was a key).
void keep_fp8_scaling(DeviceSpec& device, Fp8Scaling scaling);

} // namespace twocs::hardware
