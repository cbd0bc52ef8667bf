#include <doctest/doctest.h>

#include <set>
#include <string>

#include "support/diagnostic.h"

using namespace policy;

TEST_CASE("codes are unique and well formed") {
  std::set<std::string_view> codes, names;
  for (DiagCode c : AllCodes()) {
    CHECK(codes.insert(CodeString(c)).second);
    CHECK(names.insert(CodeName(c)).second);
    CHECK(CodeString(c).size() == 5);
    CHECK(!CodeDescription(c).empty());
  }
}

TEST_CASE("line and column are computed on demand - in characters") {
  Source source("f.yaml", "a: 1\nb: \xC3\xA9x\n\nlast");
  CHECK(source.Locate(0).line == 1);
  CHECK(source.Locate(0).column == 1);
  CHECK(source.Locate(5).line == 2);
  CHECK(source.Locate(10).column == 5);  // after `b: é` (é is two bytes)
  CHECK(source.Locate(13).line == 4);
  CHECK(source.LineText(2) == "b: \xC3\xA9x");
  CHECK(source.LineText(3).empty());
  CHECK(source.Locate(999).line == 4);
}

TEST_CASE("render shows the line - a caret under the span - labels - notes and help") {
  Source source("pod.yaml", "spec:\n  operator: Inn\n");
  Diagnostic d{DiagCode::kUnknownOperator, Severity::kError, "unknown operator `Inn`",
               {Span{&source, 18, 21}, "not an operator"}, {}, {"a note"}, "use `In`"};
  CHECK(Render(d) ==
        "error[K0203]: pod.yaml:2:13: unknown operator `Inn`\n"
        "  |\n"
        "2 |   operator: Inn\n"
        "  |             ^~~ not an operator\n"
        "  = note: a note\n"
        "  = help: use `In`\n");
}

TEST_CASE("sink counts errors - sorts by position and caps what it keeps") {
  Source source("f", "abcdef");
  DiagnosticSink sink;
  sink.SetErrorLimit(2);
  sink.Error(DiagCode::kWrongType, Span{&source, 4, 5}, "second");
  sink.Error(DiagCode::kWrongType, Span{&source, 1, 2}, "first");
  sink.Error(DiagCode::kWrongType, Span{&source, 0, 1}, "dropped");
  sink.Warning(DiagCode::kIgnoredPod, Span{&source, 3, 4}, "warn");
  CHECK(sink.ErrorCount() == 3);
  REQUIRE(sink.All().size() == 3);
  auto sorted = sink.Sorted();
  CHECK(sorted[0].message == "first");
  CHECK(sorted[1].message == "warn");
  CHECK(RenderAll(sink).find("3 errors (2 shown)") != std::string::npos);
}
