#include "tensor_parallel.hpp"

#include <algorithm>
#include <variant>

#include "fp8_quantize.hpp"
#include "op_builders.hpp"

namespace twocs::model::detail {

CollectiveOp enter_region_forward(const LayerDims& d, const std::string& name) {
  return collective(name + ".all_gather", Collective::all_gather, CommGroup::tensor, Pass::forward, d.activation);
}

CollectiveOp enter_gathered_region(const LayerShape& shape, const LayerDims& d, const std::string& name) {
  CollectiveOp gather = enter_region_forward(d, name);
  gather.size = gathered_activation(shape, d);
  return gather;
}

std::optional<CollectiveOp> leave_region_forward(const LayerShape& shape, const LayerDims& d, const std::string& name) {
  if (shape.sequence_parallel)
    return collective(name + ".reduce_scatter", Collective::reduce_scatter, CommGroup::tensor, Pass::forward,
                      d.activation);
  if (shape.tensor > 1)
    return collective(name + ".all_reduce", Collective::all_reduce, CommGroup::tensor, Pass::forward, d.activation);
  return std::nullopt;
}

void add_column_parallel_backward(StepSequence& steps, const LayerShape& shape, const LayerDims& d,
                                  const std::string& name, std::int64_t in, std::int64_t out, std::int64_t bias,
                                  std::int64_t grad_params_override, std::optional<ComputeOp> before_wgrad) {
  // Transformer Engine's bulk overlaps are always on (tp_comm_overlap.cpp).
  const int overlap = shape.tp_async_backward || shape.tp_comm == TpCommOverlap::transformer_engine ? 1 : 0;
  // The output gradient, cast to FP8 for both gradient GEMMs.
  add_fp8_quantize(steps, shape, name + ".grad", Pass::backward,
                   static_cast<double>(d.tokens) * static_cast<double>(out), Fp8Source::standalone);
  const RowGemm dgrad = [&](std::int64_t rows) {
    return linear_input_grad(name + ".dgrad", shape.linear_dtype(), rows, in, out);
  };
  if (shape.tp_comm == TpCommOverlap::async_tp && !shape.separate_projections) {
    // dgrad's chunked reduce-scatter (tp_comm_overlap.cpp); async TP runs only under DTensor
    // (validate_tp_comm.cpp), whose wgrad reads the input the forward gathered. Inductor fuses a
    // reduce-scatter only when a matmul produces its input (micro_pipeline_tp.py,
    // _find_producer_matmul): the sum of separate projections' gradients leaves it a plain one.
    add_scattered_gemm(steps, shape, d, name, Pass::backward, dgrad, 0);
  } else if (shape.sequence_parallel) {
    if (!shape.dtensor_tp)
      steps.push_back(collective(name + ".input.all_gather", Collective::all_gather, CommGroup::tensor, Pass::backward,
                                 gathered_activation(shape, d), overlap));
    steps.push_back(dgrad(d.tokens));
    if (auto copy = dtensor_layout_copy(shape, name + ".reduce_scatter", Pass::backward, d.activation, false))
      steps.push_back(std::move(*copy));
    steps.push_back(collective(name + ".reduce_scatter", Collective::reduce_scatter, CommGroup::tensor, Pass::backward,
                               d.activation, overlap));
  } else {
    steps.push_back(dgrad(d.tokens));
  }
  if (!shape.sequence_parallel && shape.tensor > 1)
    steps.push_back(collective(name + ".all_reduce", Collective::all_reduce, CommGroup::tensor, Pass::backward,
                               d.activation, overlap));
  if (before_wgrad) steps.push_back(std::move(*before_wgrad));
  ComputeOp wgrad = linear_weight_grad(name + ".wgrad", shape.linear_dtype(), d.tokens, in, out, bias);
  if (grad_params_override >= 0) wgrad.grad_params = grad_params_override;
  steps.push_back(std::move(wgrad));
}

} // namespace twocs::model::detail
