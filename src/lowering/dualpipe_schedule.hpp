// Private: DualPipe's order of work on one pipeline rank (DeepSeek-V3 technical report, arXiv
// 2412.19437, section 3.2.1; deepseek-ai/DualPipe, dualpipe/dualpipe.py, DualPipe.step).
#pragma once

#include <cstdint>
#include <vector>

#include <twocs/lowering/schedule.hpp>

namespace twocs::lowering::detail {

/// Rank `rank` of `p` (even) with `m` micro-batches (even, at least 2 p): slot 0 is the forward
/// direction's chunk (model stage `rank`, micro-batches 0 .. m/2 - 1 entering at rank 0), slot 1
/// the reverse direction's (model stage p - 1 - rank, micro-batches m/2 .. m - 1 entering at
/// rank p - 1).
[[nodiscard]] std::vector<WorkItem> dualpipe_schedule(std::int64_t p, std::int64_t m, std::int64_t rank);

} // namespace twocs::lowering::detail
