// `twocs analyze`: the paper's algorithmic axis in closed form, without simulation. For one
// device of a plan: the FLOPs and kernel time of its compute, and the bytes and ring time of
// its tensor-, pipeline- and data-parallel communication, per layer and per iteration, and the
// iteration time with no overlap (compute + communication) and with full overlap
// (max(compute, communication)). Pure functions of the inputs; thousands of plans per second.
#pragma once

#include <array>
#include <cstdint>

#include <twocs/cost/operator_cost_model.hpp>
#include <twocs/hardware/cluster.hpp>
#include <twocs/model/operator.hpp>
#include <twocs/model/training_plan.hpp>
#include <twocs/model/transformer.hpp>
#include <twocs/units/quantity.hpp>

namespace twocs::projection {

/// Indexed by model::CommGroup (tensor, pipeline, data, expert, context).
using PerGroupBytes = std::array<units::Bytes, model::comm_group_count>;
using PerGroupTime = std::array<units::Seconds, model::comm_group_count>;

/// Work of one device over some part of the iteration.
struct Work {
  units::Flops flops;         // every kernel's arithmetic, recomputation included
  units::Seconds compute;     // the kernels' durations by the platform's operator model
  PerGroupBytes comm_bytes{}; // collective buffers per device (the all-reduce input, ...)
  PerGroupTime comm_time{};   // ring time of those collectives on an idle network

  [[nodiscard]] units::Bytes total_bytes() const;
  [[nodiscard]] units::Seconds total_comm() const;
  Work& operator+=(const Work& other);
  [[nodiscard]] Work times(double count) const;
};

struct Projection {
  Work layer;     // one transformer layer, one micro-batch: forward, backward, recomputation
  Work stage;     // the layers of the device with the most work, one micro-batch (a mixed
                  // model's dense-FFN layers counted as such)
  Work iteration; // that device, the whole iteration, optimizer step included
  std::int64_t micro_batches = 0;
  std::int64_t layers_per_device = 0;
  units::Seconds time_no_overlap;      // compute + communication
  units::Seconds time_full_overlap;    // max(compute, communication)
  double flops_per_byte = 0;           // iteration FLOPs / communicated bytes (infinite: 0 bytes -> 0)
  double comm_to_compute_time = 0;     // communication time / compute time
  double comm_fraction_no_overlap = 0; // communication / (compute + communication)
};

/// Ring time of one collective of `size` bytes per device over `n` devices whose slowest link
/// has `link` (bandwidth times its efficiency, latency): all-reduce 2(n-1)/n S/B + 2(n-1)L,
/// reduce-scatter and all-gather (n-1)/n S/B + (n-1)L, send/recv and a ring exchange S/B + L
/// (Thakur et al., "Optimization of Collective Communication Operations in MPICH", 2005).
[[nodiscard]] units::Seconds ring_time(model::Collective kind, units::Bytes size, std::int64_t n,
                                       const hardware::LinkSpec& link);

/// The link a group's ring crosses: the node interconnect when the group fits in a node under
/// Megatron rank order (tensor innermost, then context, data, pipeline), else the NIC.
[[nodiscard]] hardware::LinkSpec group_link(model::CommGroup group, const model::Parallelism& p,
                                            const hardware::ClusterSpec& cluster);

[[nodiscard]] Projection project(const model::TransformerConfig& model, const model::TrainingPlan& plan,
                                 const hardware::ClusterSpec& cluster, const cost::OperatorCostModel& cost);

} // namespace twocs::projection
