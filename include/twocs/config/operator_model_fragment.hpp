// Writing a device's operator-model parameters as a platform fragment: the `device:` keys a
// platform file takes (docs/input-formats.md), so that fitted parameters (`twocs calibrate
// --output`) can be pasted into a platform or set with --set. Deterministic text.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <twocs/hardware/device.hpp>

namespace twocs::config {

struct FragmentOptions {
  std::vector<std::string> comments;      // written first, each as a "# ..." line
  std::optional<std::string> device_name; // device.name, when given
  bool with_measurements = false;         // also write the measured table
};

[[nodiscard]] std::string operator_model_fragment(const hardware::DeviceSpec& device, const FragmentOptions& options);

} // namespace twocs::config
