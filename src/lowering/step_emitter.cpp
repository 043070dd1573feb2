#include "step_emitter.hpp"

#include <variant>

namespace twocs::lowering::detail {
namespace {

void emit_collective(DeviceLowering& device, const RankLayout& layout, const model::CollectiveOp& c,
                     std::uint32_t label, std::int32_t layer, std::int32_t micro_batch) {
  CollectiveSpec spec{c.kind, c.group, c.pass, c.size, label, layer, micro_batch};
  spec.routing = c.routing;
  device.program.collective(spec, layout.group(device.device(), c.group), CollectiveWait{c.overlapped_ops, false});
}

/// Under per-layer graphs, a run of captured steps is one graph: it opens at the run's first
/// step and closes at the first step that is not captured.
void enter_or_leave_graph(DeviceLowering& device, const model::Step& step, bool& inside) {
  const bool captured = std::visit([](const auto& op) { return op.graph == model::LayerGraph::captured; }, step);
  if (captured == inside) return;
  if (captured)
    device.program.begin_graph();
  else
    device.program.end_graph();
  inside = captured;
}

} // namespace

void emit_steps(DeviceLowering& device, const RankLayout& layout, const PreparedSequence& steps, std::int64_t layer,
                std::int64_t micro_batch) {
  const auto at_layer = static_cast<std::int32_t>(layer);
  const auto at_micro_batch = static_cast<std::int32_t>(micro_batch);
  bool in_graph = false;
  for (const auto& prepared : steps) {
    if (device.layer_graphs) enter_or_leave_graph(device, prepared.step, in_graph);
    if (const auto* op = std::get_if<model::ComputeOp>(&prepared.step)) {
      const TaskId kernel = device.program.compute(
          {op->pass, at_layer, at_micro_batch, prepared.label},
          {prepared.duration, op->flops, op->bytes, op->is_model_flop(), static_cast<float>(prepared.clock_share)},
          op->host_launches);
      if (op->host_waits) device.program.host_waits_for(kernel);
      if (device.gradients_final && op->grad_params > 0) {
        // The gradient hooks run on the host after the layer's graph (Megatron-Core's DDP hooks).
        if (in_graph) device.program.pause_graph();
        device.gradients.on_gradients_ready(device.program, op->grad_params, op->expert_grads);
        if (in_graph) device.program.resume_graph();
      }
      continue;
    }
    emit_collective(device, layout, std::get<model::CollectiveOp>(prepared.step), prepared.label, at_layer,
                    at_micro_batch);
  }
  if (in_graph) device.program.end_graph();
}

void emit_exchange(DeviceLowering& device, const RankLayout& layout, const PreparedSequence& exchange,
                   int overlapped_ops, std::int64_t layer, std::int64_t micro_batch) {
  for (const auto& prepared : exchange) {
    model::CollectiveOp c = std::get<model::CollectiveOp>(prepared.step);
    c.overlapped_ops = overlapped_ops;
    emit_collective(device, layout, c, prepared.label, static_cast<std::int32_t>(layer),
                    static_cast<std::int32_t>(micro_batch));
  }
}

} // namespace twocs::lowering::detail
