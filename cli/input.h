#pragma once
/// Reading input files for subcommands: a failure is an I/O diagnostic.

#include <memory>
#include <string>

#include "compiler/support/diagnostic.h"

namespace policy::cli {

/// Reads `path`; on failure reports `cannot read PATH: why` and returns null.
/// Shared, so diagnostics about it keep it alive.
std::shared_ptr<Source> ReadInput(const std::string& path, DiagnosticSink& diags);

}  // namespace policy::cli
