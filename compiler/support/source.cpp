#include "compiler/support/source.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

namespace policy {

Source::Source(std::string name, std::string text)
    : name_(std::move(name)), text_(std::move(text)), size_(text_.size()) {
  text_.append(kPadding, '\0');
}

std::unique_ptr<Source> Source::FromFile(const std::string& path, std::string* error) {
  std::error_code code;
  if (std::filesystem::is_directory(path, code)) {
    *error = "it is a directory";
    return nullptr;
  }
  FILE* file = std::fopen(path.c_str(), "rb");
  if (file == nullptr) {
    *error = std::strerror(errno);
    return nullptr;
  }
  std::string text;
  char buffer[1 << 16];
  size_t n;
  if (std::fseek(file, 0, SEEK_END) == 0) {
    long size = std::ftell(file);
    if (size > 0) text.reserve(static_cast<size_t>(size) + kPadding);
    std::fseek(file, 0, SEEK_SET);
  }
  while ((n = std::fread(buffer, 1, sizeof buffer, file)) > 0) text.append(buffer, n);
  bool failed = std::ferror(file) != 0;
  int saved = errno;
  std::fclose(file);
  if (failed) {
    *error = std::strerror(saved);
    return nullptr;
  }
  if (text.size() >= UINT32_MAX - kPadding) {
    *error = "file is larger than 4 GiB";
    return nullptr;
  }
  return std::make_unique<Source>(path, std::move(text));
}

void Source::BuildLineTable() const {
  if (!line_starts_.empty()) return;
  line_starts_.push_back(0);
  const char* base = text_.data();
  const char* p = base;
  const char* end = base + size_;
  while (p < end) {
    const void* nl = std::memchr(p, '\n', static_cast<size_t>(end - p));
    if (nl == nullptr) break;
    p = static_cast<const char*>(nl) + 1;
    line_starts_.push_back(static_cast<uint32_t>(p - base));
  }
}

LineCol Source::Locate(uint32_t offset) const {
  BuildLineTable();
  offset = std::min<uint32_t>(offset, static_cast<uint32_t>(size_));
  auto it = std::upper_bound(line_starts_.begin(), line_starts_.end(), offset);
  uint32_t line_index = static_cast<uint32_t>(it - line_starts_.begin()) - 1;
  uint32_t column = 1;
  for (uint32_t i = line_starts_[line_index]; i < offset; ++i) {
    // Count characters: UTF-8 continuation bytes do not start a character.
    if ((static_cast<unsigned char>(text_[i]) & 0xC0) != 0x80) ++column;
  }
  return {line_index + 1, column};
}

uint32_t Source::LineStart(uint32_t line) const {
  BuildLineTable();
  if (line == 0) return 0;
  if (line > line_starts_.size()) return static_cast<uint32_t>(size_);
  return line_starts_[line - 1];
}

std::string_view Source::LineText(uint32_t line) const {
  BuildLineTable();
  if (line == 0 || line > line_starts_.size()) return {};
  uint32_t begin = line_starts_[line - 1];
  uint32_t end = line < line_starts_.size() ? line_starts_[line] : static_cast<uint32_t>(size_);
  while (end > begin && (text_[end - 1] == '\n' || text_[end - 1] == '\r')) --end;
  return std::string_view(text_.data() + begin, end - begin);
}

}  // namespace policy
