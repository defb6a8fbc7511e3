// The answer of a report, one line per concurrency level: which strategy won and by how much
// (TTFT p50 and p95, total throughput, KV hit rate), said first in every format.
#pragma once

#include <string>
#include <vector>

#include "figures/report_model.h"

namespace kvsweep::reports {

// One strategy beats another when it is better by kNoDifferenceBelow or more on at least one
// of TTFT p50, TTFT p95 and total throughput, and worse by as much on none.
enum class WinnerOutcome {
  kWins,              // one strategy beats every other
  kMixed,             // none does: the lowest TTFT p50 is worse somewhere than another
  kNoClearWinner,     // none does: the lowest TTFT p50 and another are within 5% on all three
  kNothingToCompare,  // fewer than two strategies with kMinHeadlineRequests ok requests
};

struct LevelWinner {
  int concurrency = 0;
  WinnerOutcome outcome = WinnerOutcome::kNothingToCompare;
  // kWins: the winner and the strategy with the next-lowest TTFT p50, which the margins are
  // measured against. kMixed, kNoClearWinner: the lowest TTFT p50 and the first strategy it
  // does not beat. kNothingToCompare: the one strategy that qualifies, or "".
  std::string winner;
  std::string runner_up;
  // "Concurrency 8: prefix-hash wins over random: TTFT p50 2.5x lower (52.00 vs 130.00 ms),
  // p95 2.5x lower (62.80 vs 157.00 ms), throughput 22% higher (1.24k vs 1.02k tok/s),
  // KV hit 70.3% vs 6.2%"; "KV hit" is the servers' rate, "cache hit" the client's when a
  // server's is missing. Failed requests and unmeasured cells are named after it.
  std::string text;
};

// One winner line per level of the model, in level order. Rows that qualify: measured, with at
// least kMinHeadlineRequests ok requests and a TTFT sample (headlines.h).
std::vector<LevelWinner> level_winners(const figures::ReportModel& model);

}  // namespace kvsweep::reports
