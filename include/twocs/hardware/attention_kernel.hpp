// Which fused attention implementation's measured rows a workload runs on (docs/operator-models.md,
// "Fused attention"). A platform may carry the benchmarked times of several implementations of
// the same kernels on its device (cuDNN's fused attention, FlashAttention-2), each row naming its
// `kernel`; the platform names its default (`device.operator_model.attention_kernel`) and a
// workload may pick another (`training.attention_kernel`).
#pragma once

#include <string>
#include <vector>

#include <twocs/hardware/device.hpp>

namespace twocs::hardware {

/// The implementations the device's measured fused attention rows name, in first-seen order.
[[nodiscard]] std::vector<std::string> attention_kernels(const DeviceSpec& device);

/// The implementation a workload asking for `requested` (empty: none) runs: `requested`, else
/// the platform's default, else the rows' only one. When the rows name none, `requested` as it
/// is (nothing to choose). Throws InputError at training.attention_kernel when the rows name
/// others only, at device.operator_model.attention_kernel when no row names the default, and at
/// device.operator_model.measured when the rows name several and nothing chooses.
[[nodiscard]] std::string chosen_attention_kernel(const DeviceSpec& device, const std::string& requested);

/// Keeps of the device's fused attention rows those of `kernel` and those that name none.
void keep_attention_kernel(DeviceSpec& device, const std::string& kernel);

} // namespace twocs::hardware
