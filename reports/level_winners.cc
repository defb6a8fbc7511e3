// The winner lines: the winning strategy per concurrency level and its margin.
#include "reports/level_winners.h"

#include <algorithm>

#include "figures/units.h"
#include "reports/headlines.h"

namespace kvsweep::reports {
namespace {

// A client-bound cell measured its driver, a short one less load than asked, and one where
// more than 1% of requests failed describes the requests that survived: none may win
// (figures/validity.h). An over-capacity cell may; the text marks its latency.
bool failed_out(const figures::StrategyRow& row) {
  return figures::too_many_failed(row.metrics.failed, row.metrics.ok + row.metrics.failed);
}

bool judged_out(const figures::StrategyRow& row) {
  const figures::CellVerdict v = row.metrics.validity.verdict;
  return v == figures::CellVerdict::kClientBound ||
         v == figures::CellVerdict::kShortOfConcurrency || failed_out(row);
}

// Why judged_out: the verdict, or the failures.
std::string judged_out_why(const figures::StrategyRow& row) {
  const figures::CellVerdict v = row.metrics.validity.verdict;
  if (v == figures::CellVerdict::kClientBound || v == figures::CellVerdict::kShortOfConcurrency) {
    return verdict_name(v);
  }
  const std::int64_t all = row.metrics.ok + row.metrics.failed;
  return std::to_string(row.metrics.failed) + " of " + std::to_string(all) + " failed";
}

bool qualifies(const figures::StrategyRow& row) {
  return row.measured && row.metrics.ok >= kMinHeadlineRequests && row.metrics.ttft_ms.count > 0 &&
         !judged_out(row);
}

// "2.5x lower (52.00 vs 130.00 ms)"; "about the same" within kNoDifferenceBelow; "n/a" when
// either side is zero or missing.
std::string margin(double value, double other, const std::string& figures) {
  if (!(value > 0) || !(other > 0)) return "n/a (" + figures + ")";
  const std::string phrase = change_phrase(value / other);
  return (phrase.empty() ? "about the same" : phrase) + " (" + figures + ")";
}

std::string ms_figures(double a, double b) {
  return figures::format_ms(a) + " vs " + figures::format_ms(b) + " ms";
}

bool has_throughput(const figures::CellMetrics& m) { return m.window_s > 0; }

// The throughput both cells have: total tokens/s when both know their prompt counts, else
// output tokens/s (a server that sends no usage leaves the total unknown, never 0).
struct ThroughputPair {
  double a = 0;
  double b = 0;
  const char* unit = "tok/s";
};
ThroughputPair throughput_pair(const figures::CellMetrics& a, const figures::CellMetrics& b) {
  if (a.total_token_throughput && b.total_token_throughput) {
    return {*a.total_token_throughput, *b.total_token_throughput, "tok/s"};
  }
  return {a.output_throughput, b.output_throughput, "output tok/s"};
}

// How a compares with b on one figure, kNoDifferenceBelow being "the same".
enum class Side { kBetter, kSame, kWorse };

Side side(double a, double b, bool lower_is_better) {
  if (!(a > 0) || !(b > 0)) return Side::kSame;  // nothing to compare on
  const double ratio = a / b;
  if (ratio > 1 + kNoDifferenceBelow) return lower_is_better ? Side::kWorse : Side::kBetter;
  if (ratio < 1 - kNoDifferenceBelow) return lower_is_better ? Side::kBetter : Side::kWorse;
  return Side::kSame;
}

// TTFT p50, TTFT p95 and total throughput of a against b.
std::vector<Side> sides(const figures::CellMetrics& a, const figures::CellMetrics& b) {
  std::vector<Side> result = {side(a.ttft_ms.median, b.ttft_ms.median, true),
                              side(a.ttft_ms.p95, b.ttft_ms.p95, true)};
  if (has_throughput(a) && has_throughput(b)) {
    const ThroughputPair t = throughput_pair(a, b);
    result.push_back(side(t.a, t.b, false));
  }
  return result;
}

// a beats b: better on at least one figure, worse on none.
bool beats(const figures::CellMetrics& a, const figures::CellMetrics& b) {
  const std::vector<Side> s = sides(a, b);
  return std::find(s.begin(), s.end(), Side::kWorse) == s.end() &&
         std::find(s.begin(), s.end(), Side::kBetter) != s.end();
}

bool all_same(const figures::CellMetrics& a, const figures::CellMetrics& b) {
  const std::vector<Side> s = sides(a, b);
  return std::all_of(s.begin(), s.end(), [](Side x) { return x == Side::kSame; });
}

// The hit rate both rows have: the servers' when both have it, else the client's.
std::string hit_text(const figures::CellMetrics& a, const figures::CellMetrics& b) {
  if (a.kv_hit_rate_server && b.kv_hit_rate_server) {
    return "KV hit " + figures::format_percent(a.kv_hit_rate_server) + "% vs " +
           figures::format_percent(b.kv_hit_rate_server) + "%";
  }
  if (a.cache_hit_client && b.cache_hit_client) {
    return "cache hit " + figures::format_percent(a.cache_hit_client) + "% vs " +
           figures::format_percent(b.cache_hit_client) + "%";
  }
  return "";
}

std::string figures_text(const figures::CellMetrics& w, const figures::CellMetrics& r) {
  std::string text = "TTFT p50 " + margin(w.ttft_ms.median, r.ttft_ms.median,
                                          ms_figures(w.ttft_ms.median, r.ttft_ms.median));
  text += ", p95 " + margin(w.ttft_ms.p95, r.ttft_ms.p95, ms_figures(w.ttft_ms.p95, r.ttft_ms.p95));
  if (has_throughput(w) && has_throughput(r)) {
    const ThroughputPair t = throughput_pair(w, r);
    text += ", throughput " +
            margin(t.a, t.b,
                   figures::format_si3(t.a) + " vs " + figures::format_si3(t.b) + " " + t.unit);
  }
  const std::string hits = hit_text(w, r);
  if (!hits.empty()) text += ", " + hits;
  return text;
}

// Failures stay loud in the answer: failed requests and cells that were not measured.
std::string trouble_text(const figures::ConcurrencyLevel& level) {
  std::string failed;
  std::string unmeasured;
  for (const figures::StrategyRow& row : level.rows) {
    if (!row.measured) {
      unmeasured += (unmeasured.empty() ? "" : ", ") + row.label + " (" +
                    (row.cell.status.empty() ? "no status" : row.cell.status) + ")";
    } else if (row.metrics.failed > 0) {
      failed += (failed.empty() ? "" : ", ") + row.label + " " + std::to_string(row.metrics.failed);
    }
  }
  std::string text;
  if (!failed.empty()) text += "; failed requests: " + failed;
  if (!unmeasured.empty()) text += "; not measured: " + unmeasured;
  std::string excluded;
  std::string over;
  for (const figures::StrategyRow& row : level.rows) {
    if (!row.measured) continue;
    if (judged_out(row)) {
      excluded += (excluded.empty() ? "" : ", ") + row.label + " (" + judged_out_why(row) + ")";
    } else if (row.metrics.validity.verdict == figures::CellVerdict::kOverCapacity) {
      over += (over.empty() ? "" : ", ") + row.label;
    }
  }
  if (!excluded.empty()) text += "; not compared: " + excluded;
  if (!over.empty()) {
    text += "; over capacity: " + over + " (latency depends on the cell's length)";
  }
  return text;
}

LevelWinner verdict_of(const figures::ConcurrencyLevel& level) {
  LevelWinner v;
  v.concurrency = level.concurrency;
  const std::string head = "Concurrency " + std::to_string(level.concurrency) + ": ";
  std::vector<const figures::StrategyRow*> ranked;
  for (const figures::StrategyRow& row : level.rows) {
    if (qualifies(row)) ranked.push_back(&row);
  }
  // Lowest TTFT p50 first; equal medians keep plan order.
  std::stable_sort(ranked.begin(), ranked.end(),
                   [](const figures::StrategyRow* a, const figures::StrategyRow* b) {
                     return a->metrics.ttft_ms.median < b->metrics.ttft_ms.median;
                   });
  const std::string need = std::to_string(kMinHeadlineRequests) + " or more successful requests";
  if (ranked.empty()) {
    v.text = head + "nothing to compare: no strategy has " + need;
  } else if (ranked.size() == 1) {
    v.winner = ranked[0]->label;
    v.text = head + "nothing to compare: only " + ranked[0]->label + " has " + need;
  } else {
    // The winner beats every other strategy; at most one can.
    const figures::StrategyRow* winner = nullptr;
    for (const figures::StrategyRow* candidate : ranked) {
      const bool beats_all =
          std::all_of(ranked.begin(), ranked.end(), [&](const figures::StrategyRow* other) {
            return other == candidate || beats(candidate->metrics, other->metrics);
          });
      if (beats_all) winner = candidate;
    }
    if (winner != nullptr) {
      // The margin is against the next-lowest TTFT p50.
      const figures::StrategyRow* next = ranked[0] == winner ? ranked[1] : ranked[0];
      v.outcome = WinnerOutcome::kWins;
      v.winner = winner->label;
      v.runner_up = next->label;
      v.text = head + v.winner + " wins over " + v.runner_up + ": " +
               figures_text(winner->metrics, next->metrics);
    } else {
      // No winner: the lowest TTFT p50 against the first strategy it does not beat.
      const figures::StrategyRow* first = ranked[0];
      const figures::StrategyRow* other = ranked[1];
      for (const figures::StrategyRow* row : ranked) {
        if (row != first && !beats(first->metrics, row->metrics)) {
          other = row;
          break;
        }
      }
      v.winner = first->label;
      v.runner_up = other->label;
      const std::string pair = v.winner + " vs " + v.runner_up;
      const std::string figures = figures_text(first->metrics, other->metrics);
      if (all_same(first->metrics, other->metrics)) {
        v.outcome = WinnerOutcome::kNoClearWinner;
        v.text = head + "no clear winner, " + pair + " within 5%: " + figures;
      } else {
        v.outcome = WinnerOutcome::kMixed;
        v.text = head + "no single winner, " + pair + ": " + figures;
      }
    }
  }
  v.text += trouble_text(level);
  return v;
}

}  // namespace

std::vector<LevelWinner> level_winners(const figures::ReportModel& model) {
  std::vector<LevelWinner> verdicts;
  for (const figures::ConcurrencyLevel& level : model.levels) verdicts.push_back(verdict_of(level));
  return verdicts;
}

}  // namespace kvsweep::reports
