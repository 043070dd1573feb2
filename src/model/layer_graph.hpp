// Private: which steps of a layer Megatron-Core's per-layer CUDA graphs capture
// (training.host.cuda_graphs: partial; model/cuda_graphs.hpp). A layer's graph is a callable
// around its forward (TransformerLayer, captured by Transformer Engine's make_graphed_callables
// or Megatron-Core's CudaGraphManager) whose backward graph replays the captured steps'
// gradients. A MoE layer's graph returns early, at the end of its router and preprocessing
// (moe_utils.py, MoECudaGraphPartialCaptureSignal), so everything after in the forward runs
// eagerly, and in the backward everything before the graph's gradients does.
#pragma once

#include <cstddef>

#include <twocs/model/operator.hpp>

namespace twocs::model::detail {

/// Marks steps [from, to) of `steps` as no graph's (LayerGraph::excluded).
void exclude_from_graphs(StepSequence& steps, std::size_t from, std::size_t to);

/// A layer's forward or recomputation: the steps before its first excluded one are captured.
void capture_forward(StepSequence& steps);
/// A layer's backward: the steps after its last excluded one are captured.
void capture_backward(StepSequence& steps);

/// The graph mark of a step, whichever kind it is.
[[nodiscard]] LayerGraph graph_of(const Step& step);

} // namespace twocs::model::detail
