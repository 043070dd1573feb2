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

/// PyTorch eager mode (training.kernels: eager), as torchtitan's Llama code runs without
/// torch.compile (pytorch/torchtitan torchtitan/models/norms.py RMSNorm, models/llama/model.py
/// apply_rotary_emb, repeat_kv and FeedForward, December 2024): every operator is its own kernel
/// reading and writing HBM, with fp32 intermediates (4 bytes) around bf16 activations (2 bytes).
/// Bytes per element of the activation, forward and backward (autograd's kernels).
namespace eager {
// RMSNorm: x.float() (2 + 4), pow(2) (4 + 4), mean (4), x * rsqrt (4 + 4), type_as (4 + 2),
// * weight (2 + 2); the per-row add and rsqrt are negligible.
inline constexpr double rmsnorm_forward = 36;
// Backward: * weight (dx 2 + 2, dweight's product and sum 2 + 2 + 2 + 2), type_as (2 + 4),
// x * rsqrt (dx 4 + 4, drsqrt's product and row sum 4 + 4 + 4 + 4), mean's expand (4), pow's
// x.pow(1), * 2 and * grad (4 + 4, 4 + 4, 4 + 4 + 4), the two fp32 gradients added (4 + 4 + 4),
// x.float()'s cast back (4 + 2), the residual stream's gradient added (2 + 2 + 2).
inline constexpr double rmsnorm_backward = 98;
// Rotary embeddings per element of q and k: float() (2 + 4), complex multiply by freqs_cis
// (4 + 4; the table stays in cache), type_as (4 + 2); the backward mirrors it.
inline constexpr double rope = 20;
// SwiGLU per element of the FFN width: silu(w1 x) (2 + 2), * w3 x (2 + 2 + 2); backward: the
// product's two gradients (2 + 2 + 2 each), silu_backward (2 + 2 + 2).
inline constexpr double swiglu_forward = 10;
inline constexpr double swiglu_backward = 18;
// repeat_kv per element of the repeated K or V (heads x head_dim wide): expand + reshape copies
// (read the kv_heads-wide source once, write 2); backward sums the copies (read 2).
inline constexpr double repeat_kv_write = 2;
// Squared ReLU, torch.pow(F.relu(x), 2), per element of the FFN width: relu (2 + 2), pow (2 + 2);
// backward: pow_backward's x.pow(1), * 2 and * grad (2 + 2, 2 + 2, 2 + 2 + 2), relu's
// threshold_backward (2 + 2 + 2). Fused (NeMo's @jit_fuser, torch.compile) it costs GeLU's bytes.
inline constexpr double squared_relu_forward = 8;
inline constexpr double squared_relu_backward = 20;
} // namespace eager

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
inline constexpr double squared_relu = 2; // max(x, 0), square
inline constexpr double squared_relu_backward = 3;
inline constexpr double embedding = 1;
inline constexpr double cross_entropy = 6; // max, exp, sum, log, gather, subtract

} // namespace twocs::model::kernel_flops
