// Private: the model's sizes against twocs's limits (size_limits.hpp), each count alone and the
// whole model's parameters together.
#pragma once

#include <cstdint>

#include <twocs/model/transformer.hpp>

namespace twocs::model::detail {

/// An InputError naming `key` when `value` exceeds `limit`.
void require_at_most(std::int64_t value, std::int64_t limit, const char* key);

/// Throws InputError for a count beyond its limit, a negative count that may be 0, or sizes
/// whose model would hold more parameters than limits::parameters.
void validate_sizes(const TransformerConfig& m);

} // namespace twocs::model::detail
