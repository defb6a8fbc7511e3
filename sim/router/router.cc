// The fleet's router: picks a replica per request by the current strategy, counts in-flight.
#include "sim/router/router.h"

#include <algorithm>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <cmath>
#include <optional>
#include <span>
#include <stdexcept>
#include <vector>

#include "common/duration.h"
#include "common/error_kinds.h"
#include "sim/engine/tokenizer.h"
#include "sim/http/admin_auth.h"
#include "sim/http/openai_api.h"
#include "sim/router/epp_scheduler.h"
#include "sim/router/router_metrics.h"

namespace kvsweep::sim {
namespace {

// The most bytes an /admin/* body may hold: what a scenario or EPP file may (1 MiB).
constexpr std::size_t kMaxAdminBodyBytes = 1 << 20;

// What the router reads from a completion request: the routing key and, when the decision
// needs tokens, the prompt text it hashes into blocks (the replica renders and tokenizes the
// same way).
struct Parsed {
  std::string key;       // KubeAI: first user message (chat) or first prompt (completions)
  std::string prompt;    // the text the replica will tokenize (first prompt for completions)
  std::string epp_text;  // the text llm-d's EPP hashes (epp_scheduler.h), when asked for
};

std::optional<ApiError> parse_for_routing(ApiKind kind, const std::string& body, bool want_prompt,
                                          bool want_epp_text, Parsed* out) {
  if (kind == ApiKind::kChat) {
    ChatRequest chat;
    if (auto error = parse_chat_request(body, &chat)) return error;
    out->key = std::string(first_user_message(chat));
    if (want_prompt) out->prompt = render_prompt(chat.messages);
    if (want_epp_text) {
      for (const ChatMessage& m : chat.messages) {
        append_epp_chat_message(&out->epp_text, m.role, m.content);
      }
    }
  } else {
    CompletionRequest completion;
    if (auto error = parse_completion_request(body, &completion)) return error;
    out->key = std::move(completion.prompts.front());
    if (want_prompt) out->prompt = out->key;
    if (want_epp_text) out->epp_text = out->key;
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

RouteDeciderOptions decider_options(const RouterOptions& options) {
  return RouteDeciderOptions{options.strategy,
                             options.seed,
                             StrategyParams{options.chwbl, options.kv_aware, options.epp},
                             options.block_size,
                             options.kv_events,
                             options.approx_ttl};
}

}  // namespace

Router::Router(boost::asio::io_context& io, std::vector<RoutedReplica> replicas,
               RouterOptions options)
    : io_(io),
      replicas_(std::move(replicas)),
      admin_token_(options.admin_token),
      options_(std::move(options)),
      decider_(static_cast<int>(replicas_.size()), decider_options(options_)),
      routes_(make_routes()),
      predicted_overlap_(overlap_bounds()),
      decision_seconds_(decision_bounds()),
      health_(static_cast<int>(replicas_.size()),
              options_.health.probe_interval.count() > 0 ? options_.health.failure_threshold : 0),
      probe_timer_(io),
      probing_(replicas_.size(), 0),
      load_timer_(io),
      reading_load_(replicas_.size(), 0) {
  if (options_.health.probe_interval.count() < 0 || options_.health.failure_threshold < 1) {
    throw UsageError("health: the probe interval must be >= 0 and the failure threshold >= 1");
  }
  if (options_.health.probe_interval.count() > 0) schedule_probes();
  if (decider_.needs_server_loads()) {
    boost::asio::post(io_, [this] { schedule_load_reads(); });
  }
}

RouteTable Router::make_routes() {
  RouteTable table = vllm_routes(VllmSurface{
      [this](ApiKind kind, const HttpRequest& request, std::shared_ptr<Exchange> exchange) {
        route(kind, request, std::move(exchange));
      },
      [this](std::shared_ptr<Exchange> exchange) { models(std::move(exchange)); },
      [this] { return metrics_text(); },
      [this](std::shared_ptr<Exchange> exchange) { reset_prefix_cache(std::move(exchange)); }});
  // Admin handlers call the replicas' controls, which may wait for a replica's thread: they
  // run on the router's home, one at a time, outside mutex_. No other io thread ever waits, so
  // the home's waits end.
  const auto admin = [this](void (Router::*handler)(const HttpRequest&, Exchange&)) {
    return [this, handler](const HttpRequest& request, std::shared_ptr<Exchange> exchange) {
      if (!admin_token_.empty() && !bearer_token_matches(request, admin_token_)) {
        return reply_unauthorized(*exchange);
      }
      // An admin body is at most what a scenario or EPP file may be (an EPP configuration in
      // one is read as that file would be), refused before a handler reads it.
      if (request.body.size() > kMaxAdminBodyBytes) {
        return reply_error(
            *exchange, ApiError{413, "BadRequestError",
                                "the body is " + std::to_string(request.body.size()) +
                                    " bytes, more than the " + std::to_string(kMaxAdminBodyBytes) +
                                    " an admin body may be",
                                ""});
      }
      if (io_.get_executor().running_in_this_thread()) return (this->*handler)(request, *exchange);
      boost::asio::post(
          io_, [this, handler, request, exchange] { (this->*handler)(request, *exchange); });
    };
  };
  for (const char* method : {"GET", "POST"}) {
    table.add(method, "/admin/strategy", admin(&Router::admin_strategy));
    table.add(method, "/admin/faults", admin(&Router::admin_faults));
    table.add(method, "/admin/engine", admin(&Router::admin_engine));
  }
  table.add("GET", "/admin/health", admin(&Router::admin_health));
  table.add("POST", "/admin/restart", admin(&Router::admin_restart));
  return table;
}

void Router::on_connect(int replica, bool ok, const std::string& why) {
  std::lock_guard lock(mutex_);
  if (ok) return health_.on_success(replica, "a connection succeeded");
  health_.on_failure(replica, "connect: " + why);
}

void Router::on_kv_event(int replica, const KvEvent& event) {
  std::lock_guard lock(mutex_);
  decider_.on_kv_event(replica, event);
}

std::string Router::strategy() const {
  std::lock_guard lock(mutex_);
  return decider_.strategy();
}

std::vector<int> Router::in_flight() const {
  std::lock_guard lock(mutex_);
  return decider_.in_flight();
}

std::string Router::name_of(std::size_t replica) const {
  const std::string& address = replicas_[replica].address;
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
  // Runs on io_ (the probe timer's thread), where each probe answers too.
  for (std::size_t r = 0; r < replicas_.size(); ++r) {
    {
      std::lock_guard lock(mutex_);
      if (probing_[r]) continue;  // the last probe has not answered yet: it will fail by itself
      probing_[r] = 1;
    }
    replicas_[r].serving->check_health(timeout, [this, r](bool ok, const std::string& why) {
      std::lock_guard lock(mutex_);
      probing_[r] = 0;
      const int replica = static_cast<int>(r);
      if (ok) return health_.on_success(replica, "/health answered 200");
      health_.on_failure(replica, "/health: " + why);
    });
  }
}

// Runs on io_. The timer stops by itself once the strategy no longer reads loads.
void Router::schedule_load_reads() {
  if (load_timer_running_) return;
  {
    std::lock_guard lock(mutex_);
    if (!decider_.needs_server_loads() || options_.load_refresh.count() <= 0) return;
  }
  load_timer_running_ = true;
  read_loads();
  load_timer_.expires_after(options_.load_refresh);
  load_timer_.async_wait([this](const boost::system::error_code& ec) {
    if (ec) return;  // cancelled: the router is going away
    load_timer_running_ = false;
    schedule_load_reads();
  });
}

void Router::read_loads() {
  // A read not answered within a few refreshes is given up: the EPP keeps a pod's last
  // figures when a scrape fails, and so does the decider.
  const std::chrono::milliseconds timeout =
      std::max(options_.load_refresh * 4, std::chrono::milliseconds(200));
  for (std::size_t r = 0; r < replicas_.size(); ++r) {
    {
      std::lock_guard lock(mutex_);
      if (reading_load_[r]) continue;
      reading_load_[r] = 1;
    }
    replicas_[r].serving->read_load(timeout, [this, r](std::optional<BackendLoad> load) {
      std::lock_guard lock(mutex_);
      reading_load_[r] = 0;
      if (load) decider_.set_server_load(static_cast<int>(r), {load->waiting, load->kv_usage});
    });
  }
}

bool Router::set_strategy(const std::string& name) {
  bool reads_loads = false;
  {
    std::lock_guard lock(mutex_);
    if (!decider_.set_strategy(name, params())) return false;
    reads_loads = decider_.needs_server_loads();
  }
  if (reads_loads) boost::asio::post(io_, [this] { schedule_load_reads(); });
  return true;
}

void Router::restart() {
  for (const RoutedReplica& replica : replicas_) replica.control->restart();
  std::lock_guard lock(mutex_);
  decider_.restart();  // forgets the index and session stickiness too
}

void Router::admin_restart(const HttpRequest&, Exchange& exchange) {
  // Real servers cannot be restarted from here; their prefix caches are reset, and the answer
  // waits for every upstream's, as /reset_prefix_cache does.
  if (!replicas_.front().address.empty()) return restart_upstreams(exchange.shared_from_this());
  restart();
  exchange.respond(json_response(200, "{\"restarted\":" + std::to_string(replicas_.size()) + "}"));
}

void Router::handle(const HttpRequest& request, std::shared_ptr<Exchange> exchange) {
  routes_.dispatch(request, std::move(exchange));
}

std::string Router::metrics_text() const {
  std::string text;
  {
    std::lock_guard lock(mutex_);
    text = router_metrics_text(
        decider_.decisions(), decider_.in_flight(),
        RouterStats{&predicted_overlap_, unavailable_total_, &decision_seconds_, &health_});
    // The EPP's own series while it is the picker, as a real EPP's /metrics has them.
    if (decider_.strategy() == "epp") text += epp_metrics_.text(decider_.prefix_index_entries());
  }
  if (http_stats_) text += http_server_metrics_text(*http_stats_);
  return text;
}

// What a request needs to be routed again after a refused connect, which an upstream reports
// later, on the exchange's thread: its routing inputs, owned.
struct Router::Routing {
  HttpRequest request;
  std::string key;
  std::string epp_text;
  std::string session;
  std::vector<TokenId> tokens;
  std::chrono::steady_clock::time_point decision_start;
  int refused = -1;  // the replica that refused the connect; -1: none yet
};

// One replica's hold on a request: taken away exactly once, at the exchange's end or when its
// connect was refused (guarded by mutex_).
struct Router::Held {
  RouteDecision decision;
  bool finished = false;
};

void Router::route(ApiKind kind, const HttpRequest& request, std::shared_ptr<Exchange> exchange) {
  // Parsed here for the routing key (and the blocks, when the decision reads them); the replica
  // parses again and owns the validation, except that a body that is not a request at all is
  // answered without routing. Parsing and hashing run outside the lock, on this thread.
  auto routing = std::make_shared<Routing>();
  routing->decision_start = std::chrono::steady_clock::now();
  bool needs_tokens = false;
  bool needs_epp_text = false;
  std::string session_header;
  std::chrono::milliseconds timeout{0};
  {
    std::lock_guard lock(mutex_);
    needs_tokens = decider_.needs_tokens();
    needs_epp_text = decider_.needs_prompt_text();
    session_header = options_.session_header;
    timeout = options_.request_timeout;
  }
  Parsed parsed;
  if (auto error = parse_for_routing(kind, request.body, needs_tokens, needs_epp_text, &parsed)) {
    return reply_error(*exchange, *error);
  }
  if (needs_tokens) routing->tokens = tokenize(parsed.prompt);
  routing->key = std::move(parsed.key);
  routing->epp_text = std::move(parsed.epp_text);
  routing->session = std::string(request.header(session_header));
  routing->request = request;
  start_timeout(exchange, timeout);
  send(std::move(routing), std::move(exchange));
}

void Router::send(std::shared_ptr<Routing> routing, std::shared_ptr<Exchange> exchange) {
  const RouteRequest route_request{routing->key, routing->session, routing->tokens,
                                   routing->epp_text};
  const bool retry = routing->refused >= 0;
  // The pick and its bookkeeping at once, so two threads never pick on the same loads.
  auto held = std::make_shared<Held>();
  bool available = false;
  bool nowhere_else = false;
  {
    std::lock_guard lock(mutex_);
    std::span<const std::uint8_t> routable = health_.routable();
    std::vector<std::uint8_t> without_refused;
    if (retry) {
      without_refused.assign(routable.begin(), routable.end());
      if (without_refused.empty()) without_refused.assign(replicas_.size(), 1);
      without_refused[static_cast<std::size_t>(routing->refused)] = 0;
      routable = without_refused;
    }
    held->decision = decider_.pick(route_request, routable);
    if (!retry) {
      const double decision_s =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - routing->decision_start)
              .count();
      decision_seconds_.observe(decision_s);
      if (held->decision.hashed) predicted_overlap_.observe(held->decision.overlap_blocks);
      // The picker's own lookups; a pick again after a refused connect records its request
      // in the picker's indexes as the EPP's would, but is not a second lookup to observe.
      if (decider_.strategy() == "epp") {
        epp_metrics_.observe(decision_s, decider_.last_prefix_lookups());
      }
    }
    // Every other replica out of routing: the pick falls back to all of them.
    nowhere_else = retry && held->decision.replica == routing->refused;
    available = !nowhere_else &&
                replicas_[static_cast<std::size_t>(held->decision.replica)].control->available();
    if (available) {
      decider_.on_routed(held->decision);
    } else if (!nowhere_else) {
      ++unavailable_total_;
      health_.on_failure(held->decision.replica, "connect: connection refused");
    }
  }

  // Whoever writes the reply (the replica, an upstream, this router), it names the replica.
  const int chosen = held->decision.replica;
  exchange->set_header("x-kvsweep-replica", std::to_string(chosen));
  if (!available) {
    // Nothing of the request was sent: once, another replica gets it.
    if (!retry && replicas_.size() > 1) {
      routing->refused = chosen;
      return send(std::move(routing), std::move(exchange));
    }
    const auto who = static_cast<std::size_t>(chosen);
    std::string why = name_of(who) + " is unavailable: connection refused";
    if (nowhere_else) {
      why += "; no other replica could take the request";
    } else if (retry) {
      why = name_of(static_cast<std::size_t>(routing->refused)) + " and " + name_of(who) +
            " are unavailable: connection refused";
    }
    return reply_error(*exchange, ApiError{502, "BadGateway", why, ""});
  }
  // Prefill load lasts until the first byte of the answer (Dynamo frees it at the first token).
  // These run on the exchange's thread, which may be the replica's by then.
  exchange->on_first_byte([this, held] {
    std::lock_guard lock(mutex_);
    if (!held->finished) decider_.on_first_token(held->decision);
  });
  exchange->on_end([this, held](bool) { finish(*held); });
  ServingBackend* serving = replicas_[static_cast<std::size_t>(chosen)].serving;
  // Once only, and only where another replica could take it.
  if (retry || replicas_.size() < 2) return serving->handle(routing->request, std::move(exchange));
  // An upstream whose connect is refused hands the exchange back untouched: routed once more.
  const HttpRequest& request = routing->request;
  serving->handle_routed(request, std::move(exchange),
                         [this, routing, held](std::shared_ptr<Exchange> back, std::string) {
                           // The upstream's connect listener counted the failure (on_connect).
                           finish(*held);
                           {
                             std::lock_guard lock(mutex_);
                             ++unavailable_total_;
                           }
                           routing->refused = held->decision.replica;
                           send(routing, std::move(back));
                         });
}

void Router::finish(Held& held) {
  std::lock_guard lock(mutex_);
  if (held.finished) return;
  held.finished = true;
  decider_.on_finished(held.decision);
}

void Router::start_timeout(const std::shared_ptr<Exchange>& exchange,
                           std::chrono::milliseconds timeout) {
  if (timeout.count() <= 0) return;
  // On the exchange's first home; the exchange posts every call to its current one.
  boost::asio::io_context& io = exchange->home() != nullptr ? *exchange->home() : io_;
  auto timer = std::make_shared<boost::asio::steady_timer>(io, timeout);
  timer->async_wait([timer, weak = std::weak_ptr<Exchange>(exchange),
                     timeout](const boost::system::error_code& ec) {
    const std::shared_ptr<Exchange> late = weak.lock();
    if (ec || !late || late->ended()) return;
    if (late->streaming()) return late->sever();  // the client sees the stream cut
    reply_error(*late, ApiError{504, "GatewayTimeout",
                                "no answer within " + format_duration_s(timeout.count() / 1000.0) +
                                    " (the router's request timeout)",
                                ""});
  });
  // The end may come on another thread (a replica's): the timer is touched on its own only.
  exchange->on_end([timer, &io](bool) { boost::asio::post(io, [timer] { timer->cancel(); }); });
}

}  // namespace kvsweep::sim
