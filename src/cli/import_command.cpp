#include "import_command.hpp"

#include <CLI/CLI.hpp>

#include <twocs/config/hf_import.hpp>
#include <twocs/config/scenario_loader.hpp>
#include <twocs/fileio/output_file.hpp>

namespace twocs::cli {

CLI::App* add_import_command(CLI::App& app, ImportOptions& options) {
  auto* command = app.add_subcommand("import", "Turn a model description from elsewhere into a twocs workload");
  command->require_subcommand(1);
  auto* hf = command->add_subcommand("hf", "Read a Hugging Face config.json into a workload YAML");
  hf->add_option("config", options.config, "The model's config.json")->required();
  hf->add_option("-o,--output", options.output, "Write the workload to FILE (default: print it)");
  return hf;
}

void run_import_hf(const ImportOptions& options, std::ostream& out) {
  const auto input = config::read_input(options.config);
  const std::string yaml = config::import_hf_config(input.text, options.config.filename().string());
  if (options.output)
    fileio::write_file_atomically(*options.output, yaml);
  else
    out << yaml;
}

} // namespace twocs::cli
