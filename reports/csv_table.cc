// Seed 004's canonical CSV table.
#include "reports/csv_table.h"

#include "figures/units.h"

namespace kvsweep::reports {
namespace {

std::string prefix_regime(const store::ExperimentRow& experiment) {
  const auto& load = experiment.setup.load;
  return load && load->prefix_regime ? *load->prefix_regime : "";
}

// A cell whose prefix length is a factor (load.dataset.prefix_tokens: [512, 1024]) has its own
// regime; its arm label then names it ("cache, prefix_tokens=512"), which the mode column
// leaves out: the seed's table has the mode and the regime in columns of their own.
constexpr const char* kRegimeFactor = "load.dataset.prefix_tokens";

std::string cell_regime(const store::CellRow& cell) {
  return cell.factors.level_of(kRegimeFactor).value_or("");
}

std::string mode_of(const std::string& label, const std::string& regime) {
  std::string mode;
  std::size_t start = 0;
  while (start <= label.size()) {
    std::size_t end = label.find(", ", start);
    if (end == std::string::npos) end = label.size();
    const std::string part = label.substr(start, end - start);
    const bool names_regime =
        part == "prefix_tokens=" + regime || part == std::string(kRegimeFactor) + "=" + regime;
    if (!names_regime) mode += (mode.empty() ? "" : ", ") + part;
    start = end + 2;
  }
  return mode.empty() ? label : mode;
}

std::string seconds(double ms) { return figures::format_fixed(ms / 1000.0, 4); }

std::string notes(const figures::StrategyRow& row, const std::string& figures) {
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

std::string render_csv(const figures::ReportModel& model) {
  const std::string experiment_regime = prefix_regime(model.experiment);
  std::string out = std::string(kCsvHeader) + "\n";
  for (const figures::ConcurrencyLevel& level : model.levels) {
    for (const figures::StrategyRow& row : level.rows) {
      const std::string own = cell_regime(row.cell);
      const std::string regime = own.empty() ? experiment_regime : own;
      // The label is the arm, then " #N" for a repeat: the suffix stays.
      const std::string mode =
          own.empty() ? row.label
                      : mode_of(row.cell.arm, own) + row.label.substr(row.cell.arm.size());
      out += csv_field(mode) + "," + csv_field(regime) + "," + std::to_string(level.concurrency);
      const figures::CellMetrics& m = row.metrics;
      if (row.measured && m.ok > 0) {
        out += "," + seconds(m.ttft_ms.mean) + "," + seconds(m.ttft_ms.p95) + "," +
               seconds(m.e2e_ms.mean) + "," + seconds(m.e2e_ms.p95) + "," +
               figures::format_rate(m.request_throughput) + "," +
               figures::format_rate(m.output_throughput);
      } else {
        out += ",,,,,,";
      }
      out += "," + csv_field(notes(row, model.figures)) + "\n";
    }
  }
  return out;
}

}  // namespace kvsweep::reports
