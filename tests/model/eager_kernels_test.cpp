// PyTorch eager kernels (training.kernels: eager): torchtitan's RMSNorm, rotary embeddings,
// SwiGLU and repeat_kv as separate kernels with fp32 intermediates, against the fused ones.
#include <doctest/doctest.h>

#include <string>
#include <variant>

#include <twocs/model/layer_ops.hpp>

#include "support/modern_models.hpp"
#include "support/step_lookup.hpp"

using namespace twocs::model;

namespace {

using twocs::testing::find_step;

LayerShape shape_of(KernelFusion kernels) {
  LayerShape shape;
  shape.model = twocs::testing::llama3_70b();
  shape.model.seq_len = 1024;
  shape.attention = AttentionKernel::fused;
  shape.kernels = kernels;
  return shape;
}

} // namespace

TEST_CASE("eager RMSNorm, RoPE and SwiGLU move the bytes of their separate kernels, fused ones one pass") {
  const double tokens = 1024, h = 8192, f = 28672, q = 8192, kv = 8 * 128;
  const auto fused = transformer_layer_forward(shape_of(KernelFusion::fused));
  const auto eager = transformer_layer_forward(shape_of(KernelFusion::eager));
  // RMSNorm: cast (2 + 4), square (4 + 4), mean (4), normalise (4 + 4), cast back (4 + 2), scale (2 + 2).
  CHECK(find_step(eager, "attn.norm")->bytes.value() == doctest::Approx(36 * tokens * h));
  CHECK(find_step(fused, "attn.norm")->bytes.value() == doctest::Approx(4 * tokens * h));
  // RoPE on Q and K: cast (2 + 4), complex multiply (4 + 4), cast back (4 + 2).
  CHECK(find_step(eager, "attn.rope")->bytes.value() == doctest::Approx(20 * tokens * (q + kv)));
  // SwiGLU: silu (2 + 2) and the product (2 + 2 + 2) per element of the FFN width.
  CHECK(find_step(eager, "mlp.swiglu")->bytes.value() == doctest::Approx(10 * tokens * f));
  CHECK(find_step(fused, "mlp.swiglu")->bytes.value() == doctest::Approx(6 * tokens * f));
  // repeat_kv writes K and V at all 64 heads and reads the 8-head source; fused attention reads GQA as is.
  REQUIRE(find_step(eager, "attn.repeat_kv") != nullptr);
  CHECK(find_step(eager, "attn.repeat_kv")->bytes.value() == doctest::Approx(2 * tokens * q * 2 * (1 + 8.0 / 64)));
  CHECK(find_step(fused, "attn.repeat_kv") == nullptr);
  // The GEMMs are the same kernels either way.
  CHECK(find_step(eager, "mlp.fc1")->flops.value() == doctest::Approx(find_step(fused, "mlp.fc1")->flops.value()));
}

TEST_CASE("eager backward: RMSNorm's autograd kernels, SwiGLU's two products and silu_backward") {
  const double tokens = 1024, h = 8192, f = 28672;
  const auto eager = transformer_layer_backward(shape_of(KernelFusion::eager));
  CHECK(find_step(eager, "attn.norm.bwd")->bytes.value() == doctest::Approx(98 * tokens * h));
  CHECK(find_step(eager, "mlp.swiglu.bwd")->bytes.value() == doctest::Approx(18 * tokens * f));
  CHECK(find_step(eager, "attn.repeat_kv.bwd") != nullptr);
}

TEST_CASE("LayerNorm is one kernel in eager mode too (F.layer_norm), and MHA needs no repeat_kv") {
  auto shape = shape_of(KernelFusion::eager);
  shape.model.norm = NormKind::layernorm;
  shape.model.kv_heads = shape.model.heads;
  const auto steps = transformer_layer_forward(shape);
  CHECK(find_step(steps, "attn.norm")->bytes.value() == doctest::Approx(4 * 1024.0 * 8192));
  CHECK(find_step(steps, "attn.repeat_kv") == nullptr);
}
