// The setup's JSON, both ways: the one place its keys are spelled.
#include "store/experiment_setup.h"

#include <cmath>
#include <functional>
#include <limits>
#include <nlohmann/json.hpp>

namespace kvsweep::store {
namespace {

// ordered_json: a section keeps the order it was written in, so it reads as the run wrote it.
using Json = nlohmann::ordered_json;

// Reads a value of one C++ type from JSON, refusing any other JSON type (the caller then keeps
// the key among the section's other keys, as it was).
bool read_value(const Json& j, std::string& out) {
  if (!j.is_string()) return false;
  out = j.get<std::string>();
  return true;
}
bool read_value(const Json& j, bool& out) {
  if (!j.is_boolean()) return false;
  out = j.get<bool>();
  return true;
}
bool read_value(const Json& j, std::int64_t& out) {
  if (!j.is_number_integer()) return false;
  if (j.is_number_unsigned() &&
      j.get<std::uint64_t>() >
          static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
    return false;
  }
  out = j.get<std::int64_t>();
  return true;
}
bool read_value(const Json& j, std::uint64_t& out) {
  if (!j.is_number_unsigned()) return false;  // a non-negative integer
  out = j.get<std::uint64_t>();
  return true;
}
bool read_value(const Json& j, int& out) {
  std::int64_t wide = 0;
  if (!read_value(j, wide) || wide < std::numeric_limits<int>::min() ||
      wide > std::numeric_limits<int>::max()) {
    return false;
  }
  out = static_cast<int>(wide);
  return true;
}
bool read_value(const Json& j, double& out) {
  if (!j.is_number()) return false;
  out = j.get<double>();
  return true;
}
template <class T>
bool read_value(const Json& j, std::vector<T>& out) {
  if (!j.is_array()) return false;
  std::vector<T> values(j.size());
  for (std::size_t i = 0; i < j.size(); ++i) {
    if (!read_value(j[i], values[i])) return false;
  }
  out = std::move(values);
  return true;
}
template <class T>
bool read_value(const Json& j, std::optional<T>& out) {
  T value{};
  if (!read_value(j, value)) return false;
  out = std::move(value);
  return true;
}

// One section's keys: each known key has a reader that returns false on a value of another
// type; that value, and every unknown key, goes to `other` as it was.
using KeyReaders = std::vector<std::pair<const char*, std::function<bool(const Json&)>>>;

void read_section(const Json& section, const KeyReaders& readers, OtherKeys& other) {
  for (const auto& [key, value] : section.items()) {
    bool read = false;
    for (const auto& [name, reader] : readers) {
      if (key == name) {
        read = reader(value);
        break;
      }
    }
    if (!read) other.emplace_back(key, value.dump());
  }
}

template <class T>
std::pair<const char*, std::function<bool(const Json&)>> field(const char* key, T& out) {
  return {key, [&out](const Json& j) { return read_value(j, out); }};
}

template <class T>
void put(Json& j, const char* key, const std::optional<T>& value) {
  if (value) j[key] = *value;
}

void put_other(Json& j, const OtherKeys& other) {
  for (const auto& [key, text] : other) {
    Json value = Json::parse(text, nullptr, /*allow_exceptions=*/false);
    j[key] = value.is_discarded() ? Json(text) : std::move(value);
  }
}

// The keys of `section` that hold an integer where the typed field is a double, once read.
std::vector<std::string> integer_numbers(const Json& section, const Json& encoded) {
  std::vector<std::string> keys;
  for (const auto& [key, value] : section.items()) {
    if (!value.is_number_integer()) continue;
    const auto it = encoded.find(key);
    if (it != encoded.end() && it->is_number_float()) keys.push_back(key);
  }
  return keys;
}

// Writes those keys back as integers (a value that is no longer whole stays as it is).
void put_integers(Json& j, const std::vector<std::string>& keys) {
  for (const std::string& key : keys) {
    const auto it = j.find(key);
    if (it == j.end() || !it->is_number_float()) continue;
    const double value = it->get<double>();
    if (std::trunc(value) == value && std::abs(value) < 9.0e15) {
      *it = static_cast<std::int64_t>(value);
    }
  }
}

TargetSetup decode_target(const Json& j) {
  TargetSetup t;
  read_section(j,
               {field("kind", t.kind), field("replicas", t.replicas), field("profile", t.profile),
                field("description", t.description), field("stands_in_for", t.stands_in_for),
                field("url", t.url)},
               t.other);
  return t;
}

// `kvsweep load` writes an unbounded rate as "inf", as vLLM's client does.
bool read_rate(const Json& j, std::optional<double>& out) {
  if (j.is_string() && j.get<std::string>() == "inf") {
    out = std::numeric_limits<double>::infinity();
    return true;
  }
  return read_value(j, out);
}

// An integer (what a sweep writes) or a label a user's tool stored.
bool read_regime(const Json& j, std::optional<std::string>& out) {
  if (j.is_number_integer()) {
    out = j.dump();
    return true;
  }
  return read_value(j, out);
}

Json regime_json(const std::string& regime) {
  const Json number = Json::parse(regime, nullptr, /*allow_exceptions=*/false);
  return number.is_number_integer() && number.dump() == regime ? number : Json(regime);
}

LoadSetup decode_load(const Json& j) {
  LoadSetup l;
  read_section(j,
               {field("shape", l.shape),
                {"request_rate", [&l](const Json& v) { return read_rate(v, l.request_rate); }},
                field("burstiness", l.burstiness),
                field("max_concurrency", l.max_concurrency),
                field("concurrency", l.concurrency),
                field("turns", l.turns),
                field("think_time_s", l.think_time_s),
                field("dataset", l.dataset),
                {"prefix_regime", [&l](const Json& v) { return read_regime(v, l.prefix_regime); }},
                field("endpoint", l.endpoint),
                field("new_connection_per_request", l.new_connection_per_request),
                field("stream", l.stream),
                field("max_tokens", l.max_tokens),
                field("num_requests", l.num_requests),
                field("duration_s", l.duration_s),
                field("warmup_requests", l.warmup_requests),
                field("cache", l.cache),
                field("warm_passes", l.warm_passes),
                field("timeout_s", l.timeout_s),
                field("connections", l.connections),
                field("threads", l.threads),
                field("percentile_metrics", l.percentile_metrics),
                field("metric_percentiles", l.metric_percentiles),
                field("header_names", l.header_names)},
               l.other);
  l.integer_numbers = integer_numbers(j, load_json(l));
  return l;
}

bool read_slo(const Json& j, std::optional<std::vector<SloSetup>>& out) {
  if (!j.is_array()) return false;
  std::vector<SloSetup> slo;
  for (const Json& q : j) {
    if (!q.is_object()) return false;
    SloSetup s;
    OtherKeys unknown;
    read_section(
        q,
        {field("label", s.label), field("ttft_ms", s.ttft_ms), field("tpot_ms", s.tpot_ms),
         field("itl_ms", s.itl_ms), field("e2e_ms", s.e2e_ms), field("fraction", s.fraction)},
        unknown);
    if (!unknown.empty()) return false;  // a requirement this kvsweep cannot read: keep it whole
    slo.push_back(std::move(s));
  }
  out = std::move(slo);
  return true;
}

bool read_cost(const Json& j, std::optional<CostSetup>& out) {
  if (!j.is_object()) return false;
  CostSetup cost;
  OtherKeys unknown;
  read_section(j, {field("usd_per_gpu_hour", cost.usd_per_gpu_hour), field("gpus", cost.gpus)},
               unknown);
  if (!unknown.empty()) return false;
  out = cost;
  return true;
}

Json search_json(const SearchSetup& s);

SearchSetup decode_search(const Json& j) {
  SearchSetup s;
  read_section(j,
               {field("factor", s.factor),
                field("low", s.low),
                field("high", s.high),
                field("precision", s.precision),
                field("growth", s.growth),
                field("guide", s.guide),
                field("max_tries", s.max_tries),
                field("min_probe_s", s.min_probe_s),
                field("knee_efficiency", s.knee_efficiency),
                {"slo", [&s](const Json& v) { return read_slo(v, s.slo); }},
                field("confidence", s.confidence),
                {"cost", [&s](const Json& v) { return read_cost(v, s.cost); }},
                field("guide_experiment", s.guide_experiment)},
               s.other);
  s.integer_numbers = integer_numbers(j, search_json(s));
  return s;
}

// {"name": {"levels": {"label": {"path": "value"}}, "phase": "run"}}; anything else is kept
// whole among the setup's other keys.
bool read_factors(const Json& j, std::optional<std::vector<FactorSetup>>& out) {
  if (!j.is_object()) return false;
  std::vector<FactorSetup> factors;
  for (const auto& [name, f] : j.items()) {
    if (!f.is_object() || !f.contains("levels") || !f["levels"].is_object()) return false;
    FactorSetup factor;
    factor.name = name;
    for (const auto& [label, sets] : f["levels"].items()) {
      if (!sets.is_object()) return false;
      FactorLevelSetup level;
      level.label = label;
      for (const auto& [path, value] : sets.items()) {
        if (!value.is_string()) return false;
        level.settings.emplace_back(path, value.get<std::string>());
      }
      factor.levels.push_back(std::move(level));
    }
    if (f.contains("phase") && !read_value(f["phase"], factor.phase)) return false;
    if (f.size() != (f.contains("phase") ? 2u : 1u)) return false;
    factors.push_back(std::move(factor));
  }
  out = std::move(factors);
  return true;
}

// The six thresholds a scenario can set (load.validity); the others keep their defaults.
bool read_validity(const Json& j, std::optional<ValidityRules>& out) {
  if (!j.is_object()) return false;
  ValidityRules rules;
  OtherKeys unknown;
  read_section(
      j,
      {field("max_send_shortfall", rules.max_send_shortfall),
       field("max_send_delay_p99_ms", rules.max_send_delay_p99_ms),
       field("min_in_flight_fraction", rules.min_in_flight_fraction),
       field("backlog_grace_ms", rules.backlog_grace_ms), field("trend_alpha", rules.trend_alpha),
       field("min_ttft_rise_per_10s", rules.min_ttft_rise_per_10s)},
      unknown);
  if (!unknown.empty()) return false;
  out = rules;
  return true;
}

Json search_json(const SearchSetup& s) {
  Json j = Json::object();
  put(j, "factor", s.factor);
  put(j, "low", s.low);
  put(j, "high", s.high);
  put(j, "precision", s.precision);
  put(j, "growth", s.growth);
  put(j, "guide", s.guide);
  put(j, "max_tries", s.max_tries);
  put(j, "min_probe_s", s.min_probe_s);
  put(j, "knee_efficiency", s.knee_efficiency);
  if (s.slo) {
    Json slo = Json::array();
    for (const SloSetup& q : *s.slo) {
      Json r;
      r["label"] = q.label;
      put(r, "ttft_ms", q.ttft_ms);
      put(r, "tpot_ms", q.tpot_ms);
      put(r, "itl_ms", q.itl_ms);
      put(r, "e2e_ms", q.e2e_ms);
      put(r, "fraction", q.fraction);
      slo.push_back(std::move(r));
    }
    j["slo"] = std::move(slo);
  }
  put(j, "confidence", s.confidence);
  if (s.cost) j["cost"] = {{"usd_per_gpu_hour", s.cost->usd_per_gpu_hour}, {"gpus", s.cost->gpus}};
  put(j, "guide_experiment", s.guide_experiment);
  put_other(j, s.other);
  put_integers(j, s.integer_numbers);
  return j;
}

Json factors_json(const std::vector<FactorSetup>& factors) {
  Json j = Json::object();
  for (const FactorSetup& f : factors) {
    Json levels = Json::object();
    for (const FactorLevelSetup& level : f.levels) {
      Json sets = Json::object();
      for (const auto& [path, value] : level.settings) sets[path] = value;
      levels[level.label] = std::move(sets);
    }
    Json factor = {{"levels", std::move(levels)}};
    if (!f.phase.empty()) factor["phase"] = f.phase;
    j[f.name] = std::move(factor);
  }
  return j;
}

}  // namespace

ExperimentSetup decode_setup(std::string_view text) {
  ExperimentSetup setup;
  if (text.empty()) return setup;
  const Json j = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) {
    setup.unreadable = std::string(text);
    return setup;
  }
  std::optional<std::vector<std::string>> strategies;  // before arms were named
  read_section(j,
               {{"target",
                 [&setup](const Json& v) {
                   if (!v.is_object()) return false;
                   setup.target = decode_target(v);
                   return true;
                 }},
                field("model", setup.model),
                field("description", setup.description),
                field("seed", setup.seed),
                {"factors", [&setup](const Json& v) { return read_factors(v, setup.factors); }},
                field("arms", setup.arms),
                field("strategies", strategies),
                field("concurrency", setup.concurrency),
                field("repeats", setup.repeats),
                {"load",
                 [&setup](const Json& v) {
                   if (!v.is_object()) return false;
                   setup.load = decode_load(v);
                   return true;
                 }},
                {"search",
                 [&setup](const Json& v) {
                   if (!v.is_object()) return false;
                   setup.search = decode_search(v);
                   return true;
                 }},
                {"validity", [&setup](const Json& v) { return read_validity(v, setup.validity); }},
                // Schema 6 moved the baseline into a column of its own (ExperimentRow::baseline),
                // copying a text value there; `kvsweep load` wrote an empty one after that. Either
                // way the column holds it now.
                {"baseline", [](const Json& v) { return v.is_string(); }}},
               setup.other);
  if (!setup.arms && strategies) setup.arms = std::move(strategies);
  return setup;
}

Json target_json(const TargetSetup& t) {
  Json j = Json::object();
  j["kind"] = t.kind;
  put(j, "replicas", t.replicas);
  put(j, "profile", t.profile);
  put(j, "description", t.description);
  put(j, "stands_in_for", t.stands_in_for);
  put(j, "url", t.url);
  put_other(j, t.other);
  return j;
}

Json load_json(const LoadSetup& l) {
  Json j = Json::object();
  put(j, "shape", l.shape);
  if (l.request_rate) {
    j["request_rate"] = std::isinf(*l.request_rate) ? Json("inf") : Json(*l.request_rate);
  }
  put(j, "burstiness", l.burstiness);
  put(j, "max_concurrency", l.max_concurrency);
  put(j, "concurrency", l.concurrency);
  put(j, "turns", l.turns);
  put(j, "think_time_s", l.think_time_s);
  put(j, "dataset", l.dataset);
  if (l.prefix_regime) j["prefix_regime"] = regime_json(*l.prefix_regime);
  put(j, "endpoint", l.endpoint);
  put(j, "new_connection_per_request", l.new_connection_per_request);
  put(j, "stream", l.stream);
  put(j, "max_tokens", l.max_tokens);
  put(j, "num_requests", l.num_requests);
  put(j, "duration_s", l.duration_s);
  put(j, "warmup_requests", l.warmup_requests);
  put(j, "cache", l.cache);
  put(j, "warm_passes", l.warm_passes);
  put(j, "timeout_s", l.timeout_s);
  put(j, "connections", l.connections);
  put(j, "threads", l.threads);
  put(j, "percentile_metrics", l.percentile_metrics);
  put(j, "metric_percentiles", l.metric_percentiles);
  put(j, "header_names", l.header_names);
  put_other(j, l.other);
  put_integers(j, l.integer_numbers);
  return j;
}

std::string encode_setup(const ExperimentSetup& s) {
  if (!s.unreadable.empty()) return s.unreadable;
  Json j = Json::object();
  if (s.target) j["target"] = target_json(*s.target);
  put(j, "model", s.model);
  put(j, "description", s.description);
  put(j, "seed", s.seed);
  if (s.factors) j["factors"] = factors_json(*s.factors);
  put(j, "arms", s.arms);
  put(j, "concurrency", s.concurrency);
  put(j, "repeats", s.repeats);
  if (s.load) j["load"] = load_json(*s.load);
  if (s.search) j["search"] = search_json(*s.search);
  if (s.validity) {
    const ValidityRules& v = *s.validity;
    j["validity"] = {{"max_send_shortfall", v.max_send_shortfall},
                     {"max_send_delay_p99_ms", v.max_send_delay_p99_ms},
                     {"min_in_flight_fraction", v.min_in_flight_fraction},
                     {"backlog_grace_ms", v.backlog_grace_ms},
                     {"trend_alpha", v.trend_alpha},
                     {"min_ttft_rise_per_10s", v.min_ttft_rise_per_10s}};
  }
  put_other(j, s.other);
  return j.dump();
}

std::optional<std::string> CellFactors::level_of(std::string_view factor) const {
  for (const auto& [name, label] : levels) {
    if (name != factor) continue;
    const Json value = Json::parse(label, nullptr, /*allow_exceptions=*/false);
    return value.is_string() ? value.get<std::string>() : label;
  }
  return std::nullopt;
}

CellFactors decode_factors(std::string_view text) {
  CellFactors factors;
  if (text.empty()) return factors;
  const Json j = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) {
    factors.unreadable = std::string(text);
    return factors;
  }
  for (const auto& [name, value] : j.items()) factors.levels.emplace_back(name, value.dump());
  return factors;
}

Json factors_object(const CellFactors& factors) {
  Json j = Json::object();
  put_other(j, factors.levels);
  return j;
}

std::string encode_factors(const CellFactors& factors) {
  if (!factors.unreadable.empty()) return factors.unreadable;
  return factors_object(factors).dump();
}

}  // namespace kvsweep::store
