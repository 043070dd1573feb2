#include <twocs/projection/closed_form.hpp>

#include <algorithm>
#include <variant>

#include <twocs/model/layer_ops.hpp>
#include <twocs/model/parameters.hpp>
#include <twocs/model/stage_partition.hpp>

namespace twocs::projection {
namespace {

using model::CommGroup;

std::int64_t group_size(CommGroup g, const model::Parallelism& p) {
  switch (g) {
  case CommGroup::tensor: return p.tensor;
  case CommGroup::pipeline: return p.pipeline;
  case CommGroup::data: return p.data * p.context; // Megatron-Core's data group with context parallelism
  case CommGroup::expert: return p.expert;
  case CommGroup::context: return p.context;
  }
  return 1;
}

struct Exchange {
  units::Bytes bytes;
  units::Seconds time;
};

/// DeepEP's dispatch or combine over `n` adjacent expert ranks on an idle network (lowering:
/// forwarded_dispatch_schedule): each rank's messages to the other nodes over its NIC and to the
/// ranks of its node over the node interconnect, both at once, so the slower bounds it.
Exchange forwarded_dispatch(const model::TokenRouting& r, std::int64_t n, const hardware::ClusterSpec& cluster) {
  const std::int64_t g = n % cluster.node.devices == 0 ? cluster.node.devices : n; // ranks per node
  const model::DispatchShares d = model::dispatch_shares(r, n, g);
  const units::Bytes nvlink = d.to_each_rank * static_cast<double>(g - 1);
  const units::Bytes network = d.to_each_node * static_cast<double>(d.nodes - 1);
  const auto over = [](units::Bytes bytes, const hardware::LinkSpec& link) {
    return bytes.value() > 0 ? bytes / (link.bandwidth * link.efficiency) + link.latency : units::Seconds(0);
  };
  return {nvlink + network, units::max(over(nvlink, cluster.node.interconnect), over(network, cluster.network.link))};
}

/// Adds the steps' compute and communication to `work`.
void add_steps(Work& work, const model::StepSequence& steps, const model::TrainingPlan& plan,
               const hardware::ClusterSpec& cluster, const cost::OperatorCostModel& cost) {
  for (const model::Step& step : steps) {
    if (const auto* op = std::get_if<model::ComputeOp>(&step)) {
      work.flops += op->flops;
      work.compute += cost.duration(*op);
      continue;
    }
    const auto& c = std::get<model::CollectiveOp>(step);
    const std::size_t g = static_cast<std::size_t>(c.group);
    const std::int64_t n = group_size(c.group, plan.parallelism);
    if (n <= 1) continue;
    if (c.routing) { // bytes the rank sends (collective buffers are the others' measure)
      const Exchange e = forwarded_dispatch(*c.routing, n, cluster);
      work.comm_bytes[g] += e.bytes;
      work.comm_time[g] += e.time;
      continue;
    }
    work.comm_bytes[g] += c.size;
    work.comm_time[g] += ring_time(c.kind, c.size, n, group_link(c.group, plan.parallelism, cluster));
  }
}

/// Sends between pipeline stages: each micro-batch's activation forward and its gradient
/// backward, once per model chunk (b s h elements, / t with sequence parallelism).
Work pipeline_transfers(const model::LayerShape& shape, const model::TrainingPlan& plan,
                        const hardware::ClusterSpec& cluster, std::int64_t micro_batches) {
  Work w;
  const auto& p = plan.parallelism;
  if (p.pipeline <= 1) return w;
  const double elements = static_cast<double>(shape.micro_batch * shape.model.seq_len * shape.model.hidden) /
                          static_cast<double>(p.context) / (p.sequence ? static_cast<double>(p.tensor) : 1.0);
  const units::Bytes size = model::size_of(elements, model::activation_dtype(plan.dtype));
  const double sends = 2.0 * static_cast<double>(micro_batches * p.virtual_stages);
  const std::size_t g = static_cast<std::size_t>(CommGroup::pipeline);
  w.comm_bytes[g] = size * sends;
  w.comm_time[g] =
      ring_time(model::Collective::send_recv, size, 2, group_link(CommGroup::pipeline, p, cluster)) * sends;
  return w;
}

/// The data-parallel gradient all-reduce (or reduce-scatter + all-gather with sharding) of the
/// device's parameters, in the training dtype as the lowering buckets them.
Work data_parallel_sync(std::int64_t parameters, const model::TrainingPlan& plan,
                        const hardware::ClusterSpec& cluster) {
  Work w;
  const auto& p = plan.parallelism;
  const std::int64_t n = group_size(CommGroup::data, p);
  if (n <= 1) return w;
  const units::Bytes size(static_cast<double>(parameters) * (plan.dtype == model::Dtype::fp32 ? 4.0 : 2.0));
  const std::size_t g = static_cast<std::size_t>(CommGroup::data);
  w.comm_bytes[g] = size;
  w.comm_time[g] = ring_time(model::Collective::all_reduce, size, n, group_link(CommGroup::data, p, cluster));
  return w;
}

} // namespace

Work& Work::operator+=(const Work& o) {
  flops += o.flops;
  compute += o.compute;
  for (std::size_t g = 0; g < model::comm_group_count; ++g) {
    comm_bytes[g] += o.comm_bytes[g];
    comm_time[g] += o.comm_time[g];
  }
  return *this;
}

units::Bytes Work::total_bytes() const {
  units::Bytes sum;
  for (const auto& b : comm_bytes) sum += b;
  return sum;
}

units::Seconds Work::total_comm() const {
  units::Seconds sum;
  for (const auto& t : comm_time) sum += t;
  return sum;
}

Work Work::times(double count) const {
  Work w = *this;
  w.flops = flops * count;
  w.compute = compute * count;
  for (std::size_t g = 0; g < model::comm_group_count; ++g) {
    w.comm_bytes[g] = comm_bytes[g] * count;
    w.comm_time[g] = comm_time[g] * count;
  }
  return w;
}

units::Seconds ring_time(model::Collective kind, units::Bytes size, std::int64_t n, const hardware::LinkSpec& link) {
  if (n <= 1) return units::Seconds(0);
  const units::ByteRate rate = link.bandwidth * link.efficiency;
  const double steps = static_cast<double>(n - 1);
  const double share = steps / static_cast<double>(n);
  switch (kind) {
  case model::Collective::all_reduce: return size * (2 * share) / rate + link.latency * (2 * steps);
  case model::Collective::reduce_scatter:
  case model::Collective::all_gather: return size * share / rate + link.latency * steps;
  case model::Collective::send_recv:
  case model::Collective::ring_exchange: return size / rate + link.latency;
  case model::Collective::all_to_all: return size * share / rate + link.latency * steps; // pairwise
  }
  return units::Seconds(0);
}

hardware::LinkSpec group_link(CommGroup group, const model::Parallelism& p, const hardware::ClusterSpec& cluster) {
  // Megatron rank order: rank = tp + t (cp + c (dp + d pp)), so a group's ranks span these many devices.
  const std::int64_t span = group == CommGroup::tensor    ? p.tensor
                            : group == CommGroup::context ? p.tensor * p.context
                            : group == CommGroup::expert  ? p.expert // adjacent ranks (rank_layout.cpp)
                            : group == CommGroup::data    ? p.tensor * p.context * p.data
                                                          : p.tensor * p.context * p.data * p.pipeline;
  return span <= cluster.node.devices ? cluster.node.interconnect : cluster.network.link;
}

namespace {

/// One layer of `shape`'s kind, one micro-batch: forward, recomputation, backward.
Work layer_work(const model::LayerShape& shape, const model::TrainingPlan& plan, const hardware::ClusterSpec& cluster,
                const cost::OperatorCostModel& cost) {
  Work w;
  add_steps(w, model::transformer_layer_forward(shape), plan, cluster, cost);
  // training.recompute_layers: only a share of the layers recomputes; the mean layer carries it.
  const auto recompute = model::transformer_layer_recompute(shape, plan.recompute, plan.recompute_modules);
  const double share = model::recomputed_share(shape.model, plan);
  if (share == 1.0) {
    add_steps(w, recompute, plan, cluster, cost);
  } else if (share > 0) {
    Work recomputed;
    add_steps(recomputed, recompute, plan, cluster, cost);
    w += recomputed.times(share);
  }
  add_steps(w, model::transformer_layer_backward(shape), plan, cluster, cost);
  return w;
}

/// The model's (MoE) layer averaged over its attention pattern: with model.full_attention_every
/// = K, K - 1 windowed layers and one over the whole prefix.
Work mean_layer_work(const model::LayerShape& shape, const model::TrainingPlan& plan,
                     const hardware::ClusterSpec& cluster, const cost::OperatorCostModel& cost) {
  const std::int64_t k = shape.model.sliding_window > 0 ? shape.model.full_attention_every : 0;
  if (k <= 1) return layer_work(shape, plan, cluster, cost);
  model::LayerShape full = shape;
  full.full_attention = true;
  Work w = layer_work(shape, plan, cluster, cost).times(static_cast<double>(k - 1));
  w += layer_work(full, plan, cluster, cost);
  return w.times(1.0 / static_cast<double>(k));
}

/// The layers of the device with the most work. A mixed model's dense-FFN layers come first
/// (model.moe.dense_layers), so the first stage holds them and every other stage, if any, only
/// the model's MoE layers: the busier of the two.
Work busiest_stage(const Projection& out, const model::TransformerConfig& model, const model::LayerShape& shape,
                   const model::TrainingPlan& plan, const hardware::ClusterSpec& cluster,
                   const cost::OperatorCostModel& cost) {
  const std::int64_t per_device = out.layers_per_device;
  const std::int64_t dense = model.moe ? std::min(model.moe->dense_layers, per_device) : 0;
  if (dense == 0) return out.layer.times(static_cast<double>(per_device));
  Work first = layer_work(shape.for_layer(0), plan, cluster, cost).times(static_cast<double>(dense));
  first += out.layer.times(static_cast<double>(per_device - dense));
  if (model.layers <= per_device) return first; // one stage
  const Work moe_only = out.layer.times(static_cast<double>(per_device));
  const auto total = [](const Work& w) { return w.compute + w.total_comm(); };
  return total(moe_only) > total(first) ? moe_only : first;
}

/// The multi-token-prediction depths the last stage runs beside the output head: a layer of the
/// last layer's kind, the input projection and the depth's loss each.
void add_mtp_depths(Work& micro, const model::TransformerConfig& model, const model::LayerShape& shape,
                    const model::TrainingPlan& plan, const hardware::ClusterSpec& cluster,
                    const cost::OperatorCostModel& cost) {
  if (model.mtp_layers == 0) return;
  Work depth = layer_work(shape.for_layer(model.layers), plan, cluster, cost);
  add_steps(depth, model::mtp_input_forward(shape), plan, cluster, cost);
  // The last stage holds the input embedding only without pipeline parallelism.
  add_steps(depth, model::mtp_input_backward(shape, model.mtp_keeps_embedding_copy(plan.parallelism.pipeline == 1)),
            plan, cluster, cost);
  add_steps(depth, model::mtp_head_forward(shape), plan, cluster, cost);
  add_steps(depth, model::mtp_head_backward(shape), plan, cluster, cost);
  micro += depth.times(static_cast<double>(model.mtp_layers));
}

/// The optimizer's steps with the scalar all-reduce over the tensor and pipeline groups that the
/// lowering puts after its gradient norm and its fp16 overflow check (one fp32 each,
/// src/lowering/optimizer_step.cpp, model_parallel_scalar_all_reduce).
model::StepSequence with_scalar_all_reduces(const model::StepSequence& optimizer) {
  model::StepSequence steps;
  for (const auto& step : optimizer) {
    steps.push_back(step);
    const auto* op = std::get_if<model::ComputeOp>(&step);
    if (op == nullptr || !model::reduces_model_parallel_scalar(*op)) continue;
    for (const auto group : {model::CommGroup::tensor, model::CommGroup::pipeline}) {
      model::CollectiveOp scalar;
      scalar.name = op->name + ".all_reduce";
      scalar.kind = model::Collective::all_reduce;
      scalar.group = group;
      scalar.pass = model::Pass::optimizer;
      scalar.size = units::Bytes(4);
      steps.emplace_back(std::move(scalar));
    }
  }
  return steps;
}

} // namespace

Projection project(const model::TransformerConfig& model, const model::TrainingPlan& plan,
                   const hardware::ClusterSpec& cluster, const cost::OperatorCostModel& cost) {
  const model::LayerShape shape = model::LayerShape::of(model, plan, cost.fp8_gemms_any_layout());
  const auto& p = plan.parallelism;
  Projection out;
  out.micro_batches = plan.global_batch / (p.data * plan.micro_batch);
  out.layers_per_device = (model.layers + p.pipeline - 1) / p.pipeline;
  out.layer = mean_layer_work(shape, plan, cluster, cost);
  out.stage = busiest_stage(out, model, shape, plan, cluster, cost);

  // The device with the most work: its layers, the output head (last stage), and with one
  // stage also the embedding; every micro-batch; then the gradient sync and optimizer step.
  Work micro = out.stage;
  add_steps(micro, model::output_head_forward(shape), plan, cluster, cost);
  add_steps(micro, model::output_head_backward(shape, p.pipeline == 1), plan, cluster, cost);
  add_mtp_depths(micro, model, shape, plan, cluster, cost);
  if (p.pipeline == 1) {
    add_steps(micro, model::embedding_forward(shape), plan, cluster, cost);
    add_steps(micro, model::embedding_backward(shape), plan, cluster, cost);
  }
  out.iteration = micro.times(static_cast<double>(out.micro_batches));
  out.iteration += pipeline_transfers(shape, plan, cluster, out.micro_batches);
  // The parameters of the first stage's layers, E / ep experts per MoE layer (the busiest stage
  // differs from it only by a mixed model's dense layers, a small share of the weights).
  const auto counts = model::count_parameters(model, p.tensor, p.expert);
  const std::int64_t parameters =
      counts.layer_range(0, std::min(out.layers_per_device, model.layers)) + counts.embedding + counts.final_norm;
  out.iteration += data_parallel_sync(parameters, plan, cluster);
  const bool sharded = plan.optimizer.sharding != model::OptimizerSharding::none;
  add_steps(out.iteration,
            with_scalar_all_reduces(model::optimizer_steps(sharded ? parameters / (p.data * p.context) : parameters,
                                                           plan.optimizer.kind, plan.dtype)),
            plan, cluster, cost);

  const units::Seconds comm = out.iteration.total_comm();
  out.time_no_overlap = out.iteration.compute + comm;
  out.time_full_overlap = std::max(out.iteration.compute, comm);
  const double bytes = out.iteration.total_bytes().value();
  out.flops_per_byte = bytes > 0 ? out.iteration.flops.value() / bytes : 0;
  out.comm_to_compute_time = comm / out.iteration.compute;
  out.comm_fraction_no_overlap = comm / out.time_no_overlap;
  return out;
}

} // namespace twocs::projection
