// Fuzzes `policyc test` as a person runs it: the input is a test file
// (docs/testing.md), written to a file and run by the test command, with
// the project's policies to look up. Every layer a test file reaches is on
// the path: the YAML reader, inline clusters and pods, snapshot and pod
// files it names (regular files only), profiles, plugins, policies, the
// engine and the comparison. The command must end with exit 0, 1 or 2,
// never crash, leak or overflow.

#include <fcntl.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "cli/commands.h"

namespace {

std::string Dir() {
  static const std::string dir = [] {
    char path[] = "/tmp/policyc-fuzz-test-XXXXXX";
    const char* made = mkdtemp(path);
    return std::string(made != nullptr ? made : "/tmp");
  }();
  return dir;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string path = Dir() + "/case.yaml";
  std::ofstream(path, std::ios::binary | std::ios::trunc).write(reinterpret_cast<const char*>(data),
                                                                 static_cast<std::streamsize>(size));
  std::fflush(stdout);
  int out = dup(1);
  int null = open("/dev/null", O_WRONLY);
  dup2(null, 1);
  close(null);
  int status = policy::cli::RunCommand("test", {path, "--policies", POLICYC_SOURCE_DIR "/policies", "--coverage"});
  std::fflush(stdout);
  dup2(out, 1);
  close(out);
  if (status != 0 && status != 1 && status != 2) __builtin_trap();
  return 0;
}
