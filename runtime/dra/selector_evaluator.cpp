#include "runtime/dra/selector_evaluator.h"

#include "compiler/cel/compile.h"
#include "compiler/cel/eval.h"

namespace policy::dra {
namespace {

class EvaluatingDecider final : public rt::SelectorDecider {
 public:
  std::shared_ptr<rt::SelectorVerdicts> Decide(const std::string& expression, const std::vector<rt::DeviceRef>& devices,
                                               std::unique_ptr<rt::DeciderMemo>&) const override {
    return EvaluateSelector(expression, devices);
  }
};

}  // namespace

std::shared_ptr<rt::SelectorVerdicts> EvaluateSelector(const std::string& expression,
                                                       const std::vector<rt::DeviceRef>& devices) {
  auto v = std::make_shared<rt::SelectorVerdicts>();
  std::shared_ptr<const cel::Program> program = cel::Compile(expression);
  if (!program->expr) {
    v->compile_error = program->KubeError();
    v->match.assign(devices.size(), -1);
    return v;
  }
  v->match.resize(devices.size());
  for (uint32_t i = 0; i < devices.size(); ++i) {
    cel::Outcome o = cel::Evaluate(*program->expr, cel::DeviceInput{devices[i].driver, devices[i].device});
    if (!o.error.empty()) {
      v->match[i] = -1;
      v->errors.emplace(i, std::move(o.error));
    } else {
      v->match[i] = o.matches ? 1 : 0;
    }
  }
  return v;
}

const rt::SelectorDecider& Evaluator() {
  static const EvaluatingDecider evaluator;
  return evaluator;
}

}  // namespace policy::dra
