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

std::vector<DeviceId> expert_data_group(const RankLayout& layout, DeviceId device, std::int64_t expert) {
  // The stage's ranks are contiguous (rank_layout.hpp); expert groups are blocks of ep of them.
  const auto stage = layout.coordinates(device).pipeline;
  const DeviceId first = layout.rank({0, 0, stage, 0});
  const auto per_stage = static_cast<DeviceId>(layout.ranks_per_stage());
  const auto ep = static_cast<DeviceId>(expert);
  std::vector<DeviceId> members;
  for (DeviceId r = first + (device - first) % ep; r < first + per_stage; r += ep) members.push_back(r);
  return members;
}

GradientSync::GradientSync(TaskSink& graph, const model::TrainingPlan& plan, std::vector<DeviceId> data_group,
                           std::vector<DeviceId> expert_data_group)
    // DeepSpeed's pipeline engine reduces gradients only after the last micro-batch (ReduceGrads at
    // the last step of TrainSchedule, deepspeed/runtime/pipe/schedule.py).
    : dense_{std::move(data_group), {}}, experts_{std::move(expert_data_group), {}},
      overlap_(plan.overlap.dp_grad_reduce && plan.framework != model::Framework::megatron_deepspeed),
      bucket_capacity_(plan.overlap.bucket_size), element_size_(plan.grad_reduce_element_size()),
      kind_(gradient_collective(plan)),
      label_(graph.intern_label(kind_ == model::Collective::all_reduce ? "grad.all_reduce" : "grad.reduce_scatter")) {}

void GradientSync::reduce(DeviceProgram& program, const std::vector<DeviceId>& group, units::Bytes size) {
  // A group of one (every replica holds other experts) has nothing to reduce.
  if (size.value() <= 0 || group.size() < 2) return;
  CollectiveSpec spec;
  spec.kind = kind_;
  spec.group = model::CommGroup::data;
  spec.pass = model::Pass::backward;
  spec.size = size;
  spec.label = label_;
  program.collective(spec, group, CollectiveWait{0, true});
}

void GradientSync::add(DeviceProgram& program, Bucket& bucket, std::int64_t parameters) {
  bucket.open += units::Bytes(static_cast<double>(parameters) * element_size_);
  if (bucket.open >= bucket_capacity_) {
    reduce(program, bucket.group, bucket.open);
    bucket.open = units::Bytes(0);
  }
}

void GradientSync::on_gradients_ready(DeviceProgram& program, std::int64_t parameters, bool experts) {
  add(program, experts ? experts_ : dense_, parameters);
}

void GradientSync::flush(DeviceProgram& program) {
  for (Bucket* bucket : {&dense_, &experts_}) {
    reduce(program, bucket->group, bucket->open);
    bucket->open = units::Bytes(0);
  }
}

void GradientSync::reduce_all(DeviceProgram& program, std::int64_t parameters, std::int64_t expert_parameters) {
  const auto bytes = [&](std::int64_t n) { return units::Bytes(static_cast<double>(n) * element_size_); };
  reduce(program, dense_.group, bytes(parameters - expert_parameters));
  reduce(program, experts_.group, bytes(expert_parameters));
}

} // namespace twocs::lowering::detail
