// A scenario as the user wrote it: the experiment matrix, the target, the load, the report.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "driver/datasets/dataset_options.h"

namespace kvsweep::orchestrator {

struct SourceMark {
  int line = 0;    // 1-based; 0 when the value was defaulted
  int column = 0;  // 1-based
};

struct TargetSpec {
  std::string kind = "sim";       // only "sim" so far
  int replicas = 4;
  std::string profile = "demo";   // sim timing profile (sim/profile.h)
};

struct LoadSpec {
  // Which workload and its parameters; file paths are resolved against the scenario's folder.
  driver::DatasetOptions dataset = default_dataset();
  std::string endpoint = "chat";  // "chat" | "completions"
  bool stream = true;
  int max_tokens = 64;            // unless the dataset sets a turn's own
  bool ignore_eos = true;
  std::optional<double> temperature;
  // Shape: closed loop (each concurrency level is that many users) unless request_rate > 0;
  // open loop then sends at request_rate with the concurrency level as in-flight cap, as seed
  // 002 varied --max-concurrency at a fixed --request-rate.
  double request_rate = 0;
  double burstiness = 1.0;
  std::int64_t num_requests = 0;  // measured requests per cell; 0 = bounded by duration only
  double duration_s = 0;          // measured phase per cell; 0 = bounded by num_requests only
  std::int64_t warmup_requests = 0;
  double timeout_s = 300;         // per request

  static driver::DatasetOptions default_dataset() {
    driver::DatasetOptions d;
    d.kind = "synthetic-multiturn";
    return d;
  }
};

struct ScenarioSpec {
  std::string path;               // as given on the command line, used in messages
  std::string text;               // the file as read
  std::string name;
  std::string description;
  TargetSpec target;
  std::string model = "sim-model";
  std::uint64_t seed = 1;
  std::vector<std::string> strategies;  // factors.strategy
  std::vector<int> concurrency;         // factors.concurrency
  int repeats = 1;
  LoadSpec load;
  std::string baseline;                 // report.baseline; defaults to the first strategy
  std::map<std::string, SourceMark> marks;  // dotted field path -> where it was written
};

}  // namespace kvsweep::orchestrator
