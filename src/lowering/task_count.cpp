#include <twocs/lowering/task_count.hpp>

#include <cassert>

#include "iteration_walk.hpp"

namespace twocs::lowering {
namespace {

/// A sink that keeps no task, only how many the folded lowering has and how many the full one
/// would have. Every simulated device stands for `replicas` devices of its pipeline stage.
/// Thrown by the counter when a count passes its limit: the walk stops there.
struct LimitReached {};

class TaskCounter final : public TaskSink {
public:
  TaskCounter(std::vector<bool> simulated, std::uint64_t replicas, TaskCountLimit limit)
      : simulated_(std::move(simulated)), replicas_(replicas), limit_(limit) {}

  TaskId add_kernel(DeviceId, const TaskTag&, const Kernel&) override {
    add_full(replicas_);
    return next_id();
  }
  TaskId add_host_launch(DeviceId, const TaskTag&, units::Seconds) override {
    add_full(replicas_);
    return next_id();
  }
  TaskId add_transfer(DeviceId from, const TaskTag&, const Transfer& transfer) override {
    // Between two simulated devices each replica has its own; one side of a folded collective
    // is counted with the collective (on_folded_collective).
    if (is_simulated(from) && is_simulated(transfer.peer)) add_full(replicas_);
    return next_id();
  }
  void add_dependency(TaskId, TaskId) override {}
  std::uint32_t intern_label(std::string_view) override { return 0; }
  void on_folded_collective(std::size_t devices, std::uint64_t transfers) override {
    // The replicas of a stage form replicas / devices such groups, each with the whole collective.
    assert(devices > 0 && replicas_ % devices == 0);
    std::uint64_t added = 0;
    add_full(__builtin_mul_overflow(replicas_ / devices, transfers, &added) ? UINT64_MAX : added);
  }

  [[nodiscard]] std::uint64_t folded() const { return next_; }
  [[nodiscard]] std::uint64_t full() const { return full_; }

private:
  [[nodiscard]] bool is_simulated(DeviceId d) const { return simulated_[static_cast<std::size_t>(d)]; }
  TaskId next_id() {
    if (next_ > limit_.folded) throw LimitReached{}; // one past the limit: the count exceeds it
    return static_cast<TaskId>(next_++);
  }
  /// Saturating: a plan's full count may pass 2^64 (2^20 devices, rings of 2^17 steps).
  void add_full(std::uint64_t tasks) {
    if (__builtin_add_overflow(full_, tasks, &full_)) full_ = UINT64_MAX;
    if (full_ > limit_.full) throw LimitReached{};
  }

  std::vector<bool> simulated_;
  std::uint64_t replicas_;
  TaskCountLimit limit_;
  std::uint64_t next_ = 0, full_ = 0;
};

/// A cost model for counting: kernels cost nothing.
class FreeKernels final : public cost::OperatorCostModel {
public:
  [[nodiscard]] units::Seconds duration(const model::ComputeOp&) const override { return units::Seconds(0); }
};

} // namespace

TaskCount count_tasks(const model::TransformerConfig& model, const model::TrainingPlan& plan,
                      const cost::OperatorCostModel& cost, const CollectivePolicy& collectives, TaskCountLimit limit) {
  LoweringOptions folded;
  folded.fold_replicas = true;
  const auto devices = simulated_devices(plan, folded);
  std::vector<bool> simulated(static_cast<std::size_t>(plan.world_size()), false);
  for (DeviceId d : devices) simulated[static_cast<std::size_t>(d)] = true;
  TaskCounter counter(
      std::move(simulated),
      static_cast<std::uint64_t>(plan.parallelism.tensor * plan.parallelism.data * plan.parallelism.context), limit);
  try {
    detail::lower_devices(counter, model, plan, cost, devices, collectives);
  } catch (const LimitReached&) {
    return {counter.full(), counter.folded(), false};
  }
  return {counter.full(), counter.folded(), true};
}

double least_folded_tasks(const model::TransformerConfig& model, const model::TrainingPlan& plan) {
  return 2.0 * static_cast<double>(plan.micro_batches()) * static_cast<double>(model.layers);
}

std::uint64_t estimate_task_count(const model::TransformerConfig& model, const model::TrainingPlan& plan,
                                  const LoweringOptions& options) {
  return count_tasks(model, plan, FreeKernels(), options.collectives).under(options);
}

} // namespace twocs::lowering
