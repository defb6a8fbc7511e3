// Headline sentences: each strategy against the baseline, per concurrency level.
#include "reports/headlines.h"

#include <cmath>

#include "figures/units.h"

namespace kvsweep::reports {
namespace {

// Beyond 1.5x a factor reads better than a percentage ("164x lower", not "99% lower").
constexpr double kFactorFrom = 1.5;

std::string level_text(int concurrency) {
  return "at " + std::to_string(concurrency) + " concurrent";
}

std::string sentence(const std::string& label, const std::string& metric, double value, double base,
                     const std::string& baseline, int concurrency, const std::string& unit,
                     int decimals) {
  const std::string figures = " (" + figures::format_fixed(value, decimals) + unit + " vs " +
                              figures::format_fixed(base, decimals) + unit + ")";
  if (base <= 0 || value <= 0) {
    return label + ": " + metric + " not comparable with " + baseline + " " +
           level_text(concurrency) + figures;
  }
  const std::string phrase = change_phrase(value / base);
  if (phrase.empty()) {
    return label + ": no clear difference in " + metric + " from " + baseline + " " +
           level_text(concurrency) + figures;
  }
  return label + ": " + metric + " " + phrase + " than " + baseline + " " +
         level_text(concurrency) + figures;
}

}  // namespace

std::string change_phrase(double ratio) {
  if (!(ratio > 0) || std::fabs(ratio - 1) < kNoDifferenceBelow) return "";
  const bool higher = ratio > 1;
  const double factor = higher ? ratio : 1 / ratio;
  const std::string direction = higher ? " higher" : " lower";
  if (factor >= kFactorFrom) {
    return figures::format_fixed(factor, factor >= 10 ? 0 : 1) + "x" + direction;
  }
  return figures::format_fixed(std::fabs(ratio - 1) * 100, 0) + "%" + direction;
}

std::vector<std::string> headlines(const figures::ReportModel& model) {
  std::vector<std::string> lines;
  for (const figures::ConcurrencyLevel& level : model.levels) {
    const figures::StrategyRow* base = nullptr;
    for (const figures::StrategyRow& row : level.rows) {
      if (row.is_baseline) base = &row;
    }
    if (base == nullptr) continue;
    const figures::CellMetrics& b = base->metrics;
    for (const figures::StrategyRow& row : level.rows) {
      if (row.is_baseline || !row.measured) continue;
      const figures::CellMetrics& m = row.metrics;
      if (m.ok < kMinHeadlineRequests || b.ok < kMinHeadlineRequests) {
        lines.push_back(row.label + ": too few successful requests to compare with " +
                        model.baseline + " " + level_text(level.concurrency) + " (" +
                        std::to_string(m.ok) + " and " + std::to_string(b.ok) + ", need " +
                        std::to_string(kMinHeadlineRequests) + ")");
        continue;
      }
      if (figures::too_many_failed(m.failed, m.ok + m.failed) ||
          figures::too_many_failed(b.failed, b.ok + b.failed)) {
        const bool mine = figures::too_many_failed(m.failed, m.ok + m.failed);
        const figures::CellMetrics& f = mine ? m : b;
        lines.push_back(row.label + ": not compared with " + model.baseline + " " +
                        level_text(level.concurrency) + ": " + (mine ? row.label : model.baseline) +
                        " had " + std::to_string(f.failed) + " of " +
                        std::to_string(f.ok + f.failed) + " requests fail");
        continue;
      }
      lines.push_back(sentence(row.label, "mean TTFT", m.ttft_ms.mean, b.ttft_ms.mean,
                               model.baseline, level.concurrency, " ms", 2));
      if (m.total_token_throughput && b.total_token_throughput) {
        lines.push_back(sentence(row.label, "total throughput", *m.total_token_throughput,
                                 *b.total_token_throughput, model.baseline, level.concurrency,
                                 " tok/s", 1));
      } else {  // a server sent no usage: prompt tokens are unknown, output tokens counted
        const bool estimated = m.output_tokens_estimated > 0 || b.output_tokens_estimated > 0;
        lines.push_back(sentence(row.label,
                                 estimated ? "output throughput (estimated)" : "output throughput",
                                 m.output_throughput, b.output_throughput, model.baseline,
                                 level.concurrency, " tok/s", 1));
      }
    }
  }
  return lines;
}

}  // namespace kvsweep::reports
