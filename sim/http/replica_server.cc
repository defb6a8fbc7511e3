// One simulated vLLM replica's HTTP surface: OpenAI chat and completions, models, health, metrics.
#include "sim/http/replica_server.h"

#include <boost/asio/steady_timer.hpp>
#include <chrono>

#include "sim/http/metrics_exposition.h"
#include "sim/http/openai_api.h"

namespace kvsweep::sim {
namespace {

std::int64_t unix_now_s() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// vLLM's wording, so clients that match on it behave the same.
ApiError context_too_long(int max_model_len, std::int64_t prompt_tokens, int max_tokens,
                          const char* param) {
  return ApiError{400, "BadRequestError",
                  "This model's maximum context length is " + std::to_string(max_model_len) +
                      " tokens. However, you requested " +
                      std::to_string(prompt_tokens + max_tokens) + " tokens (" +
                      std::to_string(prompt_tokens) + " in the messages, " +
                      std::to_string(max_tokens) +
                      " in the completion). Please reduce the length of the messages or "
                      "completion.",
                  param};
}

}  // namespace

struct ReplicaServer::Prepared {
  Generation::Options options;
  std::vector<std::vector<TokenId>> prompts;  // one per choice
  int max_tokens = 0;
  bool ignore_eos = false;
};

ReplicaServer::ReplicaServer(boost::asio::io_context& io, TimingProfile profile,
                             ReplicaOptions options)
    : io_(io),
      engine_(io, std::move(profile), options.seed),
      options_(std::move(options)),
      fault_rng_(options_.seed * 0x2545F4914F6CDD1Dull + 17),
      started_unix_s_(unix_now_s()) {
  routes_ = vllm_routes(VllmSurface{
      [this](ApiKind kind, const HttpRequest& request, std::shared_ptr<Exchange> exchange) {
        completions(kind, request, std::move(exchange));
      },
      [this](std::shared_ptr<Exchange> exchange) {
        reply_models(*exchange, {model_entry(options_.model, started_unix_s_)});
      },
      [this] {
        std::string text = replica_metrics_text(options_.model, engine_.metrics(), &latencies_);
        if (http_stats_) text += http_server_metrics_text(*http_stats_);
        return text;
      },
      [this](std::shared_ptr<Exchange> exchange) {
        engine_.reset_prefix_cache();
        reply_empty(*exchange);
      }});
}

ReplicaServer::~ReplicaServer() = default;

void ReplicaServer::handle(const HttpRequest& request, std::shared_ptr<Exchange> exchange) {
  if (faults_.down) return exchange->sever();  // in process, a dead replica resets the caller
  routes_.dispatch(request, std::move(exchange));
}

void ReplicaServer::check_health(std::chrono::milliseconds /*timeout*/,
                                 std::function<void(bool ok, std::string why)> done) {
  if (available()) return done(true, "");
  done(false, "down");
}

// What the replica's /metrics would show now: a down replica answers no scrape.
void ReplicaServer::read_load(std::chrono::milliseconds /*timeout*/,
                              std::function<void(std::optional<BackendLoad>)> done) {
  if (!available()) return done(std::nullopt);
  const EngineMetrics m = engine_.metrics();
  done(BackendLoad{m.num_waiting, m.kv_cache_usage});
}

void ReplicaServer::sever_open_requests() {
  // Moved out first: severing runs end listeners that erase from open_.
  auto open = std::move(open_);
  open_.clear();
  for (auto& [id, weak] : open) {
    if (auto exchange = weak.lock()) exchange->sever();
  }
}

void ReplicaServer::restart() {
  sever_open_requests();
  engine_.restart();
  latencies_ = LatencyHistograms{};
}

ReplicaSettings ReplicaServer::settings() const {
  return ReplicaSettings{engine_.prefix_caching(), faults_};
}

bool ReplicaServer::apply(const ReplicaSettings& next) {
  if (next.prefix_caching) engine_.set_prefix_caching(*next.prefix_caching);
  if (next.faults) set_faults(*next.faults);
  return true;
}

void ReplicaServer::set_faults(const FaultOptions& faults) {
  const bool was_down = faults_.down;
  faults_ = faults;
  if (faults_.down && !was_down) {
    sever_open_requests();  // a dying process loses every request it held
    engine_.restart();
  }
  if (faults_.down != was_down && down_listener_) down_listener_(faults_.down);
}

bool ReplicaServer::draw(double probability) {
  if (probability <= 0) return false;
  return std::uniform_real_distribution<double>(0, 1)(fault_rng_) < probability;
}

bool ReplicaServer::inject_error(Exchange& exchange, const HttpHeaders& headers) {
  if (!draw(faults_.error_rate)) return false;
  const int status = faults_.error_status;
  const std::string type = status == 503   ? "ServiceUnavailableError"
                           : status == 500 ? "InternalServerError"
                                           : "APIError";
  reply_error(exchange, ApiError{status, type, "injected fault (kvsweep sim)", ""}, headers);
  return true;
}

void ReplicaServer::completions(ApiKind kind, const HttpRequest& request,
                                std::shared_ptr<Exchange> exchange) {
  HttpHeaders headers{{"x-kvsweep-replica", std::to_string(options_.index)}};
  auto prepared = std::make_shared<Prepared>();
  std::string model;
  std::optional<int> max_tokens;
  Generation::Options& out = prepared->options;
  out.kind = kind;
  if (kind == ApiKind::kChat) {
    ChatRequest chat;
    if (auto error = parse_chat_request(request.body, &chat)) {
      return reply_error(*exchange, *error, headers);
    }
    model = chat.model;
    max_tokens = chat.max_tokens;
    out.stream = chat.stream;
    out.include_usage = chat.include_usage;
    out.continuous_usage = chat.continuous_usage;
    prepared->ignore_eos = chat.ignore_eos;
    prepared->prompts.push_back(tokenize(render_prompt(chat.messages)));
  } else {
    CompletionRequest completion;
    if (auto error = parse_completion_request(request.body, &completion)) {
      return reply_error(*exchange, *error, headers);
    }
    model = completion.model;
    max_tokens = completion.max_tokens;
    out.stream = completion.stream;
    out.include_usage = completion.include_usage;
    out.continuous_usage = completion.continuous_usage;
    prepared->ignore_eos = completion.ignore_eos;
    for (const std::string& prompt : completion.prompts)
      prepared->prompts.push_back(tokenize(prompt));
  }
  if (!model.empty() && model != options_.model) {
    return reply_error(*exchange, not_found_error("The model `" + model + "` does not exist."),
                       headers);
  }
  const TimingProfile& profile = engine_.profile();
  prepared->max_tokens = max_tokens.value_or(profile.default_max_tokens);
  for (const auto& prompt : prepared->prompts) {
    const auto prompt_tokens = static_cast<std::int64_t>(prompt.size());
    if (prompt_tokens + prepared->max_tokens > profile.max_model_len) {
      return reply_error(
          *exchange,
          context_too_long(profile.max_model_len, prompt_tokens, prepared->max_tokens,
                           kind == ApiKind::kChat ? "messages" : "prompt"),
          headers);
    }
  }
  if (inject_error(*exchange, headers)) return;
  // The stream (vLLM includes usage only when asked; continuous usage needs include_usage too).
  out.include_usage = out.stream && out.include_usage;
  out.continuous_usage = out.include_usage && out.continuous_usage;
  out.headers = headers;
  if (out.stream && draw(faults_.cut_stream_rate)) out.cut_after_tokens = faults_.cut_after_tokens;
  const std::uint64_t first_id = next_request_id_;
  out.id = CompletionId{(kind == ApiKind::kChat ? "chatcmpl-" : "cmpl-") +
                            std::to_string(options_.index) + "-" + std::to_string(first_id),
                        unix_now_s(), options_.model};
  if (faults_.added_latency_ms <= 0) return start(std::move(prepared), std::move(exchange));
  auto timer = std::make_shared<boost::asio::steady_timer>(
      io_, std::chrono::microseconds(static_cast<std::int64_t>(faults_.added_latency_ms * 1000)));
  timer->async_wait([this, timer, prepared, exchange](const boost::system::error_code& ec) {
    if (ec || exchange->ended()) return;
    start(prepared, exchange);
  });
}

void ReplicaServer::start(std::shared_ptr<Prepared> prepared, std::shared_ptr<Exchange> exchange) {
  auto generation = std::make_shared<Generation>(prepared->options, exchange, &latencies_);
  for (std::size_t i = 0; i < prepared->prompts.size(); ++i) {
    const std::uint64_t id = next_request_id_++;
    // Distinct text per request, yet a fixed function of (replica seed, request number).
    generation->add_choice(id, options_.seed * 0x9E3779B97F4A7C15ull + id);
    open_[id] = exchange;
  }
  generation->begin();
  exchange->on_end([this, generation](bool aborted) {
    for (std::uint64_t id : generation->engine_ids()) {
      if (aborted) engine_.cancel(id);
      open_.erase(id);
    }
  });
  for (std::size_t i = 0; i < prepared->prompts.size(); ++i) {
    const int index = static_cast<int>(i);
    engine_.submit(
        EngineRequest{generation->engine_ids()[i], std::move(prepared->prompts[i]),
                      prepared->max_tokens, prepared->ignore_eos},
        [generation, index](const TokenUpdate& update) { generation->on_update(index, update); });
  }
}

}  // namespace kvsweep::sim
