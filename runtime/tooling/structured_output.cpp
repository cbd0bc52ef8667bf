#include "runtime/tooling/structured_output.h"

#include <simdjson.h>
#include <yaml-cpp/yaml.h>

#include <cstdio>

#include <fmt/format.h>

namespace policy::tooling {
namespace {

// Whether a plain YAML scalar `s` might be read as something other than a
// string (a bool, null or number in YAML 1.1 or 1.2): then it is quoted.
// Anything that starts like a number is quoted (harmless when it is not one).
bool NeedsQuotes(std::string_view s) {
  static constexpr std::string_view kWords[] = {
      "~", "null", "Null", "NULL", "y", "Y", "yes", "Yes", "YES", "n", "N", "no", "No", "NO", "true", "True",
      "TRUE", "false", "False", "FALSE", "on", "On", "ON", "off", "Off", "OFF"};
  if (s.empty()) return true;
  for (std::string_view w : kWords) {
    if (s == w) return true;
  }
  std::string_view rest = s.front() == '-' || s.front() == '+' ? s.substr(1) : s;
  return !rest.empty() && ((rest.front() >= '0' && rest.front() <= '9') || rest.front() == '.');
}

void Emit(YAML::Emitter& out, simdjson::dom::element e) {
  switch (e.type()) {
    case simdjson::dom::element_type::OBJECT: {
      simdjson::dom::object object = e.get_object().value_unsafe();
      if (object.size() == 0) out << YAML::Flow;
      out << YAML::BeginMap;
      for (simdjson::dom::key_value_pair field : object) {
        out << YAML::Key;
        if (NeedsQuotes(field.key)) out << YAML::DoubleQuoted;  // a key `on` is true in YAML 1.1
        out << std::string(field.key) << YAML::Value;
        Emit(out, field.value);
      }
      out << YAML::EndMap;
      return;
    }
    case simdjson::dom::element_type::ARRAY: {
      simdjson::dom::array array = e.get_array().value_unsafe();
      if (array.size() == 0) out << YAML::Flow;
      out << YAML::BeginSeq;
      for (simdjson::dom::element item : array) Emit(out, item);
      out << YAML::EndSeq;
      return;
    }
    case simdjson::dom::element_type::STRING: {
      std::string s(e.get_string().value_unsafe());
      if (NeedsQuotes(s)) out << YAML::DoubleQuoted;
      out << s;
      return;
    }
    case simdjson::dom::element_type::INT64: out << e.get_int64().value_unsafe(); return;
    case simdjson::dom::element_type::UINT64: out << e.get_uint64().value_unsafe(); return;
    case simdjson::dom::element_type::DOUBLE: out << e.get_double().value_unsafe(); return;
    case simdjson::dom::element_type::BOOL: out << (e.get_bool().value_unsafe() ? "true" : "false"); return;
    case simdjson::dom::element_type::NULL_VALUE: out << YAML::Null; return;
  }
}

}  // namespace

std::optional<OutputFormat> ParseOutputFormat(std::string_view command, std::string_view value) {
  if (value == "text") return OutputFormat::kText;
  if (value == "json") return OutputFormat::kJson;
  if (value == "yaml") return OutputFormat::kYaml;
  fmt::print(stderr, "policyc {}: `--output` must be `text`, `json` or `yaml`, not `{}`\n", command, value);
  return std::nullopt;
}

std::string Structured(OutputFormat format, const std::string& json) {
  if (format != OutputFormat::kYaml) return json;
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  if (parser.parse(json).get(root) != simdjson::SUCCESS) {
    // The commands write valid JSON; anything else is a bug to see, not hide.
    std::fprintf(stderr, "policyc: internal error: the output is not valid JSON\n");
    std::abort();
  }
  YAML::Emitter out;
  out.SetIndent(2);
  Emit(out, root);
  return std::string(out.c_str()) + "\n";
}

}  // namespace policy::tooling
