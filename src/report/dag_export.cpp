#include <twocs/report/dag_export.hpp>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include <twocs/units/format.hpp>

#include <twocs/fileio/chunked_writer.hpp>
#include <twocs/fileio/text_escape.hpp>

namespace twocs::report {
namespace {

using fileio::ChunkedWriter;
using lowering::TaskGraph;
using lowering::TaskId;

std::string_view dot_colour(const TaskGraph& graph, TaskId id) {
  const lowering::Task& t = graph.task(id);
  switch (graph.stream(id)) {
  case lowering::Stream::compute: return t.pass == model::Pass::forward ? "#c6dbef" : "#fdd0a2";
  case lowering::Stream::tensor_comm: return "#fcbba1";
  case lowering::Stream::pipeline_comm: return "#c7e9c0";
  case lowering::Stream::data_comm: return "#fff3b0";
  case lowering::Stream::expert_comm: return "#dadaeb";
  case lowering::Stream::context_comm: return "#d9f0d3";
  case lowering::Stream::host: return "#e0e0e0";
  }
  return "#ffffff";
}

/// Task ids grouped by device (the device computing, or the sender), in id order within a device.
std::vector<std::vector<TaskId>> tasks_by_device(const TaskGraph& graph) {
  std::vector<std::vector<TaskId>> out(static_cast<std::size_t>(std::max(graph.device_count(), 0)));
  const auto count = static_cast<TaskId>(graph.size());
  for (TaskId id = 0; id < count; ++id) out[static_cast<std::size_t>(graph.task(id).device)].push_back(id);
  return out;
}

void write_dot_node(ChunkedWriter& w, const TaskGraph& graph, TaskId id) {
  const lowering::Task& t = graph.task(id);
  const std::string cost =
      t.is_transfer() ? units::to_string(graph.transfer(id).bytes) : units::to_string(graph.kernel(id).duration);
  w.format("    t{} [label=\"{}\\n{}\"", id, fileio::dot_escape(graph.display_name(id)), fileio::dot_escape(cost));
  w.format(", fillcolor=\"{}\"{}];\n", dot_colour(graph, id), t.is_transfer() ? ", shape=ellipse" : "");
  w.end_record();
}

/// The number of labels the tasks use: the graph interns them densely from 0.
std::uint32_t label_count(const TaskGraph& graph) {
  std::uint32_t count = 0;
  const auto tasks = static_cast<TaskId>(graph.size());
  for (TaskId id = 0; id < tasks; ++id) count = std::max<std::uint32_t>(count, graph.task(id).label + 1U);
  return count;
}

/// Every task has every field in the file (interface contract): what its kind lacks is written
/// as none (-1) or zero.
void write_json_task(ChunkedWriter& w, const TaskGraph& graph, TaskId id) {
  const lowering::Task& t = graph.task(id);
  const lowering::Transfer none;
  const lowering::Transfer& x = t.is_transfer() ? graph.transfer(id) : none;
  const lowering::Kernel idle{units::Seconds(0), units::Flops(0), x.bytes, false};
  const lowering::Kernel& k = t.is_transfer() ? idle : graph.kernel(id);
  w.format(R"({{"id":{},"kind":"{}","device":{},"peer":{},"stream":"{}","pass":"{}",)", id, lowering::to_string(t.kind),
           t.device, x.peer, lowering::to_string(graph.stream(id)), model::to_string(t.pass));
  w.format(R"("layer":{},"micro_batch":{},"label":{},"collective":{},"step":{},"duration_s":)", t.layer, t.micro_batch,
           t.label, x.collective, x.step);
  fileio::append_json_number(w.buffer(), k.duration.value());
  w.append(",\"flops\":");
  fileio::append_json_number(w.buffer(), k.flops.value());
  w.append(",\"bytes\":");
  fileio::append_json_number(w.buffer(), k.bytes.value());
  w.format(R"(,"model_flops":{}}})", k.model_flops);
}

template <class F> void for_each_dependency(const TaskGraph& graph, F&& f) {
  const auto count = static_cast<TaskId>(graph.size());
  for (TaskId id = 0; id < count; ++id) graph.for_each_successor(id, [&](TaskId next) { f(id, next); });
}

} // namespace

void write_dag_dot(std::ostream& out, const TaskGraph& graph) {
  ChunkedWriter w(out);
  w.append("digraph twocs {\n  rankdir=LR;\n");
  w.append("  node [shape=box, style=filled, fontname=\"Helvetica\", fontsize=10];\n");
  const auto by_device = tasks_by_device(graph);
  for (std::size_t device = 0; device < by_device.size(); ++device) {
    w.format("  subgraph cluster_{0} {{\n    label=\"device {0}\";\n", device);
    for (const TaskId id : by_device[device]) write_dot_node(w, graph, id);
    w.append("  }\n");
  }
  for_each_dependency(graph, [&](TaskId from, TaskId to) {
    w.format("  t{} -> t{};\n", from, to);
    w.end_record();
  });
  w.append("}\n");
  w.flush();
}

void write_dag_json(std::ostream& out, const TaskGraph& graph) {
  ChunkedWriter w(out);
  w.format("{{\n\"devices\":{},\n\"labels\":[", graph.device_count());
  const std::uint32_t labels = label_count(graph);
  for (std::uint32_t i = 0; i < labels; ++i) {
    if (i > 0) w.append(",");
    fileio::append_json_string(w.buffer(), graph.label(i));
  }
  w.append("],\n\"tasks\":[");
  const auto count = static_cast<TaskId>(graph.size());
  for (TaskId id = 0; id < count; ++id) {
    w.append(id == 0 ? "\n" : ",\n");
    write_json_task(w, graph, id);
    w.end_record();
  }
  w.append("\n],\n\"dependencies\":[");
  bool first = true;
  for_each_dependency(graph, [&](TaskId from, TaskId to) {
    w.format("{}[{},{}]", first ? "\n" : ",\n", from, to);
    first = false;
    w.end_record();
  });
  w.append("\n]\n}\n");
  w.flush();
}

} // namespace twocs::report
