#include "cli/args.h"

#include <charconv>

#include <fmt/format.h>

#include "support/suggest.h"

namespace policy::cli {

std::optional<Args> Args::Parse(const std::vector<std::string>& argv, const std::vector<FlagSpec>& specs,
                                std::string* error) {
  Args args;
  for (size_t i = 0; i < argv.size(); ++i) {
    const std::string& arg = argv[i];
    const FlagSpec* spec = nullptr;
    std::string name;
    std::optional<std::string> value;
    if (arg.size() >= 3 && arg.starts_with("--")) {
      name = arg.substr(2);
      if (size_t eq = name.find('='); eq != std::string::npos) {
        value = name.substr(eq + 1);
        name = name.substr(0, eq);
      }
      for (const FlagSpec& s : specs) {
        if (s.name == name) spec = &s;
      }
      if (spec == nullptr) {
        std::vector<std::string_view> names;
        for (const FlagSpec& s : specs) names.push_back(s.name);
        std::string_view close = Closest(name, names);
        *error = fmt::format("unknown flag `--{}`{}", name, close.empty() ? "" : fmt::format("; did you mean `--{}`?", close));
        return std::nullopt;
      }
    } else if (arg.size() >= 2 && arg[0] == '-' && arg[1] != '-') {
      for (const FlagSpec& s : specs) {
        if (s.short_name == arg[1]) spec = &s;
      }
      if (spec == nullptr) {
        *error = fmt::format("unknown flag `{}`", arg.substr(0, 2));
        return std::nullopt;
      }
      name = spec->name;
      // `-ojson`, as kubectl (pflag) reads a short flag with its value attached.
      if (arg.size() > 2) {
        if (!spec->takes_value) {
          *error = fmt::format("`-{}` takes no value", arg[1]);
          return std::nullopt;
        }
        value = arg.substr(arg[2] == '=' ? 3 : 2);
      }
    } else {
      args.positional_.push_back(arg);  // `-` included: standard input
      continue;
    }
    if (spec->takes_value && !value) {
      if (i + 1 >= argv.size()) {
        *error = fmt::format("`--{}` needs a value", name);
        return std::nullopt;
      }
      value = argv[++i];
    }
    if (!spec->takes_value && value) {
      *error = fmt::format("`--{}` takes no value", name);
      return std::nullopt;
    }
    if (!spec->repeatable && args.values_.contains(name)) {
      *error = fmt::format("`--{}` is given twice", name);
      return std::nullopt;
    }
    args.values_[name].push_back(value.value_or(""));
  }
  return args;
}

std::variant<Args, int> ParseCommand(std::string_view command, const std::vector<std::string>& argv,
                                     std::vector<FlagSpec> specs, const char* usage) {
  specs.push_back({"help", false, false, 'h'});
  std::string error;
  std::optional<Args> args = Args::Parse(argv, specs, &error);
  if (!args) {
    fmt::print(stderr, "policyc {}: {}\nRun `policyc {} --help` for usage.\n", command, error, command);
    return kExitBadInput;
  }
  if (args->Has("help")) {
    fmt::print("{}", usage);
    return kExitOk;
  }
  return std::move(*args);
}

std::string Args::Get(const std::string& name, const std::string& fallback) const {
  auto it = values_.find(name);
  return it == values_.end() ? fallback : it->second.back();
}

std::optional<int64_t> Args::GetInt(const std::string& name, int64_t fallback, int64_t min, int64_t max,
                                    std::string* error) const {
  if (!Has(name)) return fallback;
  std::string text = Get(name);
  int64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value < min || value > max) {
    *error = fmt::format("`--{}` must be an integer from {} to {}, not `{}`", name, min, max, text);
    return std::nullopt;
  }
  return value;
}

std::vector<std::string> Args::GetAll(const std::string& name) const {
  auto it = values_.find(name);
  return it == values_.end() ? std::vector<std::string>{} : it->second;
}

}  // namespace policy::cli
