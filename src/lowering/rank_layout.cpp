#include <twocs/lowering/rank_layout.hpp>

#include <cassert>

namespace twocs::lowering {

RankLayout::RankLayout(std::int64_t tensor, std::int64_t data, std::int64_t pipeline, std::int64_t expert,
                       std::int64_t context)
    : tensor_(tensor), data_(data), pipeline_(pipeline), expert_(expert), context_(context) {
  assert(tensor >= 1 && data >= 1 && pipeline >= 1 && expert >= 1 && context >= 1 &&
         (tensor * data * context) % expert == 0);
}

DeviceId RankLayout::rank(const RankCoordinates& c) const {
  assert(c.tensor < tensor_ && c.context < context_ && c.data < data_ && c.pipeline < pipeline_);
  return static_cast<DeviceId>(c.tensor + tensor_ * (c.context + context_ * (c.data + data_ * c.pipeline)));
}

RankCoordinates RankLayout::coordinates(DeviceId rank) const {
  assert(rank >= 0 && rank < world_size());
  const std::int64_t r = rank;
  const std::int64_t above_tensor = r / tensor_;
  return {r % tensor_, (above_tensor / context_) % data_, above_tensor / (context_ * data_), above_tensor % context_};
}

std::vector<DeviceId> RankLayout::group(DeviceId rank, model::CommGroup dimension) const {
  RankCoordinates c = coordinates(rank);
  std::vector<DeviceId> members;
  // The data x context ranks of this tensor and pipeline coordinate, by flattened index cp + c dp.
  const auto flattened = [&](std::int64_t first, std::int64_t count) {
    for (std::int64_t f = first; f < first + count; ++f) {
      c.context = f % context_;
      c.data = f / context_;
      members.push_back(this->rank(c));
    }
  };
  switch (dimension) {
  case model::CommGroup::tensor:
    for (c.tensor = 0; c.tensor < tensor_; ++c.tensor) members.push_back(this->rank(c));
    break;
  case model::CommGroup::context:
    for (c.context = 0; c.context < context_; ++c.context) members.push_back(this->rank(c));
    break;
  case model::CommGroup::data: flattened(0, data_ * context_); break;
  case model::CommGroup::expert: {
    // Megatron-Core's expert mesh (parallel_state.py, expert_decoder_rank_generator: tp = the
    // expert-tensor-parallel size, 1 here, then ep, edp, pp in order tp-cp-ep-dp-pp): ep adjacent
    // ranks of the pipeline stage, across tensor-parallel ranks first.
    const DeviceId stage_first = this->rank({0, 0, c.pipeline, 0});
    const DeviceId first =
        stage_first + (rank - stage_first) / static_cast<DeviceId>(expert_) * static_cast<DeviceId>(expert_);
    for (DeviceId r = first; r < first + static_cast<DeviceId>(expert_); ++r) members.push_back(r);
    break;
  }
  case model::CommGroup::pipeline:
    for (c.pipeline = 0; c.pipeline < pipeline_; ++c.pipeline) members.push_back(this->rank(c));
    break;
  }
  return members;
}

} // namespace twocs::lowering
