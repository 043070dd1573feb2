#include "layer_graph.hpp"

#include <variant>

namespace twocs::model::detail {
namespace {

LayerGraph& graph_mark(Step& step) {
  return std::visit([](auto& op) -> LayerGraph& { return op.graph; }, step);
}

} // namespace

LayerGraph graph_of(const Step& step) {
  return std::visit([](const auto& op) { return op.graph; }, step);
}

void exclude_from_graphs(StepSequence& steps, std::size_t from, std::size_t to) {
  for (std::size_t i = from; i < to && i < steps.size(); ++i) graph_mark(steps[i]) = LayerGraph::excluded;
}

void capture_forward(StepSequence& steps) {
  for (Step& step : steps) {
    LayerGraph& mark = graph_mark(step);
    if (mark == LayerGraph::excluded) return;
    mark = LayerGraph::captured;
  }
}

void capture_backward(StepSequence& steps) {
  for (auto it = steps.rbegin(); it != steps.rend(); ++it) {
    LayerGraph& mark = graph_mark(*it);
    if (mark == LayerGraph::excluded) return;
    mark = LayerGraph::captured;
  }
}

} // namespace twocs::model::detail
