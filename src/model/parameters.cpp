#include <twocs/model/parameters.hpp>

#include <twocs/model/layer_ops.hpp>

#include "layer_dims.hpp"

namespace twocs::model {

ParameterCounts count_parameters(const TransformerConfig& model, std::int64_t tensor) {
  LayerShape shape;
  shape.model = model;
  shape.tensor = tensor;
  const auto d = detail::dims_of(shape);
  const std::int64_t h = model.hidden;
  ParameterCounts counts;
  // Column-parallel weights and biases are split; row-parallel biases and norms are replicated.
  counts.per_layer = (h * d.qkv_local + d.qkv_local) + (h / tensor * h + h) + (h * d.ffn_in_local + d.ffn_in_local) +
                     (d.ffn_out_local * h + h) + 2 * (2 * h);
  counts.embedding = local_vocab(model.vocab, tensor) * h + model.seq_len * h;
  counts.final_norm = 2 * h;
  return counts;
}

} // namespace twocs::model
