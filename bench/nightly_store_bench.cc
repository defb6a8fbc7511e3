// Writes N nightly runs of seed 002's matrix (4 concurrency levels x 3 arms, 8,000 measured
// requests a cell, predicted shapes) straight into a store, without running them, each cell
// with its summary as a sweep stores it; the nights older than the newest KEEP are stored as
// `kvsweep prune` leaves them (summaries only, marked pruned). Then prints the store's size
// and how long what reads it takes: `history` of one metric, serve's front page (every
// experiment's headline, uncached), an experiment page, serve's history page (with its
// marks of each run against the one before: read from the comparison stored as each night
// ended, as `run` stores it; uncached) and compare of the last two nights.
// Usage: nightly_store_bench NIGHTS [KEEP (default 30)] [STORE]   (STORE kept when given)
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <functional>
#include <random>
#include <string>
#include <system_error>
#include <vector>

#include "figures/cell_summary.h"
#include "figures/compare.h"
#include "figures/report_model.h"
#include "figures/run_comparison.h"
#include "reports/history.h"
#include "reports/level_winners.h"
#include "serve/history_view.h"
#include "serve/store_views.h"
#include "store/store.h"

namespace {

constexpr const char* kScenario = "seed-002-kubeai-l4-three-arms";
constexpr int kRequestsPerCell = 8000;
constexpr int kReplicas = 8;
const int kLevels[] = {800, 1600, 3200, 8000};
const char* const kArms[] = {"k8s-service", "LeastLoad", "PrefixHash"};

// One predicted request: 76 output tokens (75 whole-microsecond ITL gaps), about 833 prompt
// tokens; TTFT grows with the level and is lower with prefix-aware routing.
kvsweep::store::RequestRow request(int index, double level_ms, std::mt19937_64& random) {
  std::lognormal_distribution<double> ttft_s(std::log(level_ms / 1000.0), 0.4);
  kvsweep::store::RequestRow r;
  r.index = index;
  r.worker = index % 800;
  r.conversation = index / 10;
  r.turn = index % 10;
  r.ok = true;
  r.http_status = 200;
  r.scheduled_s = index * 0.00125;
  r.sent_s = r.scheduled_s;
  r.first_token_s = r.sent_s + ttft_s(random);
  r.ttft_ms = (r.first_token_s - r.sent_s) * 1000.0;
  double step_s = 0.02 + (index % 200) * 0.0001;
  double t = r.first_token_s;
  for (int k = 0; k < 75; ++k) {
    step_s += ((index * 31 + k * 17) % 41 - 20) * 0.00002;
    const double at = t + std::fabs(step_s);
    r.itl_ms.push_back(std::round((at - t) * 1e6) / 1e3);
    t = at;
  }
  r.last_token_s = t;
  r.ended_s = t;
  r.e2e_ms = (r.last_token_s - r.sent_s) * 1000.0;
  r.output_tokens = 76;
  r.tpot_ms = (r.e2e_ms - r.ttft_ms) / 75;
  r.prompt_tokens = 800 + index % 67;
  r.cached_tokens = 512;
  r.replica = "replica-" + std::to_string(index % kReplicas);
  return r;
}

std::vector<kvsweep::store::MetricSample> server_samples(std::mt19937_64& random) {
  std::vector<kvsweep::store::MetricSample> samples;
  std::uniform_real_distribution<double> hits(0.3, 0.9);
  for (int replica = 0; replica < kReplicas; ++replica) {
    const std::string source = "http://replica-" + std::to_string(replica) + ":8000/metrics";
    const double queries = 1e6;
    for (const char* phase : {"before", "after"}) {
      const bool after = std::string(phase) == "after";
      samples.push_back({0, phase, source, "vllm:prefix_cache_queries_total",
                         R"({"model_name":"m"})", after ? 2 * queries : queries, 0});
      samples.push_back({0, phase, source, "vllm:prefix_cache_hits_total", R"({"model_name":"m"})",
                         after ? queries * (1 + hits(random)) : queries, 0});
    }
  }
  return samples;
}

// Returns the number of request rows stored (0 for a pruned night).
std::int64_t write_night(kvsweep::store::Store& store, int night, bool keep_raw) {
  std::mt19937_64 random(static_cast<std::uint64_t>(night) * 7919 + 1);
  kvsweep::store::ExperimentRow experiment;
  experiment.name = kScenario;
  experiment.scenario_hash = "0123456789abcdef";
  char started[32];
  std::snprintf(started, sizeof started, "%04d-%02d-%02dT02:00:00Z", 2025 + night / 336,
                1 + night / 28 % 12, 1 + night % 28);
  experiment.started_at = started;
  experiment.finished_at = started;
  experiment.status = "done";
  experiment.setup =
      kvsweep::store::decode_setup(R"({"target":{"kind":"predict","replicas":8,"profile":"l4"}})");
  experiment.baseline = "k8s-service";
  const std::int64_t experiment_id = store.add_experiment(experiment);
  std::int64_t stored = 0;
  int ordinal = 0;
  for (const int level : kLevels) {
    for (const char* arm : kArms) {
      kvsweep::store::CellRow cell;
      cell.experiment_id = experiment_id;
      cell.ordinal = ordinal++;
      cell.key = std::string(arm) + "/" + std::to_string(level);
      cell.arm = arm;
      cell.concurrency = level;
      cell.status = "running";
      cell.id = store.add_cell(cell);
      const double level_ms =
          (std::string(arm) == "PrefixHash" ? 300.0 : 500.0) * std::sqrt(level / 800.0);
      std::vector<kvsweep::store::RequestRow> rows;
      rows.reserve(kRequestsPerCell);
      for (int i = 0; i < kRequestsPerCell; ++i) rows.push_back(request(i, level_ms, random));
      const auto samples = server_samples(random);
      const auto summary = kvsweep::figures::summary_row(
          cell.id, kvsweep::figures::summarize_cell(rows, samples, std::nullopt, {}));
      cell.status = "done";
      store.in_transaction([&] {
        if (keep_raw) {
          store.record_cell(cell, rows, samples, {});
        } else {
          store.record_cell(cell, {}, {}, {});
        }
        store.set_cell_summary(summary);
      });
      if (keep_raw) stored += static_cast<std::int64_t>(rows.size());
    }
  }
  if (!keep_raw) {
    store.prune_raw_rows({experiment_id, started, "keep the last 30 runs of each scenario"});
  }
  return stored;
}

// Wall and CPU seconds of `body`: on a shared machine the CPU time is the steadier figure.
struct Timing {
  double wall_s = 0;
  double cpu_s = 0;
};

Timing seconds(const std::function<void()>& body) {
  const auto start = std::chrono::steady_clock::now();
  const std::clock_t cpu_start = std::clock();
  body();
  return {std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(),
          static_cast<double>(std::clock() - cpu_start) / CLOCKS_PER_SEC};
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || std::atoi(argv[1]) < 2) {
    std::fprintf(stderr, "usage: nightly_store_bench NIGHTS (at least 2) [KEEP] [STORE]\n");
    return 2;
  }
  const int nights = std::atoi(argv[1]);
  const int keep = argc > 2 ? std::atoi(argv[2]) : 30;
  const auto dir = std::filesystem::temp_directory_path() /
                   ("kvsweep-nightly-bench-" + std::to_string(::getpid()));
  const std::string path = argc > 3 ? argv[3] : (dir / "nightly.db").string();
  if (argc <= 3) std::filesystem::create_directories(dir);
  namespace serve = kvsweep::serve;
  {
    auto store = kvsweep::store::Store::open(path);
    std::int64_t raw_rows = 0;
    double pruned_bytes = 0;  // the file once the pruned nights (written first) are in
    double compared = 0;      // CPU seconds of the comparisons stored as each night ended
    const Timing write = seconds([&] {
      for (int night = 0; night < nights; ++night) {
        if (night == nights - keep && night > 0) {
          store.vacuum();
          pruned_bytes = static_cast<double>(std::filesystem::file_size(path));
        }
        raw_rows += write_night(store, night, night >= nights - keep);
        // As `run` does when a night ends: compared with the night before, stored for the
        // history page (a pruned night here compares the nights' samples, not its raw rows).
        compared += seconds([&] {
                      kvsweep::figures::record_run_comparison(store, store.experiments().back().id);
                    }).cpu_s;
      }
    });
    store.vacuum();
    const auto experiments = store.experiments();
    const double bytes = static_cast<double>(std::filesystem::file_size(path));
    const int raw_nights = std::min(nights, keep);
    // What the file would hold with every night raw: the raw nights' own bytes per night
    // (without the pruned nights' summaries), times every night.
    const double all_raw = raw_nights > 0 ? (bytes - pruned_bytes) / raw_nights * nights : 0;
    std::printf(
        "nightly_store_bench: %d nights of %s (%d with raw rows, %d pruned to summaries) "
        "written in %.1f s (%.1f CPU s of it comparing each night with the one before); store "
        "%.1f MB, %.0f bytes per raw request row; all %d raw: about %.0f MB\n",
        nights, kScenario, raw_nights, nights - raw_nights, write.wall_s, compared, bytes / 1e6,
        raw_rows > 0 ? (bytes - pruned_bytes) / static_cast<double>(raw_rows) : 0.0, nights,
        all_raw / 1e6);
    const Timing history =
        seconds([&] { kvsweep::reports::metric_history(store, kScenario, "ttft_p95_ms"); });
    const Timing front = seconds([&] {
      serve::experiments_view(
          store,
          [&store](const kvsweep::store::ExperimentRow& e) {
            return serve::experiment_headline(store, e);
          },
          0);
    });
    const Timing page = seconds([&] { serve::experiment_view(store, experiments.back().id); });
    const Timing history_page = seconds([&] {
      serve::history_view(
          store, kScenario, "ttft_p95_ms", 7,
          [&store](std::int64_t previous, std::int64_t experiment) {
            return kvsweep::figures::compare_experiments(store, previous, experiment, {});
          },
          true, serve::kDefaultComparedRuns);
    });
    // A pair of pruned nights bootstraps each cell's 2,000-request sample.
    Timing pruned_compare{-1, -1};
    if (nights - raw_nights >= 2) {
      pruned_compare = seconds([&] {
        kvsweep::figures::compare_experiments(store, experiments[0].id, experiments[1].id, {});
      });
    }
    const Timing compare = seconds([&] {
      kvsweep::figures::compare_experiments(store, experiments[experiments.size() - 2].id,
                                            experiments.back().id, {});
    });
    char pruned_text[64];
    std::snprintf(pruned_text, sizeof pruned_text, "%.3f (%.3f)", pruned_compare.wall_s,
                  pruned_compare.cpu_s);
    std::printf(
        "nightly_store_bench: wall (CPU) seconds: history %.3f (%.3f), serve front page "
        "(uncached) %.3f (%.3f), experiment page %.3f (%.3f), history page (uncached, "
        "comparisons stored) %.3f (%.3f), compare of the last two nights %.3f (%.3f), of two "
        "pruned nights %s\n",
        history.wall_s, history.cpu_s, front.wall_s, front.cpu_s, page.wall_s, page.cpu_s,
        history_page.wall_s, history_page.cpu_s, compare.wall_s, compare.cpu_s,
        pruned_compare.wall_s < 0 ? "- (none)" : pruned_text);
  }
  if (argc <= 3) {
    std::error_code ignored;
    std::filesystem::remove_all(dir, ignored);
  }
  return EXIT_SUCCESS;
}
