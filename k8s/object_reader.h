#pragma once
/// Reading files of Kubernetes objects, one object at a time.
///
/// A file may be a multi-document YAML stream, a `List`/typed list
/// (`NodeList`, ...; items may omit `kind`, `items: null` is empty), or JSON
/// of either. The readers build a small Document per object and hand it to a
/// visitor, then reuse the memory: a 50,000-node dump never has more than one
/// object's tree alive (except YAML lists whose items lack `kind` and whose
/// `kind` comes after `items`: those wait for it).
///
/// Syntax errors are reported with file:line:col and reading stops; the caller
/// must then discard what it received (the input is refused whole).

#include <string_view>

#include "k8s/document.h"
#include "support/diagnostic.h"

namespace policy::k8s {

class ObjectVisitor {
 public:
  virtual ~ObjectVisitor() = default;
  /// One top-level object. `default_kind` is the kind implied by an enclosing
  /// typed list (`Node` inside a `NodeList`), or empty. `object` and its
  /// document live only during the call.
  virtual void Visit(NodeRef object, std::string_view default_kind) = 0;
};

/// Reads YAML (libyaml events). Returns false after a syntax error.
/// From byte `start` on (a YAML stream after JSON documents), spans still
/// the source's.
bool ReadYamlObjects(const Source& source, ObjectVisitor& visitor, DiagnosticSink& diags, size_t start = 0);
/// Reads JSON (simdjson On Demand). Returns false after a syntax error.
bool ReadJsonObjects(const Source& source, ObjectVisitor& visitor, DiagnosticSink& diags);
enum class InputFormat : uint8_t { kAuto, kYaml, kJson };

/// Reads `source` as `format`; kAuto is JSON when the first non-blank
/// character is `{` or `[`, else YAML.
bool ReadObjects(const Source& source, ObjectVisitor& visitor, DiagnosticSink& diags,
                 InputFormat format = InputFormat::kAuto);

/// The element kind of a list kind: `NodeList` -> `Node`, `List` -> "".
std::string_view ItemKindOf(std::string_view list_kind);

/// Reports a duplicate key in mapping `id` of `doc` (shared by both readers).
/// Returns false when one was found.
bool CheckDuplicateKeys(const Document& doc, uint32_t id, DiagnosticSink& diags);

/// Finds the first JSON syntax error in `text`; used to place simdjson's
/// errors. Returns false (and fills offset/message) when `text` is invalid.
bool FindJsonError(std::string_view text, uint32_t* offset, std::string* message);

}  // namespace policy::k8s
