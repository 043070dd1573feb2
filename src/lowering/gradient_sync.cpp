#include "gradient_sync.hpp"

namespace twocs::lowering::detail {
namespace {

/// ZeRO-1 reduce-scatters the gradients, each rank updating its shard, except under DeepSpeed's
/// BF16 optimizer (bf16 with DeepSpeed's pipeline engine, as BLOOM ran): it shards the optimizer
/// itself but all-reduces the fp32 gradients (PipelineEngine._bf16_reduce_grads ->
/// buffered_allreduce_fallback, DeepSpeed PR #1801) before all-gathering the updated weights.
model::Collective gradient_collective(const model::TrainingPlan& plan) {
  if (plan.optimizer.sharding == model::OptimizerSharding::none) return model::Collective::all_reduce;
  if (plan.framework == model::Framework::megatron_deepspeed && plan.dtype == model::Dtype::bf16 &&
      plan.optimizer.sharding == model::OptimizerSharding::optimizer)
    return model::Collective::all_reduce;
  return model::Collective::reduce_scatter;
}

} // namespace

GradientSync::GradientSync(TaskSink& graph, const model::TrainingPlan& plan, std::vector<DeviceId> data_group)
    // DeepSpeed's pipeline engine reduces gradients only after the last micro-batch (ReduceGrads at
    // the last step of TrainSchedule, deepspeed/runtime/pipe/schedule.py).
    : data_group_(std::move(data_group)),
      overlap_(plan.overlap.dp_grad_reduce && plan.framework != model::Framework::megatron_deepspeed),
      bucket_capacity_(plan.overlap.bucket_size), element_size_(plan.grad_reduce_element_size()),
      kind_(gradient_collective(plan)),
      label_(graph.intern_label(kind_ == model::Collective::all_reduce ? "grad.all_reduce" : "grad.reduce_scatter")) {}

void GradientSync::reduce(DeviceProgram& program, units::Bytes size) {
  if (size.value() <= 0) return;
  CollectiveSpec spec;
  spec.kind = kind_;
  spec.group = model::CommGroup::data;
  spec.pass = model::Pass::backward;
  spec.size = size;
  spec.label = label_;
  program.collective(spec, data_group_, CollectiveWait{0, true});
}

void GradientSync::on_gradients_ready(DeviceProgram& program, std::int64_t parameters) {
  open_bucket_ += units::Bytes(static_cast<double>(parameters) * element_size_);
  if (open_bucket_ >= bucket_capacity_) {
    reduce(program, open_bucket_);
    open_bucket_ = units::Bytes(0);
  }
}

void GradientSync::flush(DeviceProgram& program) {
  reduce(program, open_bucket_);
  open_bucket_ = units::Bytes(0);
}

void GradientSync::reduce_all(DeviceProgram& program, std::int64_t parameters) {
  reduce(program, units::Bytes(static_cast<double>(parameters) * element_size_));
}

} // namespace twocs::lowering::detail
