#pragma once
/// ExtenderArgs as kube-scheduler sends them with `nodeCacheCapable: true`
/// (a pod and up to every node's name), read without building a document:
/// simdjson On Demand over the body, the pod's JSON text and the names as
/// views into a buffer of the reader's own. Anything else — node objects,
/// escapes in a name, a body that does not read — is left to the general
/// reader (extender.cpp), which places the error for the user.

#include <string>
#include <string_view>
#include <vector>

namespace policy::server {

struct NamedArgs {
  std::string_view pod_json;            ///< the `Pod` object's text
  std::vector<std::string_view> names;  ///< `NodeNames`, in order
};

class NamedArgsReader {
 public:
  NamedArgsReader();
  ~NamedArgsReader();
  NamedArgsReader(const NamedArgsReader&) = delete;
  NamedArgsReader& operator=(const NamedArgsReader&) = delete;

  /// True with `out` filled when `body` is one JSON object with a `Pod`
  /// object and a `NodeNames` list of plain strings (keys in any case);
  /// `out` views this reader's buffer until the next Read.
  bool Read(std::string_view body, NamedArgs& out);

 private:
  struct Impl;
  Impl* impl_;
};

}  // namespace policy::server
