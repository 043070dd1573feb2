// Private: data-parallel gradient reduction of one device. With overlap, gradients are packed
// into buckets in the order backward finalises them and each full bucket is reduced at once on
// the data-parallel stream while backward goes on (PyTorch DDP, Li et al. VLDB'20, section 3.2;
// Megatron-LM --overlap-grad-reduce). Without it, all gradients are reduced in one collective
// after backward (Megatron-LM's contiguous gradient buffer). Sharded optimizers reduce-scatter
// instead of all-reducing (ZeRO, Rajbhandari et al. SC'20).
#pragma once

#include <cstdint>
#include <vector>

#include <twocs/lowering/device_program.hpp>
#include <twocs/model/training_plan.hpp>

namespace twocs::lowering::detail {

class GradientSync {
public:
  GradientSync(TaskSink& graph, const model::TrainingPlan& plan, std::vector<DeviceId> data_group);

  /// A kernel of the gradient-producing backward finalised the gradients of `parameters` parameters.
  void on_gradients_ready(DeviceProgram& program, std::int64_t parameters);
  /// The backward of a model chunk ended: reduce what is left in the open bucket.
  void flush(DeviceProgram& program);
  /// No overlap: reduce the gradients of `parameters` parameters in one collective.
  void reduce_all(DeviceProgram& program, std::int64_t parameters);

  [[nodiscard]] bool overlapped() const { return overlap_; }
  /// Bytes per gradient element exchanged (model::TrainingPlan::grad_reduce_element_size).
  [[nodiscard]] double element_size() const { return element_size_; }

private:
  void reduce(DeviceProgram& program, units::Bytes size);

  std::vector<DeviceId> data_group_;
  bool overlap_;
  units::Bytes bucket_capacity_;
  units::Bytes open_bucket_;
  double element_size_;
  model::Collective kind_;
  std::uint32_t label_;
};

} // namespace twocs::lowering::detail
