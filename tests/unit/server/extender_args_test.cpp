// The fast ExtenderArgs reader: what it takes, and that it leaves every
// other shape to the general reader rather than misread it.

#include <doctest/doctest.h>

#include <string>

#include "server/extender_args.h"

using policy::server::NamedArgs;
using policy::server::NamedArgsReader;

TEST_CASE("names and the pod's text come out as sent with keys in any case") {
  NamedArgsReader reader;
  NamedArgs args;
  std::string body = R"({"pod": {"metadata": {"name": "a"}}, "NODENAMES": ["n1", "n-2" ,"n3"], "Nodes": null, "x": [1, {"y": 2}]})";
  REQUIRE(reader.Read(body, args));
  CHECK(args.pod_json == R"({"metadata": {"name": "a"}})");
  REQUIRE(args.names.size() == 3);
  CHECK(args.names[0] == "n1");
  CHECK(args.names[1] == "n-2");
  CHECK(args.names[2] == "n3");
  // The reader is reused: the next body replaces the views.
  REQUIRE(reader.Read(R"({"Pod": {}, "NodeNames": []})", args));
  CHECK(args.pod_json == "{}");
  CHECK(args.names.empty());
}

TEST_CASE("every other shape is left to the general reader") {
  NamedArgsReader reader;
  NamedArgs args;
  const char* refused[] = {
      R"({"Pod": {}, "NodeNames": null, "Nodes": {"items": []}})",  // node objects
      R"({"Pod": {}, "NodeNames": ["a\u0062"]})",                     // an escape in a name
      R"({"Pod": {}, "NodeNames": ["a", 1]})",                        // not a name
      R"({"Pod": {}, "NodeNames": ["a", ["b"]]})",
      R"({"Pod": {}, "NodeNames": ["a"], "Nodes": {"items": []}})",   // both: the general reader decides
      R"({"Pod": {}, "NodeNames": ["a"]} {"Pod": {}})",              // two objects
      R"({"Pod": {}, "Pod": {}, "NodeNames": ["a"]})",               // the pod twice
      R"({"Pod": null, "NodeNames": ["a"]})",
      R"({"NodeNames": ["a"]})",
      R"({"Pod": {}})",
      R"({"Pod": {}, "NodeNames": ["a")",                             // truncated
      R"(["Pod"])",
      "",
      "{\"Pod\": {}, \"NodeNames\": [\"\xff\"]}",                       // not UTF-8
  };
  for (const char* body : refused) {
    CAPTURE(body);
    CHECK_FALSE(reader.Read(body, args));
  }
}
