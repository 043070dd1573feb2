#include <twocs/model/weight_grad_memory.hpp>

#include <variant>

#include <twocs/units/numeric.hpp>

namespace twocs::model {

units::Bytes weight_grad_operand_bytes(const LayerShape& shape) {
  units::Bytes total{};
  for (const Step& step : transformer_layer_backward(shape)) {
    const auto* op = std::get_if<ComputeOp>(&step);
    if (op == nullptr || op->kind != OpKind::gemm || op->grad_params == 0 || !op->gemm) continue;
    // dW[m x n] = X^T[m x k] . dY[k x n]: the input X^T and the output gradient dY, per batch entry.
    const GemmShape& g = *op->gemm;
    const double elements = units::as_double(g.batch) * (units::as_double(g.m) * units::as_double(g.k) +
                                                         units::as_double(g.k) * units::as_double(g.n));
    total += size_of(elements, op->dtype);
  }
  return total;
}

} // namespace twocs::model
