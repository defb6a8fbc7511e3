// `kvsweep run` and its short form for predictions, `kvsweep predict`: what they share.
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>

#include "orchestrator/cli/subcommand.h"

namespace kvsweep::orchestrator {

struct RunArgs {
  std::string db_path;
  std::string scenario_path;
  std::string reports_dir = kDefaultReportsDir;  // --output
  bool print_report = true;
  bool resume = false;
  std::string target_override;   // "", "sim" or "predict"
  std::string api_key_env;       // the variable holding the servers' API key, if any
  double network_latency_s = 0;  // predict only: one way, client <-> replica
  std::string claim_timeout = "60s";
};

// Runs the scenario's sweep, stores it, writes and prints its report; returns the exit status.
int run_scenario(const RunArgs& args, const GlobalOptions& global);

// The options `run` and `predict` share (scenario, -o, --resume, --api-key-env, --no-print),
// and --network-latency.
void add_run_options(CLI::App* cmd, RunArgs& args, bool* no_print);
void add_network_latency_option(CLI::App* cmd, RunArgs& args);

// "2ms", "0.5ms", "1s" as seconds; nullopt for anything else or a negative duration.
std::optional<double> parse_network_latency(const std::string& text);

}  // namespace kvsweep::orchestrator
