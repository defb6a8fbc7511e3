// The fleet's router: picks a replica per request by the current strategy, counts in-flight.
#include "sim/router.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <nlohmann/json.hpp>
#include <set>
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

Router::Router(boost::asio::io_context& io, std::vector<Backend*> backends, RouterOptions options)
    : io_(io),
      backends_(std::move(backends)),
      options_(std::move(options)),
      in_flight_(backends_.size(), 0),
      active_blocks_(backends_.size(), 0),
      prefill_tokens_(backends_.size(), 0),
      index_(static_cast<int>(backends_.size())),
      predicted_overlap_(overlap_bounds()),
      decision_seconds_(decision_bounds()),
      health_(static_cast<int>(backends_.size()),
              options_.health.probe_interval.count() > 0 ? options_.health.failure_threshold : 0),
      probe_timer_(io),
      probing_(backends_.size(), 0) {
  if (backends_.empty()) throw std::invalid_argument("replicas: the router needs at least one");
  if (!set_strategy(options_.strategy)) {
    throw std::invalid_argument("strategy: " + unknown_strategy_message(options_.strategy));
  }
  if (options_.health.probe_interval.count() < 0 || options_.health.failure_threshold < 1) {
    throw std::invalid_argument(
        "health: the probe interval must be >= 0 and the failure threshold >= 1");
  }
  for (std::size_t r = 0; r < backends_.size(); ++r) {
    backends_[r]->set_connect_listener([this, r](bool ok, const std::string& why) {
      const int replica = static_cast<int>(r);
      if (ok) return health_.on_success(replica, "a connection succeeded");
      health_.on_failure(replica, "connect: " + why);
    });
  }
  if (options_.health.probe_interval.count() > 0) schedule_probes();
}

std::string Router::name_of(std::size_t replica) const {
  const std::string address = backends_[replica]->address();
  if (address.empty()) return "replica " + std::to_string(replica);
  return "upstream " + std::to_string(replica) + " (" + address + ")";
}

void Router::schedule_probes() {
  probe_timer_.expires_after(options_.health.probe_interval);
  probe_timer_.async_wait([this](const boost::system::error_code& ec) {
    if (ec) return;
    probe_all();
    schedule_probes();
  });
}

void Router::probe_all() {
  using std::chrono::milliseconds;
  const milliseconds timeout = options_.health.probe_timeout.count() > 0
                                   ? options_.health.probe_timeout
                                   : std::min(options_.health.probe_interval, milliseconds(2000));
  for (std::size_t r = 0; r < backends_.size(); ++r) {
    if (probing_[r]) continue;  // the last probe has not answered yet: it will fail by itself
    probing_[r] = 1;
    backends_[r]->check_health(timeout, [this, r](bool ok, const std::string& why) {
      probing_[r] = 0;
      const int replica = static_cast<int>(r);
      if (ok) return health_.on_success(replica, "/health answered 200");
      health_.on_failure(replica, "/health: " + why);
    });
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
    models(std::move(exchange));
  } else if (path == "/health" && get) {
    exchange->respond(HttpResponse{200, "", "", {}});
  } else if (path == "/metrics" && get) {
    exchange->respond(HttpResponse{
        200,
        "text/plain; version=0.0.4; charset=utf-8",
        router_metrics_text(
            decisions_, in_flight_,
            RouterStats{&predicted_overlap_, unavailable_total_, &decision_seconds_, &health_}),
        {}});
  } else if (path == "/reset_prefix_cache" && post) {
    reset_prefix_cache(std::move(exchange));
  } else if (path == "/admin/strategy" && (get || post)) {
    admin_strategy(request, *exchange);
  } else if (path == "/admin/restart" && post) {
    restart();
    exchange->respond(
        json_response(200, "{\"restarted\":" + std::to_string(backends_.size()) + "}"));
  } else if (path == "/admin/faults" && (get || post)) {
    admin_faults(request, *exchange);
  } else if (path == "/admin/engine" && (get || post)) {
    admin_engine(request, *exchange);
  } else if (path == "/admin/health" && get) {
    admin_health(request, *exchange);
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
  query.routable = health_.routable();
  const int chosen = strategy_->pick(query);
  decision_seconds_.observe(
      std::chrono::duration<double>(std::chrono::steady_clock::now() - decision_start).count());
  predicted_overlap_.observe(overlaps[static_cast<std::size_t>(chosen)]);

  // Whoever writes the reply (the replica, an upstream, this router), it names the replica.
  exchange->set_header("x-kvsweep-replica", std::to_string(chosen));
  Backend* backend = backends_[static_cast<std::size_t>(chosen)];
  if (!backend->available()) {
    ++unavailable_total_;
    health_.on_failure(chosen, "connect: connection refused");
    return reply_error(
        *exchange,
        ApiError{502, "BadGateway",
                 "replica " + std::to_string(chosen) + " is unavailable: connection refused", ""});
  }
  auto& counts = decisions_[strategy_name_];
  counts.resize(backends_.size());
  ++counts[static_cast<std::size_t>(chosen)];
  ++in_flight_[static_cast<std::size_t>(chosen)];
  const std::int64_t blocks = (query.prompt_tokens + options_.block_size - 1) / options_.block_size;
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

void Router::fan_out(const HttpRequest& request,
                     std::function<void(std::vector<CollectedResponse>)> done) {
  struct Gather {
    std::vector<CollectedResponse> answers;
    std::size_t missing = 0;
    std::function<void(std::vector<CollectedResponse>)> done;
  };
  auto gather = std::make_shared<Gather>();
  gather->answers.resize(backends_.size());
  gather->missing = backends_.size();
  gather->done = std::move(done);
  for (std::size_t r = 0; r < backends_.size(); ++r) {
    Backend* backend = backends_[r];
    collect_response(
        io_, request, options_.fan_out_timeout,
        [backend](const HttpRequest& req, std::shared_ptr<Exchange> exchange) {
          backend->handle(req, std::move(exchange));
        },
        [gather, r](CollectedResponse answer) {
          gather->answers[r] = std::move(answer);
          if (--gather->missing == 0) gather->done(std::move(gather->answers));
        });
  }
}

void Router::models(std::shared_ptr<Exchange> exchange) {
  fan_out(HttpRequest{"GET", "/v1/models", "", {}}, [this, exchange](
                                                        std::vector<CollectedResponse> answers) {
    // Each model once, as the first backend that serves it describes it, in backend
    // order; a backend that does not answer leaves out only its own models.
    nlohmann::json data = nlohmann::json::array();
    std::set<std::string> seen;
    std::string failures;
    bool any = false;
    for (std::size_t r = 0; r < answers.size(); ++r) {
      const CollectedResponse& a = answers[r];
      const auto parsed = nlohmann::json::parse(a.body, nullptr, false);
      if (!a.error.empty() || a.status != 200 || !parsed.is_object() || !parsed.contains("data") ||
          !parsed["data"].is_array()) {
        failures += (failures.empty() ? "" : "; ") + name_of(r) + ": " + describe_collected(a);
        continue;
      }
      any = true;
      for (const auto& entry : parsed["data"]) {
        if (!entry.is_object() || !entry.contains("id") || !entry["id"].is_string()) {
          continue;
        }
        if (seen.insert(entry["id"].get<std::string>()).second) data.push_back(entry);
      }
    }
    if (!any) {
      return reply_error(*exchange, ApiError{502, "BadGateway", "/v1/models: " + failures, ""});
    }
    exchange->respond(
        json_response(200, nlohmann::json{{"object", "list"}, {"data", data}}.dump()));
  });
}

void Router::reset_prefix_cache(std::shared_ptr<Exchange> exchange) {
  fan_out(HttpRequest{"POST", "/reset_prefix_cache", "", {}},
          [this, exchange](std::vector<CollectedResponse> answers) {
            std::size_t failed = 0;
            std::string each;
            for (std::size_t r = 0; r < answers.size(); ++r) {
              const CollectedResponse& a = answers[r];
              const bool ok = a.error.empty() && a.status / 100 == 2;
              if (ok && !options_.kv_events) index_.clear(static_cast<int>(r));
              failed += ok ? 0 : 1;
              each += (each.empty() ? "" : "; ") + name_of(r) + ": " + describe_collected(a);
              if (a.error.empty() && a.status == 404) {
                each += " (vLLM serves this route only with VLLM_SERVER_DEV_MODE=1)";
              }
            }
            if (failed == 0) return exchange->respond(HttpResponse{200, "", "", {}});
            const bool remote = !backends_.front()->address().empty();
            reply_error(*exchange,
                        ApiError{502, "BadGateway",
                                 "reset_prefix_cache: " + std::to_string(failed) + " of " +
                                     std::to_string(answers.size()) +
                                     (remote ? " upstreams" : " replicas") + " failed: " + each,
                                 ""});
          });
}

}  // namespace kvsweep::sim
