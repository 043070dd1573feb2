// Private: the sizes of one transformer layer on one tensor-parallel rank, shared by the
// forward and backward operator lists.
#pragma once

#include <cstdint>

#include <twocs/model/layer_ops.hpp>

namespace twocs::model::detail {

struct LayerDims {
  std::int64_t tokens = 0;        // b * s: rows of every GEMM
  double norm_elements = 0;       // b * s * h, divided by t under sequence parallelism
  double attention_scores = 0;    // b * (a / t) * s * s
  std::int64_t local_heads = 0;   // a / t
  std::int64_t qkv_local = 0;     // columns of the QKV GEMM on this rank
  std::int64_t ffn_in_local = 0;  // columns of fc1 (doubled for SwiGLU's gate and up)
  std::int64_t ffn_out_local = 0; // rows of fc2 = f / t
  units::Bytes activation;        // b * s * h elements: the tensor-parallel collective buffer
};

[[nodiscard]] LayerDims dims_of(const LayerShape& shape);

} // namespace twocs::model::detail
