#include "report/json.h"

namespace kvsim::report {

Json envelope(std::string_view schema, std::string_view command) {
  Json j;
  j["schema"] = std::string(schema);
  j["kvsim_version"] = KVSIM_VERSION;
  j["command"] = std::string(command);
  return j;
}

std::string dump(const Json& json) {
  // nlohmann writes NaN/Inf as null already; strict UTF-8 handling replaces bad bytes.
  return json.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

}  // namespace kvsim::report
