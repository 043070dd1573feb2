// Private: data-parallel gradient reduction of one device. With overlap, gradients are packed
// into buckets in the order backward finalises them and each full bucket is reduced at once on
// the data-parallel stream while backward goes on (PyTorch DDP, Li et al. VLDB'20, section 3.2;
// Megatron-LM --overlap-grad-reduce). Without it, all gradients are reduced in one collective
// after backward (Megatron-LM's contiguous gradient buffer). Sharded optimizers reduce-scatter
// instead of all-reducing (ZeRO, Rajbhandari et al. SC'20). The routed experts' gradients go
// to their own buckets, reduced over the expert-data-parallel group: the d cp / ep ranks that
// hold the same experts (Megatron-Core, expert_data_parallel_group; separate buffers for expert
// parameters in megatron/core/distributed/distributed_data_parallel.py).
#pragma once

#include <cstdint>
#include <vector>

#include <twocs/lowering/device_program.hpp>
#include <twocs/lowering/rank_layout.hpp>
#include <twocs/model/training_plan.hpp>

namespace twocs::lowering::detail {

/// The ranks that hold the same experts as `device` (its expert-data-parallel group, t d cp / ep
/// ranks): of its pipeline stage's ranks every ep-th one, as expert-parallel groups are blocks
/// of ep adjacent ranks (rank_layout.cpp; Megatron-Core's expert mesh with expert-tensor-parallel
/// size 1).
[[nodiscard]] std::vector<DeviceId> expert_data_group(const RankLayout& layout, DeviceId device, std::int64_t expert);

class GradientSync {
public:
  GradientSync(TaskSink& graph, const model::TrainingPlan& plan, std::vector<DeviceId> data_group,
               std::vector<DeviceId> expert_data_group);

  /// A kernel of the gradient-producing backward finalised the gradients of `parameters`
  /// parameters (`experts`: routed experts' weights).
  void on_gradients_ready(DeviceProgram& program, std::int64_t parameters, bool experts = false);
  /// The backward of a model chunk ended: reduce what is left in the open buckets.
  void flush(DeviceProgram& program);
  /// No overlap: reduce the gradients of `parameters` parameters, `expert_parameters` of which
  /// are routed experts', in one collective per group.
  void reduce_all(DeviceProgram& program, std::int64_t parameters, std::int64_t expert_parameters = 0);

  [[nodiscard]] bool overlapped() const { return overlap_; }
  /// Bytes per gradient element exchanged (model::TrainingPlan::grad_reduce_element_size).
  [[nodiscard]] double element_size() const { return element_size_; }

private:
  struct Bucket {
    std::vector<DeviceId> group;
    units::Bytes open;
  };
  void reduce(DeviceProgram& program, const std::vector<DeviceId>& group, units::Bytes size);
  void add(DeviceProgram& program, Bucket& bucket, std::int64_t parameters);

  Bucket dense_;
  Bucket experts_;
  bool overlap_;
  units::Bytes bucket_capacity_;
  double element_size_;
  model::Collective kind_;
  std::uint32_t label_;
};

} // namespace twocs::lowering::detail
