#include "moe_dispatch_metadata.hpp"

#include <twocs/units/numeric.hpp>

#include "host_work.hpp"
#include "op_builders.hpp"

namespace twocs::model::detail {

using units::as_double;

/// The all-to-all dispatcher's metadata exchange before the dispatch (token_dispatcher.py,
/// MoEAlltoAllTokenDispatcher.preprocess): every rank all-gathers the per-expert token counts
/// (E int64 per rank) over the expert-parallel group (tp_ep_group: ep ranks with expert-tensor
/// parallelism 1). DeepEP exchanges them inside its dispatch (its notify kernel).
void add_count_exchange(StepSequence& steps, const LayerShape& shape, Pass pass) {
  if (shape.expert <= 1 || shape.expert_dispatcher != ExpertDispatcher::all_to_all) return;
  const double count_bytes = 8.0; // torch.long: routing_map.sum(dim=0).long()
  const units::Bytes gathered(count_bytes * as_double(shape.model.moe->experts) * as_double(shape.expert));
  steps.push_back(
      collective("moe.dispatch.counts.all_gather", Collective::all_gather, CommGroup::expert, pass, gathered));
}

/// HybridEP's metadata preprocessing before its dispatch (DeepEP hybrid-ep branch at 94a9f8f,
/// csrc/hybrid_ep/hybrid_ep.cu:135-160, executor/executor.cu:23-181): each rank's routing map, one
/// bool per token and expert, all-gathered over the expert-parallel group with NCCL
/// (all_gather_into_tensor; the custom NVLink all-gather is off by default since DeepEP #682),
/// then one scan kernel over the gathered maps (108 blocks, config.cuh:365) that writes every
/// rank's send and receive plan, after a memset of its scratch space and before the padding of
/// the per-expert counts (moe_kernels::hybridep_preprocess). Forward only, recomputation
/// included: the backward's dispatch and combine reuse the forward's handle (Megatron-LM
/// fused_a2a.py at d98e8a6, HybridEPDispatch.backward, HybridEPCombine.backward).
void add_hybridep_preprocess(StepSequence& steps, const LayerShape& shape, std::int64_t tokens, Pass pass) {
  if (shape.expert <= 1 || shape.expert_dispatcher != ExpertDispatcher::hybridep) return;
  const double map_bytes = as_double(tokens) * as_double(shape.model.moe->experts); // bool per token and expert
  const double gathered = map_bytes * as_double(shape.expert);
  steps.push_back(collective("moe.dispatch.routing_map.all_gather", Collective::all_gather, CommGroup::expert, pass,
                             units::Bytes(gathered)));
  // The scan reads every rank's map once; what it writes (per-rank offsets) is small.
  ComputeOp scan = memory_bound("moe.dispatch.preprocess", OpKind::elementwise, pass, shape.dtype, gathered, 1.0, 0);
  scan.host_launches = kernels_host_work(moe_kernels::hybridep_preprocess);
  steps.push_back(std::move(scan));
}

/// The host waits for the token counts' copy to the CPU (cuda_sync_point "before_ep_alltoall":
/// the split sizes of the variable all-to-all must be known on the host; Megatron-Core waits for
/// DeepEP's received counts likewise before it sizes the buffers, MoEFlexTokenDispatcher; HybridEP
/// synchronises its stream at the end of its preprocessing unless given an upper bound of the
/// received tokens, executor.cu:165-177), so the dispatch starts one launch after the device's
/// queue has drained. A sync-free dispatcher has none.
void add_dispatch_host_sync(StepSequence& steps, const LayerShape& shape, Pass pass) {
  if (shape.expert <= 1 || shape.sync_free_dispatch) return;
  steps.push_back(host_sync("moe.dispatch.host_sync", pass, shape.dtype));
}

} // namespace twocs::model::detail
