// Squared ReLU FFNs (Nemotron-4; model.ffn_kind: squared_relu): two GEMMs as GeLU's FFN, one
// compiled activation kernel of GeLU's bytes (NeMo's @jit_fuser), PyTorch's separate relu and
// pow kernels in eager mode, and the parameters of a non-gated FFN.
#include <doctest/doctest.h>

#include <string>
#include <variant>

#include <twocs/model/layer_ops.hpp>
#include <twocs/model/parameters.hpp>

#include "support/modern_models.hpp"
#include "support/step_lookup.hpp"

using namespace twocs::model;

namespace {

using twocs::testing::find_step;

LayerShape shape_of(FfnKind kind, KernelFusion kernels) {
  LayerShape shape;
  shape.model = twocs::testing::llama3_70b();
  shape.model.seq_len = 1024;
  shape.model.ffn_kind = kind;
  shape.attention = AttentionKernel::fused;
  shape.kernels = kernels;
  return shape;
}

} // namespace

TEST_CASE("a squared-ReLU FFN runs GeLU's two GEMMs and one activation kernel of GeLU's bytes") {
  const double tokens = 1024, h = 8192, f = 28672;
  const auto relu2 = transformer_layer_forward(shape_of(FfnKind::squared_relu, KernelFusion::fused));
  const auto gelu = transformer_layer_forward(shape_of(FfnKind::gelu, KernelFusion::fused));
  REQUIRE(find_step(relu2, "mlp.squared_relu") != nullptr);
  CHECK(find_step(relu2, "mlp.gelu") == nullptr);
  CHECK(find_step(relu2, "mlp.swiglu") == nullptr);
  // bf16: read x, write relu(x)^2.
  CHECK(find_step(relu2, "mlp.squared_relu")->bytes.value() == doctest::Approx(4 * tokens * f));
  CHECK(find_step(relu2, "mlp.squared_relu")->bytes.value() ==
        doctest::Approx(find_step(gelu, "mlp.gelu")->bytes.value()));
  // fc1 is h -> f (not 2f as SwiGLU's gate and up): 2 T h f FLOPs.
  CHECK(find_step(relu2, "mlp.fc1")->flops.value() == doctest::Approx(2 * tokens * h * f));
  CHECK(find_step(relu2, "mlp.fc1")->flops.value() == doctest::Approx(find_step(gelu, "mlp.fc1")->flops.value()));
  const auto backward = transformer_layer_backward(shape_of(FfnKind::squared_relu, KernelFusion::fused));
  // read dy and x, write dx.
  CHECK(find_step(backward, "mlp.squared_relu.bwd")->bytes.value() == doctest::Approx(6 * tokens * f));
}

TEST_CASE("eager squared ReLU is relu then pow forward, pow_backward's three kernels and relu's backward") {
  const double tokens = 1024, f = 28672;
  const auto forward = transformer_layer_forward(shape_of(FfnKind::squared_relu, KernelFusion::eager));
  CHECK(find_step(forward, "mlp.squared_relu")->bytes.value() == doctest::Approx((2 + 2 + 2 + 2) * tokens * f));
  const auto backward = transformer_layer_backward(shape_of(FfnKind::squared_relu, KernelFusion::eager));
  CHECK(find_step(backward, "mlp.squared_relu.bwd")->bytes.value() == doctest::Approx((4 + 4 + 6 + 6) * tokens * f));
}

TEST_CASE(
    "a squared-ReLU FFN holds GeLU's parameters per layer, the gate's h x f weights and f biases fewer than SwiGLU's") {
  auto relu2 = twocs::testing::llama3_70b();
  relu2.ffn_kind = FfnKind::squared_relu;
  auto gelu = relu2;
  gelu.ffn_kind = FfnKind::gelu;
  auto swiglu = relu2;
  swiglu.ffn_kind = FfnKind::swiglu;
  const double h = 8192, f = 28672;
  CHECK(count_parameters(relu2, 1).per_layer == count_parameters(gelu, 1).per_layer);
  CHECK(static_cast<double>(count_parameters(swiglu, 1).per_layer - count_parameters(relu2, 1).per_layer) ==
        doctest::Approx(h * f + f)); // the gate's weights and biases
}
