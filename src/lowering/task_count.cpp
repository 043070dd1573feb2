#include <twocs/lowering/task_count.hpp>

#include "iteration_walk.hpp"

namespace twocs::lowering {
namespace {

/// A sink that keeps no task, only how many of each sort it was given.
class TaskCounter final : public TaskSink {
public:
  explicit TaskCounter(std::vector<bool> simulated) : simulated_(std::move(simulated)) {}

  TaskId add_kernel(DeviceId, const TaskTag&, const Kernel&) override {
    ++kernels_;
    return next_id();
  }
  TaskId add_transfer(DeviceId from, const TaskTag&, const Transfer& transfer) override {
    // A transfer to or from a folded device is one side of a mirrored collective.
    if (is_simulated(from) && is_simulated(transfer.peer))
      ++transfers_;
    else
      ++mirrored_;
    return next_id();
  }
  void add_dependency(TaskId, TaskId) override {}
  std::uint32_t intern_label(std::string_view) override { return 0; }

  [[nodiscard]] std::uint64_t folded() const { return kernels_ + transfers_ + mirrored_; }
  /// Each mirrored step (a send and a receive) stands for one transfer per device in the full run.
  [[nodiscard]] std::uint64_t per_device_group() const { return kernels_ + transfers_ + mirrored_ / 2; }

private:
  [[nodiscard]] bool is_simulated(DeviceId d) const { return simulated_[static_cast<std::size_t>(d)]; }
  TaskId next_id() { return static_cast<TaskId>(next_++); }

  std::vector<bool> simulated_;
  std::uint64_t next_ = 0, kernels_ = 0, transfers_ = 0, mirrored_ = 0;
};

/// A cost model for counting: kernels cost nothing.
class FreeKernels final : public cost::OperatorCostModel {
public:
  [[nodiscard]] units::Seconds duration(const model::ComputeOp&) const override { return units::Seconds(0); }
};

} // namespace

TaskCount count_tasks(const model::TransformerConfig& model, const model::TrainingPlan& plan,
                      const cost::OperatorCostModel& cost) {
  const auto devices = simulated_devices(plan, {true});
  std::vector<bool> simulated(static_cast<std::size_t>(plan.world_size()), false);
  for (DeviceId d : devices) simulated[static_cast<std::size_t>(d)] = true;
  TaskCounter counter(std::move(simulated));
  detail::lower_devices(counter, model, plan, cost, devices);
  const auto replicas = static_cast<std::uint64_t>(plan.parallelism.tensor * plan.parallelism.data);
  return {replicas * counter.per_device_group(), counter.folded()};
}

std::uint64_t estimate_task_count(const model::TransformerConfig& model, const model::TrainingPlan& plan,
                                  const LoweringOptions& options) {
  return count_tasks(model, plan, FreeKernels()).under(options);
}

} // namespace twocs::lowering
