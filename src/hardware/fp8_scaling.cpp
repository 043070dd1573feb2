#include <twocs/hardware/fp8_scaling.hpp>

#include <algorithm>

namespace twocs::hardware {

Fp8Scaling scaling_of(model::TrainingPlan::Fp8Recipe recipe) {
  // Megatron-LM --fp8-recipe: delayed and tensorwise scale per tensor (transformer_engine/common/
  // recipe.py: DelayedScaling, Float8CurrentScaling); blockwise per block (Float8BlockScaling).
  return recipe == model::TrainingPlan::Fp8Recipe::blockwise ? Fp8Scaling::blockwise : Fp8Scaling::tensorwise;
}

void keep_fp8_scaling(DeviceSpec& device, Fp8Scaling scaling) {
  auto& rows = device.kernels.measured;
  const bool measured = std::any_of(
      rows.begin(), rows.end(), [&](const KernelMeasurement& r) { return r.is_fp8_gemm() && r.scaling == scaling; });
  if (!measured) return;
  rows.erase(std::remove_if(rows.begin(), rows.end(),
                            [&](const KernelMeasurement& r) { return r.is_fp8_gemm() && r.scaling != scaling; }),
             rows.end());
}

} // namespace twocs::hardware
