#include <twocs/lowering/lower_iteration.hpp>

#include <cassert>
#include <variant>

#include <twocs/lowering/device_program.hpp>
#include <twocs/lowering/rank_layout.hpp>
#include <twocs/lowering/schedule.hpp>
#include <twocs/model/layer_ops.hpp>
#include <twocs/model/parameters.hpp>
#include <twocs/model/stage_partition.hpp>

#include "gradient_sync.hpp"
#include "prepared_steps.hpp"

namespace twocs::lowering {
namespace {

using detail::PreparedSequence;

std::vector<bool> simulation_mask(const std::vector<DeviceId>& devices, std::int64_t world) {
  if (static_cast<std::int64_t>(devices.size()) == world) return {};
  std::vector<bool> mask(static_cast<std::size_t>(world), false);
  for (DeviceId d : devices) mask[static_cast<std::size_t>(d)] = true;
  return mask;
}

/// The operator sequences every device runs, costed and labelled once.
struct PreparedModel {
  PreparedSequence layer_forward, layer_backward, layer_recompute;
  PreparedSequence embedding_forward, embedding_backward;
  PreparedSequence head_forward, head_backward_tied, head_backward_own;
};

class IterationLowering {
public:
  IterationLowering(const model::TransformerConfig& model, const model::TrainingPlan& plan,
                    const cost::OperatorCostModel& cost, const LoweringOptions& options)
      : model_(model), plan_(plan), cost_(cost), layout_(plan.parallelism),
        graph_(static_cast<DeviceId>(layout_.world_size())), devices_(simulated_devices(plan, options)),
        registry_(graph_, simulation_mask(devices_, layout_.world_size())),
        chunks_(model::partition_layers(model, plan)) {
    const auto shape = model::LayerShape::of(model, plan);
    ops_.layer_forward = detail::prepare(graph_, model::transformer_layer_forward(shape), cost);
    ops_.layer_backward = detail::prepare(graph_, model::transformer_layer_backward(shape), cost);
    ops_.layer_recompute = detail::prepare(graph_, model::transformer_layer_recompute(shape, plan.recompute), cost);
    ops_.embedding_forward = detail::prepare(graph_, model::embedding_forward(shape), cost);
    ops_.embedding_backward = detail::prepare(graph_, model::embedding_backward(shape), cost);
    ops_.head_forward = detail::prepare(graph_, model::output_head_forward(shape), cost);
    ops_.head_backward_tied = detail::prepare(graph_, model::output_head_backward(shape, false), cost);
    ops_.head_backward_own = detail::prepare(graph_, model::output_head_backward(shape, true), cost);
    activation_label_ = graph_.intern_label("pp.activation");
    gradient_label_ = graph_.intern_label("pp.gradient");
    gather_label_ = graph_.intern_label("pp.all_gather");
    embedding_sync_label_ = graph_.intern_label("embedding.grad.all_reduce");
    param_gather_label_ = graph_.intern_label("params.all_gather");
    layer_gather_label_ = graph_.intern_label("params.all_gather.layer");
    layer_parameters_ = model::count_parameters(model, plan.parallelism.tensor).per_layer;
  }

  TaskGraph run() && {
    for (DeviceId device : devices_) lower_device(device);
    assert(registry_.pending() == 0 && "a collective was not joined by all of its members");
    return std::move(graph_);
  }

private:
  struct DeviceState {
    DeviceProgram program;
    RankCoordinates at;
    detail::GradientSync gradients;
    bool gradients_final = false; // inside the backward whose gradients get reduced
  };

  [[nodiscard]] const model::ModelChunk& chunk_of(const DeviceState& s, std::int64_t slot) const {
    return chunks_[static_cast<std::size_t>(slot * plan_.parallelism.pipeline + s.at.pipeline)];
  }
  [[nodiscard]] DeviceId device_of_chunk(const DeviceState& s, std::int64_t chunk) const {
    RankCoordinates c = s.at;
    c.pipeline = chunk % plan_.parallelism.pipeline;
    return layout_.rank(c);
  }

  void lower_device(DeviceId device) {
    const RankCoordinates at = layout_.coordinates(device);
    DeviceState s{DeviceProgram(graph_, registry_, device), at,
                  detail::GradientSync(graph_, plan_, layout_.group(device, model::CommGroup::data))};
    const auto items = pipeline_schedule(plan_, at.pipeline);
    std::vector<std::size_t> last_backward(static_cast<std::size_t>(plan_.parallelism.virtual_stages), 0);
    for (std::size_t i = 0; i < items.size(); ++i)
      if (items[i].kind == WorkKind::backward) last_backward[static_cast<std::size_t>(items[i].chunk)] = i;
    std::vector<std::vector<TaskId>> received(items.size());
    post_receives(s, items, 0, received);
    std::size_t phase_start = 0;
    for (std::size_t i = 0; i < items.size(); ++i) {
      const WorkItem& item = items[i];
      gather_received(s, item, received[i]);
      if (item.kind == WorkKind::forward) {
        forward(s, item);
      } else {
        s.gradients_final = s.gradients.overlapped() && i == last_backward[static_cast<std::size_t>(item.chunk)];
        backward(s, item);
        if (s.gradients_final) s.gradients.flush(s.program);
        s.gradients_final = false;
      }
      if (!item.exchange_after) continue;
      for (std::size_t k = phase_start; k <= i; ++k) send_output(s, items[k]);
      phase_start = i + 1;
      post_receives(s, items, phase_start, received);
    }
    finish_iteration(s);
  }

  /// Posts the receives of the items from `first` up to the next exchange point.
  void post_receives(DeviceState& s, const std::vector<WorkItem>& items, std::size_t first,
                     std::vector<std::vector<TaskId>>& received) {
    const std::int64_t chunks = static_cast<std::int64_t>(chunks_.size());
    for (std::size_t k = first; k < items.size(); ++k) {
      const WorkItem& item = items[k];
      const std::int64_t chunk = chunk_of(s, item.chunk).chunk;
      const bool forward = item.kind == WorkKind::forward;
      const std::int64_t from = forward ? chunk - 1 : chunk + 1;
      if (from >= 0 && from < chunks) {
        const auto pass = forward ? model::Pass::forward : model::Pass::backward;
        received[k] =
            s.program.receive(boundary_spec(forward ? activation_label_ : gradient_label_, pass, item.micro_batch),
                              device_of_chunk(s, from), boundary_tag(chunk, item.micro_batch, pass));
      }
      if (item.exchange_after) break;
    }
  }

  /// Sends what an item produced to the neighbouring chunk: activations forward, gradients backward.
  void send_output(DeviceState& s, const WorkItem& item) {
    const std::int64_t chunks = static_cast<std::int64_t>(chunks_.size());
    const std::int64_t chunk = chunk_of(s, item.chunk).chunk;
    const bool forward = item.kind == WorkKind::forward;
    const std::int64_t to = forward ? chunk + 1 : chunk - 1;
    if (to < 0 || to >= chunks) return;
    const auto pass = forward ? model::Pass::forward : model::Pass::backward;
    s.program.send(boundary_spec(forward ? activation_label_ : gradient_label_, pass, item.micro_batch),
                   device_of_chunk(s, to), boundary_tag(to, item.micro_batch, pass));
  }

  /// With Megatron-LM's scatter/gather optimisation each tensor-parallel rank received 1/t of
  /// the tensor; the group all-gathers it before use (Narayanan et al. SC'21, section 4.1).
  void gather_received(DeviceState& s, const WorkItem& item, const std::vector<TaskId>& transfer) {
    if (transfer.empty() || plan_.parallelism.tensor == 1 || plan_.parallelism.sequence) return;
    const double elements = static_cast<double>(plan_.micro_batch * model_.seq_len * model_.hidden);
    const CollectiveSpec gather{model::Collective::all_gather,
                                model::CommGroup::tensor,
                                item.kind == WorkKind::forward ? model::Pass::forward : model::Pass::backward,
                                model::size_of(elements, plan_.dtype),
                                gather_label_,
                                -1,
                                static_cast<std::int32_t>(item.micro_batch)};
    s.program.collective(gather, layout_.group(s.program.device(), model::CommGroup::tensor), {}, transfer);
  }

  void emit(DeviceState& s, const PreparedSequence& steps, std::int64_t layer, std::int64_t micro_batch) {
    for (const auto& prepared : steps) {
      if (const auto* op = std::get_if<model::ComputeOp>(&prepared.step)) {
        Task task;
        task.pass = op->pass;
        task.layer = static_cast<std::int32_t>(layer);
        task.micro_batch = static_cast<std::int32_t>(micro_batch);
        task.label = prepared.label;
        task.duration = prepared.duration;
        task.flops = op->flops;
        task.bytes = op->bytes;
        task.model_flops = op->is_model_flop();
        s.program.compute(task);
        if (s.gradients_final && op->grad_params > 0) s.gradients.on_gradients_ready(s.program, op->grad_params);
      } else {
        const auto& c = std::get<model::CollectiveOp>(prepared.step);
        const CollectiveSpec spec{c.kind,
                                  c.group,
                                  c.pass,
                                  c.size,
                                  prepared.label,
                                  static_cast<std::int32_t>(layer),
                                  static_cast<std::int32_t>(micro_batch)};
        s.program.collective(spec, layout_.group(s.program.device(), c.group), CollectiveWait{c.overlapped_ops, false});
      }
    }
  }

  /// Activations and their gradients between stages: b s h elements, cut into t pieces with
  /// Megatron-LM's scatter/gather optimisation (each tensor-parallel rank sends 1/t and the
  /// receivers all-gather; Narayanan et al. SC'21, section 4.1), already 1/t under sequence parallelism.
  CollectiveSpec boundary_spec(std::uint32_t label, model::Pass pass, std::int64_t micro_batch) const {
    const double elements = static_cast<double>(plan_.micro_batch * model_.seq_len * model_.hidden);
    CollectiveSpec spec;
    spec.kind = model::Collective::send_recv;
    spec.group = model::CommGroup::pipeline;
    spec.pass = pass;
    spec.size = model::size_of(elements / static_cast<double>(plan_.parallelism.tensor), plan_.dtype);
    spec.label = label;
    spec.micro_batch = static_cast<std::int32_t>(micro_batch);
    return spec;
  }

  /// Names a message between stages: the activation or gradient of one micro-batch crossing
  /// the boundary in front of chunk `to_chunk`.
  std::uint32_t boundary_tag(std::int64_t to_chunk, std::int64_t micro_batch, model::Pass pass) const {
    return static_cast<std::uint32_t>((to_chunk * plan_.micro_batches() + micro_batch) * 2 +
                                      (pass == model::Pass::backward ? 1 : 0));
  }

  void forward(DeviceState& s, const WorkItem& item) {
    const auto& chunk = chunk_of(s, item.chunk);
    if (chunk.has_embedding) emit(s, ops_.embedding_forward, -1, item.micro_batch);
    for (std::int64_t l = 0; l < chunk.layers; ++l) {
      gather_layer_weights(s, l, chunk.layers, compute_ops(ops_.layer_forward), item.micro_batch);
      emit(s, ops_.layer_forward, chunk.first_layer + l, item.micro_batch);
    }
    if (chunk.has_output_head) emit(s, ops_.head_forward, -1, item.micro_batch);
  }

  void backward(DeviceState& s, const WorkItem& item) {
    const auto& chunk = chunk_of(s, item.chunk);
    // The output layer reports the tied word-embedding gradient only when the embedding is elsewhere.
    if (chunk.has_output_head)
      emit(s, chunks_.front().stage == chunk.stage ? ops_.head_backward_tied : ops_.head_backward_own, -1,
           item.micro_batch);
    for (std::int64_t l = chunk.layers - 1; l >= 0; --l) {
      gather_layer_weights(s, chunk.layers - 1 - l, chunk.layers,
                           compute_ops(ops_.layer_recompute) + compute_ops(ops_.layer_backward), item.micro_batch);
      emit(s, ops_.layer_recompute, chunk.first_layer + l, item.micro_batch);
      emit(s, ops_.layer_backward, chunk.first_layer + l, item.micro_batch);
    }
    if (chunk.has_embedding) emit(s, ops_.embedding_backward, -1, item.micro_batch);
  }

  static int compute_ops(const PreparedSequence& steps) {
    int n = 0;
    for (const auto& p : steps) n += std::holds_alternative<model::ComputeOp>(p.step) ? 1 : 0;
    return n;
  }

  /// ZeRO-3 / FSDP: each layer's weights are all-gathered from the data-parallel replicas before
  /// it runs, forward and backward, in every micro-batch; the gather of the next layer is
  /// prefetched while this one computes (PyTorch FSDP forward/backward prefetch; Rajbhandari
  /// et al. SC'20, section 5.3). `position` counts layers in execution order.
  void gather_layer_weights(DeviceState& s, std::int64_t position, std::int64_t layers, int ops_per_layer,
                            std::int64_t micro_batch) {
    if (plan_.optimizer.sharding != model::OptimizerSharding::full || plan_.parallelism.data == 1) return;
    const auto group = layout_.group(s.program.device(), model::CommGroup::data);
    CollectiveSpec spec{model::Collective::all_gather,
                        model::CommGroup::data,
                        model::Pass::forward,
                        units::Bytes(static_cast<double>(layer_parameters_) * s.gradients.element_size()),
                        layer_gather_label_,
                        -1,
                        static_cast<std::int32_t>(micro_batch)};
    if (position == 0) s.program.collective(spec, group, {0, false});
    if (position + 1 < layers) s.program.collective(spec, group, {ops_per_layer, false});
  }

  std::int64_t gradient_parameters_of_stage(const DeviceState& s) const;
  void finish_iteration(DeviceState& s);

  const model::TransformerConfig& model_;
  const model::TrainingPlan& plan_;
  const cost::OperatorCostModel& cost_;
  RankLayout layout_;
  TaskGraph graph_;
  std::vector<DeviceId> devices_;
  CollectiveRegistry registry_;
  std::vector<model::ModelChunk> chunks_;
  PreparedModel ops_;
  std::uint32_t activation_label_ = 0, gradient_label_ = 0, gather_label_ = 0;
  std::uint32_t embedding_sync_label_ = 0, param_gather_label_ = 0, layer_gather_label_ = 0;
  std::int64_t layer_parameters_ = 0;
};

/// Parameters whose gradients this device holds: one micro-batch's backward finalises each once.
std::int64_t IterationLowering::gradient_parameters_of_stage(const DeviceState& s) const {
  std::int64_t total = 0;
  const auto count = [&](const PreparedSequence& steps) {
    std::int64_t n = 0;
    for (const auto& p : steps)
      if (const auto* op = std::get_if<model::ComputeOp>(&p.step)) n += op->grad_params;
    return n;
  };
  for (std::int64_t slot = 0; slot < plan_.parallelism.virtual_stages; ++slot) {
    const auto& chunk = chunk_of(s, slot);
    total += chunk.layers * count(ops_.layer_backward);
    if (chunk.has_embedding) total += count(ops_.embedding_backward);
    if (chunk.has_output_head)
      total += count(chunks_.front().stage == chunk.stage ? ops_.head_backward_tied : ops_.head_backward_own);
  }
  return total;
}

void IterationLowering::finish_iteration(DeviceState& s) {
  const std::int64_t parameters = gradient_parameters_of_stage(s);
  if (!s.gradients.overlapped()) s.gradients.reduce_all(s.program, parameters);
  s.program.wait_for_stream(Stream::data_comm);
  // Tied word embedding on two stages: sum its gradient between the first and last stage
  // (Megatron-LM's embedding group; Shoeybi et al. 2019).
  const auto& first = chunks_.front();
  const auto& last = chunks_.back();
  if (first.stage != last.stage && (s.at.pipeline == first.stage || s.at.pipeline == last.stage)) {
    const DeviceId a = device_of_chunk(s, first.chunk);
    const DeviceId b = device_of_chunk(s, last.chunk);
    const double elements =
        static_cast<double>(model::local_vocab(model_.vocab, plan_.parallelism.tensor) * model_.hidden);
    const CollectiveSpec spec{model::Collective::all_reduce,
                              model::CommGroup::pipeline,
                              model::Pass::backward,
                              units::Bytes(elements * s.gradients.element_size()),
                              embedding_sync_label_,
                              -1,
                              -1};
    s.program.collective(spec, {a, b}, {});
  }
  const bool sharded = plan_.optimizer.sharding != model::OptimizerSharding::none;
  const std::int64_t d = plan_.parallelism.data;
  const std::int64_t updated = sharded ? (parameters + d - 1) / d : parameters;
  emit(s, detail::prepare(graph_, model::optimizer_steps(updated, plan_.optimizer.kind, plan_.dtype), cost_), -1, -1);
  if (sharded && d > 1) {
    // Every replica needs the whole updated weights again (ZeRO; Megatron-LM distributed optimizer).
    const CollectiveSpec spec{model::Collective::all_gather,
                              model::CommGroup::data,
                              model::Pass::optimizer,
                              units::Bytes(static_cast<double>(parameters) * s.gradients.element_size()),
                              param_gather_label_,
                              -1,
                              -1};
    s.program.collective(spec, layout_.group(s.program.device(), model::CommGroup::data), {});
  }
}

} // namespace

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
  return IterationLowering(model, plan, cost, options).run();
}

} // namespace twocs::lowering
