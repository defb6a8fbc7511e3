// Per-cell exports: vLLM result JSON and llm-d Benchmark Report v0.2.
#include "reports/cell_exports.h"

#include <cctype>
#include <cstdio>
#include <stdexcept>

#include "common/stats.h"
#include "reports/vllm_result.h"

namespace kvsweep::reports {
namespace {

using Json = nlohmann::ordered_json;

// BR v0.2 Statistics: units plus mean, min, percentiles p0.1 ... p99.9 and max.
Json statistics(const std::vector<double>& sorted, const std::string& units) {
  Json s;
  s["units"] = units;
  if (sorted.empty()) {
    for (const char* k : {"mean", "min", "p0p1", "p1", "p5", "p10", "p25", "p50", "p75", "p90",
                          "p95", "p99", "p99p9", "max"}) {
      s[k] = nullptr;
    }
    return s;
  }
  double sum = 0;
  for (double v : sorted) sum += v;
  s["mean"] = sum / static_cast<double>(sorted.size());
  s["min"] = sorted.front();
  const std::pair<const char*, double> kPercentiles[] = {
      {"p0p1", 0.1}, {"p1", 1},   {"p5", 5},   {"p10", 10}, {"p25", 25}, {"p50", 50},
      {"p75", 75},   {"p90", 90}, {"p95", 95}, {"p99", 99}, {"p99p9", 99.9}};
  for (const auto& [key, p] : kPercentiles) s[key] = percentile(sorted, p);
  s["max"] = sorted.back();
  return s;
}

Json setup_of(const store::ExperimentRow& e) {
  const Json setup = Json::parse(e.setup_json, nullptr, false);
  return setup.is_object() ? setup : Json::object();
}

std::string cell_stem(const store::CellRow& c) {
  std::string strategy;
  for (char ch : c.strategy) strategy += std::isalnum(static_cast<unsigned char>(ch)) || ch == '-' ? ch : '_';
  char ordinal[16];
  std::snprintf(ordinal, sizeof ordinal, "%03d", c.ordinal + 1);
  return std::string("cell-") + ordinal + "-" + strategy + "-c" + std::to_string(c.concurrency) +
         "-r" + std::to_string(c.repeat + 1);
}

// "2026-11-22T04:30:00Z" -> "20261122-043000", vLLM's date format.
std::string vllm_date(const std::string& iso) {
  std::string digits;
  for (char c : iso) {
    if (std::isdigit(static_cast<unsigned char>(c))) digits += c;
  }
  if (digits.size() < 14) return iso;
  return digits.substr(0, 8) + "-" + digits.substr(8, 6);
}

}  // namespace

Json llmd_benchmark_report(const store::ExperimentRow& e, const store::CellRow& c,
                           const CellMetrics& m) {
  const Json setup = setup_of(e);
  const Json target = setup.value("target", Json::object());
  const std::string model = setup.value("model", std::string());

  Json run;
  run["uid"] = e.scenario_hash + "-" + c.key;
  run["eid"] = std::to_string(e.id);
  run["cid"] = std::to_string(c.id);
  run["pid"] = nullptr;
  run["time"] = {{"start", c.started_at.empty() ? Json(nullptr) : Json(c.started_at)},
                 {"end", c.finished_at.empty() ? Json(nullptr) : Json(c.finished_at)},
                 {"duration", m.window_s}};
  run["user"] = nullptr;
  run["description"] = model + " [" + e.name + "]";
  run["keywords"] = {"kvsweep", c.strategy, "concurrency=" + std::to_string(c.concurrency)};

  Json engine;
  engine["metadata"] = {{"schema_version", "0.2"}, {"label", "model-server"}, {"cfg_id", e.scenario_hash}};
  engine["standardized"] = {
      {"kind", "inference_engine"},
      {"tool", target.value("kind", std::string("unknown"))},
      {"tool_version", e.kvsweep_version},
      {"role", "replica"},
      {"replicas", target.value("replicas", 0)},
      {"model", {{"name", model}}},
      {"accelerator", {{"model", target.value("profile", std::string())}, {"count", nullptr},
                       {"parallelism", {{"tp", nullptr}, {"dp", nullptr}, {"pp", nullptr}, {"ep", nullptr}}}}}};
  engine["native"] = {{"args", Json::object()}, {"envars", Json::object()}, {"config", target}};
  Json router;
  router["metadata"] = {{"schema_version", "0.2"}, {"label", "router"}, {"cfg_id", e.scenario_hash}};
  router["standardized"] = {{"kind", "generic"}, {"tool", "kvsweep-router"},
                            {"tool_version", e.kvsweep_version}, {"role", "router"},
                            {"replicas", 1}};
  router["native"] = {{"args", Json::object()}, {"envars", Json::object()},
                      {"config", {{"strategy", c.strategy}}}};

  Json load;
  load["metadata"] = {{"schema_version", "0.2"}, {"label", "kvsweep"}, {"cfg_id", e.scenario_hash}};
  load["standardized"] = {{"tool", "kvsweep"}, {"tool_version", e.kvsweep_version},
                          {"stage", 0}, {"input_seq_len", nullptr}, {"output_seq_len", nullptr},
                          {"prefix", nullptr}, {"multi_turn", nullptr}, {"rate_qps", nullptr},
                          {"concurrency", c.concurrency}};
  load["native"] = {{"args", Json::object()}, {"envars", Json::object()},
                    {"config", setup.value("load", Json::object())}};

  // Not kept per request by CellMetrics: stays empty (all nulls) until it is.
  const std::vector<double> normalized;
  Json aggregate;
  aggregate["requests"] = {{"total", m.ok + m.failed}, {"failures", m.failed},
                           {"input_length", nullptr}, {"output_length", nullptr}};
  aggregate["throughput"] = {
      {"input_token_rate", m.window_s > 0 && m.prompt_tokens
                               ? Json(double(*m.prompt_tokens) / m.window_s)
                               : Json(nullptr)},
      {"output_token_rate", m.output_throughput},
      {"total_token_rate",
       m.total_token_throughput ? Json(*m.total_token_throughput) : Json(nullptr)},
      {"request_rate", m.request_throughput}};
  aggregate["latency"] = {
      {"time_to_first_token", statistics(m.samples.ttft_ms, "ms")},
      {"inter_token_latency", statistics(m.samples.itl_ms, "ms")},
      {"time_per_output_token", statistics(m.samples.tpot_ms, "ms/token")},
      {"normalized_time_per_output_token", statistics(normalized, "ms/token")},
      {"request_latency", statistics(m.samples.e2e_ms, "ms")}};

  Json doc;
  doc["version"] = "0.2";
  doc["run"] = run;
  doc["scenario"] = {{"stack", Json::array({engine, router})}, {"load", load}};
  doc["results"] = {{"request_performance", {{"aggregate", aggregate}}}};
  return doc;
}

std::vector<ExportFile> cell_exports(const store::Store& store, std::int64_t experiment_id) {
  const auto e = store.experiment(experiment_id);
  if (!e) throw std::runtime_error(store.path() + ": no experiment with id " + std::to_string(experiment_id));
  const Json setup = setup_of(*e);
  std::vector<ExportFile> files;
  for (const auto& cell : store.cells(experiment_id)) {
    if (cell.status != "done") continue;
    const CellMetrics m = compute_cell_metrics(store.requests(cell.id), store.metric_samples(cell.id));
    VllmRunInfo info;
    info.date = vllm_date(cell.started_at.empty() ? e->started_at : cell.started_at);
    info.endpoint_type = "openai-chat";
    info.label = cell.strategy;
    info.model_id = setup.value("model", std::string());
    info.num_prompts = m.ok + m.failed;
    info.max_concurrency = cell.concurrency;
    const std::string stem = cell_stem(cell);
    files.push_back({stem + ".vllm.json", vllm_result_json(m, info).dump(2) + "\n"});
    files.push_back({stem + ".llmd-br-v0.2.json", llmd_benchmark_report(*e, cell, m).dump(2) + "\n"});
  }
  return files;
}

}  // namespace kvsweep::reports
