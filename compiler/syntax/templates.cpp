#include "compiler/syntax/templates.h"

namespace policy::syntax {
namespace {

// The character an escape stands for, or 0 when unknown.
char Escaped(char c) {
  switch (c) {
    case '"': return '"';
    case '\\': return '\\';
    case 'n': return '\n';
    case 't': return '\t';
    case '{': return '{';
    case '}': return '}';
    default: return 0;
  }
}

}  // namespace

std::optional<std::string> Unescape(std::string_view body) {
  std::string out;
  for (size_t i = 0; i < body.size(); ++i) {
    if (body[i] != '\\') {
      out += body[i];
      continue;
    }
    if (i + 1 >= body.size() || Escaped(body[i + 1]) == 0) return std::nullopt;
    out += Escaped(body[++i]);
  }
  return out;
}

bool SplitTemplate(std::string_view body, std::vector<TemplatePiece>* pieces, std::string* error,
                   uint32_t* error_offset) {
  TemplatePiece literal;
  for (size_t i = 0; i < body.size(); ++i) {
    char c = body[i];
    if (c == '\\') {
      if (i + 1 >= body.size() || Escaped(body[i + 1]) == 0) {
        *error = "unknown escape in a string; use `\\\"`, `\\\\`, `\\n`, `\\t`, `\\{` or `\\}`";
        *error_offset = static_cast<uint32_t>(i);
        return false;
      }
      literal.text += Escaped(body[++i]);
      continue;
    }
    if (c == '}') {
      *error = "a `}` without its `{`; write `\\}` for a literal brace";
      *error_offset = static_cast<uint32_t>(i);
      return false;
    }
    if (c != '{') {
      literal.text += c;
      continue;
    }
    // An interpolation: up to the matching `}`, skipping '...' strings.
    size_t start = i + 1;
    int depth = 1;
    size_t j = start;
    for (; j < body.size() && depth > 0; ++j) {
      if (body[j] == '\'') {
        size_t close = body.find('\'', j + 1);
        if (close == std::string_view::npos) break;
        j = close;
      } else if (body[j] == '{') {
        ++depth;
      } else if (body[j] == '}') {
        --depth;
      }
    }
    if (depth != 0) {
      *error = "an interpolation `{` without its closing `}`";
      *error_offset = static_cast<uint32_t>(i);
      return false;
    }
    if (!literal.text.empty()) pieces->push_back(std::move(literal));
    literal = TemplatePiece{};
    pieces->push_back(TemplatePiece{true, std::string(body.substr(start, j - 1 - start)), static_cast<uint32_t>(start)});
    i = j - 1;
  }
  if (!literal.text.empty()) pieces->push_back(std::move(literal));
  return true;
}

}  // namespace policy::syntax
