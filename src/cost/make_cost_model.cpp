#include <twocs/cost/make_cost_model.hpp>

#include <twocs/cost/kernel_cost_model.hpp>

namespace twocs::cost {

std::unique_ptr<OperatorCostModel> make_cost_model(const hardware::DeviceSpec& device) {
  return std::make_unique<KernelCostModel>(device);
}

} // namespace twocs::cost
