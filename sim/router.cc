// The fleet's router: picks a replica per request by the current strategy, counts in-flight.
#include "sim/router.h"

#include <chrono>
#include <cmath>
#include <stdexcept>

#include "common/join.h"
#include "common/spellcheck.h"
#include "sim/block_hash.h"
#include "sim/metrics_exposition.h"
#include "sim/openai_api.h"
#include "sim/tokenizer.h"

namespace kvsweep::sim {
namespace {

void reply_error(Exchange& exchange, const ApiError& error) {
  exchange.respond(json_response(error.status, error_body(error)));
}

// What the router reads from a completion request: the routing key and the prompt text it
// hashes into blocks (the replica renders and tokenizes the same way).
struct Parsed {
  std::string key;     // KubeAI: first user message (chat) or first prompt (completions)
  std::string prompt;  // the text the replica will tokenize (first prompt for completions)
};

std::optional<ApiError> parse_for_routing(const std::string& path, const std::string& body,
                                          Parsed* out) {
  if (path == "/v1/chat/completions") {
    ChatRequest chat;
    if (auto error = parse_chat_request(body, &chat)) return error;
    out->key = std::string(first_user_message(chat));
    out->prompt = render_prompt(chat.messages);
  } else {
    CompletionRequest completion;
    if (auto error = parse_completion_request(body, &completion)) return error;
    out->key = completion.prompts.front();
    out->prompt = completion.prompts.front();
  }
  return std::nullopt;
}

// Bounds up to 2^14 blocks (262k tokens of 16), doubling.
std::vector<double> overlap_bounds() {
  std::vector<double> bounds{0};
  for (double b = 1; b <= 16384; b *= 2) bounds.push_back(b);
  return bounds;
}

// 1-2-5 steps from 100 ns to 1 s: fine enough to read a p99 within a factor of 2.5.
std::vector<double> decision_bounds() {
  std::vector<double> bounds;
  for (int exponent = -7; exponent < 0; ++exponent) {
    for (double step : {1.0, 2.0, 5.0}) bounds.push_back(step * std::pow(10.0, exponent));
  }
  bounds.push_back(1.0);
  return bounds;
}

}  // namespace

std::string unknown_strategy_message(const std::string& name) {
  std::string message = "unknown strategy \"" + name + "\"";
  if (auto near = closest_word(name, strategy_names())) {
    message += "; did you mean \"" + *near + "\"?";
  }
  return message + "; valid: " + join(strategy_names());
}

Router::Router(std::vector<Backend*> backends, RouterOptions options)
    : backends_(std::move(backends)),
      options_(std::move(options)),
      in_flight_(backends_.size(), 0),
      active_blocks_(backends_.size(), 0),
      prefill_tokens_(backends_.size(), 0),
      index_(static_cast<int>(backends_.size())),
      predicted_overlap_(overlap_bounds()),
      decision_seconds_(decision_bounds()),
      started_unix_s_(std::chrono::duration_cast<std::chrono::seconds>(
                          std::chrono::system_clock::now().time_since_epoch())
                          .count()) {
  if (backends_.empty()) throw std::invalid_argument("replicas: the router needs at least one");
  if (!set_strategy(options_.strategy)) {
    throw std::invalid_argument("strategy: " + unknown_strategy_message(options_.strategy));
  }
}

bool Router::set_strategy(const std::string& name) {
  StrategyParams params{options_.chwbl, options_.kv_aware};
  auto strategy = make_strategy(name, static_cast<int>(backends_.size()), options_.seed, params);
  if (!strategy) return false;
  strategy_ = std::move(strategy);
  strategy_name_ = name;
  return true;
}

void Router::restart() {
  for (Backend* backend : backends_) backend->restart();
  index_.clear();
  set_strategy(strategy_name_);  // forgets session stickiness too
}

void Router::handle(const HttpRequest& request, std::shared_ptr<Exchange> exchange) {
  const std::string path = request.target.substr(0, request.target.find('?'));
  const bool get = request.method == "GET";
  const bool post = request.method == "POST";
  if ((path == "/v1/chat/completions" || path == "/v1/completions") && post) {
    route(request, std::move(exchange));
  } else if (path == "/v1/models" && get) {
    exchange->respond(json_response(200, models_body(options_.model, started_unix_s_)));
  } else if (path == "/health" && get) {
    exchange->respond(HttpResponse{200, "", "", {}});
  } else if (path == "/metrics" && get) {
    exchange->respond(HttpResponse{
        200, "text/plain; version=0.0.4; charset=utf-8",
        router_metrics_text(decisions_, in_flight_,
                            RouterStats{&predicted_overlap_, unavailable_total_,
                                        &decision_seconds_}),
        {}});
  } else if (path == "/reset_prefix_cache" && post) {
    for (Backend* backend : backends_) backend->reset_prefix_cache();
    exchange->respond(HttpResponse{200, "", "", {}});
  } else if (path == "/admin/strategy" && (get || post)) {
    admin_strategy(request, *exchange);
  } else if (path == "/admin/restart" && post) {
    restart();
    exchange->respond(json_response(200, "{\"restarted\":" + std::to_string(backends_.size()) + "}"));
  } else if (path == "/admin/faults" && (get || post)) {
    admin_faults(request, *exchange);
  } else if (path == "/admin/engine" && (get || post)) {
    admin_engine(request, *exchange);
  } else {
    reply_error(*exchange, not_found_error("Not Found: " + request.method + " " + path));
  }
}

void Router::route(const HttpRequest& request, std::shared_ptr<Exchange> exchange) {
  // Parsed here for the routing key and block hashes; the replica parses again and owns the
  // validation, except that a body that is not a request at all is answered without routing.
  const auto decision_start = std::chrono::steady_clock::now();
  const std::string path = request.target.substr(0, request.target.find('?'));
  Parsed parsed;
  if (auto error = parse_for_routing(path, request.body, &parsed)) {
    return reply_error(*exchange, *error);
  }
  const std::vector<TokenId> tokens = tokenize(parsed.prompt);
  std::vector<std::uint64_t> hashes;
  extend_block_hashes(tokens, options_.block_size, &hashes);
  std::vector<int> overlaps;
  index_.overlaps(hashes, &overlaps);

  RouteQuery query{parsed.key, in_flight_};
  query.session_id = request.header(options_.session_header);
  query.overlap_blocks = overlaps;
  query.prompt_tokens = static_cast<int>(tokens.size());
  query.block_size = options_.block_size;
  query.active_blocks = active_blocks_;
  query.prefill_tokens = prefill_tokens_;
  query.index_sizes = index_.sizes();
  const int chosen = strategy_->pick(query);
  decision_seconds_.observe(
      std::chrono::duration<double>(std::chrono::steady_clock::now() - decision_start).count());
  predicted_overlap_.observe(overlaps[static_cast<std::size_t>(chosen)]);

  Backend* backend = backends_[static_cast<std::size_t>(chosen)];
  if (!backend->available()) {
    ++unavailable_total_;
    return reply_error(*exchange,
                       ApiError{502, "BadGateway",
                                "replica " + std::to_string(chosen) +
                                    " is unavailable: connection refused",
                                ""});
  }
  auto& counts = decisions_[strategy_name_];
  counts.resize(backends_.size());
  ++counts[static_cast<std::size_t>(chosen)];
  ++in_flight_[static_cast<std::size_t>(chosen)];
  const std::int64_t blocks =
      (query.prompt_tokens + options_.block_size - 1) / options_.block_size;
  const std::int64_t prefill = std::max<std::int64_t>(
      0, query.prompt_tokens -
             std::int64_t{overlaps[static_cast<std::size_t>(chosen)]} * options_.block_size);
  active_blocks_[static_cast<std::size_t>(chosen)] += blocks;
  prefill_tokens_[static_cast<std::size_t>(chosen)] += prefill;
  if (!options_.kv_events) index_.record(chosen, hashes, options_.approx_ttl);
  // Prefill load lasts until the first byte of the answer (Dynamo frees it at the first token).
  auto prefill_open = std::make_shared<bool>(true);
  exchange->on_first_byte([this, chosen, prefill, prefill_open] {
    if (!*prefill_open) return;
    *prefill_open = false;
    prefill_tokens_[static_cast<std::size_t>(chosen)] -= prefill;
  });
  exchange->on_end([this, chosen, blocks, prefill, prefill_open](bool) {
    --in_flight_[static_cast<std::size_t>(chosen)];
    active_blocks_[static_cast<std::size_t>(chosen)] -= blocks;
    if (*prefill_open) prefill_tokens_[static_cast<std::size_t>(chosen)] -= prefill;
    *prefill_open = false;
  });
  backend->handle(request, std::move(exchange));
}

}  // namespace kvsweep::sim
