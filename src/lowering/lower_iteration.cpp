// The schedule walk: every simulated device runs its pipeline schedule's work items in order,
// exchanging activations and gradients at the schedule's exchange points, and finishes with the
// optimizer step. What happens inside an item and at the end lives in the units it calls:
//   chunk_passes      forward / backward of a model chunk (embedding, layers, head)
//   merged_passes     a forward and a backward merged layer by layer (combined 1F1B)
//   step_emitter      operator sequences -> kernels and collectives on the device's streams
//   pipeline_exchange activations and gradients between stages
//   sharded_weights   ZeRO-3 / FSDP per-layer gathers and the post-optimizer gather
//   gradient_sync     data-parallel gradient buckets
//   embedding_sync    tied word-embedding gradient between the first and last stage
//   optimizer_step    end of iteration: remaining reductions, embedding sync, optimizer
#include <twocs/lowering/lower_iteration.hpp>

#include <algorithm>
#include <cassert>

#include "chunk_passes.hpp"
#include "iteration_walk.hpp"
#include "merged_passes.hpp"
#include "optimizer_step.hpp"
#include "pipeline_exchange.hpp"
#include "step_synchronisation.hpp"

namespace twocs::lowering {
namespace detail {
namespace {

/// Which items finalise their chunk's gradients, whose kernels fill the gradient buckets: the
/// last backward of each chunk and, where weight gradients are deferred, its last W pass (the
/// data-parallel reduction of a weight waits for its W: Qi et al., ICLR 2024); and after which
/// item the chunk's open buckets are flushed.
struct GradientFinal {
  std::vector<bool> fills, flushes;
};

GradientFinal gradient_final_items(const std::vector<WorkItem>& items, std::int64_t slots) {
  constexpr std::size_t none = static_cast<std::size_t>(-1);
  std::vector<std::size_t> last_backward(static_cast<std::size_t>(slots), none), last_weight = last_backward;
  for (std::size_t i = 0; i < items.size(); ++i) {
    const auto slot = static_cast<std::size_t>(items[i].chunk);
    if (items[i].kind == WorkKind::backward) last_backward[slot] = i;
    if (items[i].kind == WorkKind::weight) last_weight[slot] = i;
  }
  GradientFinal final{std::vector<bool>(items.size(), false), std::vector<bool>(items.size(), false)};
  for (std::size_t slot = 0; slot < last_backward.size(); ++slot) {
    for (const std::size_t i : {last_backward[slot], last_weight[slot]})
      if (i != none) final.fills[i] = true;
    const std::size_t last = last_weight[slot] == none ? last_backward[slot] : last_weight[slot];
    if (last != none) final.flushes[last] = true;
  }
  return final;
}

std::vector<bool> simulation_mask(const std::vector<DeviceId>& devices, std::int64_t world) {
  if (static_cast<std::int64_t>(devices.size()) == world) return {};
  std::vector<bool> mask(static_cast<std::size_t>(world), false);
  for (DeviceId d : devices) mask[static_cast<std::size_t>(d)] = true;
  return mask;
}

class ScheduleWalk {
public:
  explicit ScheduleWalk(const IterationContext& context)
      : context_(context), exchange_(context), weights_(context), passes_(context, weights_), merged_(context, passes_),
        optimizer_(context, weights_) {}

  void lower_device(CollectiveRegistry& registry, DeviceId id) const {
    const auto& plan = context_.plan;
    DeviceLowering device{DeviceProgram(context_.sink, registry, id, plan.host.launch_time.value_or(units::Seconds(0))),
                          context_.layout.coordinates(id),
                          GradientSync(context_.sink, plan, context_.layout.group(id, model::CommGroup::data),
                                       expert_data_group(context_.layout, id, plan.parallelism.expert)),
                          false,
                          false,
                          {}};
    device.layer_graphs = plan.host.cuda_graphs == model::CudaGraphs::partial;
    // Weights quantized before the iteration: no layer's forward is its first (first_forward).
    if (context_.fp8_weights_cached)
      device.forwarded.assign(static_cast<std::size_t>(context_.model.layers + context_.model.mtp_layers), true);
    // A full-iteration graph holds the forward-backward of every micro-batch, up to the optimizer
    // (FullCudaGraphWrapper around forward_backward_func; OptimizerStep ends it).
    const bool full_graph = plan.host.cuda_graphs == model::CudaGraphs::full;
    if (full_graph) device.program.begin_graph();
    const auto items = pipeline_schedule(plan, device.at.pipeline);
    const Walk walk{items, gradient_final_items(items, plan.chunks_per_rank()), full_graph};
    if (overlaps_messages(plan))
      walk_overlapped(device, walk);
    else
      walk_batched(device, walk);
    optimizer_.finish_iteration(device);
  }

private:
  struct Walk {
    const std::vector<WorkItem>& items;
    GradientFinal final;
    bool full_graph = false;
  };

  /// Megatron-Core's overlapped messages (overlap.p2p): its interleaved schedule only.
  static bool overlaps_messages(const model::TrainingPlan& plan) {
    return plan.overlap.p2p && plan.framework == model::Framework::megatron_lm &&
           plan.pipeline_schedule == model::PipelineSchedule::interleaved_one_f_one_b &&
           plan.parallelism.pipeline > 1 && !plan.overlap.expert_comm;
  }

  /// Runs item `i` (with the next one where they are merged); returns the last item run.
  std::size_t run_item(DeviceLowering& device, const Walk& walk, std::size_t i) const {
    const auto& plan = context_.plan;
    const WorkItem& item = walk.items[i];
    // Each micro-batch enters a dualpipe rank once per direction, one chunk each.
    const bool every_chunk_enters = plan.pipeline_schedule == model::PipelineSchedule::dualpipe;
    if (item.kind == WorkKind::forward && (item.chunk == 0 || every_chunk_enters))
      host_time(device, plan.host.micro_batch_overhead, context_.labels.host_micro_batch, item.micro_batch);
    if (item.merged_with_next) {
      // Megatron-Core's combined step (DualPipe's overlapped chunks): this forward and the
      // next item's backward as one.
      ++i;
      begin_backward(device, walk.final.fills[i]);
      merged_.run(device, item, walk.items[i]);
      end_backward(device, walk.final.flushes[i]);
    } else if (item.kind == WorkKind::forward) {
      passes_.forward(device, item);
    } else {
      begin_backward(device, walk.final.fills[i]);
      if (item.kind == WorkKind::weight)
        passes_.weight(device, item);
      else
        passes_.backward(device, item);
      end_backward(device, walk.final.flushes[i]);
    }
    return i;
  }

  /// Messages posted in batches at the schedule's exchange points and waited for at once.
  void walk_batched(DeviceLowering& device, const Walk& walk) const {
    const auto& plan = context_.plan;
    const auto& items = walk.items;
    std::vector<std::vector<TaskId>> received(items.size());
    exchange_.post_receives(device, items, 0, received);
    std::size_t phase_start = 0;
    for (std::size_t i = 0; i < items.size(); ++i) {
      exchange_.gather_received(device, items[i], received[i]);
      if (items[i].merged_with_next) exchange_.gather_received(device, items[i + 1], received[i + 1]);
      i = run_item(device, walk, i);
      if (!items[i].exchange_after) continue;
      for (std::size_t k = phase_start; k <= i; ++k) exchange_.send_output(device, items[k]);
      phase_start = i + 1;
      exchange_.post_receives(device, items, phase_start, received);
      // Megatron-LM waits for each batched exchange and then calls torch.cuda.synchronize()
      // (batch_p2p_sync, default True: megatron/core/model_parallel_config.py); DeepSpeed's
      // pipeline engine does not synchronise the host. A captured graph cannot synchronise, so a
      // full-iteration graph runs with batch_p2p_sync False (docs/simulation.md, "CUDA graphs").
      if (plan.framework == model::Framework::megatron_lm && plan.host.synchronize && plan.parallelism.pipeline > 1 &&
          !walk.full_graph)
        device.program.synchronize_host();
    }
  }

  /// Megatron-Core's interleaved schedule with overlap_p2p_comm (schedules.py at core_r0.9.0,
  /// forward_backward_pipelining_with_interleaving; p2p_communication.py _p2p_ops): after each
  /// pass its output is sent and the next pass of the same kind's input is received, unbatched
  /// and without torch.cuda.synchronize, and both requests are waited for just before that next
  /// pass, so they run under the pass of the other kind between.
  void walk_overlapped(DeviceLowering& device, const Walk& walk) const {
    const auto& items = walk.items;
    std::vector<std::vector<TaskId>> received(items.size());
    // Per kind (forward 0, backward 1): the last pass's sends, and the next pass whose receive is
    // not posted. The first backward's receive is posted with the first forward's; posted early,
    // it only waits for its sender.
    const auto slot = [](WorkKind kind) { return kind == WorkKind::forward ? 0 : 1; };
    std::vector<TaskId> sent[2];
    std::size_t next[2] = {0, 0};
    const auto post_next = [&](WorkKind kind, std::size_t from) {
      std::size_t& k = next[slot(kind)];
      k = std::max(k, from);
      while (k < items.size() && items[k].kind != kind) ++k;
      if (k < items.size()) received[k] = exchange_.post_receive_ahead(device, items[k]);
      ++k;
    };
    post_next(WorkKind::forward, 0);
    post_next(WorkKind::backward, 0);
    for (std::size_t i = 0; i < items.size(); ++i) {
      const WorkItem& item = items[i];
      const int kind = slot(item.kind);
      std::vector<TaskId> due = received[i];
      due.insert(due.end(), sent[kind].begin(), sent[kind].end());
      device.program.wait_for(std::move(due), Stream::pipeline_comm);
      exchange_.gather_received(device, item, received[i]);
      run_item(device, walk, i);
      sent[kind] = exchange_.send_output(device, item, true);
      post_next(item.kind, i + 1);
    }
  }

  /// The gradients of a chunk's last backward (and last W) are final: its kernels fill the
  /// gradient buckets; after the last of them the open buckets are reduced.
  static void begin_backward(DeviceLowering& device, bool fills) {
    device.gradients_final = device.gradients.overlapped() && fills;
  }
  static void end_backward(DeviceLowering& device, bool flushes) {
    if (device.gradients_final && flushes) device.gradients.flush(device.program);
    device.gradients_final = false;
  }

  const IterationContext& context_;
  PipelineExchange exchange_;
  ShardedWeights weights_;
  ChunkPasses passes_;
  MergedPasses merged_;
  OptimizerStep optimizer_;
};

} // namespace

void lower_devices(TaskSink& sink, const model::TransformerConfig& model, const model::TrainingPlan& plan,
                   const cost::OperatorCostModel& cost, const std::vector<DeviceId>& devices,
                   const CollectivePolicy& collectives, bool fp8_weights_cached) {
  IterationContext context(sink, model, plan, cost);
  context.fp8_weights_cached = fp8_weights_cached;
  CollectiveRegistry registry(sink, simulation_mask(devices, context.layout.world_size()), collectives,
                              &context.layout);
  const ScheduleWalk walk(context);
  for (DeviceId device : devices) walk.lower_device(registry, device);
  assert(registry.pending() == 0 && "a collective was not joined by all of its members");
}

} // namespace detail

std::vector<DeviceId> simulated_devices(const model::TrainingPlan& plan, const LoweringOptions& options) {
  const RankLayout layout(plan.parallelism);
  std::vector<DeviceId> devices;
  if (!options.fold_replicas) {
    for (DeviceId d = 0; d < layout.world_size(); ++d) devices.push_back(d);
    return devices;
  }
  for (std::int64_t stage = 0; stage < plan.parallelism.pipeline; ++stage)
    devices.push_back(layout.rank({0, 0, stage}));
  return devices;
}

TaskGraph lower_iteration(const model::TransformerConfig& model, const model::TrainingPlan& plan,
                          const cost::OperatorCostModel& cost, const LoweringOptions& options) {
  TaskGraph graph(static_cast<DeviceId>(plan.world_size()));
  graph.reserve(static_cast<std::size_t>(options.expected_tasks));
  detail::lower_devices(graph, model, plan, cost, simulated_devices(plan, options), options.collectives,
                        options.fp8_weights_cached);
  graph.compact();
  return graph;
}

} // namespace twocs::lowering
