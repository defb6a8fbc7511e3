// Fault injection for one replica: injected errors, added latency, death, streams cut mid-way.
#include "sim/http/faults.h"

#include <nlohmann/json.hpp>

namespace kvsweep::sim {
namespace {

std::optional<std::string> read_fraction(const nlohmann::json& patch, const char* key,
                                         double* out) {
  const auto it = patch.find(key);
  if (it == patch.end()) return std::nullopt;
  if (!it->is_number() || it->get<double>() < 0 || it->get<double>() > 1) {
    return std::string(key) + ": expected a number in [0, 1]";
  }
  *out = it->get<double>();
  return std::nullopt;
}

}  // namespace

std::optional<std::string> apply_fault_patch(const nlohmann::json& patch, FaultOptions* faults) {
  if (!patch.is_object()) return "expected a JSON object";
  FaultOptions next = *faults;
  static constexpr const char* kKeys[] = {"error_rate",      "error_status",     "added_latency_ms",
                                          "cut_stream_rate", "cut_after_tokens", "down",
                                          "replica"};
  for (const auto& [key, value] : patch.items()) {
    bool known = false;
    for (const char* k : kKeys) known = known || key == k;
    if (!known) return key + ": unknown fault field";
  }
  if (auto e = read_fraction(patch, "error_rate", &next.error_rate)) return e;
  if (auto e = read_fraction(patch, "cut_stream_rate", &next.cut_stream_rate)) return e;
  if (const auto it = patch.find("error_status"); it != patch.end()) {
    if (!it->is_number_integer() || it->get<int>() < 400 || it->get<int>() > 599) {
      return "error_status: expected an HTTP error status (400..599)";
    }
    next.error_status = it->get<int>();
  }
  if (const auto it = patch.find("added_latency_ms"); it != patch.end()) {
    if (!it->is_number() || it->get<double>() < 0) return "added_latency_ms: expected >= 0";
    next.added_latency_ms = it->get<double>();
  }
  if (const auto it = patch.find("cut_after_tokens"); it != patch.end()) {
    if (!it->is_number_integer() || it->get<int>() < 0) return "cut_after_tokens: expected >= 0";
    next.cut_after_tokens = it->get<int>();
  }
  if (const auto it = patch.find("down"); it != patch.end()) {
    if (!it->is_boolean()) return "down: expected true or false";
    next.down = it->get<bool>();
  }
  *faults = next;
  return std::nullopt;
}

nlohmann::json fault_json(const FaultOptions& f) {
  return nlohmann::json{{"error_rate", f.error_rate},
                        {"error_status", f.error_status},
                        {"added_latency_ms", f.added_latency_ms},
                        {"cut_stream_rate", f.cut_stream_rate},
                        {"cut_after_tokens", f.cut_after_tokens},
                        {"down", f.down}};
}

}  // namespace kvsweep::sim
