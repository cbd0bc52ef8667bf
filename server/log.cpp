// `policyc serve`'s structured log (log.h).

#include "server/log.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>

#include <fmt/format.h>

#include "support/json_writer.h"

namespace policy::server {

void Log(std::string_view level, std::string_view message,
         std::initializer_list<std::pair<std::string_view, LogValue>> fields) {
  auto now = std::chrono::system_clock::now();
  std::time_t seconds = std::chrono::system_clock::to_time_t(now);
  auto millis = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%S", &utc);
  JsonWriter w(JsonWriter::Style::kLine);
  w.BeginObject().Key("ts").String(fmt::format("{}.{:03}Z", stamp, millis)).Key("level").String(level).Key("msg").String(message);
  for (const auto& [key, value] : fields) {
    w.Key(key);
    if (const auto* s = std::get_if<std::string_view>(&value)) {
      w.String(*s);
    } else if (const auto* i = std::get_if<int64_t>(&value)) {
      w.Int(*i);
    } else {
      // Three decimals (a duration in ms to the microsecond), written as the
      // shortest number that reads back as that: 22.884, not 22.883999999999997.
      w.Double(std::round(std::get<double>(value) * 1e3) / 1e3);
    }
  }
  w.EndObject();
  std::string line = w.Take();  // one record a line, ending in its newline
  std::fwrite(line.data(), 1, line.size(), stderr);  // one write: lines from threads do not interleave
}

}  // namespace policy::server
