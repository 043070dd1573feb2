#include "mirror_sync.hpp"

namespace twocs::lowering::detail {

void synchronise_mirrored_copies(const IterationContext& context, DeviceLowering& device, std::int64_t parameters) {
  if (context.plan.pipeline_schedule != model::PipelineSchedule::dualpipe) return;
  RankCoordinates mirror = device.at;
  mirror.pipeline = context.plan.parallelism.pipeline - 1 - device.at.pipeline;
  const DeviceId a = device.device();
  const DeviceId b = context.layout.rank(mirror);
  const CollectiveSpec spec{model::Collective::all_reduce,
                            model::CommGroup::pipeline,
                            model::Pass::backward,
                            units::Bytes(static_cast<double>(parameters) * device.gradients.element_size()),
                            context.labels.mirror_sync,
                            -1,
                            -1,
                            Algorithm::ring,
                            ScheduleShape{},
                            std::nullopt};
  device.program.collective(spec, a < b ? std::vector<DeviceId>{a, b} : std::vector<DeviceId>{b, a}, {});
}

} // namespace twocs::lowering::detail
