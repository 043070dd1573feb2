// Private: the tensor-parallel collectives around Megatron-LM's parallel linear layers
// (Shoeybi et al. 2019, Fig. 3 "f" and "g"; Korthikanti et al. 2022, Fig. 5 with sequence
// parallelism), shared by the transformer layer, the embedding and the output head.
#pragma once

#include <optional>
#include <string>

#include <twocs/model/layer_ops.hpp>

#include "layer_dims.hpp"

namespace twocs::model::detail {

/// Entering a tensor-parallel region ("f"): identity forward, so only under sequence
/// parallelism is there a collective, the all-gather of the sharded activation.
[[nodiscard]] CollectiveOp enter_region_forward(const LayerDims& d, const std::string& name);

/// Leaving a tensor-parallel region ("g") forward: all-reduce of the partial sums, or
/// reduce-scatter under sequence parallelism; nothing with one rank.
[[nodiscard]] std::optional<CollectiveOp> leave_region_forward(const LayerShape& shape, const LayerDims& d,
                                                               const std::string& name);

/// Backward of a column-parallel linear layer (QKV, fc1, logits): dgrad, the input-gradient
/// collective (overlapped with wgrad when asynchronous), wgrad. Under sequence parallelism the
/// layer's input is kept sharded and all-gathered again for wgrad, overlapped with dgrad.
/// `grad_params_override` >= 0 replaces the gradients wgrad reports as final.
void add_column_parallel_backward(StepSequence& steps, const LayerShape& shape, const LayerDims& d,
                                  const std::string& name, std::int64_t in, std::int64_t out, std::int64_t bias,
                                  std::int64_t grad_params_override = -1);

} // namespace twocs::model::detail
