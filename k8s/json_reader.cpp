// JSON front of the object reader: simdjson On Demand into Documents.
//
// The top-level value is walked twice: a first pass finds the list's `kind`
// (kubectl prints it after `items`), then a rewind and a full pass build one
// Document per list item. Every value is visited, so every byte is validated.
// simdjson's errors carry no position: FindJsonError re-scans the text to
// place them and to say what was expected.

#include <simdjson.h>

#include <memory>

#include <fmt/format.h>

#include "k8s/object_reader.h"
#include "support/utf8.h"

namespace policy::k8s {
namespace {

namespace od = simdjson::ondemand;

constexpr int kMaxDepth = kMaxNesting;

class JsonReader {
 public:
  JsonReader(const Source& source, ObjectVisitor& visitor, DiagnosticSink& diags)
      : source_(source), visitor_(visitor), diags_(diags), item_(&source), header_(&source) {}

  bool Run();

 private:
  bool Fail(simdjson::error_code error, size_t begin, size_t end);
  bool RunDocument(size_t begin, size_t end, size_t* trailing);
  uint32_t OffsetOf(const char* p) const { return static_cast<uint32_t>(p - source_.PaddedData()); }
  size_t Bom() const { return source_.Text().starts_with("\xEF\xBB\xBF") ? 3 : 0; }
  simdjson::error_code Build(od::value value, Document& doc, int depth, uint32_t* out);
  // Takes one object member and adds its key to `doc` as a string scalar.
  simdjson::error_code ReadKey(simdjson::simdjson_result<od::field> member, Document& doc, od::field* field,
                               std::string_view* key, uint32_t* key_id);
  simdjson::error_code ReadTopObject(od::object object, std::string_view item_kind);
  simdjson::error_code ReadItems(od::array items, std::string_view item_kind);

  const Source& source_;
  ObjectVisitor& visitor_;
  DiagnosticSink& diags_;
  Document item_;
  Document header_;
  bool reported_ = false;
};

// Strict JSON number syntax (RFC 8259).
bool IsJsonNumber(std::string_view s) {
  size_t i = 0;
  auto digits = [&] {
    size_t start = i;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
    return i - start;
  };
  if (i < s.size() && s[i] == '-') ++i;
  if (i < s.size() && s[i] == '0') {
    ++i;
  } else if (digits() == 0) {
    return false;
  }
  if (i < s.size() && s[i] == '.') {
    ++i;
    if (digits() == 0) return false;
  }
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
    if (digits() == 0) return false;
  }
  return i == s.size();
}

simdjson::error_code JsonReader::ReadKey(simdjson::simdjson_result<od::field> member, Document& doc,
                                        od::field* field, std::string_view* key, uint32_t* key_id) {
  if (auto error = std::move(member).get(*field)) return error;
  // The raw key must be taken before unescaping consumes it.
  uint32_t begin = OffsetOf(field->key().raw()) - 1;
  if (auto error = field->unescaped_key().get(*key)) return error;
  *key_id = doc.AddScalar(begin, begin + static_cast<uint32_t>(key->size()) + 2, ScalarType::kString, *key);
  return simdjson::SUCCESS;
}

simdjson::error_code JsonReader::Build(od::value value, Document& doc, int depth, uint32_t* out) {
  if (depth > kMaxDepth) return simdjson::DEPTH_ERROR;
  std::string_view token = value.raw_json_token();
  uint32_t begin = OffsetOf(token.data());
  od::json_type type;
  if (auto error = value.type().get(type)) return error;
  switch (type) {
    case od::json_type::object: {
      uint32_t id = doc.AddContainer(NodeKind::kMapping, begin);
      std::vector<uint32_t> pairs;
      od::object object;
      if (auto error = value.get_object().get(object)) return error;
      for (auto field_result : object) {
        od::field field;
        std::string_view key;
        uint32_t key_id;
        if (auto error = ReadKey(std::move(field_result), doc, &field, &key, &key_id)) return error;
        uint32_t value_id;
        if (auto error = Build(field.value(), doc, depth + 1, &value_id)) return error;
        pairs.push_back(key_id);
        pairs.push_back(value_id);
      }
      doc.SetChildren(id, pairs.data(), static_cast<uint32_t>(pairs.size()));
      if (!CheckDuplicateKeys(doc, id, diags_)) {
        reported_ = true;
        return simdjson::TAPE_ERROR;
      }
      *out = id;
      return simdjson::SUCCESS;
    }
    case od::json_type::array: {
      uint32_t id = doc.AddContainer(NodeKind::kSequence, begin);
      std::vector<uint32_t> elements;
      od::array array;
      if (auto error = value.get_array().get(array)) return error;
      for (auto element : array) {
        od::value v;
        if (auto error = element.get(v)) return error;
        uint32_t child;
        if (auto error = Build(v, doc, depth + 1, &child)) return error;
        elements.push_back(child);
      }
      doc.SetChildren(id, elements.data(), static_cast<uint32_t>(elements.size()));
      *out = id;
      return simdjson::SUCCESS;
    }
    case od::json_type::string: {
      std::string_view text;
      if (auto error = value.get_string().get(text)) return error;
      *out = doc.AddScalar(begin, begin + 1, ScalarType::kString, text);
      return simdjson::SUCCESS;
    }
    case od::json_type::number: {
      size_t n = 0;
      while (n < token.size() && std::string_view("+-.0123456789eE").find(token[n]) != std::string_view::npos) ++n;
      std::string_view text = token.substr(0, n);
      if (!IsJsonNumber(text)) return simdjson::NUMBER_ERROR;
      bool is_int = text.find_first_of(".eE") == std::string_view::npos;
      *out = doc.AddScalar(begin, begin + static_cast<uint32_t>(n), is_int ? ScalarType::kInt : ScalarType::kFloat,
                           text);
      return simdjson::SUCCESS;
    }
    case od::json_type::boolean: {
      bool b;
      if (auto error = value.get_bool().get(b)) return error;
      *out = doc.AddScalar(begin, begin + (b ? 4 : 5), ScalarType::kBool, b ? "true" : "false");
      return simdjson::SUCCESS;
    }
    case od::json_type::null: {
      bool is_null = false;
      if (auto error = value.is_null().get(is_null)) return error;
      if (!is_null) return simdjson::N_ATOM_ERROR;
      *out = doc.AddScalar(begin, begin + 4, ScalarType::kNull, "null");
      return simdjson::SUCCESS;
    }
  }
  return simdjson::TAPE_ERROR;
}

simdjson::error_code JsonReader::ReadItems(od::array items, std::string_view item_kind) {
  size_t released = 0;
  for (auto element : items) {
    od::value v;
    if (auto error = element.get(v)) return error;
    // What lies before this item is read: a mapped file drops those pages
    // (a few megabytes at a time), so a 1 GB dump is not resident whole.
    constexpr size_t kReleaseEvery = size_t{8} << 20;
    size_t at = OffsetOf(v.raw_json_token().data());
    if (at >= released + kReleaseEvery) {
      source_.Release(at);
      released = at;
    }
    item_.Clear();
    uint32_t id;
    if (auto error = Build(v, item_, 1, &id)) return error;
    item_.SetRoot(id);
    visitor_.Visit(item_.Root(), item_kind);
  }
  return simdjson::SUCCESS;
}

// A top-level object: a single object, or a list whose `items` stream.
simdjson::error_code JsonReader::ReadTopObject(od::object object, std::string_view item_kind) {
  header_.Clear();
  uint32_t id = header_.AddContainer(NodeKind::kMapping, 0);
  std::vector<uint32_t> pairs;
  bool is_list = false;
  for (auto field_result : object) {
    od::field field;
    std::string_view key;
    uint32_t key_id;
    if (auto error = ReadKey(std::move(field_result), header_, &field, &key, &key_id)) return error;
    od::value value = field.value();
    od::json_type type;
    if (auto error = value.type().get(type)) return error;
    uint32_t value_id;
    if (key == "items" && type == od::json_type::array) {
      is_list = true;
      uint32_t begin = OffsetOf(value.raw_json_token().data());
      od::array items;
      if (auto error = value.get_array().get(items)) return error;
      if (auto error = ReadItems(items, item_kind)) return error;
      value_id = header_.AddContainer(NodeKind::kSequence, begin);
    } else {
      if (auto error = Build(value, header_, 1, &value_id)) return error;
      is_list |= key == "items" && type == od::json_type::null;
    }
    pairs.push_back(key_id);
    pairs.push_back(value_id);
  }
  header_.SetChildren(id, pairs.data(), static_cast<uint32_t>(pairs.size()));
  if (!CheckDuplicateKeys(header_, id, diags_)) {
    reported_ = true;
    return simdjson::TAPE_ERROR;
  }
  header_.SetRoot(id);
  if (!is_list) visitor_.Visit(header_.Root(), {});
  return simdjson::SUCCESS;
}

bool JsonReader::Fail(simdjson::error_code error, size_t begin, size_t end) {
  if (reported_) return false;
  uint32_t offset = 0;
  std::string message;
  if (error == simdjson::UTF8_ERROR) {
    size_t i = FirstInvalidUtf8(source_.Text());
    offset = static_cast<uint32_t>(i);
    Diagnostic& d = diags_.Error(DiagCode::kInvalidUtf8, Span{&source_, offset, offset + 1},
                                 "invalid UTF-8 in JSON text", "this byte does not start a valid UTF-8 character");
    d.help = "save the file as UTF-8";
    return false;
  }
  uint32_t base = static_cast<uint32_t>(begin);
  if (error == simdjson::DEPTH_ERROR) {
    Diagnostic& d = diags_.Error(DiagCode::kTooDeep, Span{&source_, base, base + 1},
                                 fmt::format("the JSON nests deeper than {} levels", kMaxDepth));
    d.help = "Kubernetes objects nest a few levels deep; this file is not a cluster snapshot";
    return false;
  }
  if (!FindJsonError(source_.Text().substr(begin, end - begin), &offset, &message)) {
    offset += base;
    diags_.Error(DiagCode::kJsonSyntax, Span{&source_, offset, offset + 1}, fmt::format("invalid JSON: {}", message));
    return false;
  }
  diags_.Error(DiagCode::kJsonSyntax, Span{&source_, base, base + 1},
               fmt::format("invalid JSON: {}", simdjson::error_message(error)));
  return false;
}

// Where the JSON value that starts at `begin` with `{` or `[` ends: past
// its matching bracket (strings and escapes skipped), or the text's end
// when it never closes (the parser then says what is wrong).
size_t ValueEnd(std::string_view text, size_t begin) {
  int depth = 0;
  for (size_t i = begin; i < text.size(); ++i) {
    char c = text[i];
    if (c == '"') {
      for (++i; i < text.size() && text[i] != '"'; ++i) {
        if (text[i] == '\\') ++i;
      }
    } else if (c == '{' || c == '[') {
      ++depth;
    } else if ((c == '}' || c == ']') && --depth == 0) {
      return i + 1;
    }
  }
  return text.size();
}

bool JsonReader::Run() {
  // A UTF-8 byte order mark before the text is skipped (kubectl accepts one;
  // offsets stay the file's). The first document usually is the whole file;
  // documents after it (`{...}{...}`, one object per line, several
  // `kubectl get -o json` outputs appended) are read one by one, and a `---`
  // line hands the rest to the YAML reader.
  std::string_view text = source_.Text();
  size_t next = 0;
  if (!RunDocument(Bom(), text.size(), &next)) return false;
  while (next < text.size()) {
    while (next < text.size() && (text[next] == ' ' || text[next] == '\t' || text[next] == '\n' || text[next] == '\r')) {
      ++next;
    }
    if (next == text.size()) break;
    // A YAML document separator: the rest is a YAML stream (whose
    // documents may be JSON too).
    if (text.substr(next, 3) == "---") return ReadYamlObjects(source_, visitor_, diags_, next);
    size_t end = text[next] == '{' || text[next] == '[' ? ValueEnd(text, next) : text.size();
    size_t after = end;
    if (!RunDocument(next, end, &after)) return false;
    next = end;
  }
  return true;
}

// Reads the document at [begin, end): false after a diagnostic. `*trailing`
// is where a next document starts when one follows, else `end`.
bool JsonReader::RunDocument(size_t begin, size_t end, size_t* trailing) {
  od::parser parser;
  od::document doc;
  *trailing = end;
  if (auto error = parser.iterate(source_.PaddedData() + begin, end - begin, source_.Size() - begin + Source::kPadding)
                       .get(doc)) {
    return Fail(error, begin, end);
  }
  od::json_type type;
  if (auto error = doc.type().get(type)) return Fail(error, begin, end);
  // simdjson checks that the text ends with the bracket the first value
  // opens with: when it does not, the text may hold several documents.
  // Nothing has been read yet: read the first value alone, then the rest.
  auto several = [&](simdjson::error_code error) {
    std::string_view text = source_.Text();
    size_t value_end = ValueEnd(text, begin);
    if (error != simdjson::INCOMPLETE_ARRAY_OR_OBJECT || value_end >= end) return Fail(error, begin, end);
    *trailing = value_end;
    size_t ignored;
    return RunDocument(begin, value_end, &ignored);
  };
  if (type == od::json_type::array) {
    od::array array;
    if (auto error = doc.get_array().get(array)) return several(error);
    if (auto error = ReadItems(array, {})) return Fail(error, begin, end);
  } else if (type == od::json_type::object) {
    // First pass: the list kind, if any.
    std::string item_kind;
    {
      od::object object;
      if (auto error = doc.get_object().get(object)) return several(error);
      for (auto field_result : object) {
        od::field field;
        if (auto error = std::move(field_result).get(field)) return Fail(error, begin, end);
        std::string_view key;
        if (auto error = field.unescaped_key().get(key)) return Fail(error, begin, end);
        if (key != "kind") continue;
        std::string_view kind;
        if (field.value().get_string().get(kind) == simdjson::SUCCESS) item_kind = ItemKindOf(kind);
        break;
      }
    }
    doc.rewind();
    od::object object;
    if (auto error = doc.get_object().get(object)) return Fail(error, begin, end);
    if (auto error = ReadTopObject(object, item_kind)) return Fail(error, begin, end);
  } else {
    item_.Clear();
    od::value value;
    if (auto error = doc.get_value().get(value)) return Fail(error, begin, end);
    uint32_t id;
    if (auto error = Build(value, item_, 1, &id)) return Fail(error, begin, end);
    item_.SetRoot(id);
    visitor_.Visit(item_.Root(), {});
  }
  // Everything consumed, or a next document after an object or array.
  const char* at = nullptr;
  if (doc.current_location().get(at) == simdjson::SUCCESS) {
    if (type == od::json_type::object || type == od::json_type::array) {
      *trailing = OffsetOf(at);
      return true;
    }
    return Fail(simdjson::TRAILING_CONTENT, begin, end);
  }
  return true;
}

}  // namespace

bool ReadJsonObjects(const Source& source, ObjectVisitor& visitor, DiagnosticSink& diags) {
  JsonReader reader(source, visitor, diags);
  return reader.Run();
}

}  // namespace policy::k8s
