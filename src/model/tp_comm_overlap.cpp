// The sequence-parallel all-gathers and reduce-scatters beside the linear layers' GEMMs, as
// training.overlap.tp_comm runs them (docs/simulation.md, "Tensor-parallel communication
// overlap"). A chunked pair is a sequence of steps in which each exchange overlaps the one GEMM
// chunk after it (CollectiveOp::overlapped_ops = 1) and the next chunk waits for it: step i of the
// pipeline starts when both the GEMM chunk and the exchange of step i - 1 are done.
//
// Transformer Engine's userbuffers (transformer_engine/pytorch/module/base.py, initialize_ub, and
// common/comm_gemm_overlap/comm_gemm_overlap.cpp at NVIDIA/TransformerEngine d0067d0):
// - all-gather + GEMM (qkv_fprop, fc1_fprop, proj_dgrad, fc2_dgrad: "ring_exchange",
//   num_splits = tp_size): t GEMM chunks of b s / t rows, the local shard's first; t - 1
//   send/recv steps, each handing the shard just received to the next rank (split_overlap_ag);
//   the gathered buffer is FP8 when the GEMM's input is (fp8_buf for the all-gather layers);
// - GEMM + reduce-scatter (proj_fprop, fc2_fprop: "pipeline", num_splits = 4): 4 GEMM chunks,
//   each one's rows reduce-scattered while the next runs (split_overlap_rs), in BF16;
// - GEMM + reduce-scatter with "ring_exchange" (tp_comm_reduce_scatter; NeMo's FP8 H100 presets):
//   t GEMM chunks, each the rows one rank owns, sent to it while the next runs, the own rows
//   last, then one kernel sums the t partials (CommOverlapP2PBase::split_overlap_rs);
// - the column-parallel backward ("bulk", qkv_dgrad/qkv_wgrad, fc1_dgrad/fc1_wgrad): the input's
//   all-gather under dgrad and dgrad's reduce-scatter under wgrad, as Megatron-LM's asynchronous
//   backward already runs them (tensor_parallel.cpp), always on, the all-gather in FP8 under FP8.
// PyTorch's async TP (torch/distributed/_symmetric_memory/__init__.py at pytorch/pytorch 006b161):
// - _pipelined_all_gather_and_consume: the local shard's GEMM, then t - 1 steps each copying one
//   peer's shard and running its GEMM;
// - _pipelined_produce_and_all2all + reduce_partials: t - 1 steps each computing the GEMM rows a
//   peer owns and copying them to it, the own rows last, then one kernel summing the t partials.
#include <twocs/units/numeric.hpp>

#include "memory_bound_costs.hpp"
#include "op_builders.hpp"
#include "tensor_parallel.hpp"

namespace twocs::model::detail {
namespace {

/// Transformer Engine's default chunk count for its pipelined GEMM + reduce-scatter
/// (initialize_ub, get_default_config: num_splits 4 unless ring_exchange).
constexpr std::int64_t te_pipeline_splits = 4;

/// Rows of chunk `i` of `n` over `tokens` rows: the first tokens mod n chunks one row longer.
std::int64_t chunk_rows(std::int64_t tokens, std::int64_t n, std::int64_t i) {
  return tokens * (i + 1) / n - tokens * i / n;
}

CollectiveOp exchange(const std::string& name, Pass pass, units::Bytes shard) {
  return collective(name + ".ring_exchange", Collective::ring_exchange, CommGroup::tensor, pass, shard, 1);
}

/// A GEMM over `rows` rows, one of `chunks` chunks of the layer's GEMM (1: the whole of it),
/// on the device's SMs less `sm_margin`.
ComputeOp gemm_chunk(const RowGemm& gemm, std::int64_t rows, Pass pass, std::int64_t chunks = 1,
                     std::int64_t sm_margin = 0) {
  ComputeOp op = gemm(rows);
  op.pass = pass;
  op.gemm_chunks = chunks;
  op.sm_margin = sm_margin;
  return op;
}

} // namespace

bool gathers_fp8(const LayerShape& shape) { return shape.fp8_linear && shape.sequence_parallel; }

units::Bytes gathered_activation(const LayerShape& shape, const LayerDims& d) {
  if (shape.fp8_linear) return d.activation * (element_size(Dtype::fp8) / element_size(shape.dtype));
  return d.activation;
}

std::optional<ComputeOp> dtensor_layout_copy(const LayerShape& shape, const std::string& name, Pass pass,
                                             units::Bytes bytes, bool gathered) {
  if (!shape.dtensor_tp || !shape.sequence_parallel) return std::nullopt;
  if (gathered && shape.micro_batch <= 1) return std::nullopt;
  // One read and one write of the buffer (counted in bytes: FP8 or 16-bit alike).
  return memory_bound(name + ".chunk_cat", OpKind::elementwise, pass, shape.dtype, bytes.value(), 2.0, 0.0);
}

void add_gathered_gemm(StepSequence& steps, const LayerShape& shape, const LayerDims& d, const std::string& name,
                       Pass pass, const RowGemm& gemm) {
  if (!shape.sequence_parallel || shape.tp_comm == TpCommOverlap::none) {
    if (shape.sequence_parallel) {
      CollectiveOp gather = enter_gathered_region(shape, d, name);
      gather.pass = pass;
      const std::string gathered = gather.name;
      steps.push_back(std::move(gather));
      if (auto copy = dtensor_layout_copy(shape, gathered, pass, gathered_activation(shape, d), true))
        steps.push_back(std::move(*copy));
    }
    steps.push_back(gemm_chunk(gemm, d.tokens, pass));
    return;
  }
  const std::int64_t t = shape.tensor;
  const units::Bytes shard = gathered_activation(shape, d) * (1.0 / units::as_double(t)); // one rank's
  for (std::int64_t i = 0; i < t; ++i) {
    if (i + 1 < t) steps.push_back(exchange(name, pass, shard)); // the next shard, under this chunk
    steps.push_back(gemm_chunk(gemm, chunk_rows(d.tokens, t, i), pass, t));
  }
}

void add_scattered_gemm(StepSequence& steps, const LayerShape& shape, const LayerDims& d, const std::string& name,
                        Pass pass, const RowGemm& gemm, std::int64_t sm_margin) {
  if (!shape.sequence_parallel || shape.tp_comm == TpCommOverlap::none) {
    steps.push_back(gemm_chunk(gemm, d.tokens, pass));
    if (auto copy = dtensor_layout_copy(shape, name + ".reduce_scatter", pass, d.activation, false))
      steps.push_back(std::move(*copy));
    if (auto leave = leave_region_forward(shape, d, name)) {
      leave->pass = pass;
      steps.push_back(std::move(*leave));
    }
    return;
  }
  if (shape.tp_comm == TpCommOverlap::transformer_engine && shape.tp_comm_reduce_scatter == TpReduceScatter::pipeline) {
    const std::int64_t n = te_pipeline_splits;
    for (std::int64_t i = 0; i < n; ++i) {
      steps.push_back(gemm_chunk(gemm, chunk_rows(d.tokens, n, i), pass, n, sm_margin));
      const int overlapped = i + 1 < n ? 1 : 0; // the last chunk's reduce-scatter ends the pair
      steps.push_back(collective(name + ".reduce_scatter", Collective::reduce_scatter, CommGroup::tensor, pass,
                                 d.activation * (1.0 / units::as_double(n)), overlapped));
    }
    return;
  }
  // async TP and Transformer Engine's ring_exchange: the rows each peer owns, computed and copied
  // to it while the next rows compute.
  const std::int64_t t = shape.tensor;
  const units::Bytes shard = d.activation * (1.0 / units::as_double(t));
  for (std::int64_t i = 0; i < t; ++i) {
    steps.push_back(gemm_chunk(gemm, chunk_rows(d.tokens, t, i), pass, t, sm_margin));
    if (i + 1 < t) steps.push_back(exchange(name, pass, shard));
  }
  // reduce_partials: reads the t partial shards, writes the reduced one (b s h / t outputs).
  const double outputs = units::as_double(d.tokens) * units::as_double(shape.model.hidden) / units::as_double(t);
  const double bytes_per_output = (units::as_double(t) + 1.0) * element_size(shape.dtype);
  steps.push_back(memory_bound(name + ".reduce_partials", OpKind::elementwise, pass, shape.dtype, outputs,
                               bytes_per_output, units::as_double(t) - 1.0));
}

} // namespace twocs::model::detail
