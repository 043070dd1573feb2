#include "step_emitter.hpp"

#include <variant>

namespace twocs::lowering::detail {

void emit_steps(DeviceLowering& device, const RankLayout& layout, const PreparedSequence& steps, std::int64_t layer,
                std::int64_t micro_batch) {
  const auto at_layer = static_cast<std::int32_t>(layer);
  const auto at_micro_batch = static_cast<std::int32_t>(micro_batch);
  for (const auto& prepared : steps) {
    if (const auto* op = std::get_if<model::ComputeOp>(&prepared.step)) {
      device.program.compute({op->pass, at_layer, at_micro_batch, prepared.label},
                             {prepared.duration, op->flops, op->bytes, op->is_model_flop()});
      if (device.gradients_final && op->grad_params > 0)
        device.gradients.on_gradients_ready(device.program, op->grad_params, op->expert_grads);
      continue;
    }
    const auto& c = std::get<model::CollectiveOp>(prepared.step);
    CollectiveSpec spec{c.kind, c.group, c.pass, c.size, prepared.label, at_layer, at_micro_batch};
    spec.routing = c.routing;
    device.program.collective(spec, layout.group(device.device(), c.group), CollectiveWait{c.overlapped_ops, false});
  }
}

} // namespace twocs::lowering::detail
