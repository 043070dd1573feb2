#include <twocs/lowering/tensor_group.hpp>

#include <cassert>
#include <variant>

#include <twocs/lowering/device_program.hpp>

#include "prepared_steps.hpp"

namespace twocs::lowering {

TaskGraph lower_tensor_group(const model::StepSequence& steps, std::int64_t tensor,
                             const cost::OperatorCostModel& cost) {
  assert(tensor >= 1);
  TaskGraph graph(static_cast<DeviceId>(tensor));
  CollectiveRegistry registry(graph);
  const detail::PreparedSequence prepared = detail::prepare(graph, steps, cost);
  std::vector<DeviceId> group;
  for (DeviceId d = 0; d < static_cast<DeviceId>(tensor); ++d) group.push_back(d);
  for (DeviceId device : group) {
    DeviceProgram program(graph, registry, device);
    for (const auto& p : prepared) {
      if (const auto* op = std::get_if<model::ComputeOp>(&p.step)) {
        Task task;
        task.pass = op->pass;
        task.layer = 0;
        task.micro_batch = 0;
        task.label = p.label;
        task.duration = p.duration;
        task.flops = op->flops;
        task.bytes = op->bytes;
        task.model_flops = op->is_model_flop();
        program.compute(task);
        continue;
      }
      const auto& c = std::get<model::CollectiveOp>(p.step);
      assert(c.group == model::CommGroup::tensor && "a layer pass communicates only within its tensor group");
      CollectiveSpec spec;
      spec.kind = c.kind;
      spec.group = c.group;
      spec.pass = c.pass;
      spec.size = c.size;
      spec.label = p.label;
      spec.layer = 0;
      spec.micro_batch = 0;
      program.collective(spec, group, CollectiveWait{c.overlapped_ops, false});
    }
  }
  assert(registry.pending() == 0);
  return graph;
}

} // namespace twocs::lowering
