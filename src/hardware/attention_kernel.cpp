#include <twocs/hardware/attention_kernel.hpp>

#include <algorithm>

#include <fmt/format.h>

#include <twocs/error.hpp>

namespace twocs::hardware {
namespace {

std::string listed(const std::vector<std::string>& names) { return fmt::format("{}", fmt::join(names, ", ")); }

bool names(const std::vector<std::string>& kernels, const std::string& kernel) {
  return std::find(kernels.begin(), kernels.end(), kernel) != kernels.end();
}

} // namespace

std::vector<std::string> attention_kernels(const DeviceSpec& device) {
  std::vector<std::string> kernels;
  for (const auto& row : device.kernels.measured)
    if (model::is_fused_attention(row.kind) && !row.kernel.empty() && !names(kernels, row.kernel))
      kernels.push_back(row.kernel);
  return kernels;
}

std::string chosen_attention_kernel(const DeviceSpec& device, const std::string& requested) {
  const auto kernels = attention_kernels(device);
  // Rows that name no implementation would join every choice: all name one, or none does.
  const auto& rows = device.kernels.measured;
  const auto unnamed = std::count_if(rows.begin(), rows.end(), [](const KernelMeasurement& row) {
    return model::is_fused_attention(row.kind) && row.kernel.empty();
  });
  if (!kernels.empty() && unnamed > 0)
    throw InputError(fmt::format("device {} has {} measured attention rows without `kernel:` beside rows of {}",
                                 device.name, unnamed, listed(kernels)),
                     "device.operator_model.measured", "name every flash_forward and flash_backward row's kernel");
  const std::string& fallback = device.kernels.attention_kernel;
  // Without measured attention rows (a formula-only platform)
  // there is nothing to choose: the formula prices every implementation alike.
  if (kernels.empty() && fallback.empty()) return requested;
  if (!requested.empty() && !kernels.empty()) {
    if (names(kernels, requested)) return requested;
    throw InputError(fmt::format("training.attention_kernel is '{}', but device {} lists measured attention kernels {}",
                                 requested, device.name, listed(kernels)),
                     "training.attention_kernel",
                     "choose one of " + listed(kernels) + ", or remove the key for the platform's default");
  }
  if (!fallback.empty()) {
    if (names(kernels, fallback)) return fallback;
    throw InputError(
        fmt::format("device.operator_model.attention_kernel is '{}', but no measured row names it", fallback),
        "device.operator_model.attention_kernel",
        kernels.empty() ? std::string("name the rows' implementation with `kernel:`, or remove the key")
                        : "choose one of " + listed(kernels));
  }
  if (kernels.size() > 1)
    throw InputError(fmt::format("device {} lists measured attention kernels {} and nothing chooses one", device.name,
                                 listed(kernels)),
                     "device.operator_model.measured",
                     fmt::format("set device.operator_model.attention_kernel (the platform's default) or "
                                 "training.attention_kernel to one of {}",
                                 listed(kernels)));
  return kernels.front();
}

void keep_attention_kernel(DeviceSpec& device, const std::string& kernel) {
  auto& rows = device.kernels.measured;
  rows.erase(std::remove_if(rows.begin(), rows.end(),
                            [&](const KernelMeasurement& row) {
                              return model::is_fused_attention(row.kind) && !row.kernel.empty() && row.kernel != kernel;
                            }),
             rows.end());
}

} // namespace twocs::hardware
