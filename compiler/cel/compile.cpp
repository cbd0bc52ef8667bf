#include "compiler/cel/compile.h"

#include <mutex>
#include <unordered_map>

#include <fmt/format.h>

#include "compiler/cel/check.h"
#include "compiler/cel/parse.h"

namespace policy::cel {
namespace {

constexpr size_t kCacheLimit = 4096;

// Line and column (from 1, columns counted in characters) of a byte offset.
std::pair<size_t, size_t> LineCol(std::string_view text, uint32_t offset) {
  size_t line = 1, column = 1;
  for (size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80) {
      ++column;
    }
  }
  return {line, column};
}

}  // namespace

std::string Program::KubeError() const {
  std::string out = "compilation failed: ";
  for (size_t i = 0; i < problems.size(); ++i) {
    auto [line, column] = LineCol(text, problems[i].begin);
    out += fmt::format("{}ERROR: <input>:{}:{}: {}", i ? "\n" : "", line, column, problems[i].message);
  }
  return out;
}

std::shared_ptr<const Program> CompileUncached(std::string_view text) {
  auto program = std::make_shared<Program>();
  program->text = std::string(text);
  program->expr = Parse(text, &program->problems);
  if (program->expr) {
    program->problems = Check(*program->expr);
    if (!program->problems.empty()) program->expr.reset();
    else program->cost = EstimateCost(*program->expr);
  }
  return program;
}

std::shared_ptr<const Program> Compile(std::string_view text) {
  static std::mutex mu;
  static std::unordered_map<std::string, std::shared_ptr<const Program>> cache;
  {
    std::lock_guard<std::mutex> lock(mu);
    auto it = cache.find(std::string(text));
    if (it != cache.end()) return it->second;
  }
  std::shared_ptr<const Program> program = CompileUncached(text);
  std::lock_guard<std::mutex> lock(mu);
  if (cache.size() >= kCacheLimit) cache.clear();
  cache.emplace(std::string(text), program);
  return program;
}

}  // namespace policy::cel
