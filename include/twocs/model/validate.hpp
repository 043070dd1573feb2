// Consistency checks of a model and its training plan, independent of any file format.
// Violations throw InputError naming the dotted key at fault (e.g. "training.parallelism.tensor")
// and how to fix it; the config layer adds the file, line and column of that key.
#pragma once

#include <twocs/model/training_plan.hpp>
#include <twocs/model/transformer.hpp>

namespace twocs::model {

void validate(const TransformerConfig& model);
void validate(const TransformerConfig& model, const TrainingPlan& plan);

} // namespace twocs::model
