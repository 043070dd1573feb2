#include <twocs/config/validation_suite.hpp>

#include <array>
#include <string_view>

#include <fmt/format.h>

#include <twocs/config/scenario_loader.hpp>

#include "yaml_document.hpp"
#include "yaml_quantity.hpp"
#include "yaml_reader.hpp"

namespace twocs::config {
namespace {

using detail::Field;
using detail::MappingReader;

constexpr std::array<std::string_view, 1> suite_keys = {"runs"};
constexpr std::array<std::string_view, 9> run_keys = {"name", "citation", "kind", "workload", "platform",
                                                      "set",  "measured", "fold", "part"};
constexpr std::array<std::string_view, 4> iteration_keys = {"iteration_time", "tokens_per_second_per_gpu",
                                                            "model_tflops_per_gpu", "peak_memory"};
constexpr std::array<std::string_view, 3> fold_names = {"auto", "on", "off"};
constexpr std::array fold_values = {ValidationFold::automatic, ValidationFold::on, ValidationFold::off};
constexpr std::array<std::string_view, 3> layer_keys = {"forward", "backward", "forward_backward"};
constexpr std::array<std::string_view, 2> kind_names = {"iteration", "layer"};
constexpr std::array kind_values = {ValidationKind::iteration, ValidationKind::layer};
constexpr std::array<std::string_view, 2> part_names = {"layer", "moe"};
constexpr std::array part_values = {ValidationPart::layer, ValidationPart::moe};

void read_overrides(const Field& field, ValidationRun& run) {
  for (const Field& item : detail::read_list(field)) {
    std::string text = detail::read_text(item);
    if (text.find('=') == std::string::npos)
      detail::fail_at(item.where(), item.path, fmt::format("'{}' is not KEY=VALUE", text),
                      "write each override as in `twocs run --set`, e.g. cluster.network.bandwidth=6.25GB/s");
    const bool plain = !item.value->quoted && text.find('\n') == std::string::npos;
    run.override_origins.push_back({item.where(), plain});
    run.overrides.push_back(std::move(text));
  }
}

double read_positive_rate(const Field& field, std::string_view example) {
  const double rate = detail::read_real(field);
  if (!(rate > 0)) detail::fail_at(field.where(), field.path, "the throughput must be positive", std::string(example));
  return rate;
}

void read_iteration_measurement(const Field& field, ValidationRun& run) {
  const MappingReader m(field, iteration_keys);
  const auto time = m.optional("iteration_time");
  const auto tokens = m.optional("tokens_per_second_per_gpu");
  const auto tflops = m.optional("model_tflops_per_gpu");
  if (int{time.has_value()} + int{tokens.has_value()} + int{tflops.has_value()} != 1)
    detail::fail_at(field.where(), field.path,
                    "give exactly one of iteration_time, tokens_per_second_per_gpu and model_tflops_per_gpu",
                    "e.g. measured: {iteration_time: 3.53s}");
  if (time) run.iteration_time = detail::read_duration(*time, "3.53s");
  if (tokens) run.tokens_per_second_per_gpu = read_positive_rate(*tokens, "e.g. 716 (tokens/s/GPU)");
  if (tflops) run.model_tflops_per_gpu = read_positive_rate(*tflops, "e.g. 430 (model TFLOP/s per GPU)");
  if (const auto peak = m.optional("peak_memory")) run.peak_memory = detail::read_bytes(*peak, "82.4GiB");
}

void read_layer_measurement(const Field& field, ValidationRun& run) {
  const MappingReader m(field, layer_keys);
  if (const auto sum = m.optional("forward_backward")) {
    // A source that publishes only the sum (a harness's forward plus backward).
    if (m.optional("forward") || m.optional("backward"))
      detail::fail_at(field.where(), field.path, "give forward and backward, or forward_backward alone",
                      "e.g. {forward: 7.7ms, backward: 11.9ms} or {forward_backward: 19.6ms}");
    run.forward_backward = detail::read_duration(*sum, "19.6ms");
    if (run.forward_backward->value() <= 0)
      detail::fail_at(sum->where(), sum->path, "layer times must be positive", "e.g. {forward_backward: 19.6ms}");
    return;
  }
  run.forward = detail::read_duration(m.required("forward", "7.7ms"), "7.7ms");
  run.backward = detail::read_duration(m.required("backward", "11.9ms"), "11.9ms");
  if (run.forward.value() <= 0 || run.backward.value() <= 0)
    detail::fail_at(field.where(), field.path, "layer times must be positive",
                    "e.g. {forward: 7.7ms, backward: 11.9ms}");
}

ValidationRun read_run(const Field& field, const std::filesystem::path& base_dir) {
  const MappingReader r(field, run_keys);
  ValidationRun run;
  run.where = field.key_where;
  run.name = detail::read_text(r.required("name", "megatron-sc21-t1-1.7b"));
  run.citation = detail::read_text(r.required("citation", "\"Narayanan et al. SC'21, Table 1, row 1\""));
  if (const auto f = r.optional("kind")) run.kind = detail::read_enum(*f, kind_names, kind_values);
  run.workload = base_dir / detail::read_text(r.required("workload", "megatron-sc21-t1-1.7b.yaml"));
  run.platform = base_dir / detail::read_text(r.required("platform", "../../platforms/dgx-a100-80gb.yaml"));
  if (const auto f = r.optional("set")) read_overrides(*f, run);
  if (const auto f = r.optional("fold")) run.fold = detail::read_enum(*f, fold_names, fold_values);
  if (const auto f = r.optional("part")) {
    run.part = detail::read_enum(*f, part_names, part_values);
    if (run.kind != ValidationKind::layer)
      detail::fail_at(f->where(), f->path, "part chooses what a layer row times, and this row is an iteration",
                      "add kind: layer, or remove part");
  }
  const Field measured = r.required("measured", "{iteration_time: 3.53s}");
  if (run.kind == ValidationKind::iteration)
    read_iteration_measurement(measured, run);
  else
    read_layer_measurement(measured, run);
  return run;
}

} // namespace

void locate_in_validation_file(InputError& error, const ValidationRun& run) {
  const auto& at = error.location();
  if (!at) return;
  for (std::size_t i = 0; i < run.overrides.size(); ++i) {
    if (at->file != "--set " + run.overrides[i]) continue;
    SourceLocation where = run.override_origins[i].where;
    if (run.override_origins[i].plain) where.column += at->column - 1;
    error.set_location(std::move(where));
    return;
  }
}

ValidationSuite parse_validation_suite(const std::string& name, const std::string& text,
                                       const std::filesystem::path& base_dir) {
  const detail::YamlNode root = detail::parse_yaml_file(text, name, "'runs:'");
  const MappingReader top(root, suite_keys, "the validation file");
  ValidationSuite suite;
  suite.name = std::filesystem::path(name).stem().string();
  const Field runs = top.required("runs", "[{name: ..., citation: ..., workload: ..., platform: ..., measured: ...}]");
  for (const Field& item : detail::read_list(runs)) {
    ValidationRun run = read_run(item, base_dir);
    for (const ValidationRun& earlier : suite.runs)
      if (earlier.name == run.name)
        detail::fail_at(run.where, item.path, fmt::format("run '{}' is listed twice", run.name),
                        "give every run its own name");
    suite.runs.push_back(std::move(run));
  }
  if (suite.runs.empty())
    detail::fail_at(runs.where(), runs.path, "the validation file lists no runs", "add at least one run");
  return suite;
}

ValidationSuite load_validation_suite(const std::filesystem::path& file) {
  const InputText input = read_input(file);
  return parse_validation_suite(input.name, input.text, file.parent_path());
}

} // namespace twocs::config
