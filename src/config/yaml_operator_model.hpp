// Private: the platform file's `device.operator_model` (docs/input-formats.md): the roofline's
// three numbers and the kernel model's tiles, waves, efficiency curve, vector path and measured
// times. Every key is optional; absent keys keep the defaults of hardware/device.hpp and
// hardware/kernel_params.hpp, which reduce to the roofline.
#pragma once

#include <twocs/hardware/device.hpp>

#include "yaml_reader.hpp"

namespace twocs::config::detail {

struct OperatorModelParams {
  hardware::RooflineParams roofline;
  hardware::KernelModelParams kernels;
};

[[nodiscard]] OperatorModelParams read_operator_model(const Field& field);

} // namespace twocs::config::detail
