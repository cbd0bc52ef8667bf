#include "compiler/codegen/tiered_jit.h"

#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <thread>

#include "compiler/codegen/kernel_shape.h"

namespace policy::codegen {

using ir::Program;

struct TieredJit::State {
  Jit jit;  // used by the worker only
  std::mutex mutex;
  std::condition_variable wake, idle;
  struct Job {
    std::string key;
    Program program;  // a copy: the caller's may go away
    size_t function;
  };
  std::deque<Job> queue;
  bool busy = false, stopping = false;
  std::string current;  // the key being compiled
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
      Job job = std::move(queue.front());
      queue.pop_front();
      busy = true;
      current = job.key;
      lock.unlock();
      Expected<std::shared_ptr<const CompiledFunction>> compiled = jit.Compile(job.program, job.function);
      std::shared_ptr<const CompiledFunction> kernels = compiled ? *compiled : nullptr;  // null: stays interpreted
      lock.lock();
      ready[job.key] = std::move(kernels);
      busy = false;
      current.clear();
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
  KernelShape shape = ShapeOf(program, f);
  const std::string& key = shape.key;
  std::lock_guard<std::mutex> lock(state_->mutex);
  if (auto it = state_->ready.find(key); it != state_->ready.end()) {
    return it->second != nullptr ? BindShape(it->second, std::move(shape)) : nullptr;
  }
  if (state_->busy && state_->current == key) return nullptr;  // compiling now
  for (const State::Job& job : state_->queue) {
    if (job.key == key) return nullptr;  // queued already
  }
  if (++state_->seen[key] < state_->tiering.hot_after) return nullptr;  // not hot yet
  state_->seen.erase(key);
  state_->queue.push_back({key, program, f});
  state_->wake.notify_one();
  return nullptr;
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
