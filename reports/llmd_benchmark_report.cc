// A cell as an llm-d Benchmark Report v0.2.1 document: run, scenario (stack, load), results.
#include "reports/llmd_benchmark_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <string>

#include "common/stats.h"
#include "figures/report_model.h"
#include "figures/validity_json.h"
#include "reports/llmd_time_series.h"

namespace kvsweep::reports {
namespace {

using Json = nlohmann::ordered_json;

// What kvsweep does not know about a model server it did not start (a cluster's engine); the
// schema requires a value, so it says "unknown" rather than guess.
constexpr const char* kUnknown = "unknown";

// BR v0.2 Statistics over a sample: units, mean, stddev, min, p0.1 ... p99.9, max. nullopt for
// an empty sample: the report leaves the statistic out, as mean is required.
std::optional<Json> statistics(std::vector<double> samples, const char* units) {
  if (samples.empty()) return std::nullopt;
  std::sort(samples.begin(), samples.end());
  const SampleSummary summary = summarize_sorted(samples);
  Json s;
  s["units"] = units;
  s["mean"] = summary.mean;
  s["stddev"] = summary.std;
  s["min"] = summary.min;
  const std::pair<const char*, double> kPercentiles[] = {
      {"p0p1", 0.1}, {"p1", 1},   {"p5", 5},   {"p10", 10}, {"p25", 25},    {"p50", 50},
      {"p75", 75},   {"p90", 90}, {"p95", 95}, {"p99", 99}, {"p99p9", 99.9}};
  for (const auto& [key, p] : kPercentiles) s[key] = percentile(samples, p);
  s["max"] = summary.max;
  return s;
}

void put(Json& object, const char* key, std::optional<Json> value) {
  if (value) object[key] = std::move(*value);
}

// A whole-cell rate: the report's Statistics with the one figure we have as its mean.
Json rate(double per_s, const char* units) { return {{"units", units}, {"mean", per_s}}; }

// The measured lengths as a BR SequenceLength: "fixed" when every request had the same,
// else "other" with mean, std_dev, min and max. Value 0 when no request succeeded.
Json sequence_length(const std::vector<double>& lengths) {
  if (lengths.empty()) return {{"distribution", "other"}, {"value", 0}};
  const SampleSummary s = summarize(lengths);
  if (s.min == s.max) return {{"distribution", "fixed"}, {"value", s.min}};
  return {{"distribution", "other"},
          {"value", s.mean},
          {"std_dev", s.std},
          {"min", static_cast<std::int64_t>(s.min)},
          {"max", static_cast<std::int64_t>(s.max)}};
}

// How the workload made its prompts (BR load.standardized.source), from the dataset kind that
// starts every workload description ("sharegpt: 800 conversations ...").
const char* load_source(const std::optional<std::string>& dataset) {
  const std::string kind = dataset ? dataset->substr(0, dataset->find(':')) : "";
  // Generated from a fixed vocabulary (docs/datasets.md "Tokens and text").
  if (kind == "synthetic-multiturn" || kind == "shared-prefix" || kind == "mooncake") {
    return "random";
  }
  if (kind == "sharegpt" || kind == "chat-threads" || kind == "jsonl") return "sampled";
  return "unknown";
}

Json metadata(const std::string& label, const std::string& cfg_id) {
  return {{"schema_version", "0.2.1"}, {"label", label}, {"cfg_id", cfg_id}};
}

Json native(const Json& config) {
  return {{"args", Json::object()}, {"envars", Json::object()}, {"config", config}};
}

}  // namespace

std::string iso8601_duration(double seconds) {
  if (!(seconds > 0)) return "PT0S";
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.3f", seconds);
  std::string number = buffer;
  number.erase(number.find_last_not_of('0') + 1);
  if (number.back() == '.') number.pop_back();
  return "PT" + number + "S";
}

namespace {

// Per successful measured request: prompt and output lengths, and e2e / output tokens.
struct MeasuredLengths {
  std::vector<double> prompt;
  std::vector<double> output;
  std::vector<double> normalized_tpot_ms;  // first token included
};

MeasuredLengths measured_lengths(const std::vector<store::RequestRow>& requests) {
  MeasuredLengths lengths;
  for (const auto& r : requests) {
    if (r.warmup || !r.ok) continue;
    if (r.prompt_tokens >= 0) lengths.prompt.push_back(r.prompt_tokens);
    lengths.output.push_back(r.output_tokens);
    if (r.output_tokens > 0 && r.first_token_s >= 0) {
      lengths.normalized_tpot_ms.push_back(r.e2e_ms / r.output_tokens);
    }
  }
  return lengths;
}

Json run_section(const store::ExperimentRow& e, const store::CellRow& c,
                 const figures::CellMetrics& m, const std::string& model) {
  Json run;
  run["uid"] = e.scenario_hash + "-" + c.key;
  run["eid"] = std::to_string(e.id);
  // run.cid is the cluster's id, which kvsweep does not know: left out (the cell is in uid).
  Json time = Json::object();
  if (!c.started_at.empty()) time["start"] = c.started_at;
  if (!c.finished_at.empty()) time["end"] = c.finished_at;
  time["duration"] = iso8601_duration(m.window_s);
  run["time"] = time;
  // A prediction says so in both places a reader of the report looks for what it is.
  const std::string figures = figures::figures_label(e);
  run["description"] = model + " [" + e.name + (figures.empty() ? "" : ", " + figures) + "]";
  run["keywords"] = {"kvsweep", c.arm, "concurrency=" + std::to_string(c.concurrency)};
  if (!figures.empty()) run["keywords"].push_back(figures);

  return run;
}

// The model server, and kvsweep's router in front of it when there is one.
Json stack_section(const store::ExperimentRow& e, const store::CellRow& c,
                   const std::optional<store::TargetSetup>& target, const std::string& model) {
  const std::string target_kind = target ? target->kind : std::string(kUnknown);
  // The embedded fleet, live or predicted: kvsweep's own replicas and router.
  const bool sim = target_kind == "sim" || target_kind == "predict";
  Json engine;
  engine["metadata"] = metadata("model-server", e.scenario_hash);
  const int replicas = target ? target->replicas.value_or(0) : 0;
  const std::string profile = target ? target->profile.value_or("") : "";
  engine["standardized"] = {
      {"kind", "inference_engine"},
      {"tool", target_kind},
      {"tool_version", sim ? e.kvsweep_version : kUnknown},
      {"role", "replica"},
      // An endpoint (kvsweep load) is one server as far as the client can tell.
      {"replicas", std::max(replicas, 1)},
      {"model", {{"name", model}}},
      // kvsweep is not told the hardware: count 0 and parallelism 1 (the schema's defaults)
      // mean "not known"; the simulated fleet uses none. accelerator.model names the sim
      // profile, which says what it stands in for.
      {"accelerator",
       {{"model", profile.empty() ? kUnknown : profile},
        {"count", 0},
        {"parallelism", {{"tp", 1}, {"dp", 1}, {"ep", 1}, {"pp", 1}}}}}};
  engine["native"] = native(target ? store::target_json(*target) : Json::object());
  Json stack = Json::array({engine});
  if (target_kind != "endpoint") {  // kvsweep load has no router of its own to describe
    Json router;
    router["metadata"] = metadata("router", e.scenario_hash);
    router["standardized"] = {{"kind", "generic"},
                              {"tool", sim ? std::string("kvsweep-router") : target_kind},
                              {"tool_version", sim ? e.kvsweep_version : kUnknown}};
    router["native"] = native({{"strategy", c.arm}});
    stack.push_back(router);
  }

  return stack;
}

Json load_section(const store::ExperimentRow& e, const store::CellRow& c,
                  const std::optional<store::LoadSetup>& load_setup, const MeasuredLengths& lengths,
                  const figures::CellMetrics& m) {
  Json load;
  load["metadata"] = {{"schema_version", "0.2.1"}, {"cfg_id", e.scenario_hash}};
  const std::optional<std::string> dataset = load_setup ? load_setup->dataset : std::nullopt;
  if (dataset) load["metadata"]["description"] = *dataset;
  Json standardized = {{"tool", "kvsweep"}, {"tool_version", e.kvsweep_version},
                       {"parallelism", 1},  {"source", load_source(dataset)},
                       {"stage", 0},        {"input_seq_len", sequence_length(lengths.prompt)}};
  // An unbounded rate ("inf") has no figure to give.
  if (const auto rate = load_setup ? load_setup->request_rate : std::nullopt;
      rate && *rate > 0 && std::isfinite(*rate)) {
    standardized["rate_qps"] = *rate;
  }
  if (c.concurrency >= 1) standardized["concurrency"] = c.concurrency;
  load["standardized"] = standardized;
  Json config = load_setup ? store::load_json(*load_setup) : Json::object();
  config["cell"] = cell_metadata(c);
  // Did the cell reach the load it asked for (docs/metrics.md, "Verdicts")? The schema's
  // load.metadata admits no field of ours, so it stands with the cell's own metadata.
  config["cell"]["validity"] = validity_json(m.validity);
  load["native"] = native(config);

  return load;
}

Json aggregate_section(const figures::CellMetrics& m, const MeasuredLengths& lengths) {
  Json requests_json = {{"total", m.ok + m.failed}, {"failures", m.failed}};
  put(requests_json, "input_length", statistics(lengths.prompt, "count"));
  put(requests_json, "output_length", statistics(lengths.output, "count"));
  Json latency = Json::object();
  put(latency, "time_to_first_token", statistics(m.samples.ttft_ms, "ms"));
  put(latency, "normalized_time_per_output_token",
      statistics(lengths.normalized_tpot_ms, "ms/token"));
  put(latency, "time_per_output_token", statistics(m.samples.tpot_ms, "ms/token"));
  put(latency, "inter_token_latency", statistics(m.samples.itl_ms, "ms/token"));
  put(latency, "request_latency", statistics(m.samples.e2e_ms, "ms"));
  Json aggregate;
  aggregate["requests"] = requests_json;
  aggregate["latency"] = latency;
  if (m.window_s > 0) {
    Json throughput = {{"output_token_rate", rate(m.output_throughput, "tokens/s")},
                       {"request_rate", rate(m.request_throughput, "queries/s")}};
    // Unknown prompt counts (the server sent no usage) leave the input and total rates out.
    if (m.prompt_tokens) {
      throughput["input_token_rate"] =
          rate(static_cast<double>(*m.prompt_tokens) / m.window_s, "tokens/s");
    }
    if (m.total_token_throughput) {
      throughput["total_token_rate"] = rate(*m.total_token_throughput, "tokens/s");
    }
    aggregate["throughput"] = throughput;
  }

  return aggregate;
}

}  // namespace

Json cell_metadata(const store::CellRow& c) {
  return {{"treatment", store::factors_object(c.factors)},
          {"treatment_group", c.arm},
          {"repeat", c.repeat}};
}

Json llmd_benchmark_report(const store::ExperimentRow& e, const store::CellRow& c,
                           const figures::CellMetrics& m,
                           const std::vector<store::RequestRow>& requests,
                           const std::vector<store::MetricSample>& samples) {
  const std::string model = e.setup.model.value_or("");
  const MeasuredLengths lengths = measured_lengths(requests);
  Json doc;
  doc["version"] = "0.2.1";
  doc["run"] = run_section(e, c, m, model);
  doc["scenario"] = {{"stack", stack_section(e, c, e.setup.target, model)},
                     {"load", load_section(e, c, e.setup.load, lengths, m)}};
  doc["results"] = {{"request_performance", {{"aggregate", aggregate_section(m, lengths)}}}};
  // The servers' scrapes over time, under the model server's label in scenario.stack.
  Json observability = observability_time_series(samples, c.epoch_wall_s, "model-server");
  if (!observability.empty()) doc["results"]["observability"] = std::move(observability);
  return doc;
}

}  // namespace kvsweep::reports
