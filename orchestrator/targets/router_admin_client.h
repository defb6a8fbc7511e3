// kvsweep's router driven through its admin API by the targets that run it (sim, replicas):
// treatments as /admin/strategy requests, each request kept as a command log, and the health
// checks' events (a replica taken out of routing or put back) as the cell's log lines.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/log.h"
#include "orchestrator/scenario/scenario_spec.h"
#include "orchestrator/targets/target.h"

namespace kvsweep::orchestrator {

// Factor name -> the /admin/strategy parameter it sets (KubeAI's and Dynamo's names).
const std::vector<std::pair<std::string, std::string>>& router_knobs();
bool is_router_knob(const std::string& factor);

// A finite number, or nullopt.
std::optional<double> number_level(const std::string& level);

// Throws TargetError when knob `factor` (strategy or a router knob) has a level the router
// cannot apply. `who` names the target in the message ("the simulated fleet"). A strategy level
// may name one of the scenario's EPP configurations.
void check_router_levels(const std::string& factor, const std::vector<std::string>& levels,
                         const std::string& who, const ScenarioSpec& spec);

// {"strategy": <canonical>, <knob>: <number>...} for the treatment's strategy and router knobs;
// a level naming an EPP configuration is {"strategy": "epp", "epp_config": <its YAML>}; "" when
// it sets none of them.
std::string strategy_body(const Treatment& t, const ScenarioSpec& spec);

// Whether `body` (strategy_body's) runs llm-d's endpoint picker, whose prefix index is its own
// routing history: a cold cell applies it again, which builds the picker afresh, as the llmd
// target restarts the EPP's pods (the index would otherwise route by the previous cell).
bool runs_epp(const std::string& strategy_body);

// Admin requests to one router, and its cursor into the router's health events.
// Thread contract: the runner's thread only.
class RouterAdminClient {
 public:
  // Every request is also logged at debug level on `log` (--verbose).
  explicit RouterAdminClient(Log log = silent_log()) : log_(std::move(log)) {}

  // POSTs `body` to router_url + path, appends it to `commands` as a command of step "apply"
  // (argv: method, URL, body; exit 0 for HTTP 200), and throws TargetError "<what>: <url>:
  // <why>" unless 200.
  void post(const std::string& router_url, const std::string& path, const std::string& body,
            const std::string& what, CommandLogs& commands);

  // One log of step "health" when the router took a replica out or put one back since the
  // last call (one line per event in `out`); none when nothing happened. Never throws: a
  // failed health query is itself logged (exit 1).
  CommandLogs health_events(const std::string& router_url);

 private:
  Log log_;
  std::uint64_t health_seen_ = 0;  // the last health event already logged
};

}  // namespace kvsweep::orchestrator
