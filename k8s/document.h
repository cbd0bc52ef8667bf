#pragma once
/// A small read-only document tree with source positions, built from YAML
/// events or JSON tokens (yaml_reader.h, json_reader.h).
///
/// Nodes live in one vector and are named by index; a mapping's children are
/// stored as key, value, key, value ... in a shared child array. Scalars carry
/// their resolved type (YAML 1.1 as Kubernetes' YAML decoder resolves plain
/// scalars, or the JSON token type) and their text. A YAML alias shares the
/// anchored node, so the tree is a DAG and aliases never copy.

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "support/source.h"

namespace policy::k8s {

/// How deep a document may nest, in YAML and JSON alike (Kubernetes objects
/// nest a few levels; the limit bounds the readers' time and memory).
inline constexpr int kMaxNesting = 256;

enum class NodeKind : uint8_t { kScalar, kSequence, kMapping };

/// What a scalar is, resolved as Kubernetes would see it after YAML→JSON.
enum class ScalarType : uint8_t { kString, kInt, kFloat, kBool, kNull };

class Document;

/// A reference to one node of a Document; cheap to copy. An invalid ref (what
/// Get() gives for an absent key) reads as null with no text, no elements and
/// no span; At(), KeyAt() and ValueAt() need a valid container.
class NodeRef {
 public:
  NodeRef() = default;
  NodeRef(const Document* doc, uint32_t id) : doc_(doc), id_(id) {}

  bool Valid() const { return doc_ != nullptr; }
  /// The node's index in its document.
  uint32_t id() const { return id_; }
  const Document* document() const { return doc_; }
  NodeKind Kind() const;
  bool IsMapping() const { return Valid() && Kind() == NodeKind::kMapping; }
  bool IsSequence() const { return Valid() && Kind() == NodeKind::kSequence; }
  bool IsScalar() const { return Valid() && Kind() == NodeKind::kScalar; }
  bool IsNull() const { return IsScalar() && Type() == ScalarType::kNull; }
  ScalarType Type() const;
  /// A scalar's text (unescaped); empty for containers.
  std::string_view Text() const;
  /// Number of elements (sequence) or pairs (mapping).
  uint32_t Size() const;
  /// Element `i` of a sequence.
  NodeRef At(uint32_t i) const;
  /// Key and value of pair `i` of a mapping.
  NodeRef KeyAt(uint32_t i) const;
  NodeRef ValueAt(uint32_t i) const;
  /// The value for `key` in a mapping, or an invalid ref.
  NodeRef Get(std::string_view key) const;
  /// Where the node is in its source.
  Span GetSpan() const;
  /// A word for the node's kind for messages: `a mapping`, `a string`, ...
  std::string_view Describe() const;

 private:
  const Document* doc_ = nullptr;
  uint32_t id_ = 0;
};

/// Bump allocator for scalar text copied out of a parser's buffers.
class TextArena {
 public:
  std::string_view Copy(std::string_view text);
  void Clear();

 private:
  std::vector<std::unique_ptr<char[]>> blocks_;
  size_t used_ = 0;
  size_t capacity_ = 0;
};

/// A tree of nodes over one source; reusable (Clear() keeps capacity).
class Document {
 public:
  struct Node {
    NodeKind kind;
    ScalarType type;
    uint32_t begin;  ///< byte offset where the node starts
    uint32_t end;    ///< byte offset just past the node (scalars), or = begin
    uint32_t first;  ///< containers: first index into children
    uint32_t count;  ///< containers: number of child entries (2 per pair)
    std::string_view text;
  };

  explicit Document(const Source* source) : source_(source) {}

  const Source* source() const { return source_; }
  NodeRef Root() const { return NodeRef(this, root_); }
  bool Empty() const { return nodes_.empty(); }
  const Node& node(uint32_t id) const { return nodes_[id]; }
  uint32_t child(uint32_t index) const { return children_[index]; }
  size_t NodeCount() const { return nodes_.size(); }

  // Building (used by the readers).
  uint32_t AddScalar(uint32_t begin, uint32_t end, ScalarType type, std::string_view text);
  uint32_t AddContainer(NodeKind kind, uint32_t begin);
  /// Sets a container's children (copied into the child array).
  void SetChildren(uint32_t id, const uint32_t* ids, uint32_t count);
  void SetRoot(uint32_t id) { root_ = id; }
  TextArena& arena() { return arena_; }
  void Clear();

 private:
  const Source* source_;
  std::vector<Node> nodes_;
  std::vector<uint32_t> children_;
  uint32_t root_ = 0;
  TextArena arena_;
};

/// YAML 1.1 plain-scalar resolution as Kubernetes' YAML decoder applies it:
/// `true`/`yes`/`on` are bools, `~`/`null` null, `0x1F` and `010` ints, ...
ScalarType ResolvePlainScalar(std::string_view text);

}  // namespace policy::k8s
