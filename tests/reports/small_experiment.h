// The small hand-built experiment the golden-file tests render: 2 strategies x 2 levels, one
// cell with failures, hit-rate counters on two replicas.
#pragma once

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "figures/cell_metrics.h"
#include "store/store.h"
#include "tests/reports/request_builders.h"

namespace kvsweep::testing {

inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

inline store::ExperimentRow small_experiment() {
  store::ExperimentRow e;
  e.name = "small-sim";
  e.scenario_path = "scenarios/small.yaml";
  e.scenario_text = "name: small-sim\n";
  e.scenario_hash = "00ff00ff00ff00ff";
  e.started_at = "2026-11-22T04:30:00Z";
  e.status = "running";
  e.kvsweep_version = "0.1.0";
  e.host = "ci-runner";
  e.setup = kvsweep::store::decode_setup(
      R"({"target":{"kind":"sim","replicas":2,"profile":"tiny"},"model":"tiny-llama",)"
      R"("load":{"dataset":{"kind":"synthetic"},"max_concurrency":"${concurrency}",)"
      R"("num_prompts":4}})");
  e.baseline = "random";
  return e;
}

// Four measured requests and one warm-up; `speed` divides every latency, so a faster
// strategy shows as a ratio below 1x. The warm-up has no replica recorded and must not count.
inline std::vector<store::RequestRow> cell_requests(double speed, int concurrency) {
  store::RequestRow warm = ok_request(0, 0.0, 500, 900, 64, 8, 0, {50});
  warm.warmup = true;
  std::vector<store::RequestRow> rows = {warm};
  for (int i = 1; i <= 4; ++i) {
    const double ttft = (80.0 + 20.0 * i) * concurrency / 8.0 / speed;
    const double e2e = ttft + 16 * 10.0 / speed;
    rows.push_back(ok_request(i, 1.0 + 0.25 * i, ttft, e2e, 256, 17, speed > 1 ? 192 : 32,
                              std::vector<double>(16, 10.0 / speed)));
    // The faster strategy keeps 3 of 4 requests on replica 0: its skew must show.
    rows.back().replica = speed > 1 ? (i < 4 ? "0" : "1") : (i % 2 == 1 ? "0" : "1");
  }
  return rows;
}

inline std::vector<store::MetricSample> cell_samples(double hits_a, double hits_b) {
  return {
      sample("before", "http://127.0.0.1:9001/metrics", figures::kPrefixCacheHits, 100),
      sample("after", "http://127.0.0.1:9001/metrics", figures::kPrefixCacheHits, 100 + hits_a),
      sample("before", "http://127.0.0.1:9001/metrics", figures::kPrefixCacheQueries, 1000),
      sample("after", "http://127.0.0.1:9001/metrics", figures::kPrefixCacheQueries, 1512),
      sample("before", "http://127.0.0.1:9002/metrics", figures::kPrefixCacheHits, 0),
      sample("after", "http://127.0.0.1:9002/metrics", figures::kPrefixCacheHits, hits_b),
      sample("before", "http://127.0.0.1:9002/metrics", figures::kPrefixCacheQueries, 0),
      sample("after", "http://127.0.0.1:9002/metrics", figures::kPrefixCacheQueries, 512),
  };
}

// 2 strategies x 2 concurrency levels, strategy outer as the planner orders them.
inline std::int64_t write_small_experiment(
    store::Store& store, const store::ExperimentRow& experiment = small_experiment()) {
  const auto experiment_id = store.add_experiment(experiment);
  int ordinal = 0;
  for (const std::string strategy : {"random", "prefix-hash"}) {
    const bool prefix = strategy == "prefix-hash";
    for (int concurrency : {8, 16}) {
      store::CellRow cell;
      cell.experiment_id = experiment_id;
      cell.ordinal = ordinal++;
      cell.key = "00ff/" + strategy + "/" + std::to_string(concurrency) + "/0";
      cell.arm = strategy;
      cell.concurrency = concurrency;
      cell.status = "done";
      cell.id = store.add_cell(cell);
      auto requests = cell_requests(prefix ? 2.5 : 1.0, concurrency);
      if (!prefix && concurrency == 16) {
        requests.push_back(failed_request(5, 1.5, 2000, "timeout"));
        requests.push_back(failed_request(6, 1.6, 5, "http_status"));
        requests.push_back(failed_request(7, 1.7, 5, "http_status"));
      }
      store.add_requests(cell.id, requests);
      store.add_metric_samples(cell.id, prefix ? cell_samples(400, 320) : cell_samples(64, 0));
    }
  }
  store.finish_experiment(experiment_id, "done", "2026-11-22T04:42:10Z");
  return experiment_id;
}

}  // namespace kvsweep::testing
