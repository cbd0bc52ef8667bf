#include <doctest/doctest.h>

#include <string>

#include "compiler/syntax/parser.h"
#include "compiler/syntax/templates.h"

using namespace policy;
using namespace policy::syntax;

namespace {

// The AST of `let x = EXPR` as printed on one line.
std::string ExprAst(const std::string& expr) {
  Source source("t.policy", "policy P\n  let x = " + expr + "\n");
  DiagnosticSink diags;
  auto module = ParsePolicyFile(source, diags);
  if (!module) return "error: " + (diags.All().empty() ? std::string() : diags.All()[0].message);
  std::string printed = PrintModule(*module);
  size_t begin = printed.find("(let x\n    ") + 11;
  // The line ends with the expression, then `)` closing the let and the policy.
  std::string line = printed.substr(begin, printed.find('\n', begin) - begin);
  return line.substr(0, line.size() - 2);
}

std::string FirstError(const std::string& text, LineCol* at = nullptr) {
  Source source("t.policy", text);
  DiagnosticSink diags;
  auto module = ParsePolicyFile(source, diags);
  if (module || diags.All().empty()) return "";
  if (at != nullptr) *at = source.Locate(diags.All()[0].primary.span.begin);
  return std::string(CodeString(diags.All()[0].code)) + " " + diags.All()[0].message;
}

}  // namespace

TEST_CASE("precedence: arithmetic - then ?? - then comparison - then and/or") {
  CHECK(ExprAst("1 + 2 * 3") == "(+ 1 (* 2 3))");
  CHECK(ExprAst("a ?? b + 1") == "(?? a (+ b 1))");
  CHECK(ExprAst("a ?? b == c") == "(== (?? a b) c)");
  CHECK(ExprAst("a or b and c") == "(or a (and b c))");
  CHECK(ExprAst("not a and b") == "(and (not a) b)");
  CHECK(ExprAst("-a.b[c]") == "(neg ([] (. b a) c))");
  CHECK(ExprAst("x not in {1, 2}") == "(not in x (set 1 2))");
  CHECK(ExprAst("1 - 2 - 3") == "(- (- 1 2) 3)");
}

TEST_CASE("literals - quantifiers and conditionals") {
  CHECK(ExprAst("500m") == "(quantity 500m)");
  CHECK(ExprAst("16Gi") == "(quantity 16Gi)");
  CHECK(ExprAst("1.5") == "(quantity 1.5)");
  CHECK(ExprAst("'a\\b'") == "\"a\\\\b\"");
  CHECK(ExprAst("\"tab\\there\"") == "\"tab\\there\"");
  CHECK(ExprAst("any t in pod.tolerations: t.key == k") == "(any t (. tolerations pod) (== (. key t) k))");
  CHECK(ExprAst("all (k, v) in m: v") == "(all (k, v) m v)");
  CHECK(ExprAst("count x in xs") == "(count x xs)");
  CHECK(ExprAst("first x in xs where x > 1") == "(first x xs (> x 1))");
  CHECK(ExprAst("if a then 1 else if b then 2 else 3") == "(if a 1 (if b 2 3))");
  CHECK(ExprAst("term.weight + t.count") == "(+ (. weight term) (. count t))");
  CHECK(ExprAst("s.int()") == "(method int s)");
  CHECK(ExprAst("max(1, 2)") == "(call max 1 2)");
}

TEST_CASE("templates split into text and expressions") {
  std::vector<TemplatePiece> pieces;
  std::string error;
  uint32_t at = 0;
  REQUIRE(SplitTemplate("a {x + 1} b \\{c\\} {m['k']}", &pieces, &error, &at));
  REQUIRE(pieces.size() == 4);
  CHECK(pieces[0].text == "a ");
  CHECK(pieces[1].is_expr);
  CHECK(pieces[1].text == "x + 1");
  CHECK(pieces[1].offset == 3);
  CHECK(pieces[2].text == " b {c} ");
  CHECK(pieces[3].text == "m['k']");
  CHECK_FALSE(SplitTemplate("a {x", &pieces, &error, &at));
  CHECK(at == 2);
  CHECK_FALSE(SplitTemplate("a } b", &pieces, &error, &at));
  CHECK_FALSE(SplitTemplate("\\q", &pieces, &error, &at));
  CHECK(Unescape("a\\\"b\\n") == std::optional<std::string>("a\"b\n"));
  CHECK_FALSE(Unescape("\\x").has_value());
}

TEST_CASE("interpolated expressions carry spans into the file") {
  Source source("t.policy", "policy P\n  filter true\n    reason \"on {node.name}\"\n");
  DiagnosticSink diags;
  auto module = ParsePolicyFile(source, diags);
  REQUIRE(module);
  const auto& filter = std::get<FilterDecl>(module->policies[0].members[0]);
  REQUIRE(filter.reason);
  ExprId name = *filter.reason->parts[1].expr;
  Span span = module->exprs.SpanOf(name);
  CHECK(source.Text().substr(span.begin, span.end - span.begin) == "node.name");
}

TEST_CASE("syntax errors name what was expected - where") {
  LineCol at;
  CHECK(FirstError("policy P\n  let x pod\n", &at) == "P0100 expected `=` before `pod`");
  CHECK(at.line == 2);
  CHECK(at.column == 9);
  CHECK(FirstError("policy P\n  filter a &&& b\n") == "P0101 unexpected character `&`");
  CHECK(FirstError("policy P\n  filter a >\n").starts_with("P0100 unexpected end of file, expected an expression"));
  CHECK(FirstError("let x = 1\n").starts_with("P0100"));
  CHECK(FirstError("policy P\n  weight 99999999999999999999\n").starts_with("P0103"));
  CHECK(FirstError("policy P\n  filter true reason \"{a b}\"\n").starts_with("P0100"));
  CHECK(FirstError("policy P\n  filter \"\xff\"\n").starts_with("L0103"));
}

TEST_CASE("an empty file has no policies and is not an error") {
  Source source("t.policy", "# nothing yet\n");
  DiagnosticSink diags;
  auto module = ParsePolicyFile(source, diags);
  REQUIRE(module);
  CHECK(module->policies.empty());
}
