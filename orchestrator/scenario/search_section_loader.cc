// Reads a scenario's `slo:` and `search:` sections and `target.cost` (common/search_spec.h), and
// the rules between them and the factors: the search chooses one factor's levels itself, so the
// loader gives that factor the one level `low` for the plan to expand.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <optional>

#include "driver/load_options.h"
#include "orchestrator/scenario/scenario_reads.h"

namespace kvsweep::orchestrator {
namespace {

const std::vector<std::string>& slo_metrics() {
  static const std::vector<std::string> metrics = {"ttft", "tpot", "itl", "e2e"};
  return metrics;
}

std::optional<double>* threshold(SloRequirement& r, const std::string& metric) {
  if (metric == "ttft") return &r.ttft_ms;
  if (metric == "tpot") return &r.tpot_ms;
  if (metric == "itl") return &r.itl_ms;
  return &r.e2e_ms;
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }

bool search_ends_with(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() &&
         text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// "12" or "99.9": digits, at most one '.', a digit on each side of it.
bool plain_decimal(const std::string& text) {
  const std::size_t dot = text.find('.');
  const auto digits = [&](std::size_t from, std::size_t to) {
    if (from >= to) return false;
    for (std::size_t i = from; i < to; ++i) {
      if (!is_digit(text[i])) return false;
    }
    return true;
  };
  if (dot == std::string::npos) return digits(0, text.size());
  return digits(0, dot) && digits(dot + 1, text.size());
}

// The fraction and metric of a key `pNN_<metric>_ms`, or the reason it is not one.
struct PercentileKey {
  double fraction = 0;
  std::string metric;
  std::string problem;
};

PercentileKey parse_percentile_key(const std::string& key) {
  PercentileKey out;
  const std::size_t underscore = key.find('_');
  if (underscore == std::string::npos || !search_ends_with(key, "_ms") ||
      key.size() < underscore + 5) {
    out.problem =
        "expected pNN_<metric>_ms (p95_ttft_ms: 1000: 95% of requests see TTFT <= 1000 ms)";
    return out;
  }
  const std::string number = key.substr(1, underscore - 1);
  const double percentile = plain_decimal(number) ? std::strtod(number.c_str(), nullptr) : 0;
  if (!(percentile > 0 && percentile <= 100)) {
    out.problem = "the percentile " + number + " is not a number in (0, 100] (p95, p99.9)";
    return out;
  }
  out.metric = key.substr(underscore + 1, key.size() - underscore - 4);
  if (std::find(slo_metrics().begin(), slo_metrics().end(), out.metric) == slo_metrics().end()) {
    out.problem = "unknown metric " + out.metric;
    if (auto s = closest_word(out.metric, slo_metrics())) {
      out.problem += "; did you mean '" + *s + "'?";
    } else {
      out.problem += " (expected one of: " + join(slo_metrics()) + ")";
    }
    return out;
  }
  out.fraction = percentile / 100;
  return out;
}

// `good: {ttft_ms, tpot_ms, e2e_ms}`: one requirement of every threshold at once. nullopt when
// it gives none (said here) or one was refused (said by its reader).
std::optional<SloRequirement> read_good(YamlMapReader& slo, YamlErrors& sink) {
  const YAML::Node node = slo.mapping("good");
  if (!node.IsDefined()) return std::nullopt;
  YamlMapReader good(node, slo.path_of("good"), sink, slo.marks());
  SloRequirement r;
  bool refused = false;
  for (const std::string metric : {"ttft", "tpot", "e2e"}) {
    const std::string key = metric + "_ms";
    if (!node[key].IsDefined()) {
      good.get(key);  // what good accepts, for finish()'s suggestions
      continue;
    }
    double ms = 0;
    good.read_double(key, &ms, 0, false, "a threshold in ms > 0", kMaxMs);
    if (ms > 0) {
      *threshold(r, metric) = ms;
    } else {
      refused = true;
    }
  }
  if (const YAML::Node itl = good.get("itl_ms"); itl.IsDefined()) {
    sink.add(itl.Mark(), good.path_of("itl_ms"),
             "not in good: ITL is per token, not per request; write pNN_itl_ms (p95_itl_ms: 50)");
    refused = true;
  }
  good.finish();
  if (refused) return std::nullopt;
  if (!r.ttft_ms && !r.tpot_ms && !r.e2e_ms) {
    sink.add(node.Mark(), slo.path_of("good"), "give at least one of ttft_ms, tpot_ms, e2e_ms");
    return std::nullopt;
  }
  return r;
}

// `attainment`: a fraction in (0, 1] or a percentage ("95%").
void read_attainment(YamlMapReader& slo, double* out, bool good, YamlErrors& sink) {
  const YAML::Node value = slo.get("attainment");
  if (!value.IsDefined()) return;
  const std::string path = slo.path_of("attainment");
  if (!good) {
    sink.add(value.Mark(), path,
             "only read with good (it is the fraction of requests that meet all of good's "
             "thresholds; a pNN_<metric>_ms key says its own)");
    return;
  }
  std::string text = value.IsScalar() ? value.Scalar() : "";
  const bool percent = search_ends_with(text, "%");
  if (percent) text.pop_back();
  char* end = nullptr;
  const double parsed = text.empty() ? NAN : std::strtod(text.c_str(), &end);
  const double fraction = percent ? parsed / 100 : parsed;
  if (!value.IsScalar() || end == nullptr || *end != '\0' || !(fraction > 0 && fraction <= 1)) {
    sink.add(
        value.Mark(), path,
        "expected a fraction in (0, 1] or a percentage such as 95%, got " + describe_node(value));
    return;
  }
  *out = fraction;
}

// The shortest text that reads back as `value` ("1", "0.5", "2.25").
std::string exact_text(double value) {
  char buffer[64];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, value);
  return std::string(buffer, result.ptr);
}

YAML::Mark search_yaml_mark(const SourceMark& mark) {
  YAML::Mark out;  // 0-based in yaml-cpp
  out.line = mark.line - 1;
  out.column = mark.column - 1;
  return out;
}

SourceMark search_source_mark(const YAML::Node& node) {
  return SourceMark{node.Mark().line + 1, node.Mark().column + 1};
}

// The factor the search varies, with the one level `label` written where `low` was: `kvsweep
// plan` shows the arms at the search's first load, and each level is checked as any other.
FactorSpec searched_factor(const std::string& path, const std::string& label,
                           const YAML::Node& low) {
  FactorSpec factor = value_factor(path, path, {label});
  factor.mark = search_source_mark(low);
  factor.levels.front().mark = factor.mark;
  factor.levels.front().settings.front().mark = factor.mark;
  return factor;
}

// search.factor: load.request_rate: neither a factor nor the load section may set the rate.
bool rate_is_free(const YAML::Node& root, const ScenarioSpec& spec, YamlErrors& sink) {
  bool free = true;
  for (const auto& f : spec.factors) {
    const Setting* first = nullptr;  // said once per factor, at the factor or its first arm
    for (const auto& level : f.levels) {
      for (const auto& s : level.settings) {
        if (s.path == "load.request_rate" && first == nullptr) first = &s;
      }
    }
    if (first == nullptr) continue;
    sink.add(search_yaml_mark(f.path == first->path ? f.mark : first->mark), "factors." + f.name,
             "sets load.request_rate, which the search chooses (search.factor: "
             "load.request_rate); remove it");
    free = false;
  }
  // yaml-cpp throws on asking a missing node's type: IsDefined first (a scenario may have no
  // load section; the load loader reports one that is not a map).
  const YAML::Node load = root["load"];
  if (load.IsDefined() && load.IsMap() && load["request_rate"].IsDefined()) {
    sink.add(load["request_rate"].Mark(), "load.request_rate",
             "the search chooses the rate (search.factor: load.request_rate); remove "
             "load.request_rate");
    free = false;
  }
  return free;
}

// A search of load.request_rate probes three significant digits (capacity_search.cc), 1%
// apart at most: a step below 1% (growth, or 1 + precision, the step once a guess is given and
// when growth rounds back) can round back to the load it left, which the search would then
// probe again and again ("capacity 10 req/s" after thirty probes of 10 req/s).
void check_probe_steps(YamlMapReader& search, const SearchSpec& s, YamlErrors& sink) {
  if (s.factor != "load.request_rate") return;
  const auto refuse = [&](const std::string& key, const std::string& expected) {
    sink.add(search.node()[key].Mark(), search.path_of(key),
             "expected " + expected + ", got " + describe_node(search.node()[key]) +
                 ": rates are probed to three significant digits, so a smaller step can round "
                 "back to the rate it left and probe it again");
  };
  if (search.node()["precision"].IsDefined() && s.precision < kMinStepFraction) {
    refuse("precision", "a precision of at least 0.01 (1%)");
  }
  if (search.node()["growth"].IsDefined() && s.growth > 1 &&
      s.growth < 1 + kMinStepFraction * (1 - 1e-9)) {
    refuse("growth", "a growth of at least 1.01");
  }
}

}  // namespace

void read_slo(YamlMapReader& slo, ScenarioSpec& spec, YamlErrors& sink) {
  SloSpec& s = spec.slo;
  slo.get("pNN_<metric>_ms");  // never a key: the form, for finish()'s list of what is accepted
  bool written = false;
  std::optional<std::size_t> good_at;
  for (auto it = slo.node().begin(); it != slo.node().end(); ++it) {
    if (!it->first.IsScalar()) continue;  // finish() says it
    const std::string key = it->first.Scalar();
    if (key == "good") {
      written = true;
      if (auto r = read_good(slo, sink)) {
        good_at = s.requirements.size();
        s.requirements.push_back(*r);
      }
      continue;
    }
    const std::string metric = key.size() > 3 ? key.substr(0, key.size() - 3) : "";
    if (search_ends_with(key, "_ms") &&
        std::find(slo_metrics().begin(), slo_metrics().end(), metric) != slo_metrics().end()) {
      slo.get(key);
      sink.add(it->first.Mark(), slo.path_of(key),
               "a threshold needs the share of requests that meet it: p95_" + key +
                   (metric == "itl" ? "" : ", or good: {" + key + ": ...} with attainment"));
      written = true;
      continue;
    }
    if (key.size() < 2 || key[0] != 'p' || !is_digit(key[1])) continue;  // read below or unknown
    written = true;
    const PercentileKey parsed = parse_percentile_key(key);
    if (!parsed.problem.empty()) {
      slo.get(key);
      sink.add(it->first.Mark(), slo.path_of(key), parsed.problem);
      continue;
    }
    double ms = 0;
    slo.read_double(key, &ms, 0, false, "a threshold in ms > 0", kMaxMs);
    if (ms <= 0) continue;
    SloRequirement r;
    *threshold(r, parsed.metric) = ms;
    r.fraction = parsed.fraction;
    s.requirements.push_back(r);
  }
  if (!slo.node()["good"].IsDefined()) slo.get("good");  // what slo accepts, for finish()
  double attainment = SloRequirement{}.fraction;         // 0.95
  read_attainment(slo, &attainment, slo.node()["good"].IsDefined(), sink);
  if (good_at) s.requirements[*good_at].fraction = attainment;
  slo.read_double("confidence", &s.confidence, 0.5, true, "a confidence >= 0.5", 0.999);
  slo.read_int("resamples", &s.resamples, 100, kMaxResamples);
  slo.finish();
  if (!written) {
    sink.add(slo.node().Mark(), "slo",
             "give at least one requirement: pNN_<metric>_ms (p95_ttft_ms: 1000; metric ttft, "
             "tpot, itl or e2e) or good: {ttft_ms, tpot_ms, e2e_ms}");
  }
}

void read_search(YamlMapReader& search, ScenarioSpec& spec, YamlErrors& sink) {
  SearchSpec& s = spec.search;
  search.require("factor");
  search.require("low");
  search.require("high");
  search.read_choice("factor", &s.factor, {"load.request_rate", "concurrency"});
  if (s.factor == "concurrency") {
    // A level of concurrency is a count of users (or requests in flight).
    for (const std::string key : {"low", "high"}) {
      const YAML::Node value = search.get(key);
      if (!value.IsDefined()) continue;
      if (auto n = search.to_int<int>(value, key, 1, driver::kMaxConcurrency)) {
        (key == "low" ? s.low : s.high) = *n;
      }
    }
  } else {
    // From a rate where three significant digits still mean something (1e-310 probed "-nan").
    search.read_double("low", &s.low, kMinRate, true, "a rate in requests/s >= 0.001", kMaxRate);
    search.read_double("high", &s.high, kMinRate, true, "a rate in requests/s >= 0.001", kMaxRate);
  }
  if (s.low > 0 && s.high > 0 && s.high <= s.low) {
    sink.add(search.node()["high"].Mark(), search.path_of("high"),
             "expected a load above low (" + exact_text(s.low) + "), got " +
                 describe_node(search.node()["high"]));
  }
  double precision = s.precision;
  search.read_double("precision", &precision, 0, false, "a fraction > 0 and below 1 (0.1: 10%)");
  if (precision >= 1) {
    sink.add(search.node()["precision"].Mark(), search.path_of("precision"),
             "expected a fraction > 0 and below 1 (0.1: 10%), got " +
                 describe_node(search.node()["precision"]));
  } else {
    s.precision = precision;
  }
  search.read_double("growth", &s.growth, 1, false, "a factor > 1 (2: each probe twice the last)",
                     kMaxGrowth);
  check_probe_steps(search, s, sink);
  std::string guide;
  search.read_choice("guide", &guide, {"predict", "none"});
  if (guide == "predict") s.guide = SearchGuide::kPredict;
  if (guide == "none") s.guide = SearchGuide::kNone;
  double knee = s.knee_efficiency;
  search.read_double("knee_efficiency", &knee, 0, false,
                     "a fraction > 0 and below 1 (0.9: a probe keeps 90% of the lightest "
                     "load's throughput per unit of load)");
  if (knee >= 1) {
    sink.add(search.node()["knee_efficiency"].Mark(), search.path_of("knee_efficiency"),
             "expected a fraction > 0 and below 1, got " +
                 describe_node(search.node()["knee_efficiency"]));
  } else {
    s.knee_efficiency = knee;
  }
  search.read_int("max_tries", &s.max_tries, 1, kMaxTries);
  search.read_int("max_probes", &s.max_probes, 2, kMaxProbes);
  search.read_duration("min_probe", &s.min_probe_s, true, kMaxMinProbeS);
  search.finish();
}

void read_cost(YamlMapReader& target, CostSpec& cost, YamlErrors& sink) {
  const YAML::Node node = target.mapping("cost");
  if (!node.IsDefined()) return;
  YamlMapReader fields(node, target.path_of("cost"), sink, target.marks());
  fields.require("usd_per_gpu_hour");
  fields.require("gpus");
  fields.read_double("usd_per_gpu_hour", &cost.usd_per_gpu_hour, 0, false,
                     "a price in US dollars > 0", kMaxUsdPerGpuHour);
  fields.read_double("gpus", &cost.gpus, 0, false, "a number of GPUs > 0 (the whole fleet's)",
                     kMaxGpus);
  fields.finish();
}

void check_search(const YAML::Node& root, ScenarioSpec& spec, YamlErrors& sink) {
  const YAML::Node search = root["search"];
  if (!search.IsDefined() || !search.IsMap()) return;
  // Without slo the search finds the knee (search.knee_efficiency); with one, the SLO decides.
  if (root["slo"].IsDefined() && search["knee_efficiency"].IsDefined()) {
    sink.add(search["knee_efficiency"].Mark(), "search.knee_efficiency",
             "only for a knee search, without slo: with slo, the SLO decides each probe; remove "
             "one of them");
  }
  if (spec.repeats > 1) {
    // Only factors.repeats sets repeats, so the node is there; the search's mark if ever not.
    const YAML::Node factors = root["factors"];
    const YAML::Node repeats =
        factors.IsDefined() && factors.IsMap() ? factors["repeats"] : YAML::Node();
    sink.add(repeats.IsDefined() ? repeats.Mark() : search.Mark(), "factors.repeats",
             "not with search: a probe's repeats are the search's own tries (search.max_tries); "
             "remove repeats");
  }
  const SearchSpec& s = spec.search;
  const YAML::Node low = search["low"];
  if (s.factor == "concurrency") {
    if (const FactorSpec* written = spec.factor("concurrency")) {
      sink.add(search_yaml_mark(written->mark), "factors.concurrency",
               "the search chooses concurrency's levels; remove factors.concurrency");
    } else if (s.low >= 1) {
      spec.factors.push_back(
          searched_factor("concurrency", std::to_string(static_cast<int>(s.low)), low));
    }
  } else if (s.factor == "load.request_rate") {
    if (rate_is_free(root, spec, sink) && s.low > 0) {
      spec.factors.push_back(searched_factor("load.request_rate", exact_text(s.low), low));
    }
  }
}

}  // namespace kvsweep::orchestrator
