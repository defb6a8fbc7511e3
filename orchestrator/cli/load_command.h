// `kvsweep load`: one load run against any OpenAI-compatible server, vLLM-client style.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "orchestrator/cli/subcommand.h"
#include "reports/cell_metrics.h"

namespace kvsweep::orchestrator {

Subcommand register_load(CLI::App& app, const GlobalOptions& global);

// Parses vLLM's --goodput form: "ttft:500 tpot:50 e2el:3000" (any subset, ms). nullopt with
// `error` set when a part is malformed or names an unknown metric.
std::optional<reports::Slo> parse_goodput(const std::vector<std::string>& parts,
                                          std::string* error);

// Parses "K=V" (vLLM's --header form; also accepts "K: V"). nullopt when there is no separator
// or the name is empty.
std::optional<std::pair<std::string, std::string>> parse_header(const std::string& text);

// vLLM's result file name: {label}-{rate}qps[-concurrency{N}]-{model}-{YYYYmmdd-HHMMSS}.json,
// with the model's '/' replaced so the name stays one path component.
std::string result_file_name(const std::string& label, double request_rate, int max_concurrency,
                             const std::string& model, const std::string& date);

}  // namespace kvsweep::orchestrator
