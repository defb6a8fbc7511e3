// The pieces every part of a cell's summary is written and read with: doubles kept bit for bit
// (NaN and infinities as strings, which JSON has no number for) and a reader that names the
// field in every error.
#pragma once

#include <cmath>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>

#include "common/error_kinds.h"
#include "common/stats.h"

namespace kvsweep::figures::summary_json {

using Json = nlohmann::json;

inline Json number(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  return value;
}

inline Json optional_number(const std::optional<double>& value) {
  return value ? number(*value) : Json(nullptr);
}

inline Json summary(const SampleSummary& s) {
  return {{"count", s.count},     {"mean", number(s.mean)}, {"std", number(s.std)},
          {"min", number(s.min)}, {"max", number(s.max)},   {"median", number(s.median)},
          {"p90", number(s.p90)}, {"p95", number(s.p95)},   {"p99", number(s.p99)}};
}

// Each field by name; a missing field keeps the value it had (the default of an older
// summary's reader); a field of the wrong type throws std::invalid_argument with its path.
class Reader {
 public:
  Reader(const Json& object, std::string path) : object_(object), path_(std::move(path)) {}

  const Json* find(const char* key) const {
    const auto it = object_.find(key);
    return it == object_.end() ? nullptr : &*it;
  }
  [[noreturn]] void fail(const char* key, const char* want) const {
    throw CorruptData("cell summary: " + path_ + key + ": not " + want);
  }
  // The object under `key`, or nullptr when absent; not an object fails.
  const Json* object(const char* key) const {
    const Json* v = find(key);
    if (v != nullptr && !v->is_object()) fail(key, "an object");
    return v;
  }
  Reader inner(const char* key, const Json& value) const {
    return Reader(value, path_ + key + ".");
  }
  double to_double(const char* key, const Json& value) const {
    if (value.is_number()) return value.get<double>();
    if (value == "nan") return std::nan("");
    if (value == "inf") return INFINITY;
    if (value == "-inf") return -INFINITY;
    fail(key, "a number");
  }
  void read(const char* key, double& out) const {
    if (const Json* v = find(key)) out = to_double(key, *v);
  }
  void read(const char* key, std::optional<double>& out) const {
    if (const Json* v = find(key))
      out = v->is_null() ? std::nullopt : std::optional(to_double(key, *v));
  }
  void read(const char* key, bool& out) const {
    if (const Json* v = find(key)) {
      if (!v->is_boolean()) fail(key, "true or false");
      out = v->get<bool>();
    }
  }
  void read(const char* key, std::string& out) const {
    if (const Json* v = find(key)) {
      if (!v->is_string()) fail(key, "a string");
      out = v->get<std::string>();
    }
  }
  template <typename Int>
  void read_int(const char* key, Int& out) const {
    if (const Json* v = find(key)) {
      if (!v->is_number_integer()) fail(key, "an integer");
      out = v->get<Int>();
    }
  }
  template <typename Int>
  void read_int(const char* key, std::optional<Int>& out) const {
    if (const Json* v = find(key)) {
      if (v->is_null()) {
        out = std::nullopt;
        return;
      }
      if (!v->is_number_integer()) fail(key, "an integer or null");
      out = v->get<Int>();
    }
  }
  void read(const char* key, SampleSummary& out) const {
    const Json* v = object(key);
    if (v == nullptr) return;
    const Reader r = inner(key, *v);
    r.read_int("count", out.count);
    r.read("mean", out.mean);
    r.read("std", out.std);
    r.read("min", out.min);
    r.read("max", out.max);
    r.read("median", out.median);
    r.read("p90", out.p90);
    r.read("p95", out.p95);
    r.read("p99", out.p99);
  }
  void read_strings(const char* key, std::vector<std::string>& out) const {
    const Json* v = find(key);
    if (v == nullptr) return;
    if (!v->is_array()) fail(key, "an array of strings");
    out.clear();
    for (const Json& s : *v) {
      if (!s.is_string()) fail(key, "an array of strings");
      out.push_back(s.get<std::string>());
    }
  }

 private:
  const Json& object_;
  std::string path_;
};

}  // namespace kvsweep::figures::summary_json
