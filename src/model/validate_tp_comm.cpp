// training.overlap.tp_comm: the combinations the frameworks refuse.
#include "validate_tp_comm.hpp"

#include <fmt/format.h>

#include <twocs/error.hpp>

namespace twocs::model::detail {
namespace {

constexpr const char* tp_comm_key = "training.overlap.tp_comm";

} // namespace

void validate_tp_comm(const TrainingPlan& plan) {
  const TpCommOverlap overlap = plan.overlap.tp_comm;
  if (plan.overlap.tp_comm_reduce_scatter != TpReduceScatter::pipeline && overlap != TpCommOverlap::transformer_engine)
    throw InputError(fmt::format("training.overlap.tp_comm_reduce_scatter chooses Transformer Engine's method for "
                                 "its GEMM + reduce-scatter overlap, but training.overlap.tp_comm is {}",
                                 to_string(overlap)),
                     "training.overlap.tp_comm_reduce_scatter",
                     "set training.overlap.tp_comm: transformer_engine, or remove tp_comm_reduce_scatter");
  const TpSmMargin& margin = plan.overlap.tp_comm_sm_margin;
  if ((margin.proj_fprop > 0 || margin.fc2_fprop > 0) && overlap != TpCommOverlap::transformer_engine)
    throw InputError(fmt::format("training.overlap.tp_comm_sm_margin withholds SMs from Transformer Engine's "
                                 "userbuffers GEMMs, but training.overlap.tp_comm is {}",
                                 to_string(overlap)),
                     "training.overlap.tp_comm_sm_margin",
                     "set training.overlap.tp_comm: transformer_engine, or remove tp_comm_sm_margin");
  if (overlap == TpCommOverlap::none) return;
  // Megatron-LM arguments.py: "Tensor parallel communication/GEMM overlap can happen only when
  // sequence parallelism is enabled"; torchtitan's async TP chunks the sequence-parallel collectives.
  if (!plan.parallelism.sequence || plan.parallelism.tensor <= 1)
    throw InputError(fmt::format("training.overlap.tp_comm: {} overlaps the all-gathers and reduce-scatters of "
                                 "sequence parallelism, and this plan has none (tensor {}, sequence {})",
                                 to_string(overlap), plan.parallelism.tensor, plan.parallelism.sequence),
                     tp_comm_key, "set training.parallelism.sequence: true with tensor > 1, or tp_comm: none");
  if (overlap == TpCommOverlap::transformer_engine && plan.framework != Framework::megatron_lm)
    throw InputError(fmt::format("training.overlap.tp_comm: transformer_engine is Megatron-Core's --tp-comm-overlap "
                                 "(Transformer Engine's userbuffers), but training.framework is {}",
                                 to_string(plan.framework)),
                     tp_comm_key, "use framework: megatron-lm, or tp_comm: async_tp with framework: fsdp");
  if (overlap == TpCommOverlap::async_tp && plan.framework != Framework::fsdp)
    throw InputError(fmt::format("training.overlap.tp_comm: async_tp is PyTorch's micro-pipelined tensor parallelism "
                                 "(torchtitan's enable_async_tensor_parallel), but training.framework is {}",
                                 to_string(plan.framework)),
                     tp_comm_key, "use framework: fsdp, or tp_comm: transformer_engine with framework: megatron-lm");
  // torchtitan parallelize.py: "Async TP requires torch.compile" (its Inductor pass fuses the pairs).
  if (overlap == TpCommOverlap::async_tp && plan.kernels == KernelFusion::eager)
    throw InputError("training.overlap.tp_comm: async_tp needs torch.compile, whose Inductor pass fuses each "
                     "all-gather or reduce-scatter with its matmul, and training.kernels is eager",
                     tp_comm_key, "set training.kernels: fused (torch.compile), or tp_comm: none");
}

} // namespace twocs::model::detail
