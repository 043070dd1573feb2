// The device of one of the repository's platform files (platforms/), and a GEMM to price on it:
// shared by the cost tests that check a platform's operator model against published kernel
// measurements (catalogue_mamf_test, power_limit_test, xla_gemm_table_test,
// blackwell_training_gemm_test); roofline_test builds its GEMMs with gemm_op too.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>

#include <twocs/config/scenario_loader.hpp>
#include <twocs/cost/kernel_cost_model.hpp>
#include <twocs/hardware/device.hpp>
#include <twocs/model/operator.hpp>

namespace twocs::testing {

/// The device `platforms/<platform>` describes, as `twocs run` resolves it.
inline hardware::DeviceSpec catalogue_device(const std::string& platform) {
  const auto path = std::filesystem::path(TWOCS_SOURCE_DIR) / "platforms" / platform;
  return config::parse_platform(config::read_input(path), {}).device;
}

/// `device`'s operator model with its measured rows set aside: the formula alone (the GH100
/// files read measured tables).
inline cost::KernelCostModel formula_model(hardware::DeviceSpec device) {
  device.kernels.measured.clear();
  return cost::KernelCostModel(std::move(device));
}

/// One m x n x k GEMM in `dtype`, as the lowering builds a linear layer's.
inline model::ComputeOp gemm_op(std::int64_t m, std::int64_t n, std::int64_t k,
                                model::Dtype dtype = model::Dtype::bf16) {
  model::ComputeOp op;
  op.name = "gemm";
  op.kind = model::OpKind::gemm;
  op.dtype = dtype;
  op.gemm = model::GemmShape{m, n, k, 1};
  op.flops = op.gemm->flops();
  op.bytes = op.gemm->operand_bytes(op.dtype);
  return op;
}

} // namespace twocs::testing
