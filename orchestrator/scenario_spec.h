// A scenario as the user wrote it: the experiment matrix, the target, the load, the report.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

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

struct DatasetSpec {
  std::string kind = "synthetic-multiturn";
  int conversations = 64;
  int turns = 6;
  int system_prompt_words = 600;
  int user_words = 40;
  int assistant_words = 40;
};

struct LoadSpec {
  DatasetSpec dataset;
  int max_tokens = 64;
  std::int64_t num_requests = 0;  // measured requests per cell; 0 = bounded by duration only
  double duration_s = 0;          // measured phase per cell; 0 = bounded by num_requests only
  std::int64_t warmup_requests = 0;
  double timeout_s = 300;         // per request
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
