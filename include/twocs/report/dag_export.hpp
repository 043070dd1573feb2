// Dumping the task DAG for inspection and golden tests: Graphviz DOT or JSON.
#pragma once

#include <ostream>

#include <twocs/lowering/task_graph.hpp>

namespace twocs::report {

void write_dag_dot(std::ostream& out, const lowering::TaskGraph& graph);
void write_dag_json(std::ostream& out, const lowering::TaskGraph& graph);

} // namespace twocs::report
