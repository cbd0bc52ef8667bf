// ExtenderArgs with node names, read fast (extender_args.h).

#include "server/extender_args.h"

#include <simdjson.h>

#include <cctype>
#include <cstring>

namespace policy::server {
namespace {

namespace od = simdjson::ondemand;

bool SameKey(std::string_view key, std::string_view lower) {
  if (key.size() != lower.size()) return false;
  for (size_t i = 0; i < key.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(key[i])) != lower[i]) return false;
  }
  return true;
}

}  // namespace

struct NamedArgsReader::Impl {
  od::parser parser;
  std::string buffer;  // the body, with simdjson's padding after it
};

NamedArgsReader::NamedArgsReader() : impl_(new Impl) {}
NamedArgsReader::~NamedArgsReader() { delete impl_; }

bool NamedArgsReader::Read(std::string_view body, NamedArgs& out) {
  out.pod_json = {};
  out.names.clear();
  std::string& buffer = impl_->buffer;
  buffer.assign(body);
  buffer.append(simdjson::SIMDJSON_PADDING, '\0');
  od::document doc;
  if (impl_->parser.iterate(buffer.data(), body.size(), buffer.size()).get(doc)) return false;
  od::object args;
  if (doc.get_object().get(args)) return false;
  bool pod = false, names = false;
  for (auto member : args) {
    od::field field;
    std::string_view key;
    if (std::move(member).get(field) || field.unescaped_key().get(key)) return false;
    od::value value = field.value();
    od::json_type type;
    if (value.type().get(type)) return false;
    if (SameKey(key, "pod")) {
      od::object object;
      if (pod || type != od::json_type::object || value.get_object().get(object) || object.raw_json().get(out.pod_json)) {
        return false;
      }
      pod = true;
    } else if (SameKey(key, "nodenames")) {
      if (names || type != od::json_type::array) return false;  // null: the nodes come as objects
      od::array list;
      if (value.get_array().get(list)) return false;
      for (auto element : list) {
        std::string_view token;
        if (element.raw_json_token().get(token)) return false;
        // A plain string: quoted, no escape (node names are DNS subdomains).
        if (token.size() < 2 || token.front() != '"' || std::memchr(token.data(), '\\', token.size()) != nullptr) {
          return false;
        }
        size_t end = token.find('"', 1);
        if (end == std::string_view::npos) return false;
        out.names.push_back(token.substr(1, end - 1));
      }
      names = true;
    } else if (SameKey(key, "nodes")) {
      if (type != od::json_type::null) return false;  // node objects: the general reader
    }
  }
  const char* more = nullptr;  // anything after the object (a location): not one JSON object
  return pod && names && doc.current_location().get(more) != simdjson::SUCCESS;
}

}  // namespace policy::server
