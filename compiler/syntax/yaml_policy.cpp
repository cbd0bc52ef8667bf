// The YAML form of policies: the same members as the DSL, as a Kubernetes-
// style object. Expressions are YAML strings parsed with the DSL's grammar at
// their position in the file, so diagnostics point into the YAML.
//
//   apiVersion: policyc.io/v1alpha1
//   kind: Policy
//   metadata: {name: GPUMemoryFit}
//   spec:
//     description: Fits pods by the GPU memory they declare.
//     weight: 1
//     when: <expr>                       # optional
//     def:                               # optional, before the lets
//       NAME: {params: {p: TYPE, ...}, body: <expr>}
//     let:                               # in order
//       NAME: <expr>
//     prefilters: [{rule: <expr>, reason: <text>, detail: <text>, unresolvable: true}]
//     filters: [{each: "x in C", rule: <expr>, reason: <text>, detail: <text>, unresolvable: true, aborts: false}]
//     scores: [{value: <expr>, normalize: none|max|reverse|minmax|spread}]

#include <fmt/format.h>

#include "k8s/decode.h"
#include "k8s/object_reader.h"
#include "support/suggest.h"
#include "compiler/syntax/parser.h"

namespace policy::syntax {
namespace {

using k8s::NodeRef;

class YamlPolicyReader final : public k8s::ObjectVisitor {
 public:
  YamlPolicyReader(const Source& source, Module& module, DiagnosticSink& diags)
      : source_(source), module_(module), diags_(diags) {}

  void Visit(NodeRef object, std::string_view default_kind) override {
    if (!object.IsMapping()) return Bad(object, fmt::format("expected a Policy object, found {}", object.Describe()));
    std::string_view kind = k8s::KindOf(object, default_kind);
    if (kind != "Policy") {
      return Bad(object.Get("kind").Valid() ? object.Get("kind") : object,
                 fmt::format("expected `kind: Policy`, found {}", kind.empty() ? "no kind" : "`" + std::string(kind) + "`"));
    }
    PolicyDecl policy;
    policy.span = object.GetSpan();
    NodeRef name = object.Get("metadata").Get("name");
    if (!String(name, "metadata.name", &policy.name, object.Get("metadata").Valid() ? object.Get("metadata") : object)) return;
    policy.name_span = name.GetSpan();
    NodeRef spec = object.Get("spec");
    if (!spec.IsMapping()) return Bad(spec.Valid() ? spec : object, "a Policy needs a `spec` mapping");
    Spec(spec, policy);
    module_.policies.push_back(std::move(policy));
  }

 private:
  void Bad(NodeRef at, std::string message) {
    diags_.Error(DiagCode::kBadPolicyYaml, at.GetSpan(), std::move(message));
  }

  // `unresolvable: true|false`, `aborts: ...` (absent: false).
  bool Flag(NodeRef node, std::string_view name) {
    if (!node.Valid()) return false;
    if (!node.IsScalar() || node.Type() != k8s::ScalarType::kBool) {
      Bad(node, fmt::format("`{}` must be true or false", name));
      return false;
    }
    return node.Text() == "true";
  }

  // `within`: where the diagnostic points when `node` is missing (the
  // mapping that lacks it).
  bool String(NodeRef node, std::string_view what, std::string* out, NodeRef within = NodeRef()) {
    if (!node.Valid() && within.Valid()) {
      Bad(within, fmt::format("`{}` is missing; it must be a non-empty string", what));
      return false;
    }
    if (!node.IsScalar() || node.Type() != k8s::ScalarType::kString || node.Text().empty()) {
      Bad(node.Valid() ? node : NodeRef(), fmt::format("`{}` must be a non-empty string", what));
      return false;
    }
    out->assign(node.Text());
    return true;
  }

  // Where the scalar's text stands in the file: exact for plain and simply
  // quoted scalars, the scalar's start otherwise (escapes, folded lines).
  uint32_t Base(NodeRef scalar) {
    Span span = scalar.GetSpan();
    std::string_view text = scalar.Text();
    std::string_view src = source_.Text();
    for (uint32_t skip : {0u, 1u}) {
      if (span.begin + skip + text.size() <= src.size() && src.substr(span.begin + skip, text.size()) == text) {
        return span.begin + skip;
      }
    }
    return span.begin;
  }

  std::optional<ExprId> Expr(NodeRef node, std::string_view what, NodeRef within = NodeRef()) {
    std::string text;
    if (!String(node, what, &text, within)) return std::nullopt;
    return ParseEmbeddedExpr(source_, Base(node), node.Text(), module_, diags_);
  }

  std::optional<Template> Text(NodeRef node, std::string_view what) {
    if (!node.Valid() || node.IsNull()) return std::nullopt;
    std::string text;
    if (!String(node, what, &text)) return std::nullopt;
    return ParseEmbeddedTemplate(source_, Base(node), node.Text(), module_, diags_);
  }

  void CheckKeys(NodeRef map, std::initializer_list<std::string_view> allowed, std::string_view where) {
    for (uint32_t i = 0; i < map.Size(); ++i) {
      std::string_view key = map.KeyAt(i).Text();
      bool ok = false;
      for (std::string_view a : allowed) ok |= key == a;
      if (!ok) {
        std::string list;
        for (std::string_view a : allowed) list += fmt::format("{}`{}`", list.empty() ? "" : ", ", a);
        std::string_view close = Closest(key, std::vector<std::string_view>(allowed));
        diags_.Error(DiagCode::kBadPolicyYaml, map.KeyAt(i).GetSpan(), fmt::format("unknown field `{}` in {}", key, where))
            .help = close.empty() ? fmt::format("the fields are {}", list)
                                  : fmt::format("did you mean `{}`? (the fields are {})", close, list);
      }
    }
  }

  NodeRef List(NodeRef spec, std::string_view key) {
    NodeRef list = spec.Get(key);
    if (!list.Valid() || list.IsNull()) return {};
    if (!list.IsSequence()) {
      Bad(list, fmt::format("`{}` must be a list", key));
      return {};
    }
    return list;
  }

  void Spec(NodeRef spec, PolicyDecl& policy) {
    CheckKeys(spec, {"description", "weight", "when", "def", "let", "prefilters", "filters", "scores"}, "a Policy spec");
    NodeRef description = spec.Get("description");
    if (description.Valid()) String(description, "description", &policy.doc);
    NodeRef weight = spec.Get("weight");
    if (weight.Valid()) {
      if (!weight.IsScalar() || weight.Type() != k8s::ScalarType::kInt) {
        Bad(weight, "`weight` must be an integer");
      } else {
        policy.members.push_back(WeightDecl{std::stoll(std::string(weight.Text())), weight.GetSpan()});
      }
    }
    if (NodeRef when = spec.Get("when"); when.Valid()) {
      if (auto e = Expr(when, "when")) policy.members.push_back(WhenDecl{*e, when.GetSpan()});
    }
    if (NodeRef defs = spec.Get("def"); defs.IsMapping()) {
      for (uint32_t i = 0; i < defs.Size(); ++i) Def(defs.KeyAt(i), defs.ValueAt(i), policy);
    }
    if (NodeRef lets = spec.Get("let"); lets.IsMapping()) {
      for (uint32_t i = 0; i < lets.Size(); ++i) {
        if (auto e = Expr(lets.ValueAt(i), lets.KeyAt(i).Text())) {
          policy.members.push_back(LetDecl{std::string(lets.KeyAt(i).Text()), *e, lets.KeyAt(i).GetSpan()});
        }
      }
    }
    if (NodeRef list = List(spec, "prefilters"); list.Valid()) {
      for (uint32_t i = 0; i < list.Size(); ++i) {
        NodeRef item = list.At(i);
        CheckKeys(item, {"rule", "reason", "detail", "unresolvable"}, "a prefilter");
        if (auto rule = Expr(item.Get("rule"), "rule", item)) {
          policy.members.push_back(PrefilterDecl{*rule, Text(item.Get("reason"), "reason"), Text(item.Get("detail"), "detail"),
                                                 Flag(item.Get("unresolvable"), "unresolvable"), item.GetSpan()});
        }
      }
    }
    if (NodeRef list = List(spec, "filters"); list.Valid()) {
      for (uint32_t i = 0; i < list.Size(); ++i) Filter(list.At(i), policy);
    }
    if (NodeRef list = List(spec, "scores"); list.Valid()) {
      for (uint32_t i = 0; i < list.Size(); ++i) {
        NodeRef item = list.At(i);
        CheckKeys(item, {"value", "normalize"}, "a score");
        std::optional<ExprId> value = Expr(item.Get("value"), "value", item);
        if (!value) continue;
        ScoreDecl score{*value, {}, {}, item.GetSpan()};
        if (NodeRef normalize = item.Get("normalize"); normalize.Valid()) {
          String(normalize, "normalize", &score.normalize);
          score.normalize_span = normalize.GetSpan();
        }
        policy.members.push_back(std::move(score));
      }
    }
  }

  void Filter(NodeRef item, PolicyDecl& policy) {
    CheckKeys(item, {"each", "rule", "reason", "detail", "unresolvable", "aborts"}, "a filter");
    FilterDecl filter;
    filter.span = item.GetSpan();
    if (NodeRef each = item.Get("each"); each.Valid()) {
      std::string text;
      if (!String(each, "each", &text)) return;
      auto parsed = ParseEmbeddedEach(source_, Base(each), each.Text(), module_, diags_);
      if (!parsed) return;
      filter.each = parsed->first;
      filter.each_collection = parsed->second;
    }
    std::optional<ExprId> rule = Expr(item.Get("rule"), "rule", item);
    if (!rule) return;
    filter.condition = *rule;
    filter.reason = Text(item.Get("reason"), "reason");
    filter.detail = Text(item.Get("detail"), "detail");
    filter.unresolvable = Flag(item.Get("unresolvable"), "unresolvable");
    filter.aborts = Flag(item.Get("aborts"), "aborts");
    if (filter.unresolvable && filter.aborts) Bad(item.Get("aborts"), "a filter is `unresolvable` or `aborts`, not both");
    policy.members.push_back(std::move(filter));
  }

  void Def(NodeRef key, NodeRef def, PolicyDecl& policy) {
    if (!def.IsMapping()) return Bad(def, "a def is a mapping with `params` and `body`");
    CheckKeys(def, {"params", "body"}, "a def");
    DefDecl decl{std::string(key.Text()), {}, 0, key.GetSpan()};
    NodeRef params = def.Get("params");
    for (uint32_t i = 0; params.IsMapping() && i < params.Size(); ++i) {
      NodeRef type = params.ValueAt(i);
      std::string text;
      if (!String(type, "a parameter type", &text)) return;
      std::optional<TypeExpr> parsed = ParseEmbeddedType(source_, Base(type), type.Text(), diags_);
      if (!parsed) return;
      decl.params.push_back({std::string(params.KeyAt(i).Text()), *parsed});
    }
    std::optional<ExprId> body = Expr(def.Get("body"), "body", def);
    if (!body) return;
    decl.body = *body;
    policy.members.push_back(std::move(decl));
  }

  const Source& source_;
  Module& module_;
  DiagnosticSink& diags_;
};

}  // namespace

std::optional<Module> ParseYamlPolicyFile(const Source& source, DiagnosticSink& diags) {
  size_t errors = diags.ErrorCount();
  Module module;
  module.source = &source;
  YamlPolicyReader reader(source, module, diags);
  if (!k8s::ReadObjects(source, reader, diags)) return std::nullopt;
  if (diags.ErrorCount() != errors) return std::nullopt;
  return module;
}

std::optional<Module> ParseAnyPolicyFile(const Source& source, DiagnosticSink& diags) {
  std::string_view name = source.Name();
  for (std::string_view ext : {".yaml", ".yml", ".json"}) {
    if (name.size() > ext.size() && name.substr(name.size() - ext.size()) == ext) {
      return ParseYamlPolicyFile(source, diags);
    }
  }
  return ParsePolicyFile(source, diags);
}

}  // namespace policy::syntax
