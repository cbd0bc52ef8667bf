#include "compiler/codegen/tiered_jit.h"

#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>

#include "compiler/codegen/kernel_shape.h"

namespace policy::codegen {

using ir::Program;

struct TieredJit::State {
  Jit jit;  // used by the worker only
  std::mutex mutex;
  std::condition_variable wake, idle;
  // Functions compiled together (one module): a template's plugins.
  struct Batch {
    std::vector<std::string> keys;
    std::vector<Program> programs;  // copies: the caller's may go away
    std::vector<size_t> functions;
  };
  std::deque<Batch> queue;
  bool busy = false, stopping = false;
  std::set<std::string> queued;  // keys queued or being compiled
  std::map<std::string, std::shared_ptr<const CompiledFunction>> ready;  // null: does not compile
  std::map<std::string, size_t> seen;  // pods of a template not queued yet
  TieringOptions tiering;
  std::thread worker;

  State(JitOptions options, TieringOptions tiering) : jit(options), tiering(tiering) {
    worker = std::thread([this] { Run(); });
  }

  void Run() {
    std::unique_lock<std::mutex> lock(mutex);
    while (true) {
      wake.wait(lock, [&] { return stopping || !queue.empty(); });
      if (stopping) return;
      Batch batch = std::move(queue.front());
      queue.pop_front();
      busy = true;
      lock.unlock();
      std::vector<Jit::FunctionRef> refs;
      for (size_t i = 0; i < batch.programs.size(); ++i) refs.push_back({&batch.programs[i], batch.functions[i]});
      std::vector<Expected<std::shared_ptr<const CompiledFunction>>> compiled = jit.CompileAll(refs);
      lock.lock();
      for (size_t i = 0; i < compiled.size(); ++i) {
        ready[batch.keys[i]] = compiled[i] ? *compiled[i] : nullptr;  // null: stays interpreted
        queued.erase(batch.keys[i]);
      }
      busy = false;
      idle.notify_all();
    }
  }
};

TieredJit::TieredJit(JitOptions options, TieringOptions tiering) : state_(std::make_unique<State>(options, tiering)) {}

TieredJit::~TieredJit() {
  {
    std::lock_guard<std::mutex> lock(state_->mutex);
    state_->stopping = true;
    state_->queue.clear();
  }
  state_->wake.notify_all();
  state_->worker.join();
}

std::shared_ptr<const CompiledFunction> TieredJit::Get(const Program& program, size_t f) {
  Jit::FunctionRef one{&program, f};
  return GetAll({&one, 1})[0];
}

std::vector<std::shared_ptr<const CompiledFunction>> TieredJit::GetAll(std::span<const Jit::FunctionRef> functions) {
  std::vector<std::shared_ptr<const CompiledFunction>> out(functions.size());
  std::vector<KernelShape> shapes;
  shapes.reserve(functions.size());
  for (const Jit::FunctionRef& ref : functions) shapes.push_back(ShapeOf(*ref.program, ref.function));
  std::lock_guard<std::mutex> lock(state_->mutex);
  State::Batch batch;
  for (size_t i = 0; i < functions.size(); ++i) {
    const std::string& key = shapes[i].key;
    if (auto it = state_->ready.find(key); it != state_->ready.end()) {
      if (it->second != nullptr) out[i] = BindShape(it->second, std::move(shapes[i]));
      continue;
    }
    if (state_->queued.contains(key)) continue;  // queued already, or compiling now
    if (++state_->seen[key] < state_->tiering.hot_after) continue;  // not hot yet
    state_->seen.erase(key);
    state_->queued.insert(key);
    batch.keys.push_back(key);
    batch.programs.push_back(*functions[i].program);
    batch.functions.push_back(functions[i].function);
  }
  if (!batch.keys.empty()) {
    state_->queue.push_back(std::move(batch));
    state_->wake.notify_one();
  }
  return out;
}

size_t TieredJit::Compiled() const {
  std::lock_guard<std::mutex> lock(state_->mutex);
  size_t n = 0;
  for (const auto& [key, kernels] : state_->ready) n += kernels != nullptr ? 1 : 0;
  return n;
}

void TieredJit::Drain() {
  std::unique_lock<std::mutex> lock(state_->mutex);
  state_->idle.wait(lock, [&] { return state_->queue.empty() && !state_->busy; });
}

}  // namespace policy::codegen
