// ANTLR glue for CEL (cel::Parse, declared in compiler/cel/parse.h; here
// beside the policy parser so that the generated headers stay in
// compiler/syntax): runs the generated lexer and parser over one
// expression, turns their errors into problems, and walks the tree into
// the AST, expanding macros as cel-go's parser does.

#include "compiler/cel/parse.h"

#include <array>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <stdexcept>

#include <fmt/format.h>

#include "CelLexer.h"
#include "CelParser.h"
#include "antlr4-runtime.h"
#include "support/utf8.h"

namespace policy::cel {
namespace {

using grammar::CelLexer;
using grammar::CelParser;

// How deep an expression may nest: the builder, checker and evaluator
// recurse once a level. Device selectors are a line or two.
constexpr size_t kMaxDepth = 250;
// Every rule nested at once: a parenthesis enters about 10 rules, so
// kMaxDepth parentheses fit; the parser and the builder recurse once a rule.
constexpr size_t kMaxTotalDepth = kMaxDepth * 12;

struct TooDeep : std::exception {
  uint32_t at = 0;
  const char* what() const noexcept override { return "too deep"; }
};

// Code point index -> byte offset of the text ANTLR read.
class Offsets {
 public:
  explicit Offsets(std::string_view text) : size_(static_cast<uint32_t>(text.size())) {
    for (uint32_t i = 0; i < text.size(); ++i) {
      if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80) byte_of_char_.push_back(i);
    }
    byte_of_char_.push_back(size_);
  }
  uint32_t Byte(size_t char_index) const { return byte_of_char_[std::min(char_index, byte_of_char_.size() - 1)]; }
  uint32_t Begin(antlr4::Token* t) const { return Byte(t->getStartIndex()); }
  uint32_t End(antlr4::Token* t) const {
    return t->getType() == antlr4::Token::EOF ? Byte(t->getStartIndex()) : Byte(t->getStopIndex() + 1);
  }

 private:
  uint32_t size_;
  std::vector<uint32_t> byte_of_char_;
};

class Errors final : public antlr4::BaseErrorListener {
 public:
  Errors(const Offsets& offsets, std::vector<Problem>* problems) : offsets_(offsets), problems_(problems) {}
  void syntaxError(antlr4::Recognizer*, antlr4::Token* offending, size_t, size_t, const std::string& msg,
                   std::exception_ptr) override {
    ++count;
    if (offending == nullptr) {
      problems_->push_back({0, 0, "Syntax error: " + msg, true});
      return;
    }
    if (offending->getType() == CelLexer::ERROR_CHAR) {
      problems_->push_back({offsets_.Begin(offending), offsets_.End(offending),
                            fmt::format("Syntax error: token recognition error at: '{}'", offending->getText()), true});
      return;
    }
    problems_->push_back({offsets_.Begin(offending), offsets_.End(offending), "Syntax error: " + msg, true});
  }
  size_t count = 0;

 private:
  const Offsets& offsets_;
  std::vector<Problem>* problems_;
};

class DepthGuard final : public antlr4::tree::ParseTreeListener {
 public:
  explicit DepthGuard(const Offsets& offsets) : offsets_(offsets) {}
  // Per rule, as cel-go's recursion listener counts (kMaxDepth each), and
  // in all (a bound on the parser's own recursion).
  void enterEveryRule(antlr4::ParserRuleContext* ctx) override {
    if (++by_rule_[ctx->getRuleIndex() % by_rule_.size()] > kMaxDepth || ++depth_ > kMaxTotalDepth) {
      TooDeep deep;
      deep.at = offsets_.Begin(ctx->getStart());
      throw deep;
    }
  }
  void exitEveryRule(antlr4::ParserRuleContext* ctx) override {
    --by_rule_[ctx->getRuleIndex() % by_rule_.size()];
    --depth_;
  }
  void visitTerminal(antlr4::tree::TerminalNode*) override {}
  void visitErrorNode(antlr4::tree::ErrorNode*) override {}

 private:
  const Offsets& offsets_;
  size_t depth_ = 0;
  std::array<size_t, 64> by_rule_{};  // more than the grammar has rules
};

// A string or bytes literal's value: quotes, raw prefix and escapes undone.
std::optional<std::string> Unquote(std::string_view token, std::string* why) {
  bool raw = !token.empty() && (token[0] == 'r' || token[0] == 'R');
  if (raw) token.remove_prefix(1);
  size_t quote = token.size() >= 6 && (token.substr(0, 3) == "\"\"\"" || token.substr(0, 3) == "'''") ? 3 : 1;
  std::string_view body = token.substr(quote, token.size() - 2 * quote);
  if (raw) return std::string(body);
  std::string out;
  for (size_t i = 0; i < body.size(); ++i) {
    char c = body[i];
    if (c != '\\') {
      out += c;
      continue;
    }
    if (++i >= body.size()) break;
    char e = body[i];
    auto hex = [&](size_t digits) -> std::optional<uint32_t> {
      if (i + digits >= body.size()) return std::nullopt;
      uint32_t v = 0;
      auto r = std::from_chars(body.data() + i + 1, body.data() + i + 1 + digits, v, 16);
      if (r.ec != std::errc() || r.ptr != body.data() + i + 1 + digits) return std::nullopt;
      i += digits;
      return v;
    };
    auto utf8 = [&](uint32_t cp) { AppendUtf8(out, cp); };
    switch (e) {
      case 'a': out += '\a'; break;
      case 'b': out += '\b'; break;
      case 'f': out += '\f'; break;
      case 'n': out += '\n'; break;
      case 'r': out += '\r'; break;
      case 't': out += '\t'; break;
      case 'v': out += '\v'; break;
      case '"': case '\'': case '\\': case '?': case '`': out += e; break;
      case 'x': case 'X': {
        auto v = hex(2);
        if (!v) return *why = "invalid \\x escape", std::nullopt;
        out += static_cast<char>(*v);
        break;
      }
      case 'u': case 'U': {
        auto v = hex(e == 'u' ? 4 : 8);
        if (!v || *v > 0x10FFFF || (*v >= 0xD800 && *v < 0xE000)) return *why = "invalid unicode escape", std::nullopt;
        utf8(*v);
        break;
      }
      default: {
        if (e >= '0' && e <= '3' && i + 2 < body.size()) {
          out += static_cast<char>((e - '0') * 64 + (body[i + 1] - '0') * 8 + (body[i + 2] - '0'));
          i += 2;
          break;
        }
        return *why = fmt::format("invalid escape \\{}", e), std::nullopt;
      }
    }
  }
  return out;
}

class Builder {
 public:
  Builder(const Offsets& offsets, std::vector<Problem>* problems) : offsets_(offsets), problems_(problems) {}

  ExprPtr Expr(CelParser::ExprContext* ctx) {
    Depth depth(this, ctx);
    ExprPtr cond = Or(ctx->cond);
    if (ctx->then == nullptr) return cond;
    std::vector<ExprPtr> args;
    args.push_back(std::move(cond));
    args.push_back(Or(ctx->then));
    args.push_back(Expr(ctx->otherwise));
    return Call(ctx, "_?_:_", std::move(args));
  }

 private:
  // Counts nesting as the tree is walked, per grammar rule as cel-go's
  // recursion listener does (32 nested parentheses are 32 levels of each
  // rule, not 9 x 32 levels), and in all; a left-recursive chain nests
  // without entering rules the parser's guard counts.
  struct Depth {
    Depth(Builder* b, antlr4::ParserRuleContext* ctx) : b_(b), rule_(ctx->getRuleIndex() % kRules) {
      if (++b_->by_rule_[rule_] > kMaxDepth || ++b_->depth_ > kMaxTotalDepth) {
        TooDeep deep;
        deep.at = b_->offsets_.Begin(ctx->getStart());
        throw deep;
      }
    }
    ~Depth() {
      --b_->by_rule_[rule_];
      --b_->depth_;
    }
    Builder* b_;
    size_t rule_;
  };

  ExprPtr Node(antlr4::ParserRuleContext* ctx, ExprKind kind) {
    auto e = std::make_unique<cel::Expr>();
    e->kind = kind;
    e->begin = offsets_.Begin(ctx->getStart());
    antlr4::Token* stop = ctx->getStop() != nullptr ? ctx->getStop() : ctx->getStart();
    e->end = std::max(e->begin, offsets_.End(stop));
    e->at = e->begin;
    return e;
  }
  ExprPtr Call(antlr4::ParserRuleContext* ctx, std::string name, std::vector<ExprPtr> args, antlr4::Token* op = nullptr) {
    ExprPtr e = Node(ctx, ExprKind::kCall);
    if (op != nullptr) e->at = offsets_.Begin(op);
    e->text = std::move(name);
    e->args = std::move(args);
    return e;
  }
  void Error(antlr4::ParserRuleContext* ctx, std::string message) {
    problems_->push_back({offsets_.Begin(ctx->getStart()), offsets_.End(ctx->getStop() ? ctx->getStop() : ctx->getStart()),
                          std::move(message), true});
  }

  // A chain nests one AST level per operator.
  void Chain(antlr4::ParserRuleContext* ctx, size_t length) {
    if (by_rule_[ctx->getRuleIndex() % kRules] + length > kMaxDepth) {
      TooDeep deep;
      deep.at = offsets_.Begin(ctx->getStart());
      throw deep;
    }
  }

  ExprPtr Or(CelParser::ConditionalOrContext* ctx) {
    Depth depth(this, ctx);
    Chain(ctx, ctx->rest.size());
    ExprPtr left = And(ctx->first);
    for (auto* r : ctx->rest) {
      std::vector<ExprPtr> args;
      args.push_back(std::move(left));
      args.push_back(And(r));
      left = Call(ctx, "_||_", std::move(args));
    }
    return left;
  }
  ExprPtr And(CelParser::ConditionalAndContext* ctx) {
    Depth depth(this, ctx);
    Chain(ctx, ctx->rest.size());
    ExprPtr left = Relation(ctx->first);
    for (auto* r : ctx->rest) {
      std::vector<ExprPtr> args;
      args.push_back(std::move(left));
      args.push_back(Relation(r));
      left = Call(ctx, "_&&_", std::move(args));
    }
    return left;
  }
  static std::string Operator(antlr4::Token* op) {
    std::string t = op->getText();
    if (t == "in") return "@in";
    return "_" + t + "_";
  }
  ExprPtr Relation(CelParser::RelationContext* ctx) {
    Depth depth(this, ctx);
    if (auto* op = dynamic_cast<CelParser::RelationOpContext*>(ctx)) {
      std::vector<ExprPtr> args;
      args.push_back(Relation(op->left));
      args.push_back(Relation(op->right));
      return Call(ctx, Operator(op->op), std::move(args), op->op);
    }
    return Addition(static_cast<CelParser::RelationAdditionContext*>(ctx)->addition());
  }
  ExprPtr Addition(CelParser::AdditionContext* ctx) {
    Depth depth(this, ctx);
    if (auto* op = dynamic_cast<CelParser::AdditionOpContext*>(ctx)) {
      std::vector<ExprPtr> args;
      args.push_back(Addition(op->left));
      args.push_back(Multiplication(op->right));
      return Call(ctx, Operator(op->op), std::move(args), op->op);
    }
    return Multiplication(static_cast<CelParser::AdditionMultiplicationContext*>(ctx)->multiplication());
  }
  ExprPtr Multiplication(CelParser::MultiplicationContext* ctx) {
    Depth depth(this, ctx);
    if (auto* op = dynamic_cast<CelParser::MultiplicationOpContext*>(ctx)) {
      std::vector<ExprPtr> args;
      args.push_back(Multiplication(op->left));
      args.push_back(Unary(op->right));
      return Call(ctx, Operator(op->op), std::move(args), op->op);
    }
    return Unary(static_cast<CelParser::MultiplicationUnaryContext*>(ctx)->unary());
  }
  ExprPtr Unary(CelParser::UnaryContext* ctx) {
    Depth depth(this, ctx);
    if (auto* n = dynamic_cast<CelParser::UnaryNotContext*>(ctx)) {
      Chain(ctx, n->ops.size());
      ExprPtr e = Member(n->member());
      for (size_t i = 0; i < n->ops.size(); ++i) {
        std::vector<ExprPtr> args;
        args.push_back(std::move(e));
        e = Call(ctx, "!_", std::move(args));
      }
      return e;
    }
    if (auto* n = dynamic_cast<CelParser::UnaryNegateContext*>(ctx)) {
      Chain(ctx, n->ops.size());
      ExprPtr e = Member(n->member());
      for (size_t i = 0; i < n->ops.size(); ++i) {
        std::vector<ExprPtr> args;
        args.push_back(std::move(e));
        e = Call(ctx, "-_", std::move(args));
      }
      return e;
    }
    return Member(static_cast<CelParser::UnaryMemberContext*>(ctx)->member());
  }

  std::vector<ExprPtr> List(CelParser::ExprListContext* ctx) {
    std::vector<ExprPtr> out;
    if (ctx == nullptr) return out;
    for (auto* e : ctx->items) out.push_back(Expr(e));
    return out;
  }

  ExprPtr Member(CelParser::MemberContext* ctx) {
    Depth depth(this, ctx);
    if (auto* m = dynamic_cast<CelParser::MemberSelectContext*>(ctx)) {
      ExprPtr e = Node(ctx, ExprKind::kSelect);
      e->text = m->field->getText();
      e->args.push_back(Member(m->operand));
      return e;
    }
    if (auto* m = dynamic_cast<CelParser::MemberIndexContext*>(ctx)) {
      ExprPtr e = Node(ctx, ExprKind::kIndex);
      e->args.push_back(Member(m->operand));
      e->args.push_back(Expr(m->index));
      return e;
    }
    if (auto* m = dynamic_cast<CelParser::MemberCallContext*>(ctx)) {
      std::string method = m->method->getText();
      // cel.bind(var, init, body)
      if (method == "bind" && m->operand->getText() == "cel") return Bind(ctx, m->args);
      ExprPtr target = Member(m->operand);
      std::vector<ExprPtr> args = List(m->args);
      if (auto macro = Macro(ctx, method, target, args)) return macro;
      ExprPtr e = Node(ctx, ExprKind::kCall);
      e->text = method;
      e->has_target = true;
      e->args.push_back(std::move(target));
      for (auto& a : args) e->args.push_back(std::move(a));
      return e;
    }
    return Primary(static_cast<CelParser::MemberPrimaryContext*>(ctx)->primary());
  }

  ExprPtr Bind(antlr4::ParserRuleContext* ctx, CelParser::ExprListContext* list) {
    std::vector<ExprPtr> args = List(list);
    if (args.size() != 3 || args[0]->kind != ExprKind::kIdent) {
      Error(ctx, "cel.bind() variable name must be a simple identifier");
      return Node(ctx, ExprKind::kNull);
    }
    ExprPtr e = Node(ctx, ExprKind::kBind);
    e->var = args[0]->text;
    e->args.push_back(std::move(args[1]));
    e->args.push_back(std::move(args[2]));
    return e;
  }

  // all/exists/exists_one/map/filter over `target`; null when `method` is
  // not a macro of that arity.
  ExprPtr Macro(antlr4::ParserRuleContext* ctx, const std::string& method, ExprPtr& target, std::vector<ExprPtr>& args) {
    bool predicate = method == "all" || method == "exists" || method == "exists_one" || method == "existsOne";
    bool transform = method == "transformList" || method == "transformMap" || method == "transformMapEntry";
    if ((args.size() == 3 && (predicate || transform)) || (args.size() == 4 && transform)) {
      return TwoVarMacro(ctx, method == "existsOne" ? "exists_one" : method, target, args);
    }
    bool two = args.size() == 2 && (method == "all" || method == "exists" || method == "exists_one" ||
                                    method == "map" || method == "filter");
    bool three = args.size() == 3 && method == "map";
    if (!two && !three) return nullptr;
    if (args[0]->kind != ExprKind::kIdent) {
      Error(ctx, "argument must be a simple name");
      return Node(ctx, ExprKind::kNull);
    }
    ExprPtr e = Node(ctx, ExprKind::kComprehension);
    e->text = method;
    e->var = args[0]->text;
    e->args.push_back(std::move(target));
    for (size_t i = 1; i < args.size(); ++i) e->args.push_back(std::move(args[i]));
    return e;
  }

  // all/exists/existsOne(i, v, p), transformList/transformMap/
  // transformMapEntry(i, v, [filter,] t): kube's TwoVarComprehensions.
  ExprPtr TwoVarMacro(antlr4::ParserRuleContext* ctx, const std::string& method, ExprPtr& target, std::vector<ExprPtr>& args) {
    if (args[0]->kind != ExprKind::kIdent || args[1]->kind != ExprKind::kIdent) {
      Error(ctx, "argument must be a simple name");
      return Node(ctx, ExprKind::kNull);
    }
    if (args[0]->text == args[1]->text) {
      Error(ctx, fmt::format("duplicate variable name: {}", args[0]->text));
      return Node(ctx, ExprKind::kNull);
    }
    ExprPtr e = Node(ctx, ExprKind::kComprehension);
    e->text = method;
    e->var = args[0]->text;
    e->var2 = args[1]->text;
    e->args.push_back(std::move(target));
    for (size_t i = 2; i < args.size(); ++i) e->args.push_back(std::move(args[i]));
    return e;
  }

  ExprPtr Primary(CelParser::PrimaryContext* ctx) {
    Depth depth(this, ctx);
    if (auto* p = dynamic_cast<CelParser::PrimaryIdentContext*>(ctx)) {
      std::string name = p->id->getText();
      if (p->call == nullptr) {
        ExprPtr e = Node(ctx, ExprKind::kIdent);
        e->text = (p->leadingDot != nullptr ? "." : "") + name;
        return e;
      }
      std::vector<ExprPtr> args = List(p->args);
      if (name == "has") {
        if (args.size() != 1 || args[0]->kind != ExprKind::kSelect) {
          Error(ctx, "invalid argument to has() macro");
          return Node(ctx, ExprKind::kNull);
        }
        ExprPtr e = Node(ctx, ExprKind::kPresence);
        e->text = args[0]->text;
        e->args.push_back(std::move(args[0]->args[0]));
        return e;
      }
      return Call(ctx, name, std::move(args));
    }
    if (auto* p = dynamic_cast<CelParser::PrimaryNestedContext*>(ctx)) return Expr(p->inner);
    if (auto* p = dynamic_cast<CelParser::PrimaryListContext*>(ctx)) {
      ExprPtr e = Node(ctx, ExprKind::kList);
      e->args = List(p->elems);
      return e;
    }
    if (auto* p = dynamic_cast<CelParser::PrimaryMapContext*>(ctx)) {
      ExprPtr e = Node(ctx, ExprKind::kMap);
      if (p->entries != nullptr) {
        for (size_t i = 0; i < p->entries->keys.size(); ++i) {
          e->args.push_back(Expr(p->entries->keys[i]));
          e->args.push_back(Expr(p->entries->values[i]));
        }
      }
      return e;
    }
    return Literal(static_cast<CelParser::PrimaryLiteralContext*>(ctx)->literal());
  }

  ExprPtr Literal(CelParser::LiteralContext* ctx) {
    if (auto* l = dynamic_cast<CelParser::IntLiteralContext*>(ctx)) {
      ExprPtr e = Node(ctx, ExprKind::kInt);
      std::string text = (l->sign != nullptr ? "-" : "") + l->tok->getText();
      bool hex = text.find("0x") != std::string::npos;
      std::string digits = hex ? (l->sign ? "-" : "") + text.substr(text.find("0x") + 2) : text;
      auto r = std::from_chars(digits.data(), digits.data() + digits.size(), e->int_value, hex ? 16 : 10);
      if (r.ec != std::errc() || r.ptr != digits.data() + digits.size()) Error(ctx, fmt::format("invalid int literal: {}", text));
      return e;
    }
    if (auto* l = dynamic_cast<CelParser::UintLiteralContext*>(ctx)) {
      ExprPtr e = Node(ctx, ExprKind::kUint);
      std::string text = l->tok->getText();
      text.pop_back();  // the u
      bool hex = text.rfind("0x", 0) == 0;
      std::string digits = hex ? text.substr(2) : text;
      auto r = std::from_chars(digits.data(), digits.data() + digits.size(), e->uint_value, hex ? 16 : 10);
      if (r.ec != std::errc() || r.ptr != digits.data() + digits.size()) Error(ctx, fmt::format("invalid uint literal: {}", text));
      return e;
    }
    if (auto* l = dynamic_cast<CelParser::DoubleLiteralContext*>(ctx)) {
      ExprPtr e = Node(ctx, ExprKind::kDouble);
      std::string text = (l->sign != nullptr ? "-" : "") + l->tok->getText();
      // As Go's ParseFloat: too small reads as 0 or a subnormal, too large
      // is no double (cel-go: "invalid double literal").
      errno = 0;
      e->double_value = std::strtod(text.c_str(), nullptr);
      if (errno == ERANGE && std::isinf(e->double_value)) Error(ctx, "invalid double literal");
      return e;
    }
    if (auto* l = dynamic_cast<CelParser::StringLiteralContext*>(ctx)) return StringLit(ctx, l->tok->getText(), ExprKind::kString);
    if (auto* l = dynamic_cast<CelParser::BytesLiteralContext*>(ctx)) {
      return StringLit(ctx, l->tok->getText().substr(1), ExprKind::kBytes);
    }
    if (dynamic_cast<CelParser::TrueLiteralContext*>(ctx)) {
      ExprPtr e = Node(ctx, ExprKind::kBool);
      e->bool_value = true;
      return e;
    }
    if (dynamic_cast<CelParser::FalseLiteralContext*>(ctx)) return Node(ctx, ExprKind::kBool);
    return Node(ctx, ExprKind::kNull);
  }

  ExprPtr StringLit(antlr4::ParserRuleContext* ctx, const std::string& token, ExprKind kind) {
    ExprPtr e = Node(ctx, kind);
    std::string why;
    std::optional<std::string> value = Unquote(token, &why);
    if (!value) Error(ctx, fmt::format("Syntax error: {}", why));
    e->text = value.value_or("");
    return e;
  }

  const Offsets& offsets_;
  std::vector<Problem>* problems_;
  static constexpr size_t kRules = 64;  // more than the grammar has
  size_t depth_ = 0;
  std::array<size_t, kRules> by_rule_{};
};

}  // namespace

ExprPtr Parse(std::string_view text, std::vector<Problem>* problems) {
  size_t before = problems->size();
  Offsets offsets(text);
  try {
    antlr4::ANTLRInputStream input{std::string(text)};
    CelLexer lexer(&input);
    antlr4::CommonTokenStream tokens(&lexer);
    CelParser parser(&tokens);
    Errors errors(offsets, problems);
    DepthGuard guard(offsets);
    lexer.removeErrorListeners();
    parser.removeErrorListeners();
    parser.addErrorListener(&errors);
    parser.addParseListener(&guard);
    CelParser::StartContext* start = parser.start();
    if (errors.count > 0) return nullptr;
    Builder builder(offsets, problems);
    ExprPtr e = builder.Expr(start->e);
    if (problems->size() != before) return nullptr;
    return e;
  } catch (const TooDeep& deep) {
    problems->push_back({deep.at, deep.at, fmt::format("expression nests deeper than {} levels", kMaxDepth), true});
  } catch (const std::range_error&) {
    problems->push_back({0, 0, "the expression is not valid UTF-8", true});
  }
  return nullptr;
}

}  // namespace policy::cel
