// Where each rank of a parallel plan sits and which groups it belongs to. Megatron-Core order
// "tp-cp-ep-dp-pp" (megatron/core/parallel_state.py, RankGenerator): tensor-parallel ranks are
// adjacent (inside a node), then context-parallel, then data-parallel, then pipeline:
// rank = tp + t (cp + c (dp + d pp)) (Narayanan et al. SC'21, section 3.3 places tensor
// parallelism within a multi-GPU server). Expert parallelism is carved out of the combined
// data x context index.
#pragma once

#include <cstdint>
#include <vector>

#include <twocs/lowering/task_sink.hpp>
#include <twocs/model/training_plan.hpp>

namespace twocs::lowering {

struct RankCoordinates {
  std::int64_t tensor = 0;
  std::int64_t data = 0;
  std::int64_t pipeline = 0;
  std::int64_t context = 0;
};

class RankLayout {
public:
  RankLayout(std::int64_t tensor, std::int64_t data, std::int64_t pipeline, std::int64_t expert = 1,
             std::int64_t context = 1);
  explicit RankLayout(const model::Parallelism& p) : RankLayout(p.tensor, p.data, p.pipeline, p.expert, p.context) {}

  [[nodiscard]] std::int64_t world_size() const { return tensor_ * context_ * data_ * pipeline_; }
  /// Ranks of one pipeline stage, contiguous from rank({0, 0, stage, 0}).
  [[nodiscard]] std::int64_t ranks_per_stage() const { return tensor_ * context_ * data_; }
  [[nodiscard]] DeviceId rank(const RankCoordinates& c) const;
  [[nodiscard]] RankCoordinates coordinates(DeviceId rank) const;

  /// The devices of `rank`'s group along one dimension, in ring order (by index in that
  /// dimension). The data group spans data x context: gradients are reduced over Megatron-Core's
  /// data-parallel group with context parallelism (parallel_state.py,
  /// get_data_parallel_group(with_context_parallel=True)), since context-parallel ranks hold the
  /// same weights and see different tokens.
  [[nodiscard]] std::vector<DeviceId> group(DeviceId rank, model::CommGroup dimension) const;

private:
  std::int64_t tensor_;
  std::int64_t data_;
  std::int64_t pipeline_;
  std::int64_t expert_;  // expert-parallel groups: blocks of `expert` adjacent ranks of a pipeline stage
  std::int64_t context_; // context-parallel ranks, between tensor and data
};

} // namespace twocs::lowering
