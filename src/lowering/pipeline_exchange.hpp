// Private: activations and their gradients between pipeline stages. Each work item receives its
// input from the neighbouring chunk (activations forward, gradients backward) and sends its
// output on; messages are posted in batches at the schedule's exchange points (Megatron-LM's
// batched isend/irecv). With Megatron-LM's scatter/gather optimisation each tensor-parallel rank
// sends 1/t of the tensor and the receiving group all-gathers it (Narayanan et al. SC'21, 4.1).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include <twocs/lowering/schedule.hpp>

#include "iteration_context.hpp"

namespace twocs::lowering::detail {

class PipelineExchange {
public:
  explicit PipelineExchange(const IterationContext& context) : context_(context) {}

  /// Posts the receives of the items from `first` up to the next exchange point into `received`.
  void post_receives(DeviceLowering& device, const std::vector<WorkItem>& items, std::size_t first,
                     std::vector<std::vector<TaskId>>& received) const;
  /// Posts the receive of `item`'s input ahead of its use, which waits for it (Megatron-Core's
  /// overlapped messages); empty when the item receives nothing.
  [[nodiscard]] std::vector<TaskId> post_receive_ahead(DeviceLowering& device, const WorkItem& item) const;
  /// Sends what `item` produced to the neighbouring chunk; returns the transfer. With
  /// `overlapped` the compute stream goes on without waiting for it.
  std::vector<TaskId> send_output(DeviceLowering& device, const WorkItem& item, bool overlapped = false) const;
  /// All-gathers a tensor received in 1/t pieces before `item` uses it.
  void gather_received(DeviceLowering& device, const WorkItem& item, const std::vector<TaskId>& transfer) const;

private:
  [[nodiscard]] std::vector<TaskId> receive(DeviceLowering& device, const WorkItem& item, bool next_waits) const;
  [[nodiscard]] CollectiveSpec boundary_spec(bool forward, std::int64_t micro_batch) const;
  [[nodiscard]] std::uint32_t boundary_tag(std::int64_t to_chunk, std::int64_t micro_batch, bool forward) const;

  const IterationContext& context_;
};

} // namespace twocs::lowering::detail
