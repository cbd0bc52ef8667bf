#pragma once
/// The records policies read: `pod`, `node` and what hangs off them. Each
/// field has a stable FieldId that the interpreter and code generator switch
/// on, and a side: pod-side values are constant while one pod is placed
/// (partial evaluation folds them); node-side values vary per node.

#include <string_view>
#include <vector>

#include "compiler/lang/types.h"

namespace policy::lang {

enum class FieldId : uint16_t {
#define FIELD(id, record, name, type, side, doc) id,
#include "compiler/lang/schema.def"
#undef FIELD
};

enum class Side : uint8_t { kPod, kNode };

struct FieldSchema {
  FieldId id;
  std::string_view name;
  TypeRef type;
  Side side;
  std::string_view doc;
};

struct RecordSchema {
  std::string_view name;
  std::vector<FieldSchema> fields;

  const FieldSchema* Find(std::string_view field) const;
};

/// Every record, built once over a TypeTable.
class Schema {
 public:
  explicit Schema(TypeTable& types);
  TypeRef PodType() const { return pod_; }
  TypeRef NodeType() const { return node_; }
  const std::vector<const RecordSchema*>& Records() const { return records_; }

 private:
  std::vector<std::unique_ptr<RecordSchema>> owned_;
  std::vector<const RecordSchema*> records_;
  TypeRef pod_ = nullptr;
  TypeRef node_ = nullptr;
};

}  // namespace policy::lang
