// A cell's figures as one serialized record (JSON), and its latency distributions.
#include "figures/cell_summary.h"

#include <algorithm>
#include <stdexcept>

#include "common/error_kinds.h"
#include "figures/summary_json.h"
#include "figures/summary_parts.h"

namespace kvsweep::figures {
namespace {

// Aliases, not using-declarations: this file is compiled with others in one unity unit.
using SummaryJson = summary_json::Json;
using SummaryReader = summary_json::Reader;

SummaryJson metrics_json(const CellMetrics& m) {
  SummaryJson failures = SummaryJson::object();
  for (const auto& [kind, n] : m.failed_by_kind) failures[kind] = n;
  SummaryJson first = SummaryJson::object();
  for (const auto& [kind, f] : m.first_failure_by_kind) {
    first[kind] = {{"http_status", f.http_status}, {"error", f.error}};
  }
  const SummaryJson j = {
      {"format", kSummaryFormat},
      {"ok", m.ok},
      {"failed", m.failed},
      {"failed_by_kind", failures},
      {"first_failure_by_kind", first},
      {"ttft_ms", summary_json::summary(m.ttft_ms)},
      {"tpot_ms", summary_json::summary(m.tpot_ms)},
      {"itl_ms", summary_json::summary(m.itl_ms)},
      {"e2e_ms", summary_json::summary(m.e2e_ms)},
      {"schedule_lag_ms", summary_json::summary(m.schedule_lag_ms)},
      {"e2e_from_schedule_ms", summary_json::summary(m.e2e_from_schedule_ms)},
      {"window_s", summary_json::number(m.window_s)},
      {"request_throughput", summary_json::number(m.request_throughput)},
      {"output_throughput", summary_json::number(m.output_throughput)},
      {"total_token_throughput", summary_json::optional_number(m.total_token_throughput)},
      {"prompt_tokens", m.prompt_tokens ? SummaryJson(*m.prompt_tokens) : SummaryJson(nullptr)},
      {"prompt_tokens_unknown", m.prompt_tokens_unknown},
      {"output_tokens", m.output_tokens},
      {"output_tokens_estimated", m.output_tokens_estimated},
      {"max_output_tokens_per_s", summary_json::number(m.max_output_tokens_per_s)},
      {"max_concurrent_requests", m.max_concurrent_requests},
      {"kv_hit_rate_server", summary_json::optional_number(m.kv_hit_rate_server)},
      {"cache_hit_client", summary_json::optional_number(m.cache_hit_client)},
      {"kv_usage_max", summary_json::optional_number(m.kv_usage_max)},
      {"preemptions", m.preemptions ? SummaryJson(*m.preemptions) : SummaryJson(nullptr)},
      {"spec_decode_acceptance", summary_json::optional_number(m.spec_decode_acceptance)},
      {"epp_prefix_hit_ratio", summary_json::optional_number(m.epp_prefix_hit_ratio)},
      {"epp_scheduling_ms", summary_json::optional_number(m.epp_scheduling_ms)},
      {"good_requests", m.good_requests ? SummaryJson(*m.good_requests) : SummaryJson(nullptr)},
      {"goodput", summary_json::optional_number(m.goodput)},
      {"prompt_sends_max", m.prompt_sends_max},
      {"repeated_requests", m.repeated_requests},
      {"validity", validity_to_summary(m.validity)},
  };
  return j;
}

SummaryJson parse_object(const std::string& text) {
  SummaryJson j = SummaryJson::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) throw CorruptData("cell summary: not a JSON object");
  return j;
}

CellMetrics read_metrics(const SummaryReader& r) {
  int format = 0;
  r.read_int("format", format);
  if (format > kSummaryFormat) {
    throw CorruptData("cell summary: format " + std::to_string(format) +
                      ", written by a newer kvsweep (this one reads up to " +
                      std::to_string(kSummaryFormat) + ")");
  }
  CellMetrics m;
  r.read_int("ok", m.ok);
  r.read_int("failed", m.failed);
  if (const SummaryJson* failures = r.find("failed_by_kind")) {
    if (!failures->is_object()) r.fail("failed_by_kind", "an object");
    for (const auto& [kind, n] : failures->items()) {
      if (!n.is_number_integer()) r.fail("failed_by_kind", "an object of integers");
      m.failed_by_kind[kind] = n.get<std::int64_t>();
    }
  }
  if (const SummaryJson* first = r.find("first_failure_by_kind")) {
    if (!first->is_object()) r.fail("first_failure_by_kind", "an object");
    for (const auto& [kind, f] : first->items()) {
      if (!f.is_object()) r.fail("first_failure_by_kind", "an object of objects");
      const SummaryReader inner(f, "first_failure_by_kind." + kind + ".");
      FirstFailure failure;
      inner.read_int("http_status", failure.http_status);
      if (const SummaryJson* error = inner.find("error")) {
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
  r.read("epp_prefix_hit_ratio", m.epp_prefix_hit_ratio);
  r.read("epp_scheduling_ms", m.epp_scheduling_ms);
  r.read_int("good_requests", m.good_requests);
  r.read("goodput", m.goodput);
  r.read_int("prompt_sends_max", m.prompt_sends_max);
  r.read_int("repeated_requests", m.repeated_requests);
  if (const SummaryJson* validity = r.object("validity")) {
    validity_from_summary(r.inner("validity", *validity), m.validity);
  }
  return m;
}

void put_part(std::string& out, const std::string& bytes) {
  const auto n = static_cast<std::uint32_t>(bytes.size());
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((n >> (8 * i)) & 0xff));
  out += bytes;
}

std::string get_part(const std::string& in, std::size_t& at) {
  if (in.size() - at < 4) throw CorruptData("cell summary: distributions cut short");
  std::uint32_t n = 0;
  for (int i = 0; i < 4; ++i) n |= std::uint32_t(static_cast<unsigned char>(in[at + i])) << (8 * i);
  at += 4;
  if (in.size() - at < n) throw CorruptData("cell summary: distributions cut short");
  std::string part = in.substr(at, n);
  at += n;
  return part;
}

}  // namespace

std::string metrics_to_summary(const CellMetrics& m) { return metrics_json(m).dump(); }

CellMetrics metrics_from_summary(const std::string& text) {
  const SummaryJson j = parse_object(text);
  return read_metrics(SummaryReader(j, ""));
}

std::string distributions_to_bytes(const CellDistributions& d) {
  std::string out;
  for (const LatencyHistogram* h : {&d.ttft_ms, &d.tpot_ms, &d.itl_ms, &d.e2e_ms}) {
    put_part(out, h->to_bytes());
  }
  return out;
}

CellDistributions distributions_from_bytes(const std::string& bytes) {
  CellDistributions d;
  std::size_t at = 0;
  for (LatencyHistogram* h : {&d.ttft_ms, &d.tpot_ms, &d.itl_ms, &d.e2e_ms}) {
    *h = LatencyHistogram::from_bytes(get_part(bytes, at));
  }
  if (at != bytes.size()) throw CorruptData("cell summary: distributions run on");
  return d;
}

CellSummary summarize_cell(const std::vector<store::RequestRow>& requests,
                           const std::vector<store::MetricSample>& samples,
                           const std::optional<store::CellLoadRow>& load,
                           const ValidityRules& rules) {
  CellSummary summary;
  summary.metrics = compute_cell_metrics(requests, samples, {}, load, rules);
  summary.distributions = distributions_of(summary.metrics.samples);
  summary.metrics.samples = {};
  summary.replicas = replica_breakdown(requests, samples);
  summary.sample = sample_requests(requests);
  return summary;
}

store::CellSummaryRow summary_row(std::int64_t cell_id, const CellSummary& summary) {
  SummaryJson figures = metrics_json(summary.metrics);
  figures["replicas"] = replicas_to_summary(summary.replicas);
  store::CellSummaryRow row;
  row.cell_id = cell_id;
  row.format = kSummaryFormat;
  row.figures = figures.dump();
  row.distributions = distributions_to_bytes(summary.distributions);
  row.sample = sample_to_bytes(summary.sample);
  return row;
}

CellSummary summary_from_row(const store::CellSummaryRow& row, SummaryDetail detail) {
  const SummaryJson j = parse_object(row.figures);
  const SummaryReader r(j, "");
  CellSummary summary;
  summary.metrics = read_metrics(r);
  summary.replicas = replicas_from_summary(r, "replicas");
  if (detail == SummaryDetail::kFigures) return summary;
  summary.distributions = distributions_from_bytes(row.distributions);
  summary.sample = sample_from_bytes(row.sample);
  // The TTFT CDF the HTML report and serve's cell page draw: 1,000 points are less than a
  // pixel apart on any chart.
  summary.metrics.samples.ttft_ms = summary.distributions.ttft_ms.values_at_even_ranks(1000);
  return summary;
}

CellSummary stored_summary(const store::ExperimentRow& experiment, const store::CellRow& cell,
                           const store::CellSummaryRow& row, SummaryDetail detail) {
  try {
    return summary_from_row(row, detail);
  } catch (const std::exception& e) {
    const std::string id = std::to_string(experiment.id);
    throw CorruptSummary(
        "experiment " + id + " " + experiment.name + ", cell " + std::to_string(cell.ordinal + 1) +
        " (" + cell.arm + ", concurrency " + std::to_string(cell.concurrency) + ", repeat " +
        std::to_string(cell.repeat + 1) + "): its stored summary cannot be read: " + e.what() +
        "; `kvsweep report " + id + " --exact` computes its figures from the raw rows");
  }
}

CellDistributions distributions_of(const SortedSamples& samples) {
  CellDistributions d;
  for (const double v : samples.ttft_ms) d.ttft_ms.add(v);
  for (const double v : samples.tpot_ms) d.tpot_ms.add(v);
  for (const double v : samples.itl_ms) d.itl_ms.add(v);
  for (const double v : samples.e2e_ms) d.e2e_ms.add(v);
  return d;
}

}  // namespace kvsweep::figures
