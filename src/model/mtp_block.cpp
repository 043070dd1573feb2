// One multi-token-prediction depth around its transformer layer, per tensor-parallel rank, as
// Megatron-Core's MultiTokenPredictionLayer runs it (megatron/core/transformer/
// multi_token_prediction.py: _get_embeddings, _concat_embeddings, _postprocess; DeepSeek-V3
// report, section 2.2, Figure 3).
#include <string_view>
#include <variant>

#include <twocs/model/layer_ops.hpp>
#include <twocs/units/numeric.hpp>

#include "layer_dims.hpp"
#include "memory_bound_costs.hpp"
#include "op_builders.hpp"
#include "tensor_parallel.hpp"

namespace twocs::model {
namespace {

using detail::collective;
using detail::memory_bound;
using units::as_double;

/// `steps` with "mtp." before every name, so that a depth's kernels stay apart from the main
/// model's embedding and head in traces and breakdowns.
StepSequence prefixed(StepSequence steps) {
  for (auto& step : steps) std::visit([](auto& op) { op.name.insert(0, "mtp."); }, step);
  return steps;
}

/// eh_proj's input is the concatenation [enorm(e); hnorm(h)], 2h wide: its collectives move
/// twice the layer's activation.
detail::LayerDims projection_input(const detail::LayerDims& d) {
  detail::LayerDims wide = d;
  wide.activation = d.activation * 2.0;
  return wide;
}

} // namespace

StepSequence mtp_input_forward(const LayerShape& shape) {
  const auto d = detail::dims_of(shape);
  const auto& m = shape.model;
  const std::int64_t h_local = m.hidden / shape.tensor;
  // The tokens shifted by the depth, embedded by the shared embedding (roll_tensor, embedding).
  StepSequence steps = prefixed(embedding_forward(shape));
  steps.push_back(detail::norm_forward(shape, d, "mtp.enorm", Pass::forward));
  steps.push_back(detail::norm_forward(shape, d, "mtp.hnorm", Pass::forward));
  // torch.cat((decoder_input, hidden_states), -1): reads both, writes the 2h-wide result.
  steps.push_back(memory_bound("mtp.concat", OpKind::elementwise, Pass::forward, shape.dtype, 2 * d.norm_elements,
                               2.0 * element_size(shape.dtype), 0));
  // eh_proj: column-parallel 2h -> h without gather_output, then the output gathered over the
  // tensor group (gather_from_tensor_model_parallel_region) and split again by sequence under
  // sequence parallelism (scatter_to_sequence_parallel_region: no communication).
  if (shape.sequence_parallel) steps.push_back(detail::enter_region_forward(projection_input(d), "mtp.eh_proj"));
  if (shape.fp8_linear)
    steps.push_back(
        detail::fp8_cast("mtp.eh_proj.fp8_cast", Pass::forward, as_double(d.tokens) * 2.0 * as_double(m.hidden)));
  steps.push_back(detail::linear_forward("mtp.eh_proj", shape.linear_dtype(), d.tokens, 2 * m.hidden, h_local));
  if (shape.tensor > 1)
    steps.push_back(collective("mtp.eh_proj.output.all_gather", Collective::all_gather, CommGroup::tensor,
                               Pass::forward, d.activation));
  return steps;
}

StepSequence mtp_input_backward(const LayerShape& shape, bool reports_embedding_grad) {
  const auto d = detail::dims_of(shape);
  const auto& m = shape.model;
  StepSequence steps;
  // The sequence scatter's backward gathers the gradient; the hidden gather's splits it.
  if (shape.sequence_parallel)
    steps.push_back(collective("mtp.eh_proj.output.grad.all_gather", Collective::all_gather, CommGroup::tensor,
                               Pass::backward, d.activation));
  detail::add_column_parallel_backward(steps, shape, projection_input(d), "mtp.eh_proj", 2 * m.hidden,
                                       m.hidden / shape.tensor, 0);
  // The concatenation's backward is two views; each norm's backward finalises its scale.
  steps.push_back(detail::norm_backward(shape, d, "mtp.hnorm.bwd"));
  steps.push_back(detail::norm_backward(shape, d, "mtp.enorm.bwd"));
  StepSequence embedding = prefixed(embedding_backward(shape));
  // The embedding's gradient is reported once per device: here only for the last stage's own
  // copy of an untied embedding; the main embedding or the tied output layer reports it otherwise.
  if (!reports_embedding_grad)
    for (auto& step : embedding)
      if (auto* op = std::get_if<ComputeOp>(&step)) op->grad_params = 0;
  steps.insert(steps.end(), std::make_move_iterator(embedding.begin()), std::make_move_iterator(embedding.end()));
  return steps;
}

StepSequence mtp_head_forward(const LayerShape& shape) { return prefixed(output_head_forward(shape)); }

StepSequence mtp_head_backward(const LayerShape& shape) {
  // The output layer is the main model's (shared): the main head's backward, which runs after
  // the MTP block's, reports its gradient. The depth's own final norm reports its scale.
  StepSequence steps = prefixed(output_head_backward(shape, true));
  for (auto& step : steps)
    if (auto* op = std::get_if<ComputeOp>(&step); op && op->kind != OpKind::normalization) op->grad_params = 0;
  return steps;
}

} // namespace twocs::model
