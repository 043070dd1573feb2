// The operator cost model a simulation uses for a device: the kernel model with the platform's
// parameters (kernel_cost_model.hpp). The one place that chooses it.
#pragma once

#include <memory>

#include <twocs/cost/operator_cost_model.hpp>
#include <twocs/hardware/device.hpp>

namespace twocs::cost {

[[nodiscard]] std::unique_ptr<OperatorCostModel> make_cost_model(const hardware::DeviceSpec& device);

} // namespace twocs::cost
