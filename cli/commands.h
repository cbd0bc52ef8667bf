#pragma once
/// policyc subcommands. Each takes the arguments after its name and returns
/// the process exit status (args.h).

#include <string>
#include <vector>

namespace policy::cli {

int RunInspect(const std::vector<std::string>& argv);
int RunCompile(const std::vector<std::string>& argv);
int RunCheck(const std::vector<std::string>& argv);
int RunSchedule(const std::vector<std::string>& argv);
int RunServe(const std::vector<std::string>& argv);
int RunDrain(const std::vector<std::string>& argv);
int RunLint(const std::vector<std::string>& argv);
int RunTest(const std::vector<std::string>& argv);
int RunFmt(const std::vector<std::string>& argv);

}  // namespace policy::cli
