#include <doctest/doctest.h>

#include "support/json_writer.h"

using namespace policy;

TEST_CASE("json writer nests - separates and escapes") {
  JsonWriter w;
  w.BeginObject();
  w.Key("a").Int(-3);
  w.Key("b").BeginArray().String("x\"y\n").Bool(true).Null().EndArray();
  w.Key("c").BeginObject().EndObject();
  w.Key("d").BeginArray().EndArray();
  w.EndObject();
  CHECK(w.Take() ==
        "{\n  \"a\": -3,\n  \"b\": [\n    \"x\\\"y\\n\",\n    true,\n    null\n  ],\n  \"c\": {},\n  \"d\": []\n}\n");
  CHECK(JsonQuote(std::string_view("\x01", 1)) == "\"\\u0001\"");
}
