// The canonical layout of a policy file (formatter.h): the file is parsed
// (a file with errors is refused), lexed again, and its tokens and comments
// written out one by one. The language ignores whitespace, so only the
// spacing between tokens, the line starts and the comments are decided
// here; the tokens themselves are copied.

#include "compiler/syntax/formatter.h"

#include <algorithm>
#include <vector>

#include "PolicyLexer.h"
#include "compiler/syntax/parser.h"

namespace policy::syntax {
namespace {

using grammar::PolicyLexer;

struct Item {
  bool comment = false;
  size_t type = 0;     // the token type (code)
  std::string text;    // the token, or the comment without its line break
  uint32_t line = 0;   // 1-based, where it starts
  uint32_t column = 0;  // 0-based, in bytes: where the author put it
  bool own_line = false;  // a comment with nothing before it on its line
};

bool IsMember(size_t t) {
  return t == PolicyLexer::WEIGHT || t == PolicyLexer::LET || t == PolicyLexer::PARAM || t == PolicyLexer::DEF ||
         t == PolicyLexer::FILTER || t == PolicyLexer::PREFILTER || t == PolicyLexer::SCORE || t == PolicyLexer::WHEN;
}

// Tokens after which an expression has ended (a `-` that follows one is binary).
bool EndsOperand(size_t t) {
  return t == PolicyLexer::IDENT || t == PolicyLexer::INT || t == PolicyLexer::QUANTITY || t == PolicyLexer::STRING ||
         t == PolicyLexer::TRUE || t == PolicyLexer::FALSE || t == PolicyLexer::NONE || t == PolicyLexer::RPAREN ||
         t == PolicyLexer::RBRACK || t == PolicyLexer::RBRACE;
}

// The tokens and comments of `text` with their lines and columns: between
// two of ANTLR's tokens lie only blanks and comments, which are read here.
std::optional<std::vector<Item>> Items(const std::string& text) {
  antlr4::ANTLRInputStream input(text);
  PolicyLexer lexer(&input);
  lexer.removeErrorListeners();
  std::vector<std::unique_ptr<antlr4::Token>> tokens = lexer.getAllTokens();
  std::vector<Item> items;
  size_t at = 0, line_start = 0;
  uint32_t line = 1;
  bool code_on_line = false;
  auto column = [&] { return static_cast<uint32_t>(at - line_start); };
  // Blanks and comments up to the next token (or the end).
  auto skip = [&] {
    while (at < text.size()) {
      char c = text[at];
      if (c == '\n') {
        ++line;
        code_on_line = false;
        line_start = ++at;
      } else if (c == ' ' || c == '\t' || c == '\r') {
        ++at;
      } else if (c == '#' || (c == '/' && at + 1 < text.size() && text[at + 1] == '/')) {
        size_t end = std::min(text.find('\n', at), text.size());
        std::string comment = text.substr(at, end - at);
        while (!comment.empty() && (comment.back() == '\r' || comment.back() == ' ' || comment.back() == '\t')) {
          comment.pop_back();
        }
        items.push_back({true, 0, std::move(comment), line, column(), !code_on_line});
        at = end;
      } else {
        return;
      }
    }
  };
  for (const std::unique_ptr<antlr4::Token>& t : tokens) {
    skip();
    std::string word = t->getText();
    if (text.compare(at, word.size(), word) != 0) return std::nullopt;  // cannot happen for a file that parsed
    items.push_back({false, t->getType(), word, line, column(), false});
    code_on_line = true;
    at += word.size();
  }
  skip();
  return items;
}

class Writer {
 public:
  std::string Format(const std::vector<Item>& items) {
    for (size_t i = 0; i < items.size(); ++i) {
      const Item& item = items[i];
      if (item.comment) {
        Comment(item, items, i);
      } else {
        Code(item);
      }
      prev_was_comment_ = item.comment;
      last_line_ = item.line;
    }
    EndLine();
    while (!out_.empty() && out_.back() == '\n' && out_.size() > 1 && out_[out_.size() - 2] == '\n') out_.pop_back();
    return out_;
  }

 private:
  void EndLine() {
    if (line_.empty() && !started_) return;
    out_ += line_;
    out_ += '\n';
    line_.clear();
    started_ = false;
  }

  void StartLine(int indent, bool blank_before) {
    EndLine();
    if (blank_before && !out_.empty() && !out_.ends_with("\n\n")) out_ += '\n';
    line_.assign(static_cast<size_t>(indent), ' ');
    started_ = true;
  }

  // Where the line a code token starts would be indented, and whether it
  // starts one whatever the source did.
  std::pair<int, bool> LineFor(const Item& t) const {
    if (t.type == PolicyLexer::POLICY && depth_ == 0) return {0, true};
    if (IsMember(t.type) && depth_ == 0 && prev_ != PolicyLexer::DOT) return {2, true};
    if ((t.type == PolicyLexer::REASON || t.type == PolicyLexer::DETAIL || t.type == PolicyLexer::UNRESOLVABLE ||
         t.type == PolicyLexer::ABORTS) &&
        depth_ == 0 && prev_ != PolicyLexer::DOT) {
      return {4, true};
    }
    return {Continuation(t.column), false};
  }

  // A line the author broke inside a member: the first two columns past the
  // member, the later ones as far past that as the author put them.
  int Continuation(uint32_t column) const {
    int base = indent_ + 2;
    if (first_continuation_ < 0) return base;
    return base + std::max(0, static_cast<int>(column) - first_continuation_);
  }

  void Comment(const Item& c, const std::vector<Item>& items, size_t i) {
    if (!c.own_line && started_) {
      line_ += "  " + c.text;
      return;
    }
    // On its own line: indented as the code after it will be.
    int indent = 0;
    for (size_t j = i + 1; j < items.size(); ++j) {
      if (items[j].comment) continue;
      indent = LineFor(items[j]).first;
      break;
    }
    bool blank = c.line > last_line_ + 1 && last_line_ != 0;
    StartLine(indent, blank);
    line_ += c.text;
    EndLine();
  }

  void Code(const Item& t) {
    auto [indent, forced] = LineFor(t);
    bool header = t.type == PolicyLexer::STRING && prev_ == PolicyLexer::IDENT && prev_prev_ == PolicyLexer::POLICY;
    if (forced) {
      // A policy gets a blank line before it, unless comments sit right on it.
      bool blank = (t.type == PolicyLexer::POLICY && !prev_was_comment_) || (t.line > last_line_ + 1 && last_line_ != 0);
      StartLine(indent, blank);
      indent_ = indent;
      member_ = t.type;
      in_type_ = false;
      assigned_ = false;
      first_continuation_ = -1;
    } else if (!started_ || (t.line > last_line_ && !header)) {
      StartLine(started_ || !out_.empty() ? indent : 0, false);
      if (first_continuation_ < 0) first_continuation_ = static_cast<int>(t.column);
    } else if (Spaced(t)) {
      line_ += ' ';
    }
    line_ += t.text;
    Track(t);
  }

  // One space between the previous token and `t`, or none.
  bool Spaced(const Item& t) const {
    size_t p = prev_;
    if (line_.empty() || line_.back() == ' ') return false;
    if (t.type == PolicyLexer::RPAREN || t.type == PolicyLexer::RBRACK || t.type == PolicyLexer::RBRACE ||
        t.type == PolicyLexer::COMMA || t.type == PolicyLexer::COLON || t.type == PolicyLexer::DOT) {
      return false;
    }
    if (p == PolicyLexer::LPAREN || p == PolicyLexer::LBRACK || p == PolicyLexer::LBRACE || p == PolicyLexer::DOT) {
      return false;
    }
    bool after_field = prev_prev_ == PolicyLexer::DOT;  // a field name, keywords included
    if (t.type == PolicyLexer::LPAREN) return !(p == PolicyLexer::IDENT || after_field);
    if (t.type == PolicyLexer::LBRACK) return !(EndsOperand(p) || after_field);
    if (p == PolicyLexer::MINUS && unary_minus_) return false;
    if (in_type_ && (t.type == PolicyLexer::LT || t.type == PolicyLexer::GT || t.type == PolicyLexer::QUESTION ||
                     p == PolicyLexer::LT)) {
      return false;
    }
    return true;
  }

  void Track(const Item& t) {
    if (t.type == PolicyLexer::MINUS) unary_minus_ = !(EndsOperand(prev_) || prev_prev_ == PolicyLexer::DOT);
    if (t.type == PolicyLexer::LPAREN || t.type == PolicyLexer::LBRACK || t.type == PolicyLexer::LBRACE) ++depth_;
    if ((t.type == PolicyLexer::RPAREN || t.type == PolicyLexer::RBRACK || t.type == PolicyLexer::RBRACE) && depth_ > 0) {
      --depth_;
    }
    // Types: after the `:` of a `param` or of a `def`'s parameter.
    if (t.type == PolicyLexer::COLON && (member_ == PolicyLexer::PARAM || member_ == PolicyLexer::DEF) &&
        prev_ == PolicyLexer::IDENT && !assigned_) {
      in_type_ = true;
    } else if (t.type == PolicyLexer::ASSIGN || t.type == PolicyLexer::COMMA || t.type == PolicyLexer::RPAREN) {
      in_type_ = false;
    }
    if (t.type == PolicyLexer::ASSIGN) assigned_ = true;
    prev_prev_ = prev_;
    prev_ = t.type;
  }

  std::string out_, line_;
  bool started_ = false;
  uint32_t last_line_ = 0;
  int depth_ = 0;
  int indent_ = 0;  // the current member's
  size_t member_ = 0;
  size_t prev_ = 0, prev_prev_ = 0;
  bool unary_minus_ = false;
  bool in_type_ = false;
  bool assigned_ = false;  // the current member's `=` is behind (no types after it)
  bool prev_was_comment_ = false;
  int first_continuation_ = -1;  // the author's column of the member's first broken line
};

}  // namespace

std::optional<std::string> FormatPolicyFile(const Source& source, DiagnosticSink& diags) {
  if (!ParsePolicyFile(source, diags)) return std::nullopt;
  std::optional<std::vector<Item>> items = Items(std::string(source.Text()));
  if (!items) return std::nullopt;
  return Writer().Format(*items);
}

}  // namespace policy::syntax
