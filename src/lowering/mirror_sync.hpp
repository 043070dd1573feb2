// Private: under dualpipe ranks i and p - 1 - i hold the same two model chunks, one copy each per
// direction (DeepSeek-V3 report, section 3.2.1: "two copies of the model parameters"); after the
// data-parallel reduction the two sum the gradients of both chunks before the optimizer step.
#pragma once

#include <cstdint>

#include "iteration_context.hpp"

namespace twocs::lowering::detail {

/// All-reduces `parameters` gradients (this rank's shard of both chunks) with the mirror rank;
/// nothing for other schedules.
void synchronise_mirrored_copies(const IterationContext& context, DeviceLowering& device, std::int64_t parameters);

} // namespace twocs::lowering::detail
