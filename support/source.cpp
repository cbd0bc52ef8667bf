#include "support/source.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace policy {

Source::Source(std::string name, std::string text)
    : name_(std::move(name)), text_(std::move(text)), size_(text_.size()) {
  text_.append(kPadding, '\0');
  data_ = text_.data();
}

Source::Source(std::string name, const char* mapped, size_t size, size_t mapped_bytes)
    : name_(std::move(name)), data_(mapped), size_(size), mapped_bytes_(mapped_bytes) {}

Source::~Source() {
  if (mapped_bytes_ > 0) ::munmap(const_cast<char*>(data_), mapped_bytes_);
}

void Source::Release(size_t offset) const {
  if (mapped_bytes_ == 0) return;
  size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  size_t bytes = std::min(offset, size_) / page * page;
  if (bytes > 0) ::madvise(const_cast<char*>(data_), bytes, MADV_DONTNEED);
}

// `path` mapped read-only, followed by zero pages for the padding (reads
// past a file's end inside its last page give zeros too); null when it
// cannot be mapped (the caller then reads it).
std::unique_ptr<Source> Source::Map(const std::string& path, int fd, size_t size) {
  size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  size_t bytes = (size + Source::kPadding + page - 1) / page * page;
  void* region = ::mmap(nullptr, bytes, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (region == MAP_FAILED) return nullptr;
  if (::mmap(region, size, PROT_READ, MAP_PRIVATE | MAP_FIXED, fd, 0) == MAP_FAILED) {
    ::munmap(region, bytes);
    return nullptr;
  }
  ::madvise(region, size, MADV_SEQUENTIAL);
  return std::unique_ptr<Source>(new Source(path, static_cast<const char*>(region), size, bytes));
}

std::unique_ptr<Source> Source::FromFile(const std::string& path, std::string* error) {
  std::error_code code;
  if (std::filesystem::is_directory(path, code)) {
    *error = "it is a directory";
    return nullptr;
  }
  {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd >= 0 && ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && static_cast<size_t>(st.st_size) >= kMapFrom &&
        static_cast<size_t>(st.st_size) < UINT32_MAX - kPadding) {
      std::unique_ptr<Source> mapped = Map(path, fd, static_cast<size_t>(st.st_size));
      ::close(fd);
      if (mapped) return mapped;
    } else if (fd >= 0) {
      ::close(fd);
    }
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
  const char* base = data_;
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
    if ((static_cast<unsigned char>(data_[i]) & 0xC0) != 0x80) ++column;
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
  while (end > begin && (data_[end - 1] == '\n' || data_[end - 1] == '\r')) --end;
  return std::string_view(data_ + begin, end - begin);
}

}  // namespace policy
