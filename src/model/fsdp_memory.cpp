// PyTorch FSDP2's buffers beyond the sharded state (docs/memory-model.md, "Communication buffers").
#include "fsdp_memory.hpp"

#include <algorithm>

#include <twocs/model/fp8_weights.hpp>
#include <twocs/units/numeric.hpp>

namespace twocs::model::detail {

using units::as_double;

/// FSDP2 keeps the root module's parameters unsharded after forward (torch/distributed/
/// _composable/fsdp/_fsdp_state.py, FSDPState._lazy_init: the root's post_forward_mesh_info =
/// None; fully_shard's docstring: "The root FSDP state has its value specially set to False"):
/// torchtitan's root holds the embedding, final norm and output (parallelize_llama.py,
/// apply_fsdp), `weight_bytes` per parameter in the mixed-precision policy's param_dtype.
double fsdp_root_unsharded_bytes(const TrainingPlan& plan, std::int64_t root_parameters, double weight_bytes) {
  if (plan.framework != Framework::fsdp || plan.optimizer.sharding != OptimizerSharding::full) return 0;
  return as_double(root_parameters) * weight_bytes;
}

/// FSDP2's per-layer buffers beyond the two gathered layers (torch/distributed/fsdp/_fully_shard/
/// _fsdp_collectives.py at 010ae4a). The all-gather's flat output lives until its copy-out into
/// the unsharded parameters (foreach_all_gather_copy_out), beside them and the next layer's
/// prefetched gather: one more layer of gathered weights. In backward (foreach_reduce) a layer's
/// unsharded gradients, in the parameters' dtype, are copied into a reduce-scatter input of the
/// reduce dtype (torchtitan's mixed_precision_reduce, float32) and freed; the group holds that
/// input until the next layer's post-backward (FSDPParamGroup.post_backward's
/// reduce_scatter_state), while the next layer's unsharded gradients grow.
double fsdp2_layer_buffer_bytes(const TrainingPlan& plan, const ParameterCounts& counts) {
  if (plan.framework != Framework::fsdp || plan.optimizer.sharding != OptimizerSharding::full) return 0;
  const auto layer = [&](std::int64_t all, std::int64_t replicated) {
    return gathered_weight_bytes(plan, all, all - replicated) +
           as_double(all) * (weight_element_size(plan) + plan.grad_reduce_element_size());
  };
  return std::max(layer(counts.per_layer, counts.replicated_per_layer),
                  layer(counts.dense_per_layer, counts.replicated_dense_per_layer));
}

} // namespace twocs::model::detail
