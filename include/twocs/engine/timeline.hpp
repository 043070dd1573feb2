// What a simulation produces: when each task of the DAG started and finished.
#pragma once

#include <cstdint>
#include <vector>

#include <twocs/units/quantity.hpp>

namespace twocs::engine {

struct TaskTiming {
  units::Seconds start;
  units::Seconds finish;
};

struct Timeline {
  std::vector<TaskTiming> tasks; // indexed by lowering::TaskId
  units::Seconds makespan;       // the latest finish; the iteration starts at 0
};

} // namespace twocs::engine
