// The CUDA streams of a device that the task DAG models.
#pragma once

#include <cstdint>
#include <string_view>

#include <twocs/model/operator.hpp>

namespace twocs::lowering {

/// A CUDA stream of one device. Tasks on one stream run in order (order edges in the DAG);
/// tasks on different streams of a device may overlap. `host` is not a CUDA stream but the CPU
/// thread that launches the others' work (TaskKind::host), shown beside them.
enum class Stream : std::uint8_t { compute, tensor_comm, pipeline_comm, data_comm, expert_comm, context_comm, host };

inline constexpr int stream_count = 7;
inline constexpr Stream all_streams[] = {Stream::compute,   Stream::tensor_comm, Stream::pipeline_comm,
                                         Stream::data_comm, Stream::expert_comm, Stream::context_comm,
                                         Stream::host};

[[nodiscard]] std::string_view to_string(Stream s);
/// The communication stream that carries collectives of `group`.
[[nodiscard]] Stream stream_for(model::CommGroup group);

} // namespace twocs::lowering
