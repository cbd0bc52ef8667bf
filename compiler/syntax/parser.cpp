// ANTLR glue: runs the generated lexer and parser, turns their errors into
// diagnostics, and walks the parse tree into the AST.
//
// ANTLR counts positions in code points; spans are bytes. A Window maps one
// parsed text (the whole file, or an interpolation inside a string) to byte
// offsets in the source.

#include "compiler/syntax/parser.h"

#include <memory>
#include <stdexcept>
#include <string>

#include <fmt/format.h>

#include "PolicyLexer.h"
#include "PolicyParser.h"
#include "antlr4-runtime.h"
#include "support/utf8.h"
#include "compiler/syntax/templates.h"

namespace policy::syntax {
namespace {

using grammar::PolicyLexer;
using grammar::PolicyParser;

// A stretch of the source handed to ANTLR, with its code point -> byte map.
class Window {
 public:
  Window(const Source& source, uint32_t base, std::string_view text) : source_(source), base_(base) {
    bool ascii = true;
    for (char c : text) ascii &= (c & 0x80) == 0;
    if (ascii) return;
    for (uint32_t i = 0; i < text.size(); ++i) {
      if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80) byte_of_char_.push_back(i);
    }
    byte_of_char_.push_back(static_cast<uint32_t>(text.size()));
  }

  uint32_t Byte(size_t char_index) const {
    if (byte_of_char_.empty()) return base_ + static_cast<uint32_t>(char_index);
    return base_ + byte_of_char_[std::min(char_index, byte_of_char_.size() - 1)];
  }
  Span TokenSpan(antlr4::Token* token) const {
    if (token->getType() == antlr4::Token::EOF) {
      uint32_t at = Byte(token->getStartIndex());
      return Span{&source_, at, at};
    }
    return Span{&source_, Byte(token->getStartIndex()), Byte(token->getStopIndex() + 1)};
  }
  Span ContextSpan(antlr4::ParserRuleContext* ctx) const {
    antlr4::Token* stop = ctx->getStop() != nullptr ? ctx->getStop() : ctx->getStart();
    uint32_t end = stop->getType() == antlr4::Token::EOF ? Byte(stop->getStartIndex()) : Byte(stop->getStopIndex() + 1);
    return Span{&source_, Byte(ctx->getStart()->getStartIndex()), std::max(end, Byte(ctx->getStart()->getStartIndex()))};
  }
  const Source& source() const { return source_; }

 private:
  const Source& source_;
  uint32_t base_;
  std::vector<uint32_t> byte_of_char_;  // empty when the text is ASCII
};

// ANTLR's messages, in policyc's words: `mismatched input 'x' expecting {...}`
// becomes "unexpected `x`, expected one of ...".
std::string Reword(std::string message, std::string_view end_word) {
  auto backticks = [&](std::string s) {
    std::string out;
    for (size_t i = 0; i < s.size(); ++i) {
      if (s[i] == '\'' ) {
        size_t close = s.find('\'', i + 1);
        if (close != std::string::npos) {
          out += '`' + s.substr(i + 1, close - i - 1) + '`';
          i = close;
          continue;
        }
      }
      out += s[i];
    }
    auto replace_all = [&](std::string_view from, std::string_view to) {
      for (size_t at; (at = out.find(from)) != std::string::npos;) out.replace(at, from.size(), to);
    };
    replace_all("`<EOF>`", end_word);
    replace_all("<EOF>", end_word);
    bool set = out.size() > 2 && out.front() == '{' && out.back() == '}';
    // A set that lists every way an expression can start says just that.
    if (set && out.find("IDENT") != std::string::npos && out.find("INT") != std::string::npos &&
        out.find("STRING") != std::string::npos) {
      return std::string("an expression");
    }
    replace_all("QUANTITY", "a quantity");
    replace_all("INT", "an integer");
    replace_all("IDENT", "a name");
    replace_all("STRING", "a string");
    if (set) out = "one of " + out.substr(1, out.size() - 2);
    return out;
  };
  auto split = [&](std::string_view prefix, std::string_view middle) -> std::optional<std::pair<std::string, std::string>> {
    if (message.rfind(prefix, 0) != 0) return std::nullopt;
    size_t m = message.find(middle, prefix.size());
    if (m == std::string::npos) return std::nullopt;
    return std::make_pair(message.substr(prefix.size(), m - prefix.size()), message.substr(m + middle.size()));
  };
  if (auto p = split("mismatched input ", " expecting ")) return fmt::format("unexpected {}, expected {}", backticks(p->first), backticks(p->second));
  if (auto p = split("extraneous input ", " expecting ")) return fmt::format("unexpected {}, expected {}", backticks(p->first), backticks(p->second));
  if (auto p = split("missing ", " at ")) return fmt::format("expected {} before {}", backticks(p->first), backticks(p->second));
  if (message.rfind("no viable alternative at input ", 0) == 0) {
    return fmt::format("cannot read {} here", backticks(message.substr(31)));
  }
  return backticks(message);
}

class ErrorCollector final : public antlr4::BaseErrorListener {
 public:
  ErrorCollector(const Window& window, DiagnosticSink& diags, std::string_view end_word)
      : window_(window), diags_(diags), end_word_(end_word) {}

  void syntaxError(antlr4::Recognizer*, antlr4::Token* offending, size_t line, size_t column, const std::string& msg,
                   std::exception_ptr) override {
    ++errors_;
    if (offending == nullptr) {
      diags_.Error(DiagCode::kSyntaxError, Span{&window_.source(), 0, 0}, Reword(msg, end_word_));
      return;
    }
    if (offending->getType() == PolicyLexer::BAD_CHAR) {
      Diagnostic& d = diags_.Error(DiagCode::kBadCharacter, window_.TokenSpan(offending),
                                   fmt::format("unexpected character `{}`", offending->getText()),
                                   "not part of the language");
      if (offending->getText() == "&" || offending->getText() == "|" || offending->getText() == "!") {
        d.help = "write `and`, `or` and `not`";
      }
      return;
    }
    diags_.Error(DiagCode::kSyntaxError, window_.TokenSpan(offending), Reword(msg, end_word_));
  }

  size_t errors() const { return errors_; }

 private:
  const Window& window_;
  DiagnosticSink& diags_;
  std::string_view end_word_;
  size_t errors_ = 0;
};

// How deep the parser may descend. ANTLR's parser takes a C++ frame for
// each rule it enters, and the parse tree (which the builder, sema and
// lowering walk recursively) is as deep: 20,000 nested `(` or 50,000 `not`
// exhausted the stack. Every stdlib policy stays under 100.
constexpr size_t kMaxRuleDepth = 1000;

// Thrown when a text nests or chains deeper than kMaxRuleDepth; `span` is
// where the limit was reached.
struct TooDeep : std::exception {
  explicit TooDeep(Span at) : span(at) {}
  const char* what() const noexcept override { return "too deep"; }
  Span span;
};

// Counts the rules the parser is inside (a left-recursive rule's operator
// chain counts one per operator, as ANTLR nests its contexts) and stops
// the parse past kMaxRuleDepth.
class DepthGuard final : public antlr4::tree::ParseTreeListener {
 public:
  explicit DepthGuard(const Window& window) : window_(window) {}
  void enterEveryRule(antlr4::ParserRuleContext* ctx) override {
    if (++depth_ > kMaxRuleDepth) throw TooDeep(window_.TokenSpan(ctx->getStart()));
  }
  void exitEveryRule(antlr4::ParserRuleContext*) override { --depth_; }
  void visitTerminal(antlr4::tree::TerminalNode*) override {}
  void visitErrorNode(antlr4::tree::ErrorNode*) override {}

 private:
  const Window& window_;
  size_t depth_ = 0;
};

// The parse tree's depth, walked without recursion: a left-recursive
// operator chain (`a and b and ...`) nests one context per operator without
// entering a rule, so DepthGuard does not see it; the builder would recurse
// that deep. Throws TooDeep past kMaxRuleDepth.
void CheckTreeDepth(antlr4::tree::ParseTree* root, const Window& window) {
  std::vector<std::pair<antlr4::tree::ParseTree*, size_t>> stack = {{root, 1}};
  while (!stack.empty()) {
    auto [node, depth] = stack.back();
    stack.pop_back();
    if (depth > kMaxRuleDepth) {
      antlr4::Token* at = nullptr;
      if (auto* ctx = dynamic_cast<antlr4::ParserRuleContext*>(node)) at = ctx->getStart();
      if (auto* leaf = dynamic_cast<antlr4::tree::TerminalNode*>(node)) at = leaf->getSymbol();
      throw TooDeep(at != nullptr ? window.TokenSpan(at) : Span{&window.source(), 0, 0});
    }
    for (antlr4::tree::ParseTree* child : node->children) stack.emplace_back(child, depth + 1);
  }
}

void ReportTooDeep(const TooDeep& deep, DiagnosticSink& diags) {
  Diagnostic& d = diags.Error(DiagCode::kTooDeep, deep.span,
                              fmt::format("the expression nests or chains deeper than {} levels of the grammar (a chained "
                                          "operator is one level, a parenthesis two: about {} parentheses)",
                                          kMaxRuleDepth, kMaxRuleDepth / 2),
                              "the limit is reached here");
  d.help = "split it into `let`s, or into several rules";
}

// Runs ANTLR over one text: the lexer, the parser and their error listeners
// live together so a parse tree never outlives its tokens.
struct AntlrRun {
  AntlrRun(std::string_view text, const Window& window, DiagnosticSink& diags, std::string_view end_word)
      : window(window), input(std::string(text)), lexer(&input), tokens(&lexer), parser(&tokens),
        errors(window, diags, end_word), guard(window) {
    lexer.removeErrorListeners();
    parser.removeErrorListeners();
    parser.addErrorListener(&errors);
    parser.addParseListener(&guard);
  }
  const Window& window;
  antlr4::ANTLRInputStream input;
  PolicyLexer lexer;
  antlr4::CommonTokenStream tokens;
  PolicyParser parser;
  ErrorCollector errors;
  DepthGuard guard;
};

std::optional<Template> TemplateFromBody(Module& module, const Source& source, std::string_view body, uint32_t base,
                                         Span span, DiagnosticSink& diags);

class Builder {
 public:
  Builder(Module& module, const Window& window, DiagnosticSink& diags)
      : module_(module), window_(window), diags_(diags) {}

  void File(PolicyParser::FileContext* ctx) {
    for (auto* p : ctx->policyDecl()) module_.policies.push_back(Policy(p));
  }

  ExprId Expr(PolicyParser::ExprContext* ctx);
  std::optional<Template> TemplateOf(antlr4::tree::TerminalNode* string);
  Binder BinderOf(PolicyParser::BinderContext* ctx);
  TypeExpr TypeOf(PolicyParser::TypeExprContext* ctx);

 private:
  Span SpanOf(antlr4::ParserRuleContext* ctx) const { return window_.ContextSpan(ctx); }
  ExprId Add(syntax::Expr e, antlr4::ParserRuleContext* ctx) { return module_.exprs.Add(std::move(e), SpanOf(ctx)); }

  PolicyDecl Policy(PolicyParser::PolicyDeclContext* ctx);
  Member MemberOf(PolicyParser::MemberContext* ctx);
  ExprId Primary(PolicyParser::PrimaryContext* ctx);
  std::vector<ExprId> Exprs(const std::vector<PolicyParser::ExprContext*>& list, size_t from = 0);
  std::string StringValue(antlr4::tree::TerminalNode* string);
  int64_t Integer(antlr4::tree::TerminalNode* token);

  Module& module_;
  const Window& window_;
  DiagnosticSink& diags_;
};

int64_t Builder::Integer(antlr4::tree::TerminalNode* token) {
  const std::string& text = token->getText();
  int64_t value = 0;
  for (char c : text) {
    if (__builtin_mul_overflow(value, 10, &value) || __builtin_add_overflow(value, c - '0', &value)) {
      diags_.Error(DiagCode::kBadNumber, window_.TokenSpan(token->getSymbol()),
                   fmt::format("the integer `{}` does not fit in 64 bits", text), "too large");
      return 0;
    }
  }
  return value;
}

std::string Builder::StringValue(antlr4::tree::TerminalNode* string) {
  const std::string& raw = string->getText();
  std::string body = raw.substr(1, raw.size() - 2);
  if (raw[0] == '\'') return body;
  std::optional<std::string> value = Unescape(body);
  if (!value) {
    diags_.Error(DiagCode::kBadString, window_.TokenSpan(string->getSymbol()),
                 "unknown escape in a string", "use `\\\"`, `\\\\`, `\\n`, `\\t`, `\\{` or `\\}`");
    return body;
  }
  return *value;
}

std::optional<Template> Builder::TemplateOf(antlr4::tree::TerminalNode* string) {
  Span span = window_.TokenSpan(string->getSymbol());
  std::string_view raw = window_.source().Text().substr(span.begin, span.end - span.begin);
  if (raw[0] == '\'') {
    Template out;
    out.span = span;
    out.parts.push_back({std::string(raw.substr(1, raw.size() - 2)), std::nullopt});
    return out;
  }
  return TemplateFromBody(module_, window_.source(), raw.substr(1, raw.size() - 2), span.begin + 1, span, diags_);
}

PolicyDecl Builder::Policy(PolicyParser::PolicyDeclContext* ctx) {
  PolicyDecl p;
  p.name = ctx->name->getText();
  p.name_span = window_.TokenSpan(ctx->name);
  if (ctx->doc != nullptr) p.doc = StringValue(ctx->STRING());
  p.span = SpanOf(ctx);
  for (auto* m : ctx->member()) p.members.push_back(MemberOf(m));
  return p;
}

TypeExpr Builder::TypeOf(PolicyParser::TypeExprContext* ctx) {
  TypeExpr t{ctx->IDENT()->getText(), {}, ctx->QUESTION() != nullptr, SpanOf(ctx)};
  if (ctx->typeExpr() != nullptr) t.args.push_back(TypeOf(ctx->typeExpr()));
  return t;
}

Binder Builder::BinderOf(PolicyParser::BinderContext* ctx) {
  Binder b;
  b.span = SpanOf(ctx);
  if (auto* single = dynamic_cast<PolicyParser::SingleBinderContext*>(ctx)) {
    b.first = single->IDENT()->getText();
  } else {
    auto* pair = dynamic_cast<PolicyParser::PairBinderContext*>(ctx);
    b.first = pair->IDENT(0)->getText();
    b.second = pair->IDENT(1)->getText();
  }
  return b;
}

Member Builder::MemberOf(PolicyParser::MemberContext* ctx) {
  Span span = SpanOf(ctx);
  if (auto* m = dynamic_cast<PolicyParser::WeightMemberContext*>(ctx)) return WeightDecl{Integer(m->INT()), span};
  if (auto* m = dynamic_cast<PolicyParser::LetMemberContext*>(ctx)) {
    return LetDecl{m->IDENT()->getText(), Expr(m->expr()), span};
  }
  if (auto* m = dynamic_cast<PolicyParser::ParamMemberContext*>(ctx)) {
    return ParamDecl{m->IDENT()->getText(), TypeOf(m->typeExpr()), Expr(m->expr()), span};
  }
  if (auto* m = dynamic_cast<PolicyParser::DefMemberContext*>(ctx)) {
    DefDecl d{m->IDENT()->getText(), {}, 0, span};
    for (auto* param : m->param()) d.params.push_back({param->IDENT()->getText(), TypeOf(param->typeExpr())});
    d.body = Expr(m->expr());
    return d;
  }
  if (auto* m = dynamic_cast<PolicyParser::FilterMemberContext*>(ctx)) {
    FilterDecl f;
    f.span = span;
    std::vector<PolicyParser::ExprContext*> exprs = m->expr();
    if (m->binder() != nullptr) {
      f.each = BinderOf(m->binder());
      f.each_collection = Expr(exprs[0]);
    }
    f.condition = Expr(exprs.back());
    if (m->reasonClause() != nullptr) f.reason = TemplateOf(m->reasonClause()->STRING());
    if (m->detailClause() != nullptr) f.detail = TemplateOf(m->detailClause()->STRING());
    f.unresolvable = m->UNRESOLVABLE() != nullptr;
    f.aborts = m->ABORTS() != nullptr;
    return f;
  }
  if (auto* m = dynamic_cast<PolicyParser::PrefilterMemberContext*>(ctx)) {
    PrefilterDecl f{Expr(m->expr()), std::nullopt, std::nullopt, false, span};
    if (m->reasonClause() != nullptr) f.reason = TemplateOf(m->reasonClause()->STRING());
    if (m->detailClause() != nullptr) f.detail = TemplateOf(m->detailClause()->STRING());
    f.unresolvable = m->UNRESOLVABLE() != nullptr;
    return f;
  }
  if (auto* m = dynamic_cast<PolicyParser::ScoreMemberContext*>(ctx)) {
    ScoreDecl s{Expr(m->expr()), {}, {}, span};
    antlr4::tree::TerminalNode* kind = m->IDENT() != nullptr ? m->IDENT() : m->NONE();  // `none` is a keyword too
    if (kind != nullptr) {
      s.normalize = kind->getText();
      s.normalize_span = window_.TokenSpan(kind->getSymbol());
    }
    return s;
  }
  auto* m = dynamic_cast<PolicyParser::WhenMemberContext*>(ctx);
  return WhenDecl{Expr(m->expr()), span};
}

std::vector<ExprId> Builder::Exprs(const std::vector<PolicyParser::ExprContext*>& list, size_t from) {
  std::vector<ExprId> out;
  for (size_t i = from; i < list.size(); ++i) out.push_back(Expr(list[i]));
  return out;
}

BinaryOp BinaryOpOf(size_t token) {
  switch (token) {
    case PolicyParser::STAR: return BinaryOp::kMul;
    case PolicyParser::SLASH: return BinaryOp::kDiv;
    case PolicyParser::PERCENT: return BinaryOp::kMod;
    case PolicyParser::PLUS: return BinaryOp::kAdd;
    case PolicyParser::MINUS: return BinaryOp::kSub;
    case PolicyParser::COALESCE: return BinaryOp::kCoalesce;
    case PolicyParser::EQ: return BinaryOp::kEq;
    case PolicyParser::NE: return BinaryOp::kNe;
    case PolicyParser::LT: return BinaryOp::kLt;
    case PolicyParser::LE: return BinaryOp::kLe;
    case PolicyParser::GT: return BinaryOp::kGt;
    case PolicyParser::GE: return BinaryOp::kGe;
    case PolicyParser::IN: return BinaryOp::kIn;
    case PolicyParser::AND: return BinaryOp::kAnd;
    default: return BinaryOp::kOr;
  }
}

ExprId Builder::Expr(PolicyParser::ExprContext* ctx) {
  if (auto* e = dynamic_cast<PolicyParser::PrimaryExprContext*>(ctx)) return Primary(e->primary());
  if (auto* e = dynamic_cast<PolicyParser::MethodExprContext*>(ctx)) {
    std::vector<PolicyParser::ExprContext*> exprs = e->expr();
    ExprId object = Expr(exprs[0]);
    return Add(MethodCall{object, e->fieldName()->getText(), Exprs(exprs, 1)}, ctx);
  }
  if (auto* e = dynamic_cast<PolicyParser::FieldExprContext*>(ctx)) {
    return Add(FieldRef{Expr(e->expr()), e->fieldName()->getText()}, ctx);
  }
  if (auto* e = dynamic_cast<PolicyParser::IndexExprContext*>(ctx)) {
    ExprId object = Expr(e->expr(0));
    return Add(IndexRef{object, Expr(e->expr(1))}, ctx);
  }
  if (auto* e = dynamic_cast<PolicyParser::UnaryExprContext*>(ctx)) {
    UnaryOp op = e->op->getType() == PolicyParser::MINUS ? UnaryOp::kNeg : UnaryOp::kNot;
    return Add(Unary{op, Expr(e->expr())}, ctx);
  }
  if (auto* e = dynamic_cast<PolicyParser::BinaryExprContext*>(ctx)) {
    ExprId lhs = Expr(e->expr(0));
    return Add(Binary{BinaryOpOf(e->op->getType()), lhs, Expr(e->expr(1))}, ctx);
  }
  if (auto* e = dynamic_cast<PolicyParser::NotInExprContext*>(ctx)) {
    ExprId lhs = Expr(e->expr(0));
    return Add(Binary{BinaryOp::kNotIn, lhs, Expr(e->expr(1))}, ctx);
  }
  if (auto* e = dynamic_cast<PolicyParser::IfExprContext*>(ctx)) {
    ExprId c = Expr(e->expr(0));
    ExprId t = Expr(e->expr(1));
    return Add(IfElse{c, t, Expr(e->expr(2))}, ctx);
  }
  if (auto* e = dynamic_cast<PolicyParser::FoldExprContext*>(ctx)) {
    FoldKind kind = e->kind->getType() == PolicyParser::ANY   ? FoldKind::kAny
                    : e->kind->getType() == PolicyParser::ALL ? FoldKind::kAll
                                                              : FoldKind::kSum;
    Binder binder = BinderOf(e->binder());
    ExprId collection = Expr(e->expr(0));
    return Add(Fold{kind, std::move(binder), collection, Expr(e->expr(1))}, ctx);
  }
  auto* e = dynamic_cast<PolicyParser::SelectExprContext*>(ctx);
  SelectKind kind = e->kind->getType() == PolicyParser::COUNT ? SelectKind::kCount : SelectKind::kFirst;
  Binder binder = BinderOf(e->binder());
  ExprId collection = Expr(e->expr(0));
  std::optional<ExprId> where;
  if (e->expr().size() > 1) where = Expr(e->expr(1));
  return Add(Select{kind, std::move(binder), collection, where}, ctx);
}

ExprId Builder::Primary(PolicyParser::PrimaryContext* ctx) {
  if (auto* p = dynamic_cast<PolicyParser::IntLiteralContext*>(ctx)) return Add(IntLit{Integer(p->INT())}, ctx);
  if (auto* p = dynamic_cast<PolicyParser::QuantityLiteralContext*>(ctx)) {
    return Add(QuantityLit{p->QUANTITY()->getText()}, ctx);
  }
  if (auto* p = dynamic_cast<PolicyParser::StringLiteralContext*>(ctx)) return Add(StringLit{StringValue(p->STRING())}, ctx);
  if (auto* p = dynamic_cast<PolicyParser::BoolLiteralContext*>(ctx)) return Add(BoolLit{p->TRUE() != nullptr}, ctx);
  if (dynamic_cast<PolicyParser::NoneLiteralContext*>(ctx) != nullptr) return Add(NoneLit{}, ctx);
  if (auto* p = dynamic_cast<PolicyParser::CallExprContext*>(ctx)) {
    return Add(Call{p->IDENT()->getText(), Exprs(p->expr())}, ctx);
  }
  if (auto* p = dynamic_cast<PolicyParser::CelExprContext*>(ctx)) {  // `cel "..."`: a call of the builtin `cel`
    ExprId text = module_.exprs.Add(StringLit{StringValue(p->STRING())}, window_.TokenSpan(p->STRING()->getSymbol()));
    return Add(Call{"cel", {text}}, ctx);
  }
  if (auto* p = dynamic_cast<PolicyParser::NameExprContext*>(ctx)) return Add(NameRef{p->IDENT()->getText()}, ctx);
  if (auto* p = dynamic_cast<PolicyParser::ParenExprContext*>(ctx)) return Expr(p->expr());
  if (auto* p = dynamic_cast<PolicyParser::SetLiteralContext*>(ctx)) return Add(SetLit{Exprs(p->expr())}, ctx);
  auto* p = dynamic_cast<PolicyParser::ListLiteralContext*>(ctx);
  return Add(ListLit{Exprs(p->expr())}, ctx);
}

std::optional<Template> TemplateFromBody(Module& module, const Source& source, std::string_view body, uint32_t base,
                                         Span span, DiagnosticSink& diags) {
  Template out;
  out.span = span;
  std::vector<TemplatePiece> pieces;
  std::string error;
  uint32_t error_offset = 0;
  if (!SplitTemplate(body, &pieces, &error, &error_offset)) {
    uint32_t at = base + error_offset;
    diags.Error(DiagCode::kBadString, Span{&source, at, at + 1}, error);
    return std::nullopt;
  }
  for (const TemplatePiece& piece : pieces) {
    if (!piece.is_expr) {
      out.parts.push_back({piece.text, std::nullopt});
      continue;
    }
    Window inner(source, base + piece.offset, piece.text);
    AntlrRun run(piece.text, inner, diags, "end of the interpolation");
    auto* tree = run.parser.exprOnly();
    CheckTreeDepth(tree, run.window);
    if (run.errors.errors() > 0) return std::nullopt;
    Builder nested(module, inner, diags);
    out.parts.push_back({{}, nested.Expr(tree->expr())});
  }
  return out;
}

}  // namespace

namespace {

// Runs `build(run, builder)` on an ANTLR parse of `text` standing at `base`;
// nullopt after syntax errors (reported) or an ANTLR exception.
template <typename Result, typename Build>
std::optional<Result> ParseEmbedded(const Source& source, uint32_t base, std::string_view text, Module& module,
                                    std::string_view end_word, DiagnosticSink& diags, Build&& build) {
  try {
    Window window(source, base, text);
    AntlrRun run(text, window, diags, end_word);
    Builder builder(module, window, diags);
    return build(run, builder);
  } catch (const TooDeep& deep) {
    ReportTooDeep(deep, diags);
    return std::nullopt;
  } catch (const std::exception& e) {
    diags.Error(DiagCode::kSyntaxError, Span{&source, base, base + 1}, fmt::format("cannot parse: {}", e.what()));
    return std::nullopt;
  }
}

}  // namespace

std::optional<ExprId> ParseEmbeddedExpr(const Source& source, uint32_t base, std::string_view text, Module& module,
                                        DiagnosticSink& diags) {
  return ParseEmbedded<ExprId>(source, base, text, module, "end of the expression", diags,
                               [](AntlrRun& run, Builder& builder) -> std::optional<ExprId> {
                                 auto* tree = run.parser.exprOnly();
                                 CheckTreeDepth(tree, run.window);
                                 if (run.errors.errors() > 0) return std::nullopt;
                                 return builder.Expr(tree->expr());
                               });
}

std::optional<std::pair<Binder, ExprId>> ParseEmbeddedEach(const Source& source, uint32_t base, std::string_view text,
                                                           Module& module, DiagnosticSink& diags) {
  using Each = std::pair<Binder, ExprId>;
  return ParseEmbedded<Each>(source, base, text, module, "end of the loop", diags,
                             [](AntlrRun& run, Builder& builder) -> std::optional<Each> {
                               auto* tree = run.parser.eachOnly();
                               CheckTreeDepth(tree, run.window);
                               if (run.errors.errors() > 0) return std::nullopt;
                               Binder binder = builder.BinderOf(tree->binder());
                               return std::make_pair(std::move(binder), builder.Expr(tree->expr()));
                             });
}

std::optional<TypeExpr> ParseEmbeddedType(const Source& source, uint32_t base, std::string_view text,
                                          DiagnosticSink& diags) {
  Module scratch;  // types hold no expressions
  return ParseEmbedded<TypeExpr>(source, base, text, scratch, "end of the type", diags,
                                 [](AntlrRun& run, Builder& builder) -> std::optional<TypeExpr> {
                                   auto* tree = run.parser.typeOnly();
                                   CheckTreeDepth(tree, run.window);
                                   if (run.errors.errors() > 0) return std::nullopt;
                                   return builder.TypeOf(tree->typeExpr());
                                 });
}

std::optional<Template> ParseEmbeddedTemplate(const Source& source, uint32_t base, std::string_view text, Module& module,
                                              DiagnosticSink& diags) {
  return TemplateFromBody(module, source, text, base, Span{&source, base, base + static_cast<uint32_t>(text.size())},
                          diags);
}

std::optional<Module> ParsePolicyFile(const Source& source, DiagnosticSink& diags) {
  size_t bad = FirstInvalidUtf8(source.Text());
  if (bad < source.Size()) {
    uint32_t at = static_cast<uint32_t>(bad);
    diags.Error(DiagCode::kInvalidUtf8, Span{&source, at, at + 1}, "invalid UTF-8 in a policy file",
                "this byte does not start a valid UTF-8 character")
        .help = "save the file as UTF-8";
    return std::nullopt;
  }
  size_t errors_before = diags.ErrorCount();
  Window window(source, 0, source.Text());
  Module module;
  module.source = &source;
  try {
    AntlrRun run(source.Text(), window, diags, "end of file");
    auto* tree = run.parser.file();
    CheckTreeDepth(tree, run.window);
    if (run.errors.errors() > 0) return std::nullopt;
    Builder builder(module, window, diags);
    builder.File(tree);
  } catch (const TooDeep& deep) {
    ReportTooDeep(deep, diags);
    return std::nullopt;
  } catch (const std::exception& e) {
    // ANTLR's input stream throws on text it cannot decode; nothing else should.
    diags.Error(DiagCode::kSyntaxError, Span{&source, 0, 0}, fmt::format("cannot parse the file: {}", e.what()));
    return std::nullopt;
  }
  if (diags.ErrorCount() != errors_before) return std::nullopt;
  return module;
}

}  // namespace policy::syntax
