// Writes N nightly runs of seed 002's matrix (4 concurrency levels x 3 arms, 8,000 measured
// requests a cell, predicted shapes) straight into a store, without running them, then prints
// the store's size and how long the reports that read it take: `history` of one metric, every
// experiment's verdicts (serve's front page), one experiment's report model (an experiment
// page), and compare of the last two nights.
// Usage: nightly_store_bench NIGHTS [STORE]   (STORE kept when given; else a temp file)
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

#include "reports/compare.h"
#include "reports/history.h"
#include "reports/report_model.h"
#include "reports/verdicts.h"
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

void write_night(kvsweep::store::Store& store, int night) {
  std::mt19937_64 random(static_cast<std::uint64_t>(night) * 7919 + 1);
  kvsweep::store::ExperimentRow experiment;
  experiment.name = kScenario;
  experiment.scenario_hash = "0123456789abcdef";
  char started[32];
  std::snprintf(started, sizeof started, "2026-%02d-%02dT02:00:00Z", 1 + night / 28 % 12,
                1 + night % 28);
  experiment.started_at = started;
  experiment.finished_at = started;
  experiment.status = "done";
  experiment.setup_json = R"({"target":{"kind":"predict","replicas":8,"profile":"l4"}})";
  experiment.baseline = "k8s-service";
  const std::int64_t experiment_id = store.add_experiment(experiment);
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
      cell.status = "done";
      store.record_cell(cell, rows, server_samples(random), {});
    }
  }
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
    std::fprintf(stderr, "usage: nightly_store_bench NIGHTS (at least 2) [STORE]\n");
    return 2;
  }
  const int nights = std::atoi(argv[1]);
  const auto dir = std::filesystem::temp_directory_path() /
                   ("kvsweep-nightly-bench-" + std::to_string(::getpid()));
  const std::string path = argc > 2 ? argv[2] : (dir / "nightly.db").string();
  if (argc <= 2) std::filesystem::create_directories(dir);
  {
    auto store = kvsweep::store::Store::open(path);
    const Timing write = seconds([&] {
      for (int night = 0; night < nights; ++night) write_night(store, night);
    });
    const auto experiments = store.experiments();
    std::printf("nightly_store_bench: %d nights of %s written in %.1f s; store %.1f MB\n", nights,
                kScenario, write.wall_s,
                static_cast<double>(std::filesystem::file_size(path)) / 1e6);
    const Timing history =
        seconds([&] { kvsweep::reports::metric_history(store, kScenario, "ttft_p95_ms"); });
    const Timing front = seconds([&] {
      for (const auto& e : experiments) {
        kvsweep::reports::level_verdicts(kvsweep::reports::build_report_model(store, e.id));
      }
    });
    const Timing experiment =
        seconds([&] { kvsweep::reports::build_report_model(store, experiments.back().id); });
    const Timing compare = seconds([&] {
      kvsweep::reports::compare_experiments(store, experiments[experiments.size() - 2].id,
                                            experiments.back().id, {});
    });
    std::printf(
        "nightly_store_bench: from raw rows, wall (CPU) seconds: history %.2f (%.2f), every "
        "experiment's verdicts (serve's front page, uncached) %.2f (%.2f), one experiment's "
        "report model %.2f (%.2f), compare of the last two nights %.2f (%.2f)\n",
        history.wall_s, history.cpu_s, front.wall_s, front.cpu_s, experiment.wall_s,
        experiment.cpu_s, compare.wall_s, compare.cpu_s);
  }
  if (argc <= 2) {
    std::error_code ignored;
    std::filesystem::remove_all(dir, ignored);
  }
  return EXIT_SUCCESS;
}
