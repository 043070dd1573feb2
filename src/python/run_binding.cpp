// _twocs.run: one simulated iteration in this process, through the function `twocs run` uses
// (cli::simulate_run), and its timeline as columns for a pandas DataFrame.
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <twocs/report/json_summary.hpp>

#include "bindings.hpp"
#include "cli/run_command.hpp"

namespace py = pybind11;

namespace twocs::python {
namespace {

/// What a run keeps for Python: the summary as `--json` writes it, and the DAG and timeline
/// the timeline's rows come from (freed with the Python object).
struct Run {
  std::string summary_json;
  lowering::TaskGraph graph;
  engine::Timeline timeline;
};

std::shared_ptr<Run> run(const std::optional<std::string>& workload, const std::optional<std::string>& platform,
                         const std::vector<std::string>& overrides, const std::string& fold, bool ignore_memory,
                         const std::string& replay) {
  cli::RunOptions options;
  if (workload) options.workload = *workload;
  if (platform) options.platform = *platform;
  options.overrides = overrides;
  options.fold = cli::parse_fold_mode(fold);
  options.replay = cli::parse_replay_mode(replay);
  options.ignore_memory = ignore_memory;
  options.quiet = true; // no progress bar; warnings still reach stderr (make_logger)
  const auto log = make_logger();
  cli::SimulatedRun simulated = [&] {
    const py::gil_scoped_release unlocked; // the simulation reads no Python object
    return cli::simulate_run(options, *log);
  }();
  return std::make_shared<Run>(
      Run{report::json_summary(simulated.summary), std::move(simulated.graph), std::move(simulated.timeline)});
}

constexpr int task_kinds = 3; // compute, transfer, host (lowering/task_sink.hpp)
constexpr int passes = 4;     // forward, backward, recompute, optimizer (model/operator.hpp)

template <class T> py::array_t<T> array(const std::vector<T>& values) {
  return py::array_t<T>(static_cast<py::ssize_t>(values.size()), values.data());
}

/// The names of an enumeration's values 0 .. count-1, for pandas categories.
template <class Enum> py::list names(int count) {
  py::list out;
  for (int i = 0; i < count; ++i) out.append(std::string(to_string(static_cast<Enum>(i))));
  return out;
}

/// One row per simulated task of the devices asked for (all: none given): columns of numbers
/// and category codes, about 40 bytes a task; the categories' names beside them.
py::dict timeline_columns(const Run& r, const std::optional<std::vector<lowering::DeviceId>>& devices) {
  std::vector<bool> wanted(static_cast<std::size_t>(r.graph.device_count()), !devices);
  if (devices)
    for (const lowering::DeviceId d : *devices)
      if (d >= 0 && d < r.graph.device_count()) wanted[static_cast<std::size_t>(d)] = true;
  std::vector<std::int32_t> device, layer, micro_batch, peer;
  std::vector<std::uint8_t> stream, kind, pass;
  std::vector<std::uint32_t> label;
  std::vector<double> start, end, bytes;
  std::uint32_t labels = 0;
  for (lowering::TaskId id = 0; id < r.graph.size(); ++id) {
    const lowering::Task& t = r.graph.task(id);
    labels = std::max<std::uint32_t>(labels, t.label + 1U);
    if (!wanted[static_cast<std::size_t>(t.device)]) continue;
    device.push_back(t.device);
    stream.push_back(static_cast<std::uint8_t>(r.graph.stream(id)));
    kind.push_back(static_cast<std::uint8_t>(t.kind));
    pass.push_back(static_cast<std::uint8_t>(t.pass));
    label.push_back(t.label);
    layer.push_back(t.layer);
    micro_batch.push_back(t.micro_batch);
    start.push_back(r.timeline.tasks[id].start.value());
    end.push_back(r.timeline.tasks[id].finish.value());
    peer.push_back(t.is_transfer() ? r.graph.transfer(id).peer : -1);
    bytes.push_back(t.is_transfer() ? r.graph.transfer(id).bytes.value() : r.graph.kernel(id).bytes.value());
  }
  py::list label_names;
  for (std::uint32_t i = 0; i < labels; ++i) label_names.append(r.graph.label(i));
  py::dict out;
  out["device"] = array(device);
  out["stream"] = py::make_tuple(array(stream), names<lowering::Stream>(lowering::stream_count));
  out["kind"] = py::make_tuple(array(kind), names<lowering::TaskKind>(task_kinds));
  out["name"] = py::make_tuple(array(label), label_names);
  out["pass"] = py::make_tuple(array(pass), names<model::Pass>(passes));
  out["layer"] = array(layer);
  out["micro_batch"] = array(micro_batch);
  out["start_s"] = array(start);
  out["end_s"] = array(end);
  out["peer"] = array(peer);
  out["bytes"] = array(bytes);
  return out;
}

} // namespace

void bind_run(py::module_& module) {
  py::class_<Run, std::shared_ptr<Run>>(module, "Run")
      .def_readonly("summary_json", &Run::summary_json)
      .def("timeline_columns", &timeline_columns, py::arg("devices") = py::none())
      .def_property_readonly("task_count", [](const Run& r) { return r.graph.size(); });
  module.def("run", &run, py::arg("workload"), py::arg("platform"), py::arg("overrides"), py::arg("fold"),
             py::arg("ignore_memory"), py::arg("replay"), "Simulates one iteration (twocs.run wraps it)");
}

} // namespace twocs::python
