// Readiness gates shared by every target that serves an OpenAI-compatible endpoint.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "common/log.h"

namespace kvsweep::orchestrator {

// Every gate logs each poll at debug level on `log`: "readiness gate pods: closed: 2 of 4 pods
// Ready", then "readiness gate pods: open after 1.2 s".

// Polls `check` every poll_s until it returns nullopt (the gate is open) or timeout_s passes.
// `check` returns why the gate is still closed ("2 of 4 pods Ready"); it may throw TargetError
// to fail at once (a terminal pod state). On timeout throws TargetError
// "readiness gate <gate>: not open after <t> s: <last reason>"; a TargetError thrown by
// `check` is rethrown as "readiness gate <gate>: <its message>".
void wait_for_gate(const std::string& gate, double timeout_s, double poll_s,
                   const std::function<std::optional<std::string>()>& check, spdlog::logger& log);

// Polls GET {url}/health for every url until each answers 200 (gate "health").
void wait_healthy(const std::vector<std::string>& urls, double timeout_s, double poll_s,
                  spdlog::logger& log);

// Gate "models": GET {base_url}/v1/models lists `model`.
void wait_model_listed(const std::string& base_url, const std::string& model, double timeout_s,
                       double poll_s, spdlog::logger& log);

// Gate "completion": a 1-token, non-streaming chat completion answers 200. Retried until the
// timeout, since a frontend may list a model a moment before its workers take requests.
void wait_completion(const std::string& base_url, const std::string& model, double timeout_s,
                     double poll_s, spdlog::logger& log);

// POST {url}/reset_prefix_cache for every replica base url; throws TargetError naming the
// replica and its answer (vLLM serves this route only with VLLM_SERVER_DEV_MODE=1). Each POST
// is logged at debug level.
void reset_prefix_caches(const std::vector<std::string>& replica_urls, double timeout_s,
                         spdlog::logger& log);

}  // namespace kvsweep::orchestrator
