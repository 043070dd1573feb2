// Device memory of a training plan: weights, gradients, optimizer state, activations and
// communication buffers per pipeline stage (docs/memory-model.md).
#pragma once

#include <cstdint>
#include <vector>

#include <twocs/model/training_plan.hpp>
#include <twocs/model/transformer.hpp>
#include <twocs/units/quantity.hpp>

namespace twocs::model {

struct MemoryBreakdown {
  units::Bytes weights;
  units::Bytes gradients;
  units::Bytes optimizer_state;
  units::Bytes activations;
  units::Bytes communication_buffers;

  [[nodiscard]] units::Bytes total() const {
    return weights + gradients + optimizer_state + activations + communication_buffers;
  }
};

/// The peak of one device of a pipeline stage (all devices of a stage hold the same).
struct StageMemory {
  std::int64_t stage = 0;
  std::int64_t layers = 0;                  // transformer layers on this stage (all chunks)
  std::int64_t micro_batches_in_flight = 0; // activations held at the peak, in micro-batches
  MemoryBreakdown breakdown;
};

struct MemoryReport {
  std::vector<StageMemory> stages;

  [[nodiscard]] units::Bytes peak() const;
  [[nodiscard]] std::int64_t peak_stage() const;
};

[[nodiscard]] MemoryReport estimate_memory(const TransformerConfig& model, const TrainingPlan& plan);

} // namespace twocs::model
