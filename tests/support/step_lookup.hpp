// Finding a layer's kernels by name, for tests of the model layer's step sequences.
#pragma once

#include <cstddef>
#include <string>
#include <variant>
#include <vector>

#include <doctest/doctest.h>

#include <twocs/model/layer_ops.hpp>

namespace twocs::testing {

/// The name of a compute step or a collective.
inline std::string step_name(const model::Step& step) {
  return std::visit([](const auto& s) { return s.name; }, step);
}

/// The position of the first step (compute or collective) named `name`; fails the test without one.
inline std::size_t step_index(const model::StepSequence& steps, const std::string& name) {
  for (std::size_t i = 0; i < steps.size(); ++i)
    if (step_name(steps[i]) == name) return i;
  FAIL("no step " << name);
  return 0;
}

/// The first compute step named `name`, or nullptr.
inline const model::ComputeOp* find_step(const model::StepSequence& steps, const std::string& name) {
  for (const auto& step : steps)
    if (const auto* op = std::get_if<model::ComputeOp>(&step); op && op->name == name) return op;
  return nullptr;
}

/// The first compute step named `name` in pass `pass`, or nullptr.
inline const model::ComputeOp* find_step(const model::StepSequence& steps, const std::string& name, model::Pass pass) {
  for (const auto& step : steps)
    if (const auto* op = std::get_if<model::ComputeOp>(&step); op && op->name == name && op->pass == pass) return op;
  return nullptr;
}

/// The first collective named `name`, or nullptr.
inline const model::CollectiveOp* find_collective(const model::StepSequence& steps, const std::string& name) {
  for (const auto& step : steps)
    if (const auto* c = std::get_if<model::CollectiveOp>(&step); c && c->name == name) return c;
  return nullptr;
}

/// The steps named `name`, summed.
struct Named {
  int count = 0;
  double bytes = 0;            // collectives: their sizes summed; compute: HBM bytes
  double flops = 0;            // compute only
  std::vector<int> overlapped; // collectives: overlapped_ops in order
};

inline Named named(const model::StepSequence& steps, const std::string& name) {
  Named n;
  for (const auto& step : steps) {
    if (const auto* c = std::get_if<model::CollectiveOp>(&step); c && c->name == name) {
      ++n.count;
      n.bytes += c->size.value();
      n.overlapped.push_back(c->overlapped_ops);
    } else if (const auto* op = std::get_if<model::ComputeOp>(&step); op && op->name == name) {
      ++n.count;
      n.bytes += op->bytes.value();
      n.flops += op->flops.value();
    }
  }
  return n;
}

/// One device's layer of `m`: micro-batch 1, no tensor parallelism, attention run as `attention`.
inline model::LayerShape single_device_layer(const model::TransformerConfig& m, model::AttentionKernel attention) {
  model::LayerShape shape;
  shape.model = m;
  shape.attention = attention;
  return shape;
}

} // namespace twocs::testing
