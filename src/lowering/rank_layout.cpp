#include <twocs/lowering/rank_layout.hpp>

#include <cassert>

namespace twocs::lowering {

RankLayout::RankLayout(std::int64_t tensor, std::int64_t data, std::int64_t pipeline, std::int64_t expert)
    : tensor_(tensor), data_(data), pipeline_(pipeline), expert_(expert) {
  assert(tensor >= 1 && data >= 1 && pipeline >= 1 && expert >= 1 && data % expert == 0);
}

DeviceId RankLayout::rank(const RankCoordinates& c) const {
  assert(c.tensor < tensor_ && c.data < data_ && c.pipeline < pipeline_);
  return static_cast<DeviceId>(c.tensor + tensor_ * (c.data + data_ * c.pipeline));
}

RankCoordinates RankLayout::coordinates(DeviceId rank) const {
  assert(rank >= 0 && rank < world_size());
  const std::int64_t r = rank;
  return {r % tensor_, (r / tensor_) % data_, r / (tensor_ * data_)};
}

std::vector<DeviceId> RankLayout::group(DeviceId rank, model::CommGroup dimension) const {
  RankCoordinates c = coordinates(rank);
  std::vector<DeviceId> members;
  switch (dimension) {
  case model::CommGroup::tensor:
    for (c.tensor = 0; c.tensor < tensor_; ++c.tensor) members.push_back(this->rank(c));
    break;
  case model::CommGroup::data:
    for (c.data = 0; c.data < data_; ++c.data) members.push_back(this->rank(c));
    break;
  case model::CommGroup::expert: {
    // Megatron-Core builds expert-parallel groups from adjacent data-parallel ranks
    // (parallel_state.py, RankGenerator with order tp-ep-dp-pp for the expert mesh).
    const std::int64_t first = c.data / expert_ * expert_;
    for (c.data = first; c.data < first + expert_; ++c.data) members.push_back(this->rank(c));
    break;
  }
  case model::CommGroup::pipeline:
    for (c.pipeline = 0; c.pipeline < pipeline_; ++c.pipeline) members.push_back(this->rank(c));
    break;
  }
  return members;
}

} // namespace twocs::lowering
