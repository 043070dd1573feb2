// What a layer keeps alive between its B and its deferred W pass (zero-bubble schedules: Qi et
// al., "Zero Bubble Pipeline Parallelism", ICLR 2024, Table 1 and section 2.1).
#pragma once

#include <twocs/model/layer_ops.hpp>
#include <twocs/units/quantity.hpp>

namespace twocs::model {

/// The two operands of each weight-gradient GEMM of `shape`'s backward: the linear layer's input
/// and its output gradient, which W reads after B freed the rest (M_W = 32 b s h bytes for a
/// 16-bit GPT layer without tensor parallelism: Qi et al. 2024, Table 1).
[[nodiscard]] units::Bytes weight_grad_operand_bytes(const LayerShape& shape);

} // namespace twocs::model
