// The kvsweep subcommands, each a function from parsed arguments to an exit status.
#pragma once

#include <string>

namespace kvsweep::orchestrator {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailed = 1;       // an error, or a sweep with failed cells
inline constexpr int kExitInterrupted = 130;

struct RunArgs {
  std::string db_path;
  std::string scenario_path;
  std::string reports_dir = "reports";
  bool print_report = true;
};
int run_command(const RunArgs& args);

struct ReportArgs {
  std::string db_path;
  std::string experiment;  // id or name; "" = the latest
  std::string out_path;    // "" = reports/<name>.md; "-" = stdout only
};
int report_command(const ReportArgs& args);

struct RunsArgs {
  std::string db_path;
  std::string experiment;  // "" = list experiments; else list that experiment's cells
};
int runs_command(const RunsArgs& args);

struct PlanArgs {
  std::string scenario_path;
};
int plan_command(const PlanArgs& args);

}  // namespace kvsweep::orchestrator
