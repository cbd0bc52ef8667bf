#include <doctest/doctest.h>

#include <string>
#include <vector>

#include <fmt/format.h>

#include "k8s/object_reader.h"
#include "support/utf8.h"

using namespace policy;
using namespace policy::k8s;

namespace {

std::string_view TypeName(ScalarType t) {
  switch (t) {
    case ScalarType::kString: return "s";
    case ScalarType::kInt: return "i";
    case ScalarType::kFloat: return "f";
    case ScalarType::kBool: return "b";
    case ScalarType::kNull: return "n";
  }
  return "?";
}

// A compact dump: {k:v,...} [a,b] and scalars as text/type.
std::string Dump(NodeRef n) {
  if (n.IsMapping()) {
    std::string out = "{";
    for (uint32_t i = 0; i < n.Size(); ++i) {
      out += fmt::format("{}{}:{}", i ? "," : "", n.KeyAt(i).Text(), Dump(n.ValueAt(i)));
    }
    return out + "}";
  }
  if (n.IsSequence()) {
    std::string out = "[";
    for (uint32_t i = 0; i < n.Size(); ++i) out += (i ? "," : "") + Dump(n.At(i));
    return out + "]";
  }
  return fmt::format("{}/{}", n.Text(), TypeName(n.Type()));
}

struct Collected {
  std::vector<std::string> objects;  // "default_kind|dump"
  std::vector<LineCol> positions;    // where each object starts
  bool ok = false;
  DiagnosticSink diags;
};

class Collector final : public ObjectVisitor {
 public:
  explicit Collector(Collected& c) : c_(c) {}
  void Visit(NodeRef object, std::string_view default_kind) override {
    c_.objects.push_back(fmt::format("{}|{}", default_kind, Dump(object)));
    c_.positions.push_back(object.GetSpan().source->Locate(object.GetSpan().begin));
  }

 private:
  Collected& c_;
};

Collected Read(const Source& source) {
  Collected c;
  Collector collector(c);
  c.ok = ReadObjects(source, collector, c.diags);
  return c;
}

std::string FirstError(const Collected& c) {
  return c.diags.All().empty() ? std::string() : Render(c.diags.All().front());
}

}  // namespace

TEST_CASE("yaml plain scalars resolve as Kubernetes' YAML 1.1 decoder does") {
  struct Row {
    const char* text;
    ScalarType type;
  } rows[] = {
      {"abc", ScalarType::kString}, {"true", ScalarType::kBool},   {"yes", ScalarType::kBool},
      {"Off", ScalarType::kBool},   {"y", ScalarType::kBool},      {"~", ScalarType::kNull},
      {"null", ScalarType::kNull},  {"", ScalarType::kNull},       {"12", ScalarType::kInt},
      {"-3", ScalarType::kInt},     {"010", ScalarType::kInt},     {"0x1F", ScalarType::kInt},
      {"0b101", ScalarType::kInt},  {"1_000", ScalarType::kInt},   {"089", ScalarType::kFloat},
      {"1.5", ScalarType::kFloat},  {"1e3", ScalarType::kFloat},   {".5", ScalarType::kFloat},
      {".inf", ScalarType::kFloat}, {"500m", ScalarType::kString}, {"16Gi", ScalarType::kString},
      {"1.2.3", ScalarType::kString}, {"-", ScalarType::kString},  {"2001-12-14", ScalarType::kString},
  };
  for (const Row& r : rows) {
    INFO(std::string(r.text));
    CHECK(ResolvePlainScalar(r.text) == r.type);
  }
}

TEST_CASE("multi-document yaml: one object per document - empty documents skipped") {
  Source s("s.yaml",
           "kind: Node\nmetadata: {name: a}\n---\n# only a comment\n---\n"
           "kind: Pod\nspec: {x: '1', y: \"2\", z: 3, w: [true, null]}\n");
  Collected c = Read(s);
  REQUIRE(c.ok);
  REQUIRE(c.objects.size() == 2);
  CHECK(c.objects[0] == "|{kind:Node/s,metadata:{name:a/s}}");
  CHECK(c.objects[1] == "|{kind:Pod/s,spec:{x:1/s,y:2/s,z:3/i,w:[true/b,null/n]}}");
  CHECK(c.positions[1].line == 6);
  CHECK(c.positions[1].column == 1);
}

TEST_CASE("a List streams its items - a typed list gives them their kind") {
  Source list("l.yaml", "apiVersion: v1\nitems:\n- kind: Node\n  metadata: {name: a}\n- kind: Pod\nkind: List\n");
  Collected c = Read(list);
  REQUIRE(c.ok);
  REQUIRE(c.objects.size() == 2);
  CHECK(c.objects[0] == "|{kind:Node/s,metadata:{name:a/s}}");
  CHECK(c.positions[1].line == 5);

  // kind after items (kubectl's key order) with items that omit their kind.
  Source typed("t.yaml", "items:\n- metadata: {name: a}\n- metadata: {name: b}\nkind: NodeList\n");
  Collected t = Read(typed);
  REQUIRE(t.ok);
  REQUIRE(t.objects.size() == 2);
  CHECK(t.objects[1] == "Node|{metadata:{name:b/s}}");

  Source null_items("n.yaml", "kind: PodList\nitems: null\n");
  Collected n = Read(null_items);
  CHECK(n.ok);
  CHECK(n.objects.empty());
}

TEST_CASE("json lists stream - kind is found wherever it is") {
  Source s("l.json", R"({"apiVersion":"v1","items":[{"metadata":{"name":"a","n":1.5,"b":false,"z":null}}],"kind":"NodeList"})");
  Collected c = Read(s);
  REQUIRE(c.ok);
  REQUIRE(c.objects.size() == 1);
  CHECK(c.objects[0] == "Node|{metadata:{name:a/s,n:1.5/f,b:false/b,z:null/n}}");
  Source empty("e.json", R"({"kind":"PodList","items":null})");
  Collected e = Read(empty);
  CHECK(e.ok);
  CHECK(e.objects.empty());
  Source escaped("x.json", "{\"kind\":\"Node\",\"metadata\":{\"name\":\"a\\u00e9\\n\"}}");
  Collected x = Read(escaped);
  REQUIRE(x.ok);
  CHECK(x.objects[0] == "|{kind:Node/s,metadata:{name:a\xC3\xA9\n/s}}");
}

TEST_CASE("concatenated json documents are read one by one - lists and arrays among them") {
  // Objects back to back (the first ends where the text does not), one per
  // line, then a list and an array (the text ends with another bracket).
  Source s("c.json", "{\"kind\":\"Node\",\"n\":1}{\"kind\":\"Node\",\"n\":2}\n"
                     "{\"kind\":\"NodeList\",\"items\":[{\"n\":3}]}\n[{\"n\":4}]\n");
  Collected c = Read(s);
  REQUIRE_MESSAGE(c.ok, FirstError(c));
  REQUIRE(c.objects.size() == 4);
  CHECK(c.objects[0] == "|{kind:Node/s,n:1/i}");
  CHECK(c.objects[1] == "|{kind:Node/s,n:2/i}");
  CHECK(c.objects[2] == "Node|{n:3/i}");
  CHECK(c.objects[3] == "|{n:4/i}");
  CHECK(c.positions[2].line == 2);
  // An error in a later document is placed in it.
  Source bad("b.json", "{\"a\":1}\n{\"b\": [}\n");
  Collected b = Read(bad);
  CHECK_FALSE(b.ok);
  CHECK(FirstError(b).find("b.json:2:8") != std::string::npos);
  // So is something that is no document at all.
  Source junk("j.json", "{\"a\":1} x");
  CHECK(FirstError(Read(junk)).find("j.json:1:9") != std::string::npos);
}

TEST_CASE("a yaml stream may mix json documents") {
  Source s("m.yaml", "{\"kind\": \"Node\", \"n\": 1}\n---\nkind: Pod\n---\n{\"kind\": \"Node\"}\n");
  Collected c = Read(s);
  REQUIRE_MESSAGE(c.ok, FirstError(c));
  REQUIRE(c.objects.size() == 3);
  CHECK(c.objects[0] == "|{kind:Node/s,n:1/i}");
  CHECK(c.objects[1] == "|{kind:Pod/s}");
}

TEST_CASE("anchors - aliases and merge keys") {
  Source s("a.yaml",
           "kind: Pod\nbase: &b {cpu: '1', memory: 1Gi}\n"
           "one: *b\n"
           "two:\n  <<: *b\n  cpu: '2'\n"
           "three:\n  <<: [{x: a}, {x: b, y: c}]\n");
  Collected c = Read(s);
  REQUIRE_MESSAGE(c.ok, FirstError(c));
  CHECK(c.objects[0] ==
        "|{kind:Pod/s,base:{cpu:1/s,memory:1Gi/s},one:{cpu:1/s,memory:1Gi/s},"
        "two:{cpu:2/s,memory:1Gi/s},three:{x:a/s,y:c/s}}");
}

TEST_CASE("unknown alias and bad merge are errors with positions") {
  Source s("a.yaml", "kind: Pod\nspec: *nowhere\n");
  Collected c = Read(s);
  CHECK_FALSE(c.ok);
  CHECK(FirstError(c).find("error[L0105]: a.yaml:2:7: unknown alias `*nowhere`") == 0);
  Source m("m.yaml", "kind: Pod\nspec:\n  <<: 3\n");
  Collected cm = Read(m);
  CHECK_FALSE(cm.ok);
  CHECK(FirstError(cm).find("error[L0106]: m.yaml:3:7:") == 0);
}

TEST_CASE("duplicate keys are refused in yaml and json") {
  Source y("d.yaml", "kind: Node\nmetadata:\n  name: a\n  name: b\n");
  Collected cy = Read(y);
  CHECK_FALSE(cy.ok);
  CHECK(FirstError(cy).find("error[L0104]: d.yaml:4:3: duplicate key `name`") == 0);
  CHECK(FirstError(cy).find("d.yaml:3:3:") != std::string::npos);
  Source j("d.json", "{\"kind\":\"Node\",\n \"kind\":\"Pod\"}");
  Collected cj = Read(j);
  CHECK_FALSE(cj.ok);
  CHECK(FirstError(cj).find("error[L0104]: d.json:2:2: duplicate key `kind`") == 0);
  // Many keys take the sorted path.
  std::string big = "labels:\n";
  for (int i = 0; i < 40; ++i) big += fmt::format("  k{}: v\n", i);
  big += "  k7: again\n";
  Source b("b.yaml", big);
  Collected cb = Read(b);
  CHECK_FALSE(cb.ok);
  CHECK(FirstError(cb).find("b.yaml:42:3: duplicate key `k7`") != std::string::npos);
}

TEST_CASE("invalid yaml is refused at its line and column") {
  Source s("bad.yaml", "kind: Pod\nspec:\n  containers:\n  - image: [registry.k8s.io/pause:3.9\n");
  Collected c = Read(s);
  CHECK_FALSE(c.ok);
  CHECK(c.objects.empty());
  CHECK(FirstError(c).find("error[L0101]: bad.yaml:5:1: invalid YAML") == 0);
  Source tab("tab.yaml", "kind: Pod\n\tspec: 1\n");
  CHECK_FALSE(Read(tab).ok);
}

TEST_CASE("a syntax error after good objects refuses the whole file") {
  Source s("late.yaml", "kind: Node\nmetadata: {name: a}\n---\nkind: Node\nmetadata: {name: [b\n");
  Collected c = Read(s);
  CHECK_FALSE(c.ok);
  CHECK(c.diags.HasErrors());
}

TEST_CASE("invalid json says what was expected where") {
  struct Row {
    const char* text;
    const char* expected;
  } rows[] = {
      {"{\"a\": 1,}", "1:9: invalid JSON: expected a member name in quotes after `,`, found `}`"},
      {"{\"a\" 1}", "1:6: invalid JSON: expected `:` after the member name, found `1`"},
      {"[1, 2", "1:6: invalid JSON: expected `,` or `]` after an array element, found the end of the file"},
      {"{\"a\": tru}", "1:10: invalid JSON: expected `true`, found `}`"},
      {"{\"a\": 01}", "1:8: invalid JSON: expected `,` or `}` after an object member, found `1`"},
      {"{} x", "1:4: invalid JSON: expected a value (object, array, string, number, `true`, `false` or `null`), found `x`"},
      {"{\"a\": \"x\ty\"}", "invalid JSON: expected a closing `\"` (control characters must be escaped)"},
  };
  for (const Row& r : rows) {
    INFO(std::string(r.text));
    Source s("b.json", r.text);
    Collected c = Read(s);
    CHECK_FALSE(c.ok);
    CHECK_MESSAGE(FirstError(c).find(r.expected) != std::string::npos, FirstError(c));
    CHECK(FirstError(c).find("error[L0102]: b.json:") == 0);
  }
}

TEST_CASE("invalid UTF-8 is an error in both formats") {
  Source y("u.yaml", "kind: Node\nmetadata: {name: \"a\xFF\"}\n");
  Collected cy = Read(y);
  CHECK_FALSE(cy.ok);
  CHECK(FirstError(cy).find("error[L0103]") == 0);
  Source j("u.json", "{\"kind\": \"No\xC3\x28\"}");
  Collected cj = Read(j);
  CHECK_FALSE(cj.ok);
  CHECK(FirstError(cj).find("error[L0103]: u.json:1:13:") == 0);
  CHECK(FirstInvalidUtf8("ok \xE2\x82\xAC \xED\xA0\x80") == 7);  // a UTF-16 surrogate is not UTF-8
}

TEST_CASE("spans of non-ASCII yaml are byte offsets") {
  Source s("n.yaml", "kind: Node\nmetadata:\n  annotations: {d: \"caf\xC3\xA9 \xE2\x82\xAC\"}\n  name: [x\n");
  Collected c = Read(s);
  REQUIRE_FALSE(c.ok);
  // The error is reported on line 5 (end of input inside a flow sequence).
  CHECK(FirstError(c).find("n.yaml:5:1") != std::string::npos);
  Source ok("o.yaml", "kind: Node\nmetadata: {d: \"\xC3\xA9\xC3\xA9\", name: x}\n");
  Collected c2 = Read(ok);
  REQUIRE(c2.ok);
}

TEST_CASE("aliases may name anchors in earlier list items") {
  Source s("x.yaml",
           "kind: List\nitems:\n- kind: Node\n  spec: {taints: &t [{key: gpu, effect: NoSchedule}]}\n"
           "- kind: Node\n  spec: {taints: *t}\n");
  Collected c = Read(s);
  REQUIRE_MESSAGE(c.ok, FirstError(c));
  REQUIRE(c.objects.size() == 2);
  CHECK(c.objects[1] == "|{kind:Node/s,spec:{taints:[{key:gpu/s,effect:NoSchedule/s}]}}");
}

TEST_CASE("aliases across list items keep sharing: no exponential copies") {
  // Each level doubles: 2^25 nodes if aliases were expanded.
  std::string text = "kind: List\nitems:\n- kind: Pod\n  a0: &a0 [x, x]\n";
  for (int i = 1; i < 25; ++i) text += fmt::format("  a{}: &a{} [*a{}, *a{}]\n", i, i, i - 1, i - 1);
  text += "- kind: Pod\n  spec: *a24\n";
  Source s("bomb.yaml", text);
  struct Sizes final : ObjectVisitor {
    std::vector<size_t> nodes;
    void Visit(NodeRef object, std::string_view) override { nodes.push_back(object.document()->NodeCount()); }
  } sizes;
  DiagnosticSink diags;
  CHECK(ReadObjects(s, sizes, diags));
  REQUIRE(sizes.nodes.size() == 2);
  CHECK(sizes.nodes[1] < 100);
}

TEST_CASE("an absent key reads as null: lookups chain without checks") {
  Source s("x.yaml", "kind: Node\n");
  struct Probe final : ObjectVisitor {
    bool checked = false;
    void Visit(NodeRef object, std::string_view) override {
      NodeRef missing = object.Get("metadata").Get("name");
      CHECK_FALSE(missing.Valid());
      CHECK(missing.Text().empty());
      CHECK(missing.IsNull() == false);  // not a null scalar: nothing at all
      CHECK(missing.Size() == 0);
      CHECK_FALSE(missing.GetSpan().Valid());
      CHECK(missing.Describe() == "nothing");
      CHECK_FALSE(missing.Get("x").Valid());
      checked = true;
    }
  } probe;
  DiagnosticSink diags;
  REQUIRE(ReadObjects(s, probe, diags));
  CHECK(probe.checked);
}
