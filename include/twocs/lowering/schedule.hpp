// The order in which one pipeline stage runs forward and backward passes of its micro-batches
// (Megatron-LM's schedules; Narayanan et al. SC'21, section 2.2):
//   gpipe:            all forwards, then all backwards (Huang et al. 2019);
//   1f1b:             p - i - 1 warm-up forwards on stage i, then one forward / one backward,
//                     then the remaining backwards (PipeDream-Flush; Narayanan et al. 2021);
//   interleaved-1f1b: v model chunks per stage, 2 (p - i - 1) + (v - 1) p warm-up forwards,
//                     chunks taken in groups of p micro-batches;
//   zb-h1:            1F1B with each backward split into B (input gradient) and W (weight
//                     gradient), stage i running the W of micro-batch k after the B of k + i
//                     (Qi et al., "Zero Bubble Pipeline Parallelism", ICLR 2024, ZB-H1);
//   dualpipe:         two model chunks per rank, micro-batches fed from both ends, a forward and
//                     a backward chunk overlapped (DeepSeek-V3 report, section 3.2.1; dualpipe.py).
// With p = 1 every schedule is forward then backward per micro-batch (gradient accumulation).
#pragma once

#include <cstdint>
#include <vector>

#include <twocs/model/training_plan.hpp>

namespace twocs::lowering {

/// weight: the weight-gradient GEMMs of a backward that deferred them (ZB's W pass).
enum class WorkKind { forward, backward, weight };

struct WorkItem {
  WorkKind kind = WorkKind::forward;
  std::int64_t micro_batch = 0;
  std::int64_t chunk = 0; // model chunk of this stage, 0 .. v - 1 (global chunk = chunk * p + stage)
  /// Activations and gradients are exchanged with the neighbouring stages after this item, in
  /// one batch: what the items since the last exchange produced, and what the items up to the
  /// next exchange need (Megatron-LM's batched p2p calls: send_forward_recv_backward for 1F1B,
  /// send_forward_backward_recv_forward_backward after each forward-backward pair when interleaved).
  bool exchange_after = true;
  /// A steady-state forward that runs merged with the backward after it, layer by layer
  /// (training.overlap.expert_comm: Megatron-Core's combined 1F1B, combined_1f1b.py).
  bool merged_with_next = false;
  /// A backward that computes the input gradient only (ZB's B pass); a later `weight` item of the
  /// same micro-batch and chunk runs its weight-gradient GEMMs.
  bool weight_deferred = false;
};

[[nodiscard]] std::vector<WorkItem> pipeline_schedule(const model::TrainingPlan& plan, std::int64_t stage);

} // namespace twocs::lowering
