#pragma once
/// Source files held in memory, and byte-offset spans into them.
///
/// A span is two byte offsets; line and column are computed only when a
/// diagnostic needs them, from a line table built on first use.

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace policy {

/// Line and column, both 1-based; the column counts characters, not bytes.
struct LineCol {
  uint32_t line = 0;
  uint32_t column = 0;
};

/// One input file (or a string standing in for one), owned in memory.
/// Owners that hand out spans hold it by std::shared_ptr: a diagnostic sink
/// then keeps every source its diagnostics point into alive
/// (DiagnosticSink::Report), so no diagnostic outlives its text.
class Source : public std::enable_shared_from_this<Source> {
 public:
  /// Padding kept after the text so vectorised parsers may read past the end.
  static constexpr size_t kPadding = 64;

  Source(std::string name, std::string text);
  ~Source();
  Source(const Source&) = delete;
  Source& operator=(const Source&) = delete;

  /// Reads `path`; returns null and sets `error` when the file cannot be
  /// read. A file of kMapFrom bytes or more is memory-mapped rather than
  /// copied: its pages are the page cache's, and Release() lets a reader
  /// that goes front to back drop what it is done with.
  static std::unique_ptr<Source> FromFile(const std::string& path, std::string* error);
  static constexpr size_t kMapFrom = size_t{1} << 20;

  const std::string& Name() const { return name_; }
  /// The text, without the padding.
  std::string_view Text() const { return std::string_view(data_, size_); }
  /// The text followed by at least kPadding readable bytes.
  const char* PaddedData() const { return data_; }
  size_t Size() const { return size_; }
  /// A mapped file's text before byte `offset` need not stay resident: it
  /// is dropped now and read again from the file if anything looks at it.
  /// Does nothing for a text held in memory.
  void Release(size_t offset) const;

  /// Line and column of a byte offset (offsets past the end clamp to the end).
  LineCol Locate(uint32_t offset) const;
  /// The text of 1-based line `line`, without its line break.
  std::string_view LineText(uint32_t line) const;
  /// Byte offset where 1-based line `line` starts.
  uint32_t LineStart(uint32_t line) const;

 private:
  void BuildLineTable() const;

  Source(std::string name, const char* mapped, size_t size, size_t mapped_bytes);
  static std::unique_ptr<Source> Map(const std::string& path, int fd, size_t size);

  std::string name_;
  std::string text_;  // size_ bytes of text, then kPadding zero bytes (unless mapped)
  const char* data_ = nullptr;
  size_t size_ = 0;
  size_t mapped_bytes_ = 0;  // a mapping's length (the file, then zero pages), or 0
  mutable std::vector<uint32_t> line_starts_;
};

/// A half-open byte range [begin, end) in one source.
struct Span {
  const Source* source = nullptr;
  uint32_t begin = 0;
  uint32_t end = 0;

  bool Valid() const { return source != nullptr; }
};

}  // namespace policy
