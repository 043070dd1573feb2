#include <twocs/lowering/schedule.hpp>

#include <algorithm>
#include <cassert>

#include "dualpipe_schedule.hpp"

namespace twocs::lowering {
namespace {

/// The k-th forward or backward chunk-pass of the interleaved schedule (Megatron-LM
/// get_model_chunk_id and its micro-batch numbering): groups of p micro-batches per chunk.
WorkItem interleaved_item(std::int64_t k, WorkKind kind, std::int64_t p, std::int64_t v) {
  const std::int64_t in_group = k % (p * v);
  std::int64_t chunk = in_group / p;
  if (kind == WorkKind::backward) chunk = v - 1 - chunk;
  const std::int64_t micro_batch = (k / (p * v)) * p + k % p;
  return {kind, micro_batch, chunk};
}

/// How the steady state runs its forward/backward pairs.
struct Steady {
  bool paired = false; // exchange with the neighbours only after each pair (the interleaved schedule)
  bool merged = false; // each pair is one merged step (combined 1F1B), after one more warm-up forward
};

/// Warm-up forwards, steady forward/backward pairs, cool-down backwards.
std::vector<WorkItem> warmup_steady_cooldown(std::int64_t total, std::int64_t warmup, auto&& forward, auto&& backward,
                                             Steady steady = {}) {
  // Megatron-Core schedules one extra warm-up forward for merged steps (schedules.py,
  // get_pp_rank_microbatches), so that a merged forward and backward never depend on each other.
  if (steady.merged) warmup = std::min(warmup + 1, total);
  std::vector<WorkItem> items;
  items.reserve(static_cast<std::size_t>(2 * total));
  for (std::int64_t k = 0; k < warmup; ++k) items.push_back(forward(k));
  for (std::int64_t k = 0; k < total - warmup; ++k) {
    items.push_back(forward(warmup + k));
    items.back().exchange_after = !steady.paired && !steady.merged;
    items.back().merged_with_next = steady.merged;
    items.push_back(backward(k));
  }
  for (std::int64_t k = total - warmup; k < total; ++k) items.push_back(backward(k));
  return items;
}

/// The W pass of micro-batch `k`. One between backwards exchanges after it, so that the receives
/// the next B or F waits for are posted after the W, as ZB-H1's Megatron-LM patch calls
/// send_backward, then the W, then the receive (sail-sg/zero-bubble-pipeline-parallelism,
/// branch zb-h1-quick-start, schedules.py). Forwards exchange after themselves too (Megatron-LM's
/// send_forward_recv_backward), so that no forward waits for the next backward's gradient.
WorkItem weight_pass(std::int64_t k, bool exchange_after) {
  WorkItem w{WorkKind::weight, k, 0};
  w.exchange_after = exchange_after;
  return w;
}

/// ZB-H1 (Qi et al., ICLR 2024, section 2.1): the 1F1B order with stage i's W passes deferred by
/// i micro-batches, the W of micro-batch k after the B of k + i and the last i at the end, so
/// that every stage holds the p micro-batches stage 0 holds in 1F1B and the B passes travel back
/// without waiting for W. Stage 0 defers none: its backwards stay whole, so p = 1 is 1F1B.
std::vector<WorkItem> zero_bubble_h1(const std::vector<WorkItem>& one_f_one_b, std::int64_t stage, std::int64_t m) {
  std::vector<WorkItem> items;
  items.reserve(one_f_one_b.size() + static_cast<std::size_t>(m));
  for (WorkItem item : one_f_one_b) {
    item.exchange_after = true;
    if (item.kind == WorkKind::backward) item.weight_deferred = stage > 0;
    items.push_back(item);
    if (item.kind == WorkKind::backward && stage > 0 && item.micro_batch >= stage)
      items.push_back(weight_pass(item.micro_batch - stage, true));
  }
  for (std::int64_t k = std::max<std::int64_t>(m - stage, 0); stage > 0 && k < m; ++k)
    items.push_back(weight_pass(k, false));
  return items;
}

} // namespace

std::vector<WorkItem> pipeline_schedule(const model::TrainingPlan& plan, std::int64_t stage) {
  const std::int64_t p = plan.parallelism.pipeline;
  const std::int64_t v = plan.parallelism.virtual_stages;
  const std::int64_t m = plan.micro_batches();
  assert(stage >= 0 && stage < p && m >= 1);
  const auto forward = [](std::int64_t k) { return WorkItem{WorkKind::forward, k, 0}; };
  const auto backward = [](std::int64_t k) { return WorkItem{WorkKind::backward, k, 0}; };
  const bool merged = plan.overlap.expert_comm;
  switch (plan.pipeline_schedule) {
  case model::PipelineSchedule::gpipe: return warmup_steady_cooldown(m, m, forward, backward);
  case model::PipelineSchedule::zb_h1:
    return zero_bubble_h1(warmup_steady_cooldown(m, std::min(p - stage - 1, m), forward, backward), stage, m);
  case model::PipelineSchedule::dualpipe: return detail::dualpipe_schedule(p, m, stage);
  case model::PipelineSchedule::one_f_one_b:
  case model::PipelineSchedule::interleaved_one_f_one_b: {
    // With one chunk per stage the interleaved schedule is 1F1B.
    if (v == 1) return warmup_steady_cooldown(m, std::min(p - stage - 1, m), forward, backward, {false, merged});
    const std::int64_t total = m * v;
    const std::int64_t warmup = m == p ? total : std::min((p - stage - 1) * 2 + (v - 1) * p, total);
    return warmup_steady_cooldown(
        total, warmup, [&](std::int64_t k) { return interleaved_item(k, WorkKind::forward, p, v); },
        [&](std::int64_t k) { return interleaved_item(k, WorkKind::backward, p, v); }, {true, merged});
  }
  }
  return {};
}

} // namespace twocs::lowering
