// YAML front of the object reader: libyaml's event API into Documents.
//
// The stream is walked once. At the top of each YAML document a mapping is
// read pair by pair so that the elements of a top-level `items` list become
// Documents of their own, handed to the visitor as soon as each is complete.

#include <yaml.h>

#include <algorithm>
#include <memory>
#include <string>
#include <unordered_map>

#include <fmt/format.h>

#include "k8s/object_reader.h"

namespace policy::k8s {
namespace {

constexpr std::string_view kStrTag = "tag:yaml.org,2002:str";
constexpr size_t kMaxAliasNodes = 1000000;

// libyaml marks count characters; spans are bytes. Forward-moving cursor with
// an ASCII fast path (index == offset).
class OffsetMap {
 public:
  OffsetMap(const Source& source, size_t start) : text_(source.Text().substr(start)), start_(start) {
    if (text_.substr(0, 3) == "\xEF\xBB\xBF") bom_ = 3;
    ascii_ = std::none_of(text_.begin(), text_.end(), [](char c) { return (c & 0x80) != 0; });
  }

  uint32_t ToByte(size_t char_index) { return static_cast<uint32_t>(start_) + ToTextByte(char_index); }

 private:
  uint32_t ToTextByte(size_t char_index) {
    if (ascii_) return static_cast<uint32_t>(std::min(char_index, text_.size()));
    if (char_index < char_pos_) char_pos_ = 0, byte_pos_ = bom_;
    if (byte_pos_ < bom_) byte_pos_ = bom_;
    while (char_pos_ < char_index && byte_pos_ < text_.size()) {
      unsigned char c = static_cast<unsigned char>(text_[byte_pos_]);
      byte_pos_ += c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
      ++char_pos_;
    }
    return static_cast<uint32_t>(std::min(byte_pos_, text_.size()));
  }

  std::string_view text_;
  size_t start_ = 0;
  bool ascii_ = true;
  size_t bom_ = 0;
  size_t char_pos_ = 0;
  size_t byte_pos_ = 0;
};

// An event that frees itself.
struct Event {
  yaml_event_t e{};
  bool live = false;
  ~Event() { Reset(); }
  void Reset() {
    if (live) yaml_event_delete(&e);
    live = false;
  }
};

class YamlReader {
 public:
  YamlReader(const Source& source, size_t start, ObjectVisitor& visitor, DiagnosticSink& diags)
      : source_(source), visitor_(visitor), diags_(diags), offsets_(source, start), start_(start) {
    yaml_parser_initialize(&parser_);
    yaml_parser_set_input_string(&parser_, reinterpret_cast<const unsigned char*>(source.PaddedData() + start),
                                 source.Size() - start);
  }
  ~YamlReader() { yaml_parser_delete(&parser_); }

  bool Run();

 private:
  bool Next(Event& ev);
  bool ReportParserError();
  bool ReadDocument();
  bool ReadTopMapping(Event& start);
  bool ReadItems(bool* flushed_later);
  // Builds the node that starts with `first` into `doc`.
  bool Build(Document& doc, Event& first, uint32_t* out);
  bool FinishMapping(Document& doc, uint32_t id, const std::vector<uint32_t>& pairs,
                     const std::vector<uint32_t>& merges);
  uint32_t Offset(const yaml_mark_t& mark) { return offsets_.ToByte(mark.index); }
  void Emit(Document& doc, std::string_view default_kind);

  const Source& source_;
  ObjectVisitor& visitor_;
  DiagnosticSink& diags_;
  OffsetMap offsets_;
  size_t start_;  // where in the source the stream starts
  yaml_parser_t parser_;
  uint32_t generation_ = 0;  // bumps whenever a Document is cleared
  struct Anchor {
    const Document* doc;
    uint32_t generation;
    uint32_t id;
    uint32_t stored;  // the copy in anchor_store_
  };
  // Copies the subtree `id` of `from` into `to`; false past kMaxAliasNodes
  // copied nodes in this YAML document (a "billion laughs" guard).
  bool CopyNode(const Document& from, uint32_t id, Document& to, std::unordered_map<uint32_t, uint32_t>& memo,
                int depth, uint32_t* out);
  // CopyNode with a fresh memo; reports a diagnostic at `e` on failure.
  bool CopyAnchor(const Document& from, uint32_t id, Document& to, const yaml_event_t& e, std::string_view name,
                  uint32_t* out);
  std::unordered_map<std::string, Anchor> anchors_;
  Document anchor_store_{&source_};
  size_t copied_nodes_ = 0;
  std::vector<std::unique_ptr<Document>> waiting_;  // items waiting for the list kind
  std::unique_ptr<Document> item_ = std::make_unique<Document>(&source_);
  Document header_{&source_};
};

bool YamlReader::CopyNode(const Document& from, uint32_t id, Document& to, std::unordered_map<uint32_t, uint32_t>& memo,
                          int depth, uint32_t* out) {
  // Shared subtrees stay shared (memo), so copies are as small as the input.
  if (auto it = memo.find(id); it != memo.end()) {
    *out = it->second;
    return true;
  }
  if (++copied_nodes_ > kMaxAliasNodes || depth > 1000) return false;
  const Document::Node& n = from.node(id);
  if (n.kind == NodeKind::kScalar) {
    *out = to.AddScalar(n.begin, n.end, n.type, to.arena().Copy(n.text));
  } else {
    uint32_t copy = to.AddContainer(n.kind, n.begin);
    std::vector<uint32_t> children(n.count);
    for (uint32_t i = 0; i < n.count; ++i) {
      if (!CopyNode(from, from.child(n.first + i), to, memo, depth + 1, &children[i])) return false;
    }
    to.SetChildren(copy, children.data(), n.count);
    *out = copy;
  }
  memo.emplace(id, *out);
  return true;
}

bool YamlReader::CopyAnchor(const Document& from, uint32_t id, Document& to, const yaml_event_t& e,
                            std::string_view name, uint32_t* out) {
  std::unordered_map<uint32_t, uint32_t> memo;
  if (CopyNode(from, id, to, memo, 0, out)) return true;
  uint32_t at = Offset(e.start_mark);
  diags_.Error(DiagCode::kTooDeep, Span{&source_, at, std::max(at + 1, Offset(e.end_mark))},
               fmt::format("the anchor `{}` holds more than {} nodes or nests too deep", name, kMaxAliasNodes));
  return false;
}

bool YamlReader::Next(Event& ev) {
  ev.Reset();
  if (!yaml_parser_parse(&parser_, &ev.e)) return ReportParserError();
  ev.live = true;
  return true;
}

bool YamlReader::ReportParserError() {
  bool reader = parser_.error == YAML_READER_ERROR;
  uint32_t at = reader ? static_cast<uint32_t>(std::min<size_t>(start_ + parser_.problem_offset, source_.Size()))
                       : Offset(parser_.problem_mark);
  std::string problem = parser_.problem ? parser_.problem : "unknown problem";
  bool utf8 = reader && problem.find("UTF-8") != std::string::npos;
  Diagnostic& d = diags_.Error(utf8 ? DiagCode::kInvalidUtf8 : DiagCode::kYamlSyntax,
                               Span{&source_, at, at + 1},
                               utf8 ? fmt::format("invalid UTF-8: {}", problem)
                                    : fmt::format("invalid YAML: {}", problem));
  if (parser_.context != nullptr) {
    uint32_t ctx = Offset(parser_.context_mark);
    d.secondary.push_back({Span{&source_, ctx, ctx + 1}, parser_.context});
  }
  if (utf8) d.help = "save the file as UTF-8";
  return false;
}

bool YamlReader::Run() {
  Event ev;
  if (!Next(ev)) return false;  // STREAM-START
  for (;;) {
    if (!Next(ev)) return false;
    if (ev.e.type == YAML_STREAM_END_EVENT) return true;
    if (ev.e.type != YAML_DOCUMENT_START_EVENT) return false;
    anchors_.clear();
    anchor_store_.Clear();
    copied_nodes_ = 0;
    if (!ReadDocument()) return false;
  }
}

void YamlReader::Emit(Document& doc, std::string_view default_kind) {
  visitor_.Visit(doc.Root(), default_kind);
}

// One YAML document: an object, a list object, or a plain sequence of objects.
bool YamlReader::ReadDocument() {
  Event ev;
  if (!Next(ev)) return false;
  if (ev.e.type == YAML_MAPPING_START_EVENT) {
    if (!ReadTopMapping(ev)) return false;
  } else if (ev.e.type == YAML_SEQUENCE_START_EVENT) {
    bool unused;
    if (!ReadItems(&unused)) return false;
    for (auto& doc : waiting_) Emit(*doc, {});
    waiting_.clear();
  } else {
    item_->Clear();
    ++generation_;
    uint32_t id;
    if (!Build(*item_, ev, &id)) return false;
    item_->SetRoot(id);
    // An empty document (`---` alone, or only comments) holds nothing.
    if (!item_->Root().IsNull()) Emit(*item_, {});
  }
  if (!Next(ev)) return false;  // DOCUMENT-END
  return true;
}

// Reads the elements of a sequence whose start was just consumed. Elements
// with a `kind` go to the visitor at once; others wait for the list's kind.
bool YamlReader::ReadItems(bool* any_waiting) {
  *any_waiting = false;
  Event ev;
  for (;;) {
    if (!Next(ev)) return false;
    if (ev.e.type == YAML_SEQUENCE_END_EVENT) return true;
    item_->Clear();
    ++generation_;
    uint32_t id;
    if (!Build(*item_, ev, &id)) return false;
    item_->SetRoot(id);
    NodeRef root = item_->Root();
    if (root.IsMapping() && !root.Get("kind").Valid()) {
      waiting_.push_back(std::move(item_));
      item_ = std::make_unique<Document>(&source_);
      *any_waiting = true;
    } else {
      Emit(*item_, {});
    }
  }
}

bool YamlReader::ReadTopMapping(Event& start) {
  header_.Clear();
  ++generation_;
  uint32_t map = header_.AddContainer(NodeKind::kMapping, Offset(start.e.start_mark));
  std::vector<uint32_t> pairs;
  std::vector<uint32_t> merges;
  bool is_list = false;
  Event ev;
  for (;;) {
    if (!Next(ev)) return false;
    if (ev.e.type == YAML_MAPPING_END_EVENT) break;
    uint32_t key;
    bool items_key = ev.e.type == YAML_SCALAR_EVENT &&
                     std::string_view(reinterpret_cast<char*>(ev.e.data.scalar.value),
                                      ev.e.data.scalar.length) == "items";
    if (!Build(header_, ev, &key)) return false;
    if (!Next(ev)) return false;
    if (items_key && ev.e.type == YAML_SEQUENCE_START_EVENT) {
      is_list = true;
      bool waiting;
      if (!ReadItems(&waiting)) return false;
      // Stand-in value so the header still shows an `items` key.
      pairs.push_back(key);
      pairs.push_back(header_.AddContainer(NodeKind::kSequence, Offset(ev.e.start_mark)));
      continue;
    }
    uint32_t value;
    if (!Build(header_, ev, &value)) return false;
    if (header_.node(key).type == ScalarType::kString && header_.node(key).text == "<<" &&
        header_.node(key).end - header_.node(key).begin == 2) {
      merges.push_back(value);
    } else {
      pairs.push_back(key);
      pairs.push_back(value);
    }
    is_list |= items_key && header_.node(value).type == ScalarType::kNull &&
               header_.node(value).kind == NodeKind::kScalar;
  }
  if (!FinishMapping(header_, map, pairs, merges)) return false;
  header_.SetRoot(map);
  if (!is_list) {
    Emit(header_, {});
    return true;
  }
  NodeRef kind = header_.Root().Get("kind");
  // kubectl writes a list's keys in order, `kind` and `metadata` after
  // `items`: a list of its that ends with its items was cut short.
  NodeRef root = header_.Root();
  if (!kind.Valid() && root.Size() == 2 && root.KeyAt(0).Text() == "apiVersion" && root.KeyAt(1).Text() == "items") {
    Diagnostic& d = diags_.Warning(DiagCode::kCutShort, root.KeyAt(1).GetSpan(),
                                   "the list ends after its `items`, with no `kind` or `metadata` after them as kubectl "
                                   "writes: the file looks cut short",
                                   "the list");
    d.help = "dump the cluster again; a copy cut at a line boundary still parses as YAML, with fewer objects";
  }
  std::string_view item_kind = kind.IsScalar() ? ItemKindOf(kind.Text()) : std::string_view();
  for (auto& doc : waiting_) Emit(*doc, item_kind);
  waiting_.clear();
  return true;
}

bool YamlReader::FinishMapping(Document& doc, uint32_t id, const std::vector<uint32_t>& pairs,
                               const std::vector<uint32_t>& merges) {
  std::vector<uint32_t> all = pairs;
  // Merge keys (`<<: *base`): explicit keys win, then earlier merged maps.
  for (uint32_t merge : merges) {
    NodeRef m(&doc, merge);
    std::vector<NodeRef> sources;
    if (m.IsMapping()) {
      sources.push_back(m);
    } else if (m.IsSequence()) {
      for (uint32_t i = 0; i < m.Size(); ++i) sources.push_back(m.At(i));
    }
    if (sources.empty() || !std::all_of(sources.begin(), sources.end(), [](NodeRef s) { return s.IsMapping(); })) {
      diags_.Error(DiagCode::kBadMergeKey, m.GetSpan(),
                   fmt::format("the merge key `<<` needs a mapping or a list of mappings, found {}", m.Describe()),
                   "merged here");
      return false;
    }
    for (NodeRef s : sources) {
      for (uint32_t i = 0; i < s.Size(); ++i) {
        std::string_view k = s.KeyAt(i).Text();
        bool present = false;
        for (size_t j = 0; j < all.size() && !present; j += 2) present = doc.node(all[j]).text == k;
        if (!present) {
          all.push_back(s.KeyAt(i).id());
          all.push_back(s.ValueAt(i).id());
        }
      }
    }
  }
  doc.SetChildren(id, all.data(), static_cast<uint32_t>(all.size()));
  return CheckDuplicateKeys(doc, id, diags_);
}

bool YamlReader::Build(Document& doc, Event& first, uint32_t* out) {
  // Iterative: one frame per open container; children gather on `scratch`.
  struct Frame {
    uint32_t id;
    size_t scratch_begin;
    std::vector<uint32_t> merges;
    bool expect_value = false;  // mappings: the next node is a value
    bool merge_next = false;    // mappings: that value belongs to `<<`
    std::string anchor;
  };
  std::vector<Frame> stack;
  std::vector<uint32_t> scratch;
  Event ev_storage;
  Event* ev = &first;
  for (;;) {
    uint32_t done = UINT32_MAX;  // a finished node, to attach to its parent
    std::string anchor;
    const yaml_event_t& e = ev->e;
    switch (e.type) {
      case YAML_SCALAR_EVENT: {
        std::string_view text(reinterpret_cast<char*>(e.data.scalar.value), e.data.scalar.length);
        std::string_view tag = e.data.scalar.tag ? reinterpret_cast<char*>(e.data.scalar.tag) : "";
        ScalarType type = ScalarType::kString;
        if (tag == kStrTag) {
          type = ScalarType::kString;
        } else if (!tag.empty() && tag != "!") {
          type = ResolvePlainScalar(text);
        } else if (e.data.scalar.style == YAML_PLAIN_SCALAR_STYLE) {
          type = ResolvePlainScalar(text);
        }
        done = doc.AddScalar(Offset(e.start_mark), Offset(e.end_mark), type, doc.arena().Copy(text));
        if (e.data.scalar.anchor) anchor = reinterpret_cast<char*>(e.data.scalar.anchor);
        bool plain_merge = e.data.scalar.style == YAML_PLAIN_SCALAR_STYLE && text == "<<";
        if (!stack.empty() && doc.node(stack.back().id).kind == NodeKind::kMapping &&
            !stack.back().expect_value && plain_merge) {
          stack.back().merge_next = true;
          stack.back().expect_value = true;
          done = UINT32_MAX;
        }
        break;
      }
      case YAML_ALIAS_EVENT: {
        std::string name = reinterpret_cast<char*>(e.data.alias.anchor);
        auto it = anchors_.find(name);
        if (it == anchors_.end()) {
          uint32_t at = Offset(e.start_mark);
          Diagnostic& d = diags_.Error(DiagCode::kUnknownAlias, Span{&source_, at, Offset(e.end_mark)},
                                       fmt::format("unknown alias `*{}`", name), "no anchor of this name before");
          d.help = fmt::format("define the anchor first, e.g. `key: &{} value`", name);
          return false;
        }
        if (it->second.doc != &doc || it->second.generation != generation_) {
          // The anchor is in an earlier list item (whose tree is gone): copy
          // it from the anchor store.
          uint32_t copied;
          if (!CopyAnchor(anchor_store_, it->second.stored, doc, e, name, &copied)) return false;
          done = copied;
          break;
        }
        done = it->second.id;
        break;
      }
      case YAML_SEQUENCE_START_EVENT:
      case YAML_MAPPING_START_EVENT: {
        if (stack.size() >= static_cast<size_t>(kMaxNesting)) {
          uint32_t at = Offset(e.start_mark);
          Diagnostic& d = diags_.Error(DiagCode::kTooDeep, Span{&source_, at, at + 1},
                                       fmt::format("the YAML nests deeper than {} levels", kMaxNesting));
          d.help = "Kubernetes objects nest a few levels deep; this file is not a cluster snapshot";
          return false;
        }
        bool map = e.type == YAML_MAPPING_START_EVENT;
        Frame f{doc.AddContainer(map ? NodeKind::kMapping : NodeKind::kSequence, Offset(e.start_mark)),
                scratch.size(), {}, false, false, {}};
        const yaml_char_t* a = map ? e.data.mapping_start.anchor : e.data.sequence_start.anchor;
        if (a) f.anchor = reinterpret_cast<const char*>(a);
        stack.push_back(std::move(f));
        break;
      }
      case YAML_SEQUENCE_END_EVENT:
      case YAML_MAPPING_END_EVENT: {
        Frame& f = stack.back();
        std::vector<uint32_t> children(scratch.begin() + static_cast<long>(f.scratch_begin), scratch.end());
        scratch.resize(f.scratch_begin);
        if (doc.node(f.id).kind == NodeKind::kMapping) {
          if (!FinishMapping(doc, f.id, children, f.merges)) return false;
        } else {
          doc.SetChildren(f.id, children.data(), static_cast<uint32_t>(children.size()));
        }
        done = f.id;
        anchor = std::move(f.anchor);
        stack.pop_back();
        break;
      }
      default:
        return false;  // documents do not start inside a node
    }
    if (done != UINT32_MAX) {
      if (!anchor.empty()) {
        // Keep a copy for aliases in later list items.
        uint32_t stored;
        if (!CopyAnchor(doc, done, anchor_store_, ev->e, anchor, &stored)) return false;
        anchors_[anchor] = Anchor{&doc, generation_, done, stored};
      }
      if (stack.empty()) {
        *out = done;
        return true;
      }
      Frame& parent = stack.back();
      if (doc.node(parent.id).kind == NodeKind::kMapping) {
        if (parent.merge_next) {
          parent.merges.push_back(done);
          parent.merge_next = false;
          parent.expect_value = false;
        } else {
          scratch.push_back(done);
          parent.expect_value = !parent.expect_value;
        }
      } else {
        scratch.push_back(done);
      }
    }
    if (!Next(ev_storage)) return false;
    ev = &ev_storage;
  }
}

}  // namespace

bool ReadYamlObjects(const Source& source, ObjectVisitor& visitor, DiagnosticSink& diags, size_t start) {
  YamlReader reader(source, start, visitor, diags);
  return reader.Run();
}

}  // namespace policy::k8s
