#include "pipeline_exchange.hpp"

namespace twocs::lowering::detail {
namespace {

model::Pass pass_of(bool forward) { return forward ? model::Pass::forward : model::Pass::backward; }

} // namespace

std::vector<TaskId> PipelineExchange::receive(DeviceLowering& device, const WorkItem& item, bool next_waits) const {
  const auto chunks = static_cast<std::int64_t>(context_.chunks.size());
  const std::int64_t chunk = context_.chunk_at(device.at, item.chunk).chunk;
  const bool forward = item.kind == WorkKind::forward;
  const std::int64_t from = forward ? chunk - 1 : chunk + 1;
  // A W pass (WorkKind::weight) needs nothing from the neighbours.
  if (item.kind == WorkKind::weight || from < 0 || from >= chunks) return {};
  return device.program.receive(boundary_spec(forward, item.micro_batch),
                                context_.device_of_chunk(device.at, from, item.chunk),
                                boundary_tag(chunk, item.micro_batch, forward), next_waits);
}

void PipelineExchange::post_receives(DeviceLowering& device, const std::vector<WorkItem>& items, std::size_t first,
                                     std::vector<std::vector<TaskId>>& received) const {
  for (std::size_t k = first; k < items.size(); ++k) {
    received[k] = receive(device, items[k], true);
    if (items[k].exchange_after) break;
  }
}

std::vector<TaskId> PipelineExchange::post_receive_ahead(DeviceLowering& device, const WorkItem& item) const {
  return receive(device, item, false);
}

std::vector<TaskId> PipelineExchange::send_output(DeviceLowering& device, const WorkItem& item, bool overlapped) const {
  const auto chunks = static_cast<std::int64_t>(context_.chunks.size());
  const std::int64_t chunk = context_.chunk_at(device.at, item.chunk).chunk;
  const bool forward = item.kind == WorkKind::forward;
  const std::int64_t to = forward ? chunk + 1 : chunk - 1;
  if (item.kind == WorkKind::weight || to < 0 || to >= chunks) return {};
  // The zero-bubble runtime and DualPipe send asynchronously (batch_isend_irecv): a stage goes on
  // to its next pass, a W above all, without waiting for the neighbour to receive; so does
  // Megatron-Core's overlapped interleaved schedule, which waits before the next pass of the kind.
  const auto schedule = context_.plan.pipeline_schedule;
  const bool sender_waits =
      !overlapped && schedule != model::PipelineSchedule::zb_h1 && schedule != model::PipelineSchedule::dualpipe;
  return device.program.send(boundary_spec(forward, item.micro_batch),
                             context_.device_of_chunk(device.at, to, item.chunk),
                             boundary_tag(to, item.micro_batch, forward), sender_waits);
}

void PipelineExchange::gather_received(DeviceLowering& device, const WorkItem& item,
                                       const std::vector<TaskId>& transfer) const {
  const auto& p = context_.plan.parallelism;
  if (transfer.empty() || p.tensor == 1 || p.sequence) return;
  const CollectiveSpec gather{
      model::Collective::all_gather,
      model::CommGroup::tensor,
      pass_of(item.kind == WorkKind::forward),
      model::size_of(context_.activation_elements(), model::activation_dtype(context_.plan.dtype)),
      context_.labels.boundary_gather,
      -1,
      static_cast<std::int32_t>(item.micro_batch),
      Algorithm::ring,
      ScheduleShape{},
      std::nullopt};
  device.program.collective(gather, context_.layout.group(device.device(), model::CommGroup::tensor), {}, transfer);
}

/// b s h elements, cut into t pieces by the scatter/gather optimisation, already 1/t under
/// sequence parallelism.
CollectiveSpec PipelineExchange::boundary_spec(bool forward, std::int64_t micro_batch) const {
  CollectiveSpec spec;
  spec.kind = model::Collective::send_recv;
  spec.group = model::CommGroup::pipeline;
  spec.pass = pass_of(forward);
  spec.size = model::size_of(context_.activation_elements() / static_cast<double>(context_.plan.parallelism.tensor),
                             model::activation_dtype(context_.plan.dtype));
  spec.label = forward ? context_.labels.activation : context_.labels.gradient;
  spec.micro_batch = static_cast<std::int32_t>(micro_batch);
  return spec;
}

/// Names a message between stages: the activation or gradient of one micro-batch crossing the
/// boundary in front of chunk `to_chunk`.
std::uint32_t PipelineExchange::boundary_tag(std::int64_t to_chunk, std::int64_t micro_batch, bool forward) const {
  return static_cast<std::uint32_t>((to_chunk * context_.plan.micro_batches() + micro_batch) * 2 + (forward ? 0 : 1));
}

} // namespace twocs::lowering::detail
