// Seed 004's canonical CSV table.
#include "reports/csv_table.h"

#include <nlohmann/json.hpp>

#include "reports/units.h"

namespace kvsweep::reports {
namespace {

std::string prefix_regime(const store::ExperimentRow& experiment) {
  const auto setup = nlohmann::json::parse(experiment.setup_json, nullptr, false);
  if (!setup.is_object()) return "";
  for (const auto* node : {&setup, setup.contains("load") ? &setup["load"] : nullptr}) {
    if (node != nullptr && node->is_object() && node->contains("prefix_regime")) {
      const auto& value = (*node)["prefix_regime"];
      return value.is_string() ? value.get<std::string>() : value.dump();
    }
  }
  return "";
}

std::string seconds(double ms) { return format_fixed(ms / 1000.0, 4); }

std::string notes(const StrategyRow& row, const std::string& figures) {
  std::string text;
  auto add = [&text](const std::string& part) { text += (text.empty() ? "" : "; ") + part; };
  // Every row of a prediction says so: a CSV row travels without its report.
  if (figures == "predicted") add("predicted");
  if (!row.measured) {
    add(row.cell.status.empty() ? "no status" : row.cell.status);
    if (!row.cell.error.empty()) add(row.cell.error);
    return text;
  }
  if (row.is_baseline) add("baseline");
  if (row.metrics.failed > 0) add(std::to_string(row.metrics.failed) + " failed");
  // tok_s counts output tokens: say when they were counted from stream events, not reported.
  if (row.metrics.output_tokens_estimated > 0) add("tok_s estimated (no usage from the server)");
  return text;
}

}  // namespace

std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\r\n") == std::string::npos) return text;
  std::string quoted = "\"";
  for (char c : text) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

std::string render_csv(const ReportModel& model) {
  const std::string regime = csv_field(prefix_regime(model.experiment));
  std::string out = std::string(kCsvHeader) + "\n";
  for (const ConcurrencyLevel& level : model.levels) {
    for (const StrategyRow& row : level.rows) {
      out += csv_field(row.label) + "," + regime + "," + std::to_string(level.concurrency);
      const CellMetrics& m = row.metrics;
      if (row.measured && m.ok > 0) {
        out += "," + seconds(m.ttft_ms.mean) + "," + seconds(m.ttft_ms.p95) + "," +
               seconds(m.e2e_ms.mean) + "," + seconds(m.e2e_ms.p95) + "," +
               format_rate(m.request_throughput) + "," + format_rate(m.output_throughput);
      } else {
        out += ",,,,,,";
      }
      out += "," + csv_field(notes(row, model.figures)) + "\n";
    }
  }
  return out;
}

}  // namespace kvsweep::reports
