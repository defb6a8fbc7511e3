// A cell's figures as one serialized record (JSON), and its latency distributions.
#include "reports/cell_summary.h"

#include <cmath>
#include <nlohmann/json.hpp>
#include <stdexcept>

namespace kvsweep::reports {
namespace {

using Json = nlohmann::json;

Json number(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  return value;
}

Json optional_number(const std::optional<double>& value) {
  return value ? number(*value) : Json(nullptr);
}

Json summary_json(const SampleSummary& s) {
  return {{"count", s.count},     {"mean", number(s.mean)}, {"std", number(s.std)},
          {"min", number(s.min)}, {"max", number(s.max)},   {"median", number(s.median)},
          {"p90", number(s.p90)}, {"p95", number(s.p95)},   {"p99", number(s.p99)}};
}

// Reading: each field by name, with the path of the field in every error.
class Reader {
 public:
  Reader(const Json& object, std::string path) : object_(object), path_(std::move(path)) {}

  const Json* find(const char* key) const {
    const auto it = object_.find(key);
    return it == object_.end() ? nullptr : &*it;
  }
  [[noreturn]] void fail(const char* key, const char* want) const {
    throw std::invalid_argument("cell summary: " + path_ + key + ": not " + want);
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
    const Json* v = find(key);
    if (v == nullptr) return;
    if (!v->is_object()) fail(key, "an object");
    const Reader inner(*v, path_ + key + ".");
    inner.read_int("count", out.count);
    inner.read("mean", out.mean);
    inner.read("std", out.std);
    inner.read("min", out.min);
    inner.read("max", out.max);
    inner.read("median", out.median);
    inner.read("p90", out.p90);
    inner.read("p95", out.p95);
    inner.read("p99", out.p99);
  }

 private:
  const Json& object_;
  std::string path_;
};

}  // namespace

std::string metrics_to_summary(const CellMetrics& m) {
  Json failures = Json::object();
  for (const auto& [kind, n] : m.failed_by_kind) failures[kind] = n;
  Json first = Json::object();
  for (const auto& [kind, f] : m.first_failure_by_kind) {
    first[kind] = {{"http_status", f.http_status}, {"error", f.error}};
  }
  const Json j = {
      {"format", kSummaryFormat},
      {"ok", m.ok},
      {"failed", m.failed},
      {"failed_by_kind", failures},
      {"first_failure_by_kind", first},
      {"ttft_ms", summary_json(m.ttft_ms)},
      {"tpot_ms", summary_json(m.tpot_ms)},
      {"itl_ms", summary_json(m.itl_ms)},
      {"e2e_ms", summary_json(m.e2e_ms)},
      {"schedule_lag_ms", summary_json(m.schedule_lag_ms)},
      {"e2e_from_schedule_ms", summary_json(m.e2e_from_schedule_ms)},
      {"window_s", number(m.window_s)},
      {"request_throughput", number(m.request_throughput)},
      {"output_throughput", number(m.output_throughput)},
      {"total_token_throughput", optional_number(m.total_token_throughput)},
      {"prompt_tokens", m.prompt_tokens ? Json(*m.prompt_tokens) : Json(nullptr)},
      {"prompt_tokens_unknown", m.prompt_tokens_unknown},
      {"output_tokens", m.output_tokens},
      {"output_tokens_estimated", m.output_tokens_estimated},
      {"max_output_tokens_per_s", number(m.max_output_tokens_per_s)},
      {"max_concurrent_requests", m.max_concurrent_requests},
      {"kv_hit_rate_server", optional_number(m.kv_hit_rate_server)},
      {"cache_hit_client", optional_number(m.cache_hit_client)},
      {"kv_usage_max", optional_number(m.kv_usage_max)},
      {"preemptions", m.preemptions ? Json(*m.preemptions) : Json(nullptr)},
      {"spec_decode_acceptance", optional_number(m.spec_decode_acceptance)},
      {"good_requests", m.good_requests ? Json(*m.good_requests) : Json(nullptr)},
      {"goodput", optional_number(m.goodput)},
  };
  return j.dump();
}

CellMetrics metrics_from_summary(const std::string& text) {
  const Json j = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) throw std::invalid_argument("cell summary: not a JSON object");
  const Reader r(j, "");
  int format = 0;
  r.read_int("format", format);
  if (format > kSummaryFormat) {
    throw std::invalid_argument("cell summary: format " + std::to_string(format) +
                                ", written by a newer kvsweep (this one reads up to " +
                                std::to_string(kSummaryFormat) + ")");
  }
  CellMetrics m;
  r.read_int("ok", m.ok);
  r.read_int("failed", m.failed);
  if (const Json* failures = r.find("failed_by_kind")) {
    if (!failures->is_object()) r.fail("failed_by_kind", "an object");
    for (const auto& [kind, n] : failures->items()) {
      if (!n.is_number_integer()) r.fail("failed_by_kind", "an object of integers");
      m.failed_by_kind[kind] = n.get<std::int64_t>();
    }
  }
  if (const Json* first = r.find("first_failure_by_kind")) {
    if (!first->is_object()) r.fail("first_failure_by_kind", "an object");
    for (const auto& [kind, f] : first->items()) {
      if (!f.is_object()) r.fail("first_failure_by_kind", "an object of objects");
      const Reader inner(f, "first_failure_by_kind." + kind + ".");
      FirstFailure failure;
      inner.read_int("http_status", failure.http_status);
      if (const Json* error = inner.find("error")) {
        if (!error->is_string()) inner.fail("error", "a string");
        failure.error = error->get<std::string>();
      }
      m.first_failure_by_kind[kind] = failure;
    }
  }
  r.read("ttft_ms", m.ttft_ms);
  r.read("tpot_ms", m.tpot_ms);
  r.read("itl_ms", m.itl_ms);
  r.read("e2e_ms", m.e2e_ms);
  r.read("schedule_lag_ms", m.schedule_lag_ms);
  r.read("e2e_from_schedule_ms", m.e2e_from_schedule_ms);
  r.read("window_s", m.window_s);
  r.read("request_throughput", m.request_throughput);
  r.read("output_throughput", m.output_throughput);
  r.read("total_token_throughput", m.total_token_throughput);
  r.read_int("prompt_tokens", m.prompt_tokens);
  r.read_int("prompt_tokens_unknown", m.prompt_tokens_unknown);
  r.read_int("output_tokens", m.output_tokens);
  r.read_int("output_tokens_estimated", m.output_tokens_estimated);
  r.read("max_output_tokens_per_s", m.max_output_tokens_per_s);
  r.read_int("max_concurrent_requests", m.max_concurrent_requests);
  r.read("kv_hit_rate_server", m.kv_hit_rate_server);
  r.read("cache_hit_client", m.cache_hit_client);
  r.read("kv_usage_max", m.kv_usage_max);
  r.read_int("preemptions", m.preemptions);
  r.read("spec_decode_acceptance", m.spec_decode_acceptance);
  r.read_int("good_requests", m.good_requests);
  r.read("goodput", m.goodput);
  return m;
}

CellDistributions distributions_of(const SortedSamples& samples) {
  CellDistributions d;
  for (const double v : samples.ttft_ms) d.ttft_ms.add(v);
  for (const double v : samples.tpot_ms) d.tpot_ms.add(v);
  for (const double v : samples.itl_ms) d.itl_ms.add(v);
  for (const double v : samples.e2e_ms) d.e2e_ms.add(v);
  return d;
}

}  // namespace kvsweep::reports
