// The router's admin endpoints: strategy and its parameters, fault injection, engine flags,
// replica health (restart: router.cc).
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common/error_kinds.h"
#include "common/json_text.h"
#include "common/spellcheck.h"
#include "sim/http/openai_api.h"
#include "sim/router/epp_config.h"
#include "sim/router/router.h"
#include "sim/router/strategy_factory.h"

namespace kvsweep::sim {
namespace {

using nlohmann::json;

void bad_request(Exchange& exchange, std::string message, std::string param) {
  sim::reply_error(exchange,
                   ApiError{400, "BadRequestError", std::move(message), std::move(param)});
}

// Strategy parameters under the names the real systems use: KubeAI's loadBalancing.prefixHash
// fields (meanLoadFactor in percent) and Dynamo's router flags. `epp` is body's epp_config,
// read by the caller before it took the router's lock (nullptr when the body has none).
std::optional<std::string> apply_params(const json& body, std::shared_ptr<const EppConfig> epp,
                                        RouterOptions* options) {
  RouterOptions next = *options;
  for (const auto& [key, value] : body.items()) {
    if (key == "strategy") continue;
    if (key == "meanLoadFactor") {
      if (!value.is_number() || value.get<double>() < 100)
        return key + ": expected a percentage >= 100";
      next.chwbl.mean_load_factor = value.get<double>() / 100;
    } else if (key == "replication") {
      if (!value.is_number_integer() || value.get<int>() < 1)
        return key + ": expected an integer >= 1";
      next.chwbl.virtual_nodes = value.get<int>();
    } else if (key == "prefixCharLength") {
      if (!value.is_number_integer() || value.get<int>() < 1)
        return key + ": expected an integer >= 1";
      next.chwbl.prefix_chars = value.get<int>();
    } else if (key == "overlap_score_weight") {
      if (!value.is_number() || value.get<double>() < 0) return key + ": expected a number >= 0";
      next.kv_aware.overlap_weight = value.get<double>();
    } else if (key == "router_temperature") {
      if (!value.is_number() || value.get<double>() < 0) return key + ": expected a number >= 0";
      next.kv_aware.temperature = value.get<double>();
    } else if (key == "epp_config") {
      // A whole EndpointPickerConfig, YAML or JSON text, as the EPP reads its --config-text.
      if (!value.is_string()) return key + ": expected an EndpointPickerConfig as text";
      next.epp = epp;
    } else if (key == "session_header") {
      if (!value.is_string() || value.get<std::string>().empty())
        return key + ": expected a header name";
      next.session_header = value.get<std::string>();
    } else {
      return key +
             ": unknown parameter; known: strategy, meanLoadFactor, replication, "
             "prefixCharLength, overlap_score_weight, router_temperature, session_header, "
             "epp_config";
    }
  }
  *options = next;
  return std::nullopt;
}

// /admin/engine keys: vLLM's own flag names, so a patch reads like the server's command line.
const std::vector<std::string>& engine_keys() {
  static const std::vector<std::string> kKeys = {"enable_prefix_caching"};
  return kKeys;
}

std::string unknown_engine_key(const std::string& key) {
  std::string message = key + ": unknown parameter";
  if (auto near = closest_word(key, engine_keys())) message += "; did you mean \"" + *near + "\"?";
  message += "; known: ";
  for (std::size_t i = 0; i < engine_keys().size(); ++i) {
    message += (i == 0 ? "" : ", ") + engine_keys()[i];
  }
  return message;
}

}  // namespace

std::string Router::strategy_json() const {
  std::lock_guard lock(mutex_);
  return json_text(json{{"strategy", decider_.strategy()},
                        {"meanLoadFactor", options_.chwbl.mean_load_factor * 100},
                        {"replication", options_.chwbl.virtual_nodes},
                        {"prefixCharLength", options_.chwbl.prefix_chars},
                        {"overlap_score_weight", options_.kv_aware.overlap_weight},
                        {"router_temperature", options_.kv_aware.temperature},
                        {"session_header", options_.session_header},
                        {"epp_config", options_.epp ? json(options_.epp->text) : json(nullptr)}});
}

void Router::admin_strategy(const HttpRequest& request, Exchange& exchange) {
  if (request.method == "POST") {
    const json body = json::parse(request.body, nullptr, false);
    if (!body.is_object()) {
      return bad_request(exchange, "expected {\"strategy\": <name>, <parameter>: <value>...}",
                         "strategy");
    }
    std::string name = strategy();
    if (const auto it = body.find("strategy"); it != body.end()) {
      if (!it->is_string()) return bad_request(exchange, "strategy must be a string", "strategy");
      name = it->get<std::string>();
      if (name != "epp" && !make_strategy(name, 1, 1)) {
        return bad_request(exchange, unknown_strategy_message(name), "strategy");
      }
    }
    // The EPP configuration is read here, before the lock: however long a hostile one takes
    // to refuse, routing (which takes the lock for every request) goes on meanwhile.
    std::shared_ptr<const EppConfig> epp;
    if (const auto it = body.find("epp_config"); it != body.end() && it->is_string()) {
      std::string error;
      epp = parse_epp_config("epp_config", it->get<std::string>(), &error);
      if (!epp) return bad_request(exchange, error, "epp_config");
      if (std::string why = epp_unmodelled_error(*epp); !why.empty()) {
        return bad_request(exchange, why, "epp_config");
      }
    }
    {
      std::lock_guard lock(mutex_);
      RouterOptions next = options_;
      if (auto error = apply_params(body, epp, &next)) return bad_request(exchange, *error, "");
      if (name == "epp" && !next.epp) {
        return bad_request(exchange,
                           "strategy epp needs epp_config: an EndpointPickerConfig as text",
                           "epp_config");
      }
      options_ = next;
    }
    set_strategy(name);
  }
  exchange.respond(json_response(200, strategy_json()));
}

void Router::admin_faults(const HttpRequest& request, Exchange& exchange) {
  if (request.method == "POST") {
    const json body = json::parse(request.body, nullptr, false);
    if (!body.is_object()) return bad_request(exchange, "expected a JSON object", "");
    std::vector<std::size_t> targets;
    if (const auto it = body.find("replica"); it != body.end() && !it->is_null()) {
      if (!it->is_number_integer() || it->get<int>() < 0 ||
          it->get<std::size_t>() >= replicas_.size()) {
        return bad_request(exchange, "replica: expected 0.." + std::to_string(replicas_.size() - 1),
                           "replica");
      }
      targets.push_back(it->get<std::size_t>());
    } else {
      for (std::size_t r = 0; r < replicas_.size(); ++r) targets.push_back(r);
    }
    // Validated against every target first so that a bad patch changes nothing.
    std::vector<FaultOptions> next;
    for (std::size_t r : targets) {
      FaultOptions faults = replicas_[r].control->settings().faults.value_or(FaultOptions{});
      if (auto error = apply_fault_patch(body, &faults)) return bad_request(exchange, *error, "");
      next.push_back(faults);
    }
    for (std::size_t i = 0; i < targets.size(); ++i) {
      if (!replicas_[targets[i]].control->apply(ReplicaSettings{std::nullopt, next[i]})) {
        return bad_request(exchange, "this backend does not support fault injection", "replica");
      }
    }
  }
  json faults = json::array();
  for (const RoutedReplica& replica : replicas_) {
    faults.push_back(fault_json(replica.control->settings().faults.value_or(FaultOptions{})));
  }
  exchange.respond(json_response(200, json_text(json{{"replicas", faults}})));
}

void Router::admin_engine(const HttpRequest& request, Exchange& exchange) {
  if (request.method == "POST") {
    const json body = json::parse(request.body, nullptr, false);
    if (!body.is_object()) {
      return bad_request(exchange, "expected {\"enable_prefix_caching\": true|false}", "");
    }
    std::optional<bool> prefix_caching;
    for (const auto& [key, value] : body.items()) {
      if (key != "enable_prefix_caching") {
        return bad_request(exchange, unknown_engine_key(key), key);
      }
      if (!value.is_boolean()) return bad_request(exchange, key + ": expected true or false", key);
      prefix_caching = value.get<bool>();
    }
    if (prefix_caching) {
      // Checked on every replica first so that a refused patch changes none of them.
      for (const RoutedReplica& replica : replicas_) {
        if (!replica.control->settings().prefix_caching) {
          return bad_request(exchange,
                             "this backend does not support switching prefix caching (restart "
                             "the server with --[no-]enable-prefix-caching)",
                             "enable_prefix_caching");
        }
      }
      // Each replica's engine resets its cache if its flag changes; the removed events this
      // produces take those blocks out of the KV index too, so routing starts cold as well.
      for (const RoutedReplica& replica : replicas_) {
        replica.control->apply(ReplicaSettings{prefix_caching, std::nullopt});
      }
    }
  }
  // One value for the fleet (every replica is switched together); null when unknown (real
  // upstreams) or, from outside this API, mixed.
  json state = nullptr;
  for (std::size_t r = 0; r < replicas_.size(); ++r) {
    const std::optional<bool> value = replicas_[r].control->settings().prefix_caching;
    if (!value || (r > 0 && state != json(*value))) {
      state = nullptr;
      break;
    }
    state = *value;
  }
  exchange.respond(json_response(200, json_text(json{{"enable_prefix_caching", state}})));
}

void Router::admin_health(const HttpRequest& request, Exchange& exchange) {
  // ?since=SEQ: only the events after SEQ (a poller's cursor).
  std::uint64_t since = 0;
  const std::size_t query = request.target.find('?');
  if (query != std::string::npos) {
    const std::string params = request.target.substr(query + 1);
    const std::string key = "since=";
    const std::size_t at = params.find(key);
    if (at == std::string::npos || (at > 0 && params[at - 1] != '&')) {
      return bad_request(exchange, "expected ?since=<event number>", "since");
    }
    try {
      std::size_t used = 0;
      const std::string value =
          params.substr(at + key.size(), params.find('&', at) - at - key.size());
      since = std::stoull(value, &used);
      if (used != value.size()) throw UsageError(value);
    } catch (const std::exception&) {
      return bad_request(exchange, "since: expected an event number", "since");
    }
  }
  std::lock_guard lock(mutex_);
  json replicas = json::array();
  for (std::size_t r = 0; r < replicas_.size(); ++r) {
    const int replica = static_cast<int>(r);
    replicas.push_back({{"replica", replica},
                        {"address", replicas_[r].address},
                        {"healthy", health_.healthy(replica)},
                        {"consecutive_failures", health_.consecutive_failures(replica)},
                        {"ejections", health_.ejections(replica)},
                        {"last_error", health_.last_error(replica)}});
  }
  json events = json::array();
  for (const HealthEvent& event : health_.events()) {
    if (event.seq <= since) continue;
    events.push_back({{"seq", event.seq},
                      {"unix_s", event.unix_s},
                      {"replica", event.replica},
                      {"name", name_of(static_cast<std::size_t>(event.replica))},
                      {"event", event.ejected ? "ejected" : "readmitted"},
                      {"reason", event.reason}});
  }
  exchange.respond(json_response(
      200, json_text(json{{"probe_interval_ms", options_.health.probe_interval.count()},
                          {"failure_threshold", options_.health.failure_threshold},
                          {"healthy", health_.healthy_count()},
                          {"replicas", replicas},
                          {"events", events}})));
}

}  // namespace kvsweep::sim
