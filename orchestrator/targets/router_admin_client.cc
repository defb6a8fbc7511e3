// kvsweep's router driven through its admin API by the targets that run it (sim, replicas).
#include "orchestrator/targets/router_admin_client.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <nlohmann/json.hpp>

#include "driver/http_fetch.h"
#include "orchestrator/scenario/epp_settings.h"
#include "orchestrator/scenario/strategy_names.h"
#include "sim/router/epp_config.h"

namespace kvsweep::orchestrator {
namespace {

constexpr double kAdminTimeoutS = 10;

double admin_seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// "12:03:04" in UTC: when an event happened, to line it up with the requests of the cell.
std::string utc_clock(double unix_s) {
  const auto seconds = static_cast<std::time_t>(unix_s);
  std::tm parts{};
  gmtime_r(&seconds, &parts);
  char text[16];
  std::strftime(text, sizeof text, "%H:%M:%S", &parts);
  return text;
}

}  // namespace

const std::vector<std::pair<std::string, std::string>>& router_knobs() {
  static const std::vector<std::pair<std::string, std::string>> knobs = {
      {"mean_load_factor", "meanLoadFactor"},
      {"prefix_char_length", "prefixCharLength"},
      {"replication", "replication"},
      {"overlap_score_weight", "overlap_score_weight"},
      {"router_temperature", "router_temperature"},
  };
  return knobs;
}

bool is_router_knob(const std::string& factor) {
  return std::any_of(router_knobs().begin(), router_knobs().end(),
                     [&](const auto& knob) { return knob.first == factor; });
}

std::optional<double> number_level(const std::string& level) {
  try {
    std::size_t used = 0;
    const double value = std::stod(level, &used);
    if (used == level.size() && std::isfinite(value)) return value;
  } catch (const std::exception&) {
  }
  return std::nullopt;
}

void check_router_levels(const std::string& factor, const std::vector<std::string>& levels,
                         const std::string& who, const ScenarioSpec& spec) {
  for (const auto& level : levels) {
    if (factor == "strategy" && !canonical_strategy(level) && !spec.epp_config(level)) {
      throw TargetError("factor strategy: " + who + " has no strategy \"" + level +
                        "\" (it has: random, round-robin, least-load, prefix-hash, kv-aware, "
                        "session, under KubeAI's and Dynamo's names too, and llm-d's endpoint "
                        "picker with a configuration named under epp:)");
    }
    if (is_router_knob(factor) && !number_level(level)) {
      throw TargetError("factor " + factor + ": level \"" + level + "\" is not a finite number");
    }
    if (const EppConfigSpec* epp = factor == "strategy" ? spec.epp_config(level) : nullptr) {
      if (std::string why = sim::epp_unmodelled_error(*epp->config); !why.empty()) {
        throw TargetError("factor strategy: level \"" + level + "\": " + who +
                          " cannot run this EPP configuration: " + why);
      }
    }
  }
}

std::string strategy_body(const Treatment& t, const ScenarioSpec& spec) {
  nlohmann::json body = nlohmann::json::object();
  for (const auto& [factor, level] : t.levels) {
    if (factor == "strategy") {
      if (const auto epp = epp_config_for(spec, t, level)) {
        body["strategy"] = "epp";
        body["epp_config"] = epp->config->text;
      } else {
        body["strategy"] = *canonical_strategy(level);
      }
    }
    for (const auto& [knob, param] : router_knobs()) {
      if (factor != knob) continue;
      const double value = *number_level(level);
      // Whole numbers go as JSON integers (the router reads replication as one); the range
      // check keeps the conversion defined.
      if (std::abs(value) < 1e15 && value == std::trunc(value)) {
        body[param] = static_cast<long long>(value);
      } else {
        body[param] = value;
      }
    }
  }
  return body.empty() ? "" : body.dump();
}

bool runs_epp(const std::string& strategy_body) {
  if (strategy_body.empty()) return false;
  const auto body = nlohmann::json::parse(strategy_body, nullptr, false);
  return body.is_object() && body.value("strategy", "") == "epp";
}

// An admin request, kept as the cell's command log like a kubectl call: argv is the method,
// URL and body; exit 0 for HTTP 200, else 1; out is the status line and the answer.
void RouterAdminClient::post(const std::string& router_url, const std::string& path,
                             const std::string& body, const std::string& what,
                             CommandLogs& commands) {
  const std::string url = router_url + path;
  log_->debug("POST {} {}", url, body);
  const auto started = std::chrono::steady_clock::now();
  const auto r = driver::http_post_json(url, body, kAdminTimeoutS);
  CommandLog log;
  log.step = "apply";
  log.argv = {"POST", url, body};
  log.seconds = admin_seconds_since(started);
  log.exit_code = r.error.empty() && r.status == 200 ? 0 : 1;
  log.out = r.error.empty() ? "HTTP " + std::to_string(r.status) + ": " + r.body : "";
  log.err = r.error;
  log_->debug("POST {}: {} in {:.3f} s", url,
              r.error.empty() ? "HTTP " + std::to_string(r.status) : r.error, log.seconds);
  commands.push_back(std::move(log));
  if (!r.error.empty()) throw TargetError(what + ": " + url + ": " + r.error);
  if (r.status != 200) {
    throw TargetError(what + ": " + url + ": HTTP " + std::to_string(r.status) + ": " +
                      r.body.substr(0, 300));
  }
}

CommandLogs RouterAdminClient::health_events(const std::string& router_url) {
  CommandLogs logs;
  const std::string url = router_url + "/admin/health?since=" + std::to_string(health_seen_);
  const auto started = std::chrono::steady_clock::now();
  const auto r = driver::http_get(url, kAdminTimeoutS);
  CommandLog log;
  log.step = "health";
  log.argv = {"GET", url};
  const auto parsed = nlohmann::json::parse(r.body, nullptr, false);
  if (!r.error.empty() || r.status != 200 || !parsed.is_object() || !parsed.contains("events") ||
      !parsed["events"].is_array()) {
    log.exit_code = 1;
    log.err = r.error.empty() ? "HTTP " + std::to_string(r.status) + ": " + r.body.substr(0, 300)
                              : r.error;
    log.seconds = admin_seconds_since(started);
    logs.push_back(std::move(log));
    return logs;
  }
  for (const auto& event : parsed["events"]) {
    const bool ejected = event.value("event", "") == "ejected";
    log.out += utc_clock(event.value("unix_s", 0.0)) + " UTC " + event.value("name", "a replica") +
               (ejected ? " taken out of routing: " : " back in routing: ") +
               event.value("reason", "") + "\n";
    health_seen_ = std::max(health_seen_, event.value("seq", std::uint64_t{0}));
  }
  if (log.out.empty()) return logs;  // nothing happened: no row
  log.exit_code = 0;
  log.seconds = admin_seconds_since(started);
  logs.push_back(std::move(log));
  return logs;
}

}  // namespace kvsweep::orchestrator
