// Reading the IR's printed form back (printer.cpp writes it), so tests and
// `policyc compile FILE.ir` can start in the middle of the pipeline.
//
// The format is line based: node lines `%N = op operands : type`, optionally
// followed by `; pod-constant`; then `function NAME weight W` blocks with
// `slot`, `when`, `prefilter`, `filter` and `score` lines. In messages,
// `{%N}` is an interpolated node.

#include <charconv>
#include <map>
#include <sstream>

#include <fmt/format.h>

#include "compiler/ir/ir.h"
#include "compiler/ir/traits.h"

namespace policy::ir {
namespace {

class Reader {
 public:
  Reader(std::string_view text, lang::TypeTable& types, const lang::Schema& schema)
      : text_(text), types_(types), schema_(schema) {}

  std::optional<Program> Run(std::string* error) {
    size_t line_begin = 0;
    while (line_begin < text_.size()) {
      size_t end = text_.find('\n', line_begin);
      if (end == std::string_view::npos) end = text_.size();
      ++line_;
      line_text_ = text_.substr(line_begin, end - line_begin);
      line_begin = end + 1;
      pos_ = 0;
      if (!Line()) {
        *error = fmt::format("line {}: {}", line_, error_);
        return std::nullopt;
      }
    }
    return std::move(program_);
  }

 private:
  // --- lexing within a line ---
  void Space() {
    while (pos_ < line_text_.size() && line_text_[pos_] == ' ') ++pos_;
  }
  bool Eat(std::string_view word) {
    Space();
    if (line_text_.substr(pos_, word.size()) != word) return false;
    pos_ += word.size();
    return true;
  }
  bool Fail(std::string message) {
    error_ = std::move(message);
    return false;
  }
  std::string_view Word() {
    Space();
    size_t start = pos_;
    while (pos_ < line_text_.size() && line_text_[pos_] != ' ' && line_text_[pos_] != ',' && line_text_[pos_] != '(' &&
           line_text_[pos_] != ')' && line_text_[pos_] != ']' && line_text_[pos_] != ':') {
      ++pos_;
    }
    return line_text_.substr(start, pos_ - start);
  }
  std::optional<int64_t> Number() {
    Space();
    int64_t v = 0;
    auto [ptr, ec] = std::from_chars(line_text_.data() + pos_, line_text_.data() + line_text_.size(), v);
    if (ec != std::errc()) return std::nullopt;
    pos_ = static_cast<size_t>(ptr - line_text_.data());
    return v;
  }
  std::optional<NodeId> Ref() {
    if (!Eat("%")) return std::nullopt;
    std::optional<int64_t> n = Number();
    if (!n || *n < 0 || static_cast<size_t>(*n) >= program_.nodes.size()) return std::nullopt;
    return static_cast<NodeId>(*n);
  }
  std::optional<SlotId> SlotRef() {
    if (!Eat("$")) return std::nullopt;
    std::optional<int64_t> n = Number();
    if (!n || *n < 0) return std::nullopt;
    return static_cast<SlotId>(*n);
  }
  std::optional<std::string> Quoted() {
    Space();
    if (pos_ >= line_text_.size() || line_text_[pos_] != '"') return std::nullopt;
    std::string out;
    for (++pos_; pos_ < line_text_.size(); ++pos_) {
      char c = line_text_[pos_];
      if (c == '"') {
        ++pos_;
        return out;
      }
      if (c == '\\' && pos_ + 1 < line_text_.size()) {
        char e = line_text_[++pos_];
        if (e == 'n') out += '\n';
        else if (e == 't') out += '\t';
        else if (e == 'r') out += '\r';
        else if (e == 'u' && pos_ + 4 < line_text_.size()) {
          out += static_cast<char>(std::stoi(std::string(line_text_.substr(pos_ + 1, 4)), nullptr, 16));
          pos_ += 4;
        } else out += e;
        continue;
      }
      out += c;
    }
    return std::nullopt;
  }

  // `int`, `string?`, `list<Taint>`, `map<string, string>`.
  lang::TypeRef Type(std::string_view text) {
    while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
    while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
    if (!text.empty() && text.back() == '?') {
      lang::TypeRef inner = Type(text.substr(0, text.size() - 1));
      return inner ? types_.Optional(inner) : nullptr;
    }
    auto generic = [&](std::string_view name) -> std::optional<std::string_view> {
      if (text.substr(0, name.size() + 1) != std::string(name) + "<" || text.back() != '>') return std::nullopt;
      return text.substr(name.size() + 1, text.size() - name.size() - 2);
    };
    if (auto inner = generic("list")) return Wrap(Type(*inner), [&](auto t) { return types_.List(t); });
    if (auto inner = generic("set")) return Wrap(Type(*inner), [&](auto t) { return types_.Set(t); });
    if (auto inner = generic("map")) {
      if (inner->substr(0, 8) != "string, ") return nullptr;
      return Wrap(Type(inner->substr(8)), [&](auto t) { return types_.Map(t); });
    }
    if (text == "bool") return types_.Bool();
    if (text == "int") return types_.Int();
    if (text == "quantity") return types_.Quantity();
    if (text == "string") return types_.String();
    if (text == "none") return types_.None();
    if (text == "resources") return types_.Resources();
    for (const lang::RecordSchema* r : schema_.Records()) {
      if (r->name == text) return types_.Record(r);
    }
    return nullptr;
  }
  template <typename F>
  static lang::TypeRef Wrap(lang::TypeRef t, F&& f) {
    return t ? f(t) : nullptr;
  }

  bool Line() {
    Space();
    if (pos_ >= line_text_.size()) return true;  // blank
    if (line_text_[pos_] == '%') return NodeLine();
    if (Eat("function")) return FunctionLine();
    if (function_ == nullptr) return Fail("expected a node line or `function`");
    if (Eat("slot")) return SlotLine();
    if (Eat("when")) return Set(&function_->when.emplace());
    if (Eat("prefilter")) return FilterLine(function_->prefilters);
    if (Eat("filter")) return FilterLine(function_->filters);
    if (Eat("score")) return ScoreLine();
    return Fail(fmt::format("cannot read `{}`", line_text_));
  }

  bool Set(NodeId* out) {
    std::optional<NodeId> id = Ref();
    if (!id) return Fail("expected a node reference `%N`");
    *out = *id;
    return true;
  }

  bool FunctionLine() {
    std::string_view name = Word();
    if (!Eat("weight")) return Fail("expected `weight`");
    std::optional<int64_t> weight = Number();
    if (!weight) return Fail("expected the weight");
    program_.functions.push_back({std::string(name), "", *weight, std::nullopt, {}, {}, {}, {}});
    function_ = &program_.functions.back();
    return true;
  }

  bool SlotLine() {
    std::optional<SlotId> id = SlotRef();
    if (!id || *id != function_->slots.size()) return Fail("slots are numbered from $0 in order");
    std::string_view kind = Word();
    Slot slot;
    slot.name = std::string(Word());
    slot.kind = kind == "let" ? Slot::Kind::kLet : kind == "arg" ? Slot::Kind::kArgument : Slot::Kind::kLoop;
    if (kind != "let" && kind != "arg" && kind != "loop") return Fail("a slot is `let`, `arg` or `loop`");
    if (Eat("=")) {
      NodeId value;
      if (!Set(&value)) return false;
      slot.value = value;
    }
    if (!Eat(":")) return Fail("expected `: type`");
    slot.type = Type(line_text_.substr(pos_));
    if (slot.type == nullptr) return Fail("unknown type");
    function_->slots.push_back(std::move(slot));
    return true;
  }

  std::optional<Message> MessageText() {
    std::optional<std::string> text = Quoted();
    if (!text) return std::nullopt;
    Message m;
    std::string literal;
    for (size_t i = 0; i < text->size(); ++i) {
      if ((*text)[i] == '{' && i + 1 < text->size() && (*text)[i + 1] == '%') {
        size_t close = text->find('}', i);
        int64_t id = 0;
        auto [ptr, ec] = std::from_chars(text->data() + i + 2, text->data() + close, id);
        if (close != std::string::npos && ec == std::errc() && ptr == text->data() + close) {
          if (!literal.empty()) m.parts.push_back({std::move(literal), std::nullopt});
          literal.clear();
          m.parts.push_back({{}, static_cast<NodeId>(id)});
          i = close;
          continue;
        }
      }
      literal += (*text)[i];
    }
    if (!literal.empty()) m.parts.push_back({std::move(literal), std::nullopt});
    return m;
  }

  bool FilterLine(std::vector<Filter>& out) {
    Filter f;
    if (Eat("for")) {
      f.each_first = SlotRef();
      if (!f.each_first) return Fail("expected `$N`");
      if (Eat(",")) f.each_second = SlotRef();
      if (!Eat("in")) return Fail("expected `in`");
      NodeId c;
      if (!Set(&c)) return false;
      f.each_collection = c;
      if (!Eat(":")) return Fail("expected `:`");
    }
    if (!Set(&f.condition)) return false;
    if (Eat("reason")) {
      std::optional<Message> m = MessageText();
      if (!m) return Fail("expected a quoted reason");
      f.reason = std::move(*m);
    }
    if (Eat("detail")) {
      std::optional<Message> m = MessageText();
      if (!m) return Fail("expected a quoted detail");
      f.detail = std::move(*m);
    }
    f.unresolvable = Eat("unresolvable");
    f.aborts = Eat("aborts");
    out.push_back(std::move(f));
    return true;
  }

  bool ScoreLine() {
    Score s;
    if (!Set(&s.value)) return false;
    if (!Eat("normalize")) return Fail("expected `normalize`");
    std::string_view n = Word();
    if (n == "none") s.normalize = lang::Normalize::kNone;
    else if (n == "max") s.normalize = lang::Normalize::kMax;
    else if (n == "reverse") s.normalize = lang::Normalize::kReverse;
    else if (n == "minmax") s.normalize = lang::Normalize::kMinMax;
    else if (n == "spread") s.normalize = lang::Normalize::kSpread;
    else return Fail(fmt::format("unknown normalization `{}`", n));
    function_->scores.push_back(s);
    return true;
  }

  bool NodeLine() {
    std::optional<int64_t> id;
    if (!Eat("%") || !(id = Number()) || *id != static_cast<int64_t>(program_.nodes.size())) {
      return Fail("nodes are numbered from %0 in order");
    }
    if (!Eat("=")) return Fail("expected `=`");
    // The type is after the last ` : `; a `; pod-constant` comment may follow.
    std::string_view rest = line_text_.substr(pos_);
    bool constant = false;
    if (size_t c = rest.rfind("  ; pod-constant"); c != std::string_view::npos) {
      constant = true;
      rest = rest.substr(0, c);
    }
    size_t colon = rest.rfind(" : ");
    if (colon == std::string_view::npos) return Fail("expected ` : type`");
    lang::TypeRef type = Type(rest.substr(colon + 3));
    if (type == nullptr) return Fail(fmt::format("unknown type `{}`", rest.substr(colon + 3)));
    line_text_ = line_text_.substr(0, pos_ + colon);
    std::optional<Node> node = Operation();
    if (!node) return error_.empty() ? Fail(fmt::format("cannot read `{}`", line_text_)) : false;
    program_.Add(std::move(*node), type, Span{}, !constant);
    return true;
  }

  // `[1, 2, 3]`: dictionary ids.
  std::optional<std::vector<uint32_t>> Ids() {
    if (!Eat("[")) return std::nullopt;
    std::vector<uint32_t> ids;
    while (!Eat("]")) {
      std::optional<int64_t> n = Number();
      if (!n || *n < 0 || *n > UINT32_MAX) return std::nullopt;
      ids.push_back(static_cast<uint32_t>(*n));
      Eat(",");
    }
    return ids;
  }

  // %refs, commas between them optional, up to and including `close`.
  std::optional<std::vector<NodeId>> RefsUntil(std::string_view close) {
    std::vector<NodeId> refs;
    while (!Eat(close)) {
      std::optional<NodeId> r = Ref();
      if (!r) return std::nullopt;
      refs.push_back(*r);
      Eat(",");
    }
    return refs;
  }

  // A node of the first kind among Ts whose mnemonic is `op`, its operands
  // read as %refs (as many as the kind has); nullopt when none is `op`.
  template <typename T, typename... Ts>
  std::optional<Node> MnemonicAndOperands(std::string_view op) {
    if (op == kMnemonic<T>) {
      T node{};
      bool ok = true;
      ForOperandsOf(node, [&](NodeId& id) {
        std::optional<NodeId> r = ok ? Ref() : std::nullopt;
        ok = ok && r.has_value();
        id = r.value_or(0);
      });
      if (!ok) return std::nullopt;
      return node;
    }
    if constexpr (sizeof...(Ts) > 0) {
      return MnemonicAndOperands<Ts...>(op);
    } else {
      return std::nullopt;
    }
  }

  std::optional<Node> Operation() {
    std::string_view op = Word();
    auto refs = [&](size_t n) -> std::optional<std::vector<NodeId>> {
      std::vector<NodeId> out;
      for (size_t i = 0; i < n; ++i) {
        std::optional<NodeId> r = Ref();
        if (!r) return std::nullopt;
        out.push_back(*r);
      }
      return out;
    };
    if (op == kMnemonic<NoneConst>) return NoneConst{};
    if (op == "true") return BoolConst{true};
    if (op == "false") return BoolConst{false};
    if (op == kMnemonic<PodRoot>) return PodRoot{};
    if (op == kMnemonic<NodeRoot>) return NodeRoot{};
    if (op == kMnemonic<IntConst>) {  // (and StringConst)
      if (std::optional<std::string> s = Quoted()) return StringConst{*s};
      if (std::optional<int64_t> n = Number()) return IntConst{*n};
      return std::nullopt;
    }
    if (op == kMnemonic<LoadField>) {
      std::string_view field = Word();
      auto r = refs(1);
      if (!r) return std::nullopt;
      for (const lang::RecordSchema* rec : schema_.Records()) {
        for (const lang::FieldSchema& f : rec->fields) {
          if (field == fmt::format("{}.{}", rec->name, f.name)) return LoadField{f.id, (*r)[0]};
        }
      }
      Fail(fmt::format("unknown field `{}`", field));
      return std::nullopt;
    }
    if (op == kMnemonic<Local>) {
      std::optional<SlotId> s = SlotRef();
      if (!s) return std::nullopt;
      return Local{*s};
    }
    if (std::optional<ArithOp> a = FromName<ArithOp>(kArithNames, op)) {
      auto r = refs(2);
      if (!r) return std::nullopt;
      return Arith{*a, (*r)[0], (*r)[1]};
    }
    if (std::optional<CompareOp> c = FromName<CompareOp>(kCompareNames, op)) {
      auto r = refs(2);
      if (!r) return std::nullopt;
      return Compare{*c, (*r)[0], (*r)[1]};
    }
    // The kinds written as the mnemonic and their operands.
    if (std::optional<Node> n = MnemonicAndOperands<Index, Member, And, Or, Coalesce, Not, Negate, IntToQuantity, Select>(op)) {
      return n;
    }
    if (op == "list" || op == "set") {
      std::optional<std::vector<NodeId>> elements = Eat("[") ? RefsUntil("]") : std::nullopt;
      if (!elements) return std::nullopt;
      return MakeList{std::move(*elements), op == "set"};
    }
    if (op == kMnemonic<LabelIn>) {
      std::optional<std::string> key = Quoted();
      std::optional<std::vector<uint32_t>> ids = Ids();
      if (!key || !ids) return std::nullopt;
      return LabelIn{*key, *ids};
    }
    if (op.starts_with(kTaintScanPrefix)) {
      std::optional<LoopKind> kind = FromName<LoopKind>(kLoopNames, op.substr(kTaintScanPrefix.size()));
      std::optional<std::vector<uint32_t>> ids = Ids();
      if (!kind || *kind == LoopKind::kSum || !ids) return std::nullopt;
      return TaintScan{*kind, *ids};
    }
    if (op == kMnemonic<CallBuiltin>) {
      std::string_view name = Word();
      const lang::Builtin* builtin = nullptr;
      for (const lang::Builtin& b : lang::Builtins()) {
        if (b.name == name) builtin = &b;
      }
      std::optional<std::vector<NodeId>> args = builtin != nullptr && Eat("(") ? RefsUntil(")") : std::nullopt;
      if (!args) return std::nullopt;
      return CallBuiltin{builtin->id, std::move(*args)};
    }
    if (std::optional<LoopKind> kind = FromName<LoopKind>(kLoopNames, op)) {
      Loop loop{*kind, 0, 0, std::nullopt, std::nullopt};
      std::optional<SlotId> first = SlotRef();
      if (!first) return std::nullopt;
      loop.first = *first;
      if (Eat(",")) loop.second = SlotRef();
      if (!Eat("in")) return std::nullopt;
      std::optional<NodeId> c = Ref();
      if (!c) return std::nullopt;
      loop.collection = *c;
      if (Eat(":")) loop.body = Ref();
      return loop;
    }
    return std::nullopt;
  }

  std::string_view text_;
  lang::TypeTable& types_;
  const lang::Schema& schema_;
  Program program_;
  Function* function_ = nullptr;
  std::string_view line_text_;
  size_t pos_ = 0;
  size_t line_ = 0;
  std::string error_;
};

}  // namespace

std::optional<Program> Parse(std::string_view text, lang::TypeTable& types, const lang::Schema& schema,
                             std::string* error) {
  return Reader(text, types, schema).Run(error);
}

}  // namespace policy::ir
