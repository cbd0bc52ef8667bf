#pragma once
/// The commands' structured output: the JSON document a command builds,
/// printed as it is (`-o json`) or as YAML (`-o yaml`).

#include <optional>
#include <string>
#include <string_view>

namespace policy::tooling {

enum class OutputFormat { kText, kJson, kYaml };

/// `--output`'s value; nullopt (after a message naming the command) when it
/// is none of text, json and yaml.
std::optional<OutputFormat> ParseOutputFormat(std::string_view command, std::string_view value);

/// `json` (a document the command wrote) in `format`: as it is for kJson,
/// else as YAML written by yaml-cpp's emitter, with the same keys in the same
/// order and every string that YAML would read as something else quoted.
std::string Structured(OutputFormat format, const std::string& json);

}  // namespace policy::tooling
