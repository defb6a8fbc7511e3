// An experiment's setup: what ran it (target, model, factors, load, search, verdict rules),
// typed. The store keeps it as JSON in experiments.setup_json; this header and
// experiment_setup.cc are the only code that knows that JSON's keys. Every reader takes the
// decoded struct from ExperimentRow::setup, decoded once when the row is read.
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/validity_rules.h"

namespace kvsweep::store {

// Keys an older or newer kvsweep wrote that this one does not know, or known keys whose value
// has another type than this one writes: kept in the order stored, each value as JSON text,
// so a rewrite loses nothing and the report still shows them.
using OtherKeys = std::vector<std::pair<std::string, std::string>>;

// What served the cells. Optional fields are absent when the writer left them out (a `kvsweep
// load` endpoint has only kind and url), and stay absent when the setup is written again.
struct TargetSetup {
  std::string kind;  // "sim", "predict", "kubeai", "llmd", "replicas", "endpoint", ...
  std::optional<int> replicas;
  std::optional<std::string> profile;      // the simulated fleet's profile; "" for a cluster
  std::optional<std::string> description;  // Target::describe()
  // A cluster scenario run on the embedded fleet (`run --target sim`): the kind it stands in for.
  std::optional<std::string> stands_in_for;
  std::optional<std::string> url;  // `kvsweep load`: the endpoint's base URL
  OtherKeys other;
  bool operator==(const TargetSetup&) const = default;
};

struct FactorLevelSetup {
  std::string label;
  std::vector<std::pair<std::string, std::string>> settings;  // path -> value as written
  bool operator==(const FactorLevelSetup&) const = default;
};

struct FactorSetup {
  std::string name;
  std::vector<FactorLevelSetup> levels;
  std::string phase;  // "deploy" or "run"
  bool operator==(const FactorSetup&) const = default;
};

// The load section, as a reader scans it; each field in the order it is written. A sweep
// describes its loop in `shape` and its endpoint as "chat, streaming"; `kvsweep load` writes
// the rate, cap and users as numbers and streaming on its own.
struct LoadSetup {
  std::optional<std::string> shape;    // "closed loop, one request in flight per user", ...
  std::optional<double> request_rate;  // req/s; infinity is written "inf", as vLLM's client
  std::optional<double> burstiness;
  std::optional<int> max_concurrency;
  std::optional<int> concurrency;
  std::optional<std::string> turns;  // "sequential" or "independent"
  std::optional<double> think_time_s;
  std::optional<std::string> dataset;  // the workload's description, "sharegpt: 800 ..."
  // Seed 004's regime: the shared prefix's tokens ("1024"), as text; written as a number when
  // it is one.
  std::optional<std::string> prefix_regime;
  std::optional<std::string> endpoint;  // "completions", "chat, streaming", ...
  std::optional<bool> new_connection_per_request;
  std::optional<bool> stream;
  std::optional<int> max_tokens;
  std::optional<std::int64_t> num_requests;
  std::optional<double> duration_s;
  std::optional<int> warmup_requests;
  std::optional<std::string> cache;  // cache policy name
  std::optional<int> warm_passes;
  std::optional<double> timeout_s;
  std::optional<std::string> connections;  // "one per request"
  std::optional<int> threads;
  // `kvsweep load --percentile-metrics/--metric-percentiles`, so `export` writes the same keys.
  std::optional<std::vector<std::string>> percentile_metrics;
  std::optional<std::vector<double>> metric_percentiles;
  std::optional<std::vector<std::string>> header_names;  // names only, never values
  OtherKeys other;
  // The number fields an older writer stored as integers ("request_rate": 800): written back
  // the same way, so a report shows "800" where it did. A new run leaves it empty.
  std::vector<std::string> integer_numbers;
  bool operator==(const LoadSetup&) const = default;
};

// One SLO requirement of a search: its label, the thresholds it sets, the fraction to meet.
struct SloSetup {
  std::string label;
  std::optional<double> ttft_ms;
  std::optional<double> tpot_ms;
  std::optional<double> itl_ms;
  std::optional<double> e2e_ms;
  std::optional<double> fraction;
  bool operator==(const SloSetup&) const = default;
};

struct CostSetup {
  double usd_per_gpu_hour = 0;
  double gpus = 0;
  bool operator==(const CostSetup&) const = default;
};

// The capacity search (scenario key `search`), as the searching run saw it.
struct SearchSetup {
  std::optional<std::string> factor;  // "concurrency" or "load.request_rate"
  std::optional<double> low;
  std::optional<double> high;
  std::optional<double> precision;
  std::optional<double> growth;
  std::optional<std::string> guide;  // "none" or "predict"
  std::optional<int> max_tries;
  std::optional<double> min_probe_s;
  std::optional<double> knee_efficiency;  // only without an SLO
  std::optional<std::vector<SloSetup>> slo;
  std::optional<double> confidence;
  std::optional<CostSetup> cost;
  std::optional<std::int64_t> guide_experiment;  // the predicted search that guided it
  OtherKeys other;
  std::vector<std::string> integer_numbers;  // as LoadSetup's
  bool operator==(const SearchSetup&) const = default;
};

struct ExperimentSetup {
  std::optional<TargetSetup> target;
  std::optional<std::string> model;
  std::optional<std::string> description;
  std::optional<std::uint64_t> seed;
  std::optional<std::vector<FactorSetup>> factors;
  // The arms compared, in plan order. Setups before arms were named wrote them as
  // "strategies"; the decoder reads either.
  std::optional<std::vector<std::string>> arms;
  std::optional<std::vector<int>> concurrency;
  std::optional<int> repeats;
  std::optional<LoadSetup> load;
  std::optional<SearchSetup> search;
  // The verdicts' thresholds, when the scenario changed any: the six a scenario can set are
  // written; without the key, reports judge by the defaults.
  std::optional<ValidityRules> validity;
  OtherKeys other;
  // The stored text when it was not a JSON object: kept as it was, shown as unreadable.
  std::string unreadable;
  bool operator==(const ExperimentSetup&) const = default;

  // The verdict rules the run's cells are judged by.
  ValidityRules validity_rules() const { return validity.value_or(ValidityRules{}); }
  // "predict", "sim", ... or "" when the setup names no target.
  std::string target_kind() const { return target ? target->kind : ""; }
};

// Reads every shape a kvsweep stored: "" and "{}" are an empty setup; text that is not a JSON
// object is kept in `unreadable`. Never throws: a report of a damaged row still renders.
ExperimentSetup decode_setup(std::string_view json);

// The JSON the store keeps: keys in the order above, each section's unknown keys after its
// own. decode_setup(encode_setup(s)) == s.
std::string encode_setup(const ExperimentSetup& setup);

// A section as the store writes it, for outputs that carry it whole (the llm-d Benchmark
// Report's native config) or list its keys (the report's setup lines).
nlohmann::ordered_json target_json(const TargetSetup& target);
nlohmann::ordered_json load_json(const LoadSetup& load);

// A cell's factor levels (cells.factors_json): factor name -> level label, in the order the
// plan wrote them. A level's label is JSON text (8, "random"), as the plan wrote it.
struct CellFactors {
  std::vector<std::pair<std::string, std::string>> levels;  // name -> label as JSON text
  std::string unreadable;  // the stored text when it was not a JSON object
  bool operator==(const CellFactors&) const = default;

  // The level of `factor` as text ("random", "8"), or nullopt when the cell has none.
  std::optional<std::string> level_of(std::string_view factor) const;
};

CellFactors decode_factors(std::string_view json);
std::string encode_factors(const CellFactors& factors);
// The levels as a JSON object (name -> label), for outputs that carry them whole.
nlohmann::ordered_json factors_object(const CellFactors& factors);

}  // namespace kvsweep::store
