// Megatron-LM's model-FLOP count, the formula NVIDIA and the Megatron-Core model zoo use to
// publish "model TFLOP/s per GPU"; `twocs validate` converts such a figure back to a step time.
#pragma once

#include <cstdint>

#include <twocs/model/transformer.hpp>
#include <twocs/units/quantity.hpp>

namespace twocs::model {

/// Model FLOPs of one forward and backward pass over `sequences` sequences of model.seq_len:
/// Megatron-LM megatron/training/training.py num_floating_point_operations (2025), dense and
/// MoE layers:
///   12 B s L h^2 [(1 + g/a + s/2h) q + (f/h) k m + (f_sh/h) m + V / (2 L h)]
/// g key/value heads, a heads, q = a d_head / h, f the FFN width of a layer (expert width for
/// MoE layers, averaged over the layers), k experts per token (1 dense), m = 3/2 for gated FFNs,
/// f_sh the shared experts' width, V the vocabulary (Megatron pads it to a multiple of 128).
/// With model.mla the attention term is the formula's multi_latent_attention branch
/// (megatron_flops.cpp, mla_attention_term): DeepSeek-V3 at s = 4096 gives 249.8 GFLOP per token.
/// With model.mtp_layers = D the formula counts L + D layers (the depths of the last layer's
/// kind), D + 1 logits and 6 D (3h + 2h^2) per token for the depths' norms and eh_proj.
[[nodiscard]] units::Flops megatron_model_flops(const TransformerConfig& model, std::int64_t sequences);

} // namespace twocs::model
