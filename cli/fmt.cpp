// `policyc fmt`: policy files in the one canonical layout
// (compiler/syntax/formatter.h).

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "cli/args.h"
#include "cli/commands.h"
#include "runtime/tooling/input.h"
#include "cli/line_diff.h"
#include "compiler/syntax/formatter.h"

namespace policy::cli {
namespace {

constexpr const char* kUsage = R"(usage: policyc fmt [--check | --diff | --write|-w] PATH ...

Lays out policy files (.policy) one canonical way: a policy starts its line,
members two spaces in, `reason` and `detail` four, one spacing of tokens, the
author's line breaks inside a member kept (two columns past the member),
comments kept where they are, one blank line at most. PATH is a file or a
directory (its .policy files, subdirectories included). Without a flag,
prints each file formatted. --check prints the files that are not formatted;
--diff prints what formatting would change, as `diff -u`; --write rewrites
them in place. A file that does not parse is never changed.

Exit status: 0 done (--check, --diff: every file is formatted), 1 some file
is not formatted (--check, --diff), 2 a file does not parse, or bad usage.
)";

}  // namespace

namespace {

int Run(const Args& args) {
  int modes = args.Has("check") + args.Has("diff") + args.Has("write");
  if (modes > 1) {
    fmt::print(stderr, "policyc fmt: give one of --check, --diff and --write\nRun `policyc fmt --help` for usage.\n");
    return kExitBadInput;
  }
  if (args.Positional().empty()) {
    fmt::print(stderr, "policyc fmt: give policy files or directories\nRun `policyc fmt --help` for usage.\n");
    return kExitBadInput;
  }
  std::string missing;
  std::vector<std::string> files = tooling::FilesUnder(args.Positional(), {".policy"}, missing);
  if (!missing.empty()) {
    fmt::print(stderr, "policyc fmt: no file or directory `{}`\n", missing);
    return kExitBadInput;
  }
  bool bad = false, unformatted = false;
  for (const std::string& path : files) {
    if (path.ends_with(".yaml") || path.ends_with(".yml") || path.ends_with(".json")) {
      fmt::print(stderr, "policyc fmt: {} is a YAML or JSON policy; fmt lays out files of the policy language (.policy)\n",
                 path);
      bad = true;
      continue;
    }
    DiagnosticSink diags;
    std::shared_ptr<Source> source = tooling::ReadInput(path, diags);
    std::optional<std::string> formatted = source ? syntax::FormatPolicyFile(*source, diags) : std::nullopt;
    if (!formatted) {
      std::fputs(RenderAll(diags).c_str(), stderr);
      bad = true;
      continue;
    }
    bool same = *formatted == source->Text();
    unformatted = unformatted || !same;
    if (args.Has("check")) {
      if (!same) fmt::print("{}: not formatted\n", path);
    } else if (args.Has("diff")) {
      fmt::print("{}", UnifiedDiff(source->Text(), *formatted, path, path + " (formatted)"));
    } else if (args.Has("write")) {
      if (same || path == "-") {
        if (path == "-") fmt::print("{}", *formatted);
        continue;
      }
      std::ofstream out(path, std::ios::binary | std::ios::trunc);
      out << *formatted;
      if (!out) {
        fmt::print(stderr, "policyc fmt: cannot write {}\n", path);
        bad = true;
        continue;
      }
      fmt::print("{}\n", path);
    } else {
      fmt::print("{}", *formatted);
    }
  }
  if (bad) return kExitBadInput;
  bool judged = args.Has("check") || args.Has("diff");
  return judged && unformatted ? kExitNo : kExitOk;
}

}  // namespace

Command FmtCommand() {
  return {"fmt", "lay out policy files one canonical way (--check, --diff, --write)", kUsage,
          {{"check", false}, {"diff", false}, {"write", false, false, 'w'}},
          &Run};
}

}  // namespace policy::cli
