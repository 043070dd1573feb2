#include "embedding_sync.hpp"

#include <twocs/model/parameters.hpp>

namespace twocs::lowering::detail {

void synchronise_embedding(const IterationContext& context, DeviceLowering& device) {
  const auto& first = context.chunks.front();
  const auto& last = context.chunks.back();
  // Untied input and output embeddings (LLaMA) have nothing to synchronise, unless multi-token
  // prediction keeps a copy of the embedding on the last stage (Megatron-Core
  // finalize_model_grads.py, _get_shared_word_embedding_weight: "or mtp_num_layers").
  const bool shared = context.model.tied_embeddings || last.mtp_layers > 0;
  if (!shared || first.stage == last.stage || (device.at.pipeline != first.stage && device.at.pipeline != last.stage))
    return;
  const DeviceId a = context.device_of_chunk(device.at, first.chunk);
  const DeviceId b = context.device_of_chunk(device.at, last.chunk);
  const auto elements = static_cast<double>(model::local_vocab(context.model.vocab, context.plan.parallelism.tensor) *
                                            context.model.hidden);
  const CollectiveSpec spec{model::Collective::all_reduce,
                            model::CommGroup::pipeline,
                            model::Pass::backward,
                            units::Bytes(elements * device.gradients.element_size()),
                            context.labels.embedding_sync,
                            -1,
                            -1,
                            Algorithm::ring,
                            ScheduleShape{},
                            std::nullopt};
  device.program.collective(spec, {a, b}, {});
}

} // namespace twocs::lowering::detail
