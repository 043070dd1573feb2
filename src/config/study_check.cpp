// Checks a study's keys by doing what each scenario will do: apply its --set to the base
// workload and platform and read them with the strict readers, so a misspelt key gets the
// same "did you mean" as on the command line, but located in the study file.
#include "study_reader.hpp"

#include <fmt/format.h>

#include "yaml_overrides.hpp"
#include "yaml_platform.hpp"
#include "yaml_workload.hpp"

namespace twocs::config::detail {
namespace {

struct BaseDocuments {
  YamlNode workload;
  YamlNode platform;
};

/// The base file, its read errors (missing, a directory, unreadable) located at the study's
/// `base.workload` or `base.platform`.
InputText read_base_file(const std::filesystem::path& path, const SourceLocation& where, const char* key) {
  try {
    return read_input(path);
  } catch (const InputError& error) {
    if (error.location()) throw;
    InputError located(fmt::format("{}: {}", key, error.problem()), {}, error.fix());
    located.set_location(where);
    throw located;
  }
}

YamlNode workload_tree(const InputText& text) {
  return parse_yaml_file(text.text, text.name, "'model:' and 'training:'");
}
YamlNode platform_tree(const InputText& text) {
  return parse_yaml_file(text.text, text.name, "'device:', 'node:' and 'cluster:'");
}

BaseDocuments parse_base(const ReadStudy& read) {
  const Study& study = read.study;
  const InputText workload = study.workload ? read_base_file(*study.workload, read.workload_where, "base.workload")
                                            : embedded_default_workload();
  const InputText platform = study.platform ? read_base_file(*study.platform, read.platform_where, "base.platform")
                                            : embedded_default_platform();
  return {workload_tree(workload), platform_tree(platform)};
}

/// Re-locates an error raised inside the --set `origin` to the study file: at the key when it
/// is about the key, at the value otherwise.
[[noreturn]] void relocate(const InputError& error, const LocatedSet& origin) {
  const auto& at = error.location();
  if (at && at->file == "--set " + origin.argument) {
    const bool about_key = at->column <= static_cast<int>(origin.key_length) + 1;
    InputError moved(error.problem(), error.key_path(), error.fix());
    moved.set_location(about_key ? origin.key_where : origin.value_where);
    throw moved;
  }
  throw InputError(fmt::format("with '{}' from the study: {}", origin.argument, error.message()), {},
                   "check the study's base files and this value");
}

/// Applies `sets` to copies of `base` and reads both files. An error that names no --set
/// argument (one inside a base file) is blamed on the last set, the value under test.
void read_with(const BaseDocuments& base, const std::vector<const LocatedSet*>& sets) {
  try {
    std::vector<std::string> arguments;
    for (const LocatedSet* s : sets)
      if (!s->file) arguments.push_back(s->argument);
    const std::vector<Override> overrides = parse_overrides(arguments);
    BaseDocuments copy = base;
    apply_overrides(copy.workload, overrides, InputKind::workload);
    apply_overrides(copy.platform, overrides, InputKind::platform);
    (void)read_workload(copy.workload, "study");
    (void)read_platform(copy.platform, "study");
  } catch (InputError& error) {
    for (const LocatedSet* s : sets)
      if (error.location() && error.location()->file == "--set " + s->argument) relocate(error, *s);
    relocate(error, *sets.back());
  }
}

/// The base documents with a file axis's value in place of its base file; the file's read
/// errors (missing, unreadable) are located at the value.
BaseDocuments with_file(const BaseDocuments& base, const LocatedSet& value) {
  const std::string key = value.argument.substr(0, value.key_length);
  const InputText text = read_base_file(*value.file, value.value_where, key.c_str());
  BaseDocuments copy = base;
  if (key == "platform")
    copy.platform = platform_tree(text);
  else
    copy.workload = workload_tree(text);
  return copy;
}

} // namespace

void check_study(const ReadStudy& study) {
  const BaseDocuments base = parse_base(study);
  std::vector<const LocatedSet*> base_sets;
  for (const LocatedSet& s : study.base) base_sets.push_back(&s);
  if (!base_sets.empty()) read_with(base, base_sets);
  for (const auto& axis : study.axis_sets)
    for (const LocatedSet& value : axis) {
      std::vector<const LocatedSet*> sets = base_sets;
      sets.push_back(&value);
      read_with(value.file ? with_file(base, value) : base, sets);
    }
}

} // namespace twocs::config::detail
