#include <twocs/analysis/steady_state.hpp>

#include <algorithm>
#include <cmath>
#include <span>
#include <vector>

#include <fmt/format.h>

#include <twocs/analysis/breakdown.hpp>
#include <twocs/analysis/summarize.hpp>

namespace twocs::analysis {
namespace {

using lowering::TaskId;

/// Micro-batches a stage's work trails the first stage's by, at most: the warm-up forwards of
/// 1F1B (p - 1, Narayanan et al. SC'21, section 2.2) and of the interleaved schedule ((p - 1) x 2
/// + (v - 1) x p chunks, Megatron-LM's schedules.py; 2p - 2 micro-batches at v = 2).
std::int64_t lag_of(const model::TrainingPlan& plan) {
  const std::int64_t p = plan.parallelism.pipeline;
  return plan.pipeline_schedule == model::PipelineSchedule::interleaved_one_f_one_b ? 2 * p : p;
}

/// Whether task `b` is task `a`'s twin one period later: the same kind, label, layer, pass,
/// and for a transfer the same peer and step of its collective.
bool twins(const lowering::TaskGraph& graph, TaskId a, TaskId b) {
  const lowering::Task& x = graph.task(a);
  const lowering::Task& y = graph.task(b);
  if (x.kind != y.kind || x.label != y.label || x.layer != y.layer || x.pass != y.pass) return false;
  if (!x.is_transfer()) return true;
  return graph.transfer(a).peer == graph.transfer(b).peer && graph.transfer(a).step == graph.transfer(b).step;
}

/// The tasks of micro-batches [first, last) by device and micro-batch, each list in lowering
/// order: a device lowers every micro-batch's work by the same code, so the i-th task of one is
/// the twin of the i-th of another.
class TasksByMicroBatch {
public:
  TasksByMicroBatch(const lowering::TaskGraph& graph, std::int64_t first, std::int64_t last)
      : first_(first), span_(last - first), begin_(static_cast<std::size_t>(graph.device_count() * span_) + 1, 0) {
    for (TaskId id = 0; id < graph.size(); ++id)
      if (const auto slot = slot_of(graph, id)) ++begin_[*slot + 1];
    for (std::size_t i = 1; i < begin_.size(); ++i) begin_[i] += begin_[i - 1];
    ids_.resize(begin_.back());
    std::vector<std::size_t> next(begin_.begin(), begin_.end() - 1);
    for (TaskId id = 0; id < graph.size(); ++id)
      if (const auto slot = slot_of(graph, id)) ids_[next[*slot]++] = id;
  }
  [[nodiscard]] std::span<const TaskId> of(lowering::DeviceId device, std::int64_t micro_batch) const {
    const auto slot = static_cast<std::size_t>(device * span_ + (micro_batch - first_));
    return {ids_.data() + begin_[slot], begin_[slot + 1] - begin_[slot]};
  }

private:
  [[nodiscard]] std::optional<std::size_t> slot_of(const lowering::TaskGraph& graph, TaskId id) const {
    const std::int64_t mb = graph.task(id).micro_batch;
    if (mb < first_ || mb >= first_ + span_) return std::nullopt;
    return static_cast<std::size_t>(graph.task(id).device * span_ + (mb - first_));
  }
  std::int64_t first_, span_;
  std::vector<std::size_t> begin_;
  std::vector<TaskId> ids_;
};

/// The window: a period from the first start on the measured device of the micro-batch `lag`
/// after the first checked one (which trails the first stage by at most `lag`). Every task of
/// the device that overlaps it must be a checked one, and every task that overlaps the next
/// period a checked one or a twin.
std::optional<units::Seconds> window_start(const lowering::TaskGraph& graph, const engine::Timeline& timeline,
                                           const ReplayPlan& replay, lowering::DeviceId measured, double period,
                                           std::string& why_not) {
  const std::int64_t first = replay.first_checked, last = first + replay.checked;
  const std::int64_t middle = 2 * first;
  double from = timeline.makespan.value();
  for (TaskId id = 0; id < graph.size(); ++id)
    if (graph.task(id).micro_batch == middle && graph.involves(id, measured))
      from = std::min(from, timeline.tasks[id].start.value());
  for (TaskId id = 0; id < graph.size(); ++id) {
    const auto& t = timeline.tasks[id];
    if (!graph.involves(id, measured) || !(t.finish.value() > from)) continue;
    const std::int64_t mb = graph.task(id).micro_batch;
    const bool in_window = t.start.value() < from + period;
    const bool in_next = t.start.value() < from + 2 * period && t.finish.value() > from + period;
    if ((!in_window || (mb >= first && mb < last)) && (!in_next || (mb >= first && mb < last + replay.period)))
      continue;
    why_not = fmt::format("{} runs on device {} in the steady state's window", graph.display_name(id), measured);
    return std::nullopt;
  }
  return units::Seconds(from);
}

} // namespace

std::optional<ReplayPlan> choose_replay(const model::TrainingPlan& plan) {
  const bool one_f_one_b = plan.pipeline_schedule == model::PipelineSchedule::one_f_one_b;
  const bool interleaved = plan.pipeline_schedule == model::PipelineSchedule::interleaved_one_f_one_b;
  if ((!one_f_one_b && !interleaved) || plan.overlap.expert_comm) return std::nullopt;
  ReplayPlan r;
  r.micro_batches = plan.micro_batches();
  r.period = interleaved ? plan.parallelism.pipeline : 1;
  const std::int64_t lag = lag_of(plan);
  // Warm-up, then the checked micro-batches (a window's reach of `lag` each side of a period,
  // and a period more), their twins a period later, and the cool-down.
  r.first_checked = lag;
  r.checked = lag + 2 * r.period;
  std::int64_t least = r.first_checked + r.checked + r.period + lag;
  least += ((r.micro_batches - least) % r.period + r.period) % r.period; // whole periods left out
  r.simulated = least;
  if (r.micro_batches - r.simulated < 2 * r.period) return std::nullopt;
  return r;
}

model::TrainingPlan shortened(const model::TrainingPlan& plan, const ReplayPlan& replay) {
  model::TrainingPlan s = plan;
  s.global_batch = replay.simulated * plan.micro_batch * plan.parallelism.data;
  return s;
}

namespace {

/// Each device's period (-1 where it runs no checked task), and the largest deviation of any
/// checked task's shift from its device's; nothing when a task has no twin.
std::optional<std::vector<double>> device_periods(const lowering::TaskGraph& graph, const engine::Timeline& timeline,
                                                  const ReplayPlan& replay, double& deviation, std::string& why_not) {
  const std::int64_t first = replay.first_checked, last = first + replay.checked;
  const TasksByMicroBatch tasks(graph, first, last + replay.period);
  std::vector<double> period(static_cast<std::size_t>(graph.device_count()), -1.0);
  for (lowering::DeviceId device = 0; device < graph.device_count(); ++device) {
    double& own = period[static_cast<std::size_t>(device)];
    for (std::int64_t mb = first; mb < last; ++mb) {
      const auto now = tasks.of(device, mb), later = tasks.of(device, mb + replay.period);
      if (later.size() != now.size()) {
        why_not = fmt::format("device {} runs {} tasks of micro-batch {} and {} of micro-batch {}", device, now.size(),
                              mb, later.size(), mb + replay.period);
        return std::nullopt;
      }
      for (std::size_t i = 0; i < now.size(); ++i) {
        if (!twins(graph, now[i], later[i])) {
          why_not = fmt::format("{} has no twin {} micro-batch(es) later", graph.display_name(now[i]), replay.period);
          return std::nullopt;
        }
        const auto& a = timeline.tasks[now[i]];
        const auto& b = timeline.tasks[later[i]];
        if (own < 0) own = (b.start - a.start).value();
        deviation = std::max(
            {deviation, std::fabs((b.start - a.start).value() - own), std::fabs((b.finish - a.finish).value() - own)});
      }
    }
  }
  return period;
}

} // namespace

std::optional<SteadyState> find_steady_state(const lowering::TaskGraph& graph, const engine::Timeline& timeline,
                                             const ReplayPlan& replay, lowering::DeviceId measured,
                                             std::string& why_not) {
  // Each device's period, measured on its own; they must agree (below).
  double deviation = 0;
  const auto period = device_periods(graph, timeline, replay, deviation, why_not);
  if (!period) return std::nullopt;
  const double own = (*period)[static_cast<std::size_t>(measured)];
  if (!(own > 0)) {
    why_not = fmt::format("device {}, which finishes last, has no task in the checked micro-batches", measured);
    return std::nullopt;
  }
  // The left-out periods inherit the deviation once each: keep their sum within 1e-4 of the
  // iteration. Every device must repeat at the same period: replicas at their own paces (speed
  // variation without a synchronisation in the steady state) drift against each other, and the
  // iteration's last synchronisation then depends on how far.
  const double left_out = static_cast<double>(replay.periods_left_out());
  const double tolerance = 1e-4 * (timeline.makespan.value() + left_out * own);
  if (left_out * deviation > tolerance) {
    why_not = fmt::format("the timeline does not repeat yet: shifts differ by up to {:.3g} s of a {:.6g} s period",
                          deviation, own);
    return std::nullopt;
  }
  for (std::size_t d = 0; d < period->size(); ++d)
    if ((*period)[d] > 0 && left_out * std::fabs((*period)[d] - own) > tolerance) {
      why_not = fmt::format("devices repeat at their own paces (device {} every {:.6g} s, device {} every {:.6g} s)",
                            measured, own, d, (*period)[d]);
      return std::nullopt;
    }
  const auto start = window_start(graph, timeline, replay, measured, own, why_not);
  if (!start) return std::nullopt;
  return SteadyState{units::Seconds(own), *start, units::Seconds(deviation)};
}

void add_left_out_periods(Summary& summary, const lowering::TaskGraph& graph, const engine::Timeline& timeline,
                          const ReplayPlan& replay, const SteadyState& steady) {
  const double k = static_cast<double>(replay.periods_left_out());
  const units::Seconds from = steady.window_start, to = steady.window_start + steady.period_time;
  const DeviceBreakdown w = measure_device_between(graph, timeline, summary.measured_device, from, to);
  const units::Seconds before = summary.iteration_time;
  summary.iteration_time = before + steady.period_time * k;
  summary.breakdown.compute += w.breakdown.compute * k;
  summary.breakdown.overlapped_comm += w.breakdown.overlapped_comm * k;
  summary.breakdown.exposed_comm += w.breakdown.exposed_comm * k;
  summary.breakdown.idle += w.breakdown.idle * k;
  for (std::size_t g = 0; g < model::comm_group_count; ++g) {
    summary.exposed_comm_by_group[g] += w.exposed_by_group[g] * k;
    summary.comm_busy_by_group[g] += w.busy_by_group[g] * k;
    summary.overlapped_comm_by_group[g] += w.overlapped_by_group[g] * k;
  }
  summary.comm_busy += w.comm_busy * k;
  summary.host_wait += host_wait_between(graph, timeline, summary.measured_device, from, to) * k;
  derive_rates(summary);
  summary.mfu *= before / summary.iteration_time; // the same model FLOPs over a longer time
}

} // namespace twocs::analysis
