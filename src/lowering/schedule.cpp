#include <twocs/lowering/schedule.hpp>

#include <algorithm>
#include <cassert>

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
