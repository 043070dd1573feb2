// device.operator_model.fp8_gemm_layouts: whether a device's FP8 GEMMs take the TN layout only
// (Hopper: frameworks keep transposed FP8 copies for the weight gradient) or any layout
// (Blackwell), and what that changes in the layer's kernels (docs/simulation.md, "FP8").
#include <doctest/doctest.h>

#include <string>

#include <twocs/config/scenario_loader.hpp>
#include <twocs/model/layer_ops.hpp>

#include "config/input_error_capture.hpp"

using namespace twocs;

namespace {

std::string with_layouts(const std::string& value) {
  std::string yaml = test::small_platform;
  yaml.insert(yaml.find("node:"), "  operator_model:\n    fp8_gemm_layouts: " + value + "\n");
  return yaml;
}

} // namespace

TEST_CASE("fp8_gemm_layouts: tn by default, any where the platform says so") {
  const auto plain = config::load_scenario({"w.yaml", test::small_workload}, {"p.yaml", test::small_platform});
  CHECK_FALSE(plain.cluster.device.kernels.fp8_any_layout);
  const auto tn = config::load_scenario({"w.yaml", test::small_workload}, {"p.yaml", with_layouts("tn")});
  CHECK_FALSE(tn.cluster.device.kernels.fp8_any_layout);
  const auto any = config::load_scenario({"w.yaml", test::small_workload}, {"p.yaml", with_layouts("any")});
  CHECK(any.cluster.device.kernels.fp8_any_layout);
}

TEST_CASE("fp8_gemm_layouts: an unknown layout is located and told the choices") {
  const auto e = test::platform_error(with_layouts("nt"));
  CHECK(e.key_path() == "device.operator_model.fp8_gemm_layouts");
  CHECK(test::where(e) == "p.yaml:8:23");
  CHECK(e.problem() == "device.operator_model.fp8_gemm_layouts cannot be 'nt'; allowed values: tn, any");
  CHECK(e.fix() == "did you mean 'any'?");
}

TEST_CASE("fp8_gemm_layouts: on a device taking any layout Transformer Engine writes no transposes") {
  const auto workload = config::parse_workload({"w.yaml", test::small_workload});
  auto plan = workload.plan;
  plan.dtype = model::Dtype::fp8;
  plan.fp8_recipe = model::TrainingPlan::Fp8Recipe::delayed;
  const auto& model = workload.model;
  const auto count = [](const model::StepSequence& steps, const std::string& part) {
    int n = 0;
    for (const auto& step : steps)
      if (const auto* op = std::get_if<model::ComputeOp>(&step); op && op->name.find(part) != std::string::npos) ++n;
    return n;
  };
  const auto hopper = model::LayerShape::of(model, plan, false);
  const auto blackwell = model::LayerShape::of(model, plan, true);
  CHECK(hopper.fp8_transposes);
  CHECK_FALSE(blackwell.fp8_transposes);
  // Delayed scaling: the norm writes FP8 row-wise and the backward transposes it on Hopper.
  CHECK(count(model::transformer_layer_backward(hopper), "fp8_transpose") == 2);
  CHECK(count(model::transformer_layer_backward(blackwell), "fp8_transpose") == 0);
  // A cast writes the transpose too on Hopper only: 4 bytes an element against 3.
  const auto cast_bytes = [](const model::StepSequence& steps) {
    for (const auto& step : steps)
      if (const auto* op = std::get_if<model::ComputeOp>(&step); op && op->name == "attn.out.fp8_cast")
        return op->bytes.value();
    return 0.0;
  };
  const double hopper_cast = cast_bytes(model::transformer_layer_forward(hopper));
  const double blackwell_cast = cast_bytes(model::transformer_layer_forward(blackwell));
  REQUIRE(blackwell_cast > 0);
  CHECK(hopper_cast == doctest::Approx(blackwell_cast * 4 / 3).scale(0));
}
