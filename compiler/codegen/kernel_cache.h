#pragma once
/// The kernel cache: compiled kernels by their shape key (kernel_shape.h), the
/// least recently used ones that no caller holds dropped beyond a
/// capacity, which frees their code.

#include <list>
#include <map>
#include <memory>
#include <string>

#include "compiler/codegen/compiled_function.h"
#include "compiler/codegen/jit_session.h"

namespace policy::codegen {

/// A shape's kernels and the code they point into (one module's code,
/// shared by the shapes compiled together).
struct CachedKernels {
  std::shared_ptr<Code> code;
  CompiledFunction kernels;
};

class KernelCache {
 public:
  explicit KernelCache(size_t capacity) : capacity_(capacity) {}
  /// The entry of `key`, marked recently used; null when absent.
  std::shared_ptr<CachedKernels> Find(const std::string& key);
  /// Adds `entry` under `key`, then evicts down to the capacity.
  void Insert(const std::string& key, std::shared_ptr<CachedKernels> entry);
  size_t Size() const { return entries_.size(); }

 private:
  void Touch(const std::string& key);

  size_t capacity_;
  std::map<std::string, std::shared_ptr<CachedKernels>> entries_;
  std::list<std::string> lru_;  // most recent first
};

}  // namespace policy::codegen
