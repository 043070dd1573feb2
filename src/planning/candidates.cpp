#include <twocs/planning/candidates.hpp>

#include <algorithm>
#include <array>

#include <fmt/format.h>

#include <twocs/analysis/summarize.hpp>
#include <twocs/error.hpp>
#include <twocs/hardware/validate.hpp>
#include <twocs/model/stage_partition.hpp>
#include <twocs/model/validate.hpp>
#include <twocs/planning/estimate.hpp>
#include <twocs/projection/closed_form.hpp>

namespace twocs::planning {
namespace {

using model::PipelineSchedule;
using model::Recompute;

constexpr std::array recomputations = {Recompute::none, Recompute::selective, Recompute::full};
// Micro-batch sizes of Megatron-LM's published runs (Narayanan et al. SC'21, Table 1: 1 to 8).
constexpr std::array<std::int64_t, 4> micro_batch_sizes = {1, 2, 4, 8};
// Model chunks per stage: interleaving beyond 4 gains little bubble and costs more
// point-to-point traffic (Narayanan et al. SC'21, Figure 12).
constexpr std::array<std::int64_t, 3> virtual_stage_counts = {1, 2, 4};
// Context-parallel degrees: Megatron-Core splits each sequence into 2 cp chunks and needs fused
// attention (model/validate.cpp refuses the rest); Llama 3 405B ran cp up to 16 at 128k tokens
// (Dubey et al. 2024, Table 4), training at 8k up to cp 2 (NeMo performance summary).
constexpr std::array<std::int64_t, 4> context_degrees = {1, 2, 4, 8};

/// One combination the search tries.
struct Degrees {
  std::int64_t tensor, pipeline, context, data, virtual_stages, micro_batch;
};

std::vector<std::int64_t> divisors(std::int64_t n, std::int64_t at_most) {
  std::vector<std::int64_t> out;
  for (std::int64_t d = 1; d <= std::min(n, at_most); ++d)
    if (n % d == 0) out.push_back(d);
  return out;
}

std::vector<std::int64_t> micro_batches(const model::TrainingPlan& base) {
  std::vector<std::int64_t> out(micro_batch_sizes.begin(), micro_batch_sizes.end());
  if (std::find(out.begin(), out.end(), base.micro_batch) == out.end()) out.push_back(base.micro_batch);
  return out;
}

bool can_interleave(const model::TrainingPlan& base) {
  // zb-h1 and dualpipe run one chunk per stage (two per rank for dualpipe): the search keeps them.
  const auto s = base.pipeline_schedule;
  return (s == PipelineSchedule::one_f_one_b || s == PipelineSchedule::interleaved_one_f_one_b) &&
         base.framework == model::Framework::megatron_lm;
}

/// The plan of `base` with these degrees, or nullopt with `why` set when it is not a valid plan.
std::optional<model::TrainingPlan> make_plan(const model::TransformerConfig& model, const model::TrainingPlan& base,
                                             const hardware::ClusterSpec& cluster, const Degrees& degrees,
                                             Recompute recompute, std::string& why) {
  model::TrainingPlan plan = base;
  auto& p = plan.parallelism;
  p.tensor = degrees.tensor;
  p.pipeline = degrees.pipeline;
  p.context = degrees.context;
  p.data = degrees.data;
  p.virtual_stages = degrees.virtual_stages;
  p.stage_layers.clear();
  // Megatron-Core needs sequence parallelism for MoE with tensor parallelism (model/validate.cpp).
  p.sequence = p.tensor > 1 && (base.parallelism.sequence || model.moe.has_value());
  plan.micro_batch = degrees.micro_batch;
  plan.recompute = recompute;
  if (p.virtual_stages > 1)
    plan.pipeline_schedule = PipelineSchedule::interleaved_one_f_one_b;
  else if (plan.pipeline_schedule == PipelineSchedule::interleaved_one_f_one_b)
    plan.pipeline_schedule = PipelineSchedule::one_f_one_b;
  try {
    model::validate(model, plan);
    hardware::validate_fit(cluster, plan);
    (void)model::partition_layers(model, plan); // an uneven split that leaves a chunk empty
  } catch (const InputError& e) {
    why = fmt::format("{}: {}", describe(plan), e.problem());
    return std::nullopt;
  }
  return plan;
}

void consider(CandidateSet& set, const model::TransformerConfig& model, const model::TrainingPlan& plan,
              const hardware::ClusterSpec& cluster, const cost::OperatorCostModel& cost) {
  ++set.valid;
  const analysis::MemorySummary memory = analysis::summarize_memory(model, plan, cluster);
  if (set.valid == 1 || memory.peak < set.least_memory_peak) {
    set.least_memory_plan = plan;
    set.least_memory_peak = memory.peak;
  }
  if (!memory.fits) return;
  const Estimate e = estimate_iteration(projection::project(model, plan, cluster, cost), plan);
  set.fitting.push_back({plan, memory.peak, e.time, e.lower_bound});
}

} // namespace

CandidateSet enumerate_candidates(const model::TransformerConfig& model, const model::TrainingPlan& base,
                                  const hardware::ClusterSpec& cluster, const cost::OperatorCostModel& cost) {
  CandidateSet set;
  const std::int64_t devices = cluster.device_count();
  const std::vector<std::int64_t> sizes = micro_batches(base);
  const auto try_plan = [&](const Degrees& degrees, Recompute r) {
    ++set.considered;
    std::string why;
    const auto plan = make_plan(model, base, cluster, degrees, r, why);
    if (plan)
      consider(set, model, *plan, cluster, cost);
    else if (set.first_invalid.empty())
      set.first_invalid = why;
  };
  for (const std::int64_t t : divisors(devices, cluster.node.devices))
    for (const std::int64_t p : divisors(devices / t, model.layers))
      for (const std::int64_t cp : context_degrees) {
        if ((devices / (t * p)) % cp != 0 || (cp > 1 && base.attention != model::AttentionKernel::fused)) continue;
        for (const std::int64_t v : virtual_stage_counts) {
          if (v > 1 && (p == 1 || !can_interleave(base))) continue;
          for (const std::int64_t b : sizes)
            for (const Recompute r : recomputations) try_plan({t, p, cp, devices / (t * p * cp), v, b}, r);
        }
      }
  return set;
}

std::string describe(const model::TrainingPlan& plan) {
  const auto& p = plan.parallelism;
  const std::string context = p.context > 1 ? fmt::format(" x cp {}", p.context) : "";
  return fmt::format("t {}{} x p {} x d {}, v {}, b {}, recompute {}", p.tensor, context, p.pipeline, p.data,
                     p.virtual_stages, plan.micro_batch, model::to_string(plan.recompute));
}

} // namespace twocs::planning
