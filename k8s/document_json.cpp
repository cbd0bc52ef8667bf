// A document node as JSON (document_json.h).

#include "k8s/document_json.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <string>

namespace policy::k8s {

void WriteJson(JsonWriter& w, NodeRef v) {
  if (!v.Valid()) {
    w.Null();
    return;
  }
  switch (v.Kind()) {
    case k8s::NodeKind::kMapping:
      w.BeginObject();
      for (uint32_t i = 0; i < v.Size(); ++i) {
        w.Key(v.KeyAt(i).Text());
        WriteJson(w, v.ValueAt(i));
      }
      w.EndObject();
      return;
    case k8s::NodeKind::kSequence:
      w.BeginArray();
      for (uint32_t i = 0; i < v.Size(); ++i) WriteJson(w, v.At(i));
      w.EndArray();
      return;
    case k8s::NodeKind::kScalar: break;
  }
  std::string text(v.Text());
  switch (v.Type()) {
    case k8s::ScalarType::kNull: w.Null(); return;
    case k8s::ScalarType::kBool: w.Bool(text == "true" || text == "True" || text == "TRUE"); return;
    case k8s::ScalarType::kInt: {
      errno = 0;
      char* end = nullptr;
      long long n = std::strtoll(text.c_str(), &end, 0);
      if (errno == 0 && end != nullptr && *end == '\0') {
        w.Int(n);
        return;
      }
      break;  // kept as written
    }
    case k8s::ScalarType::kFloat: {
      char* end = nullptr;
      double d = std::strtod(text.c_str(), &end);
      if (end != nullptr && *end == '\0' && d == d && d != HUGE_VAL && d != -HUGE_VAL) {
        w.Double(d);
        return;
      }
      break;
    }
    case k8s::ScalarType::kString: break;
  }
  w.String(text);
}

}  // namespace policy::k8s
