// CUDA graphs: work the host launches once as a captured graph instead of kernel by kernel
// (the workload file's `training.host.cuda_graphs`; docs/simulation.md, "CUDA graphs").
#pragma once

#include <cstdint>
#include <string_view>

namespace twocs::model {

/// Which of the iteration's work the host launches as CUDA graphs, as Megatron-Core captures it
/// (NVIDIA/Megatron-LM docs/user-guide/features/cuda_graph.md at d98e8a64):
/// `none`: every kernel and collective is launched on its own (today's eager PyTorch);
/// `partial`: per-layer graphs (--cuda-graph-impl transformer_engine or local with
///   --cuda-graph-modules attn mlp moe_router moe_preprocess): a layer's attention, dense MLP and
///   MoE router and preprocessing are one graph each forward and backward; a MoE layer's dispatch,
///   experts and combine stay eager ("MoE expert dispatch involves dynamic shapes and cannot be
///   captured");
/// `full`: one graph of the whole forward-backward of every micro-batch, gradient finalisation
///   included, the optimizer step eager (--cuda-graph-impl full_iteration, FullCudaGraphWrapper
///   around forward_backward_func, megatron/core/full_cuda_graph.py).
enum class CudaGraphs : std::uint8_t { none, partial, full };

[[nodiscard]] constexpr std::string_view to_string(CudaGraphs g) {
  return g == CudaGraphs::none ? "none" : g == CudaGraphs::partial ? "partial" : "full";
}

/// Where a layer's step stands towards the per-layer graphs of `CudaGraphs::partial`.
/// `eager`: not in a layer's graph (the default; embedding, output head, optimizer, and a MoE
///   layer's steps after its first excluded one in forward and before its last one in backward);
/// `captured`: replayed inside its layer's graph;
/// `excluded`: a MoE step no graph may hold: its shapes follow the token counts the host learns
///   at run time (the dispatch's host synchronisation, dispatch, experts, combine), or Megatron-Core
///   leaves it out of the moe_router / moe_preprocess graphs (src/model/moe_layer.cpp says which).
enum class LayerGraph : std::uint8_t { eager, captured, excluded };

} // namespace twocs::model
