// Private: issues a costed operator sequence on one device, as the framework would: each kernel
// on the compute stream, each collective over the device's group of its kind with the wait the
// operator sequence asks for. The one place where model operators become tasks.
#pragma once

#include <cstdint>

#include "iteration_context.hpp"

namespace twocs::lowering::detail {

/// Issues `steps` of `layer` (-1: none) and `micro_batch` (-1: none) on `device`. While
/// `device.gradients_final`, kernels that finalise gradients hand them to its gradient buckets.
void emit_steps(DeviceLowering& device, const RankLayout& layout, const PreparedSequence& steps, std::int64_t layer,
                std::int64_t micro_batch);
/// Issues the collectives of `exchange` (a token exchange cut out of a layer), letting the next
/// `overlapped_ops` kernels run before each one's result is needed.
void emit_exchange(DeviceLowering& device, const RankLayout& layout, const PreparedSequence& exchange,
                   int overlapped_ops, std::int64_t layer, std::int64_t micro_batch);

} // namespace twocs::lowering::detail
