// Private: the tied word embedding lives on the first and on the last pipeline stage; after
// backward the two sum its gradient (Megatron-LM's embedding group; Shoeybi et al. 2019).
#pragma once

#include "iteration_context.hpp"

namespace twocs::lowering::detail {

/// All-reduces the word-embedding gradient between the first and last stage, when they differ
/// and `device` is on one of them; nothing otherwise.
void synchronise_embedding(const IterationContext& context, DeviceLowering& device);

} // namespace twocs::lowering::detail
