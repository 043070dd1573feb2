// PyTorch FSDP2's copies around each layer's collectives (torch/distributed/fsdp/_fully_shard/
// _fsdp_collectives.py at 010ae4a): memory-bound kernels on the compute stream that a layer's
// all-gather and reduce-scatter bring with them.
#pragma once

#include <cstdint>

#include <twocs/model/operator.hpp>
#include <twocs/model/training_plan.hpp>

namespace twocs::model {

/// Whether the plan runs them: framework fsdp, sharding full, over more than one replica.
[[nodiscard]] bool runs_fsdp2_copies(const TrainingPlan& plan);

/// After a layer's all-gather, before its first kernel (FSDPParamGroup.wait_for_unshard ->
/// foreach_all_gather_copy_out: split_with_sizes_copy of the gathered flat buffer into the
/// unsharded parameters): each of `parameters` read and written, `linear` of them at the gathered
/// FP8 bytes of training.fp8_params.
[[nodiscard]] ComputeOp fsdp_all_gather_copy_out(const TrainingPlan& plan, std::int64_t parameters, std::int64_t linear,
                                                 Pass pass);

/// After a layer's backward, before its reduce-scatter (foreach_reduce ->
/// foreach_reduce_scatter_copy_in: chunk_cat of the unsharded gradients into the reduce-scatter
/// input): each of `parameters` gradients read in the parameters' dtype and written in the reduce
/// dtype (torchtitan reduces in float32).
[[nodiscard]] ComputeOp fsdp_reduce_scatter_copy_in(const TrainingPlan& plan, std::int64_t parameters);

} // namespace twocs::model
