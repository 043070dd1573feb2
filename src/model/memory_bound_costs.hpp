// HBM traffic and arithmetic per element of the memory-bound kernels of a Transformer layer.
// Each kernel reads its inputs and writes its outputs once (fused as in Megatron-LM: scale-mask-
// softmax, bias-GeLU, bias-dropout-add). Dropout masks take one byte per element (Korthikanti
// et al. 2022, section 4.1). FLOP counts are approximate operation counts; these kernels are
// bound by bandwidth (Ivanov et al., "Data Movement Is All You Need", MLSys 2021, Table 2).
#pragma once

#include <twocs/model/dtype.hpp>
#include <twocs/model/transformer.hpp>

namespace twocs::model::kernel_bytes {

// clang-format off
inline double norm_forward(Dtype d)             { return 2 * element_size(d); }     // read x, write y
inline double norm_backward(Dtype d)            { return 8 * element_size(d); }     // see below
inline double softmax_forward(Dtype d)          { return 2 * element_size(d); }     // read scores, write probabilities
inline double softmax_backward(Dtype d)         { return 3 * element_size(d); }     // read dy, y; write dx
inline double dropout_forward(Dtype d)          { return 2 * element_size(d) + 1; } // read, write, write mask
inline double dropout_backward(Dtype d)         { return 2 * element_size(d) + 1; } // read dy, mask; write dx
inline double bias_dropout_add_forward(Dtype d) { return 3 * element_size(d) + 1; } // read x, residual; write y, mask
inline double gelu_forward(Dtype d)             { return 2 * element_size(d); }     // read, write
inline double gelu_backward(Dtype d)            { return 3 * element_size(d); }     // read dy, x; write dx
inline double swiglu_forward(Dtype d)           { return 3 * element_size(d); }     // read gate, up; write out
inline double swiglu_backward(Dtype d)          { return 5 * element_size(d); }     // read dy, gate, up; write 2 grads
inline double embedding_forward(Dtype d)        { return 2 * element_size(d); }     // gather rows, write output
inline double embedding_backward(Dtype d)       { return 3 * element_size(d); }     // read dy; read-modify-write rows
inline double rope(Dtype d)                     { return 2 * element_size(d); }     // read q/k, write rotated (cos/sin table stays in cache)
inline double permute(Dtype d)                  { return 2 * element_size(d); }     // MoE token gather/scatter: read, write
// clang-format on
// LayerNorm backward as Apex's fused LayerNorm runs it (apex/csrc/layer_norm_cuda_kernel.cu,
// cuda_layer_norm_gradient): a pass for the scale and shift gradients reads dy and x (2e), a pass
// for the input gradient reads dy and x and writes dx (3e); autograd then adds the residual
// branch's gradient to it (read two, write one: 3e). 8e per element in all.

} // namespace twocs::model::kernel_bytes

namespace twocs::model::kernel_flops {

inline constexpr double norm_forward = 8;     // mean, variance, normalise, scale, shift
inline constexpr double rms_norm_forward = 4; // square-sum, normalise, scale (Zhang & Sennrich 2019)
inline constexpr double rope = 3;             // x * cos + rotate(x) * sin (Su et al. 2021, Eq. 34)
[[nodiscard]] constexpr double norm_forward_of(NormKind k) {
  return k == NormKind::rmsnorm ? rms_norm_forward : norm_forward;
}
inline constexpr double norm_backward = 12;
inline constexpr double softmax_forward = 5; // scale, mask, max, exp, divide
inline constexpr double softmax_backward = 4;
inline constexpr double dropout = 2;
inline constexpr double gelu = 14; // tanh approximation (Hendrycks & Gimpel 2016)
inline constexpr double gelu_backward = 18;
inline constexpr double swiglu = 6; // x * sigmoid(x) * up
inline constexpr double swiglu_backward = 12;
inline constexpr double embedding = 1;
inline constexpr double cross_entropy = 6; // max, exp, sum, log, gather, subtract

} // namespace twocs::model::kernel_flops
