// The fleet's router: picks a replica per request by the current strategy, counts in-flight.
#include "sim/router.h"

#include <chrono>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "common/spellcheck.h"
#include "sim/metrics_exposition.h"
#include "sim/openai_api.h"

namespace kvsweep::sim {
namespace {

// "unknown strategy "prefix_hash"; did you mean "prefix-hash"? valid: ..."
std::string unknown_strategy_message(const std::string& name) {
  std::string message = "unknown strategy \"" + name + "\"";
  if (auto near = closest_word(name, strategy_names())) {
    message += "; did you mean \"" + *near + "\"?";
  }
  return message;
}

std::string joined_strategy_names() {
  std::string out;
  for (const std::string& name : strategy_names()) out += (out.empty() ? "" : ", ") + name;
  return out;
}

void reply_error(Exchange& exchange, const ApiError& error) {
  exchange.respond(json_response(error.status, error_body(error)));
}

}  // namespace

Router::Router(std::vector<Backend*> backends, RouterOptions options)
    : backends_(std::move(backends)),
      options_(std::move(options)),
      in_flight_(backends_.size(), 0),
      started_unix_s_(std::chrono::duration_cast<std::chrono::seconds>(
                          std::chrono::system_clock::now().time_since_epoch())
                          .count()) {
  if (backends_.empty()) throw std::invalid_argument("replicas: the router needs at least one");
  if (!set_strategy(options_.strategy)) {
    throw std::invalid_argument("strategy: " + unknown_strategy_message(options_.strategy) +
                                "; valid: " + joined_strategy_names());
  }
}

bool Router::set_strategy(const std::string& name) {
  auto strategy = make_strategy(name, static_cast<int>(backends_.size()), options_.seed,
                                options_.chwbl);
  if (!strategy) return false;
  strategy_ = std::move(strategy);
  strategy_name_ = name;
  return true;
}

void Router::handle(const HttpRequest& request, std::shared_ptr<Exchange> exchange) {
  const std::string path = request.target.substr(0, request.target.find('?'));
  const bool get = request.method == "GET";
  const bool post = request.method == "POST";
  if (path == "/v1/chat/completions" && post) {
    route(request, std::move(exchange));
  } else if (path == "/v1/models" && get) {
    exchange->respond(json_response(200, models_body(options_.model, started_unix_s_)));
  } else if (path == "/health" && get) {
    exchange->respond(HttpResponse{200, "", "", {}});
  } else if (path == "/metrics" && get) {
    exchange->respond(HttpResponse{200, "text/plain; version=0.0.4; charset=utf-8",
                                   router_metrics_text(decisions_, in_flight_), {}});
  } else if (path == "/reset_prefix_cache" && post) {
    for (Backend* backend : backends_) backend->reset_prefix_cache();
    exchange->respond(HttpResponse{200, "", "", {}});
  } else if (path == "/admin/strategy" && (get || post)) {
    admin_strategy(request, *exchange);
  } else {
    reply_error(*exchange, not_found_error("Not Found: " + request.method + " " + path));
  }
}

void Router::route(const HttpRequest& request, std::shared_ptr<Exchange> exchange) {
  // Parsed here only for the routing key; the replica parses again and owns the validation,
  // except that a body that is not a request at all is answered without routing it.
  ChatRequest chat;
  if (auto error = parse_chat_request(request.body, &chat)) return reply_error(*exchange, *error);
  const int chosen = strategy_->pick(RouteQuery{first_user_message(chat), in_flight_});
  auto& counts = decisions_[strategy_name_];
  counts.resize(backends_.size());
  ++counts[chosen];
  ++in_flight_[chosen];
  exchange->on_end([this, chosen](bool) { --in_flight_[chosen]; });
  backends_[chosen]->handle(request, std::move(exchange));
}

void Router::admin_strategy(const HttpRequest& request, Exchange& exchange) {
  if (request.method == "POST") {
    const auto body = nlohmann::json::parse(request.body, nullptr, false);
    const auto name = body.is_object() ? body.find("strategy") : body.end();
    if (!body.is_object() || name == body.end() || !name->is_string()) {
      return reply_error(exchange, ApiError{400, "BadRequestError",
                                            "expected {\"strategy\": <name>}; valid: " +
                                                joined_strategy_names(),
                                            "strategy"});
    }
    if (!set_strategy(name->get<std::string>())) {
      return reply_error(exchange, ApiError{400, "BadRequestError",
                                            unknown_strategy_message(name->get<std::string>()) +
                                                "; valid: " + joined_strategy_names(),
                                            "strategy"});
    }
  }
  exchange.respond(json_response(200, nlohmann::json{{"strategy", strategy_name_}}.dump()));
}

}  // namespace kvsweep::sim
