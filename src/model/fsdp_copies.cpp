// FSDP2's copy-out after each all-gather and copy-in before each reduce-scatter.
#include <twocs/model/fsdp_copies.hpp>

#include <twocs/model/fp8_weights.hpp>

namespace twocs::model {
namespace {

ComputeOp copy_kernel(const char* name, Pass pass, Dtype dtype, double bytes) {
  ComputeOp op;
  op.name = name;
  op.kind = OpKind::elementwise;
  op.pass = pass;
  op.dtype = dtype;
  op.bytes = units::Bytes(bytes);
  return op;
}

} // namespace

bool runs_fsdp2_copies(const TrainingPlan& plan) {
  return plan.framework == Framework::fsdp && plan.optimizer.sharding == OptimizerSharding::full &&
         plan.parallelism.data * plan.parallelism.context > 1;
}

ComputeOp fsdp_all_gather_copy_out(const TrainingPlan& plan, std::int64_t parameters, std::int64_t linear, Pass pass) {
  // Read and written.
  return copy_kernel("fsdp.all_gather.copy_out", pass, plan.dtype,
                     2.0 * gathered_weight_bytes(plan, parameters, linear));
}

ComputeOp fsdp_reduce_scatter_copy_in(const TrainingPlan& plan, std::int64_t parameters) {
  const double per_parameter = weight_element_size(plan) + plan.grad_reduce_element_size();
  return copy_kernel("fsdp.reduce_scatter.copy_in", Pass::backward, plan.dtype,
                     static_cast<double>(parameters) * per_parameter);
}

} // namespace twocs::model
