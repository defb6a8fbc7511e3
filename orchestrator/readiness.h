// Readiness gates shared by every target that serves an OpenAI-compatible endpoint.
#pragma once

#include <chrono>
#include <string>
#include <vector>

namespace kvsweep::orchestrator {

// Polls GET {url}/health for every url until each answers 200. Throws TargetError naming the
// url and its last answer when the deadline passes.
void wait_healthy(const std::vector<std::string>& urls,
                  std::chrono::steady_clock::time_point deadline);

// GET {base_url}/v1/models lists `model`, then a 1-token chat completion succeeds. Throws
// TargetError naming the gate that failed and why.
void check_serves_model(const std::string& base_url, const std::string& model,
                        std::chrono::steady_clock::time_point deadline);

}  // namespace kvsweep::orchestrator
