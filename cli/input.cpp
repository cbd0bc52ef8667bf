#include "cli/input.h"

#include <fmt/format.h>

namespace policy::cli {

std::shared_ptr<Source> ReadInput(const std::string& path, DiagnosticSink& diags) {
  std::string error;
  std::unique_ptr<Source> source = Source::FromFile(path, &error);
  if (!source) {
    diags.Report({DiagCode::kIoError, Severity::kError, fmt::format("cannot read `{}`: {}", path, error), {}, {}, {}, {}});
  }
  return source;
}

}  // namespace policy::cli
